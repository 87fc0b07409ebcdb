#include "strategies/transform_library.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Linalg/TransformOps/LinalgTransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "strategies/mlir_support.h"
#include "strategies/op_key.h"
#include "strategies/template_policy.h"

namespace mtune::strategies {
namespace {

// `transform.structured.match ops{["func.func"]} in %x` and nothing else.
bool IsFunctionMatch(mlir::transform::MatchOp match) {
  std::optional<mlir::ArrayAttr> ops = match.getOps();
  return ops && ops->size() == 1 && mlir::cast<mlir::StringAttr>((*ops)[0]).getValue() == "func.func" &&
         !match.getInterface() && !match.getOpAttrs() && !match.getFilterResultType() &&
         !match.getFilterOperandTypes();
}

// With the root bound to a function, `match func.func in %root` is the root
// itself, and a transform that consumes one handle to it invalidates every
// other handle to it (with a module root they were distinct ops). So handles
// to the root function are tracked in program order: each use of one is
// re-linked to the latest, and a transform consuming it makes its only handle
// result the latest (vectorize_children_and_apply_patterns and
// one_shot_bufferize return the op they transformed). With a module root the
// adapted script does what the original did on a module holding one function.
void RelinkRootHandles(mlir::transform::NamedSequenceOp sequence) {
  mlir::Block& body = sequence.getBody().front();
  mlir::Value latest = body.getArgument(0);
  llvm::DenseSet<mlir::Value> aliases = {latest};
  std::vector<mlir::Operation*> function_matches;
  sequence.getBody().walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation* op) {
    for (mlir::OpOperand& operand : op->getOpOperands())
      if (latest && aliases.contains(operand.get()) && operand.get() != latest) operand.set(latest);
    if (auto match = mlir::dyn_cast<mlir::transform::MatchOp>(op)) {
      if (IsFunctionMatch(match) && aliases.contains(match.getTarget())) {
        aliases.insert(match.getResult());
        function_matches.push_back(op);
      }
      return;
    }
    auto transform = mlir::dyn_cast<mlir::transform::TransformOpInterface>(op);
    if (!transform || !latest) return;
    bool consumes_latest = false;
    for (mlir::Value operand : op->getOperands())
      consumes_latest |= operand == latest && mlir::transform::isHandleConsumed(latest, transform);
    if (!consumes_latest) return;
    mlir::Value next;
    int handles = 0;
    for (mlir::Value result : op->getResults()) {
      if (mlir::isa<mlir::transform::TransformHandleTypeInterface>(result.getType())) {
        next = result;
        ++handles;
      }
    }
    latest = handles == 1 ? next : mlir::Value();
    if (latest) aliases.insert(latest);
  });
  for (mlir::Operation* match : function_matches)
    if (match->use_empty()) match->erase();
}

// Parses an entry's script and returns its @__transform_main, adapted.
absl::StatusOr<mlir::transform::NamedSequenceOp> ParseEntryPoint(
    mlir::MLIRContext* context, const DiagnosticCapture& diagnostics, const std::string& script,
    const std::string& what, mlir::OwningOpRef<mlir::ModuleOp>& holder) {
  // A database can come from anywhere: its text is checked before the parser sees it.
  if (absl::Status text = CheckTemplateText(script); !text.ok())
    return absl::DataLossError(absl::StrCat("stored script of ", what, ": ", text.message()));
  holder = mlir::parseSourceString<mlir::ModuleOp>(script, context, what);
  if (!holder)
    return diagnostics.ToStatus(absl::StatusCode::kDataLoss,
                                absl::StrCat("stored script of ", what,
                                             " does not parse (stale: written for another "
                                             "MLIR version? re-tune it)"));
  mlir::transform::NamedSequenceOp main;
  holder->walk([&](mlir::transform::NamedSequenceOp op) {
    if (op.getSymName() == "__transform_main") main = op;
  });
  if (!main)
    return absl::DataLossError(absl::StrCat("stored script of ", what, " has no @__transform_main"));
  RelinkRootHandles(main);
  return main;
}

// The dispatching entry point and its matchers for `dispatched` (index, entry,
// pattern) as MLIR text; see the header for what it does.
std::string DispatchText(
    const std::vector<std::pair<const LibraryEntry*, OpPattern>>& dispatched) {
  std::string text;
  absl::StrAppend(&text, R"mlir(
  // True for a function holding two or more linalg ops (count forwarded as %n).
  transform.named_sequence @mtune_function_with_several_linalg_ops(%f: !transform.any_op {transform.readonly}, %n: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %f ["func.func"] : !transform.any_op
    %two = transform.param.constant 2 : i64 -> !transform.param<i64>
    transform.match.param.cmpi ge %n, %two : !transform.param<i64>
    transform.yield %f : !transform.any_op
  }
  transform.named_sequence @mtune_identity(%f: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.yield %f : !transform.any_op
  }
)mlir");
  // The two matchers of one problem differ only in whether the op's function is in
  // %shared (two or more linalg ops) and in what they yield: the function (lone op)
  // or the op (shared, to be outlined first).
  auto append_matcher = [&text](const std::string& problem, size_t i, const std::string& op_name,
                                bool shared) {
    absl::StrAppend(&text, "  // ", problem,
                    shared ? ": an op found by the exact match whose function is in %shared."
                           : ": the function of an op found by the exact match, unless %shared.",
                    "\n  transform.named_sequence @mtune_match_", shared ? "shared_" : "", i,
                    R"mlir((%op: !transform.any_op {transform.readonly}, %shared: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op [")mlir",
                    op_name, R"mlir("] : !transform.any_op
    %f = transform.get_parent_op %op {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
    %shared_with_f = transform.merge_handles deduplicate %shared, %f : !transform.any_op
    %n_shared_with_f = transform.num_associations %shared_with_f : (!transform.any_op) -> !transform.param<i64>
    %n_shared = transform.num_associations %shared : (!transform.any_op) -> !transform.param<i64>
    transform.match.param.cmpi )mlir",
                    shared ? "eq" : "ne", R"mlir( %n_shared_with_f, %n_shared : !transform.param<i64>
    transform.yield )mlir",
                    shared ? "%op" : "%f", " : !transform.any_op\n  }\n");
  };
  for (size_t i = 0; i < dispatched.size(); ++i) {
    append_matcher(dispatched[i].first->problem, i, dispatched[i].second.op_name, false);
    append_matcher(dispatched[i].first->problem, i, dispatched[i].second.op_name, true);
  }
  absl::StrAppend(&text, R"mlir(
  // Entry point: applies the tuned strategy of every op that has one.
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all_funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %shared = transform.foreach %all_funcs : !transform.any_op -> !transform.any_op {
    ^bb0(%f: !transform.any_op):
      %linalg = transform.structured.match interface{LinalgOp} in %f : (!transform.any_op) -> !transform.any_op
      %n = transform.num_associations %linalg : (!transform.any_op) -> !transform.param<i64>
      %same, %several = transform.foreach_match restrict_root in %f, %n @mtune_function_with_several_linalg_ops -> @mtune_identity : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
      transform.yield %several : !transform.any_op
    }
)mlir");
  for (size_t i = 0; i < dispatched.size(); ++i) {
    const OpPattern& p = dispatched[i].second;
    const LibraryEntry& entry = *dispatched[i].first;
    const std::string symbol = LibrarySymbol(entry.problem, entry.target_id);
    const std::string exact_match = absl::StrCat(
        "transform.structured.match ops{[\"", p.op_name, "\"]}",
        p.attributes.empty() ? "" : absl::StrCat(" attributes {", p.attributes, "}"),
        " filter_operand_types = [", absl::StrJoin(p.operand_types, ", "),
        "] in %root : (!transform.any_op) -> !transform.any_op");
    // Walking only the exactly matched ops keeps the cost linear in the module
    // and the number of problems (one walk of the whole module per problem
    // with every set forwarded to every matcher was quadratic).
    // Ops alone in their function: the function goes to the tuned sequence.
    absl::StrAppend(&text, "    // ", entry.problem, "\n    %ops_", i, " = ", exact_match,
                    "\n    %tuned_", i, " = transform.foreach_match restrict_root in %ops_", i,
                    ", %shared @mtune_match_", i, " -> @", symbol,
                    " : (!transform.any_op, !transform.any_op) -> !transform.any_op\n");
    // Ops sharing their function (matched again: the walk above consumed its
    // handle): each is outlined into a private function of its own, holding
    // it alone as the measured payload did, and the tuned sequence transforms
    // that function; the call stays where the op was.
    absl::StrAppend(
        &text, "    %left_", i, " = ", exact_match, "\n    %left_root_", i, ", %outline_", i,
        " = transform.foreach_match restrict_root in %left_", i, ", %shared @mtune_match_shared_", i,
        " -> @mtune_identity : (!transform.any_op, !transform.any_op) -> (!transform.any_op, "
        "!transform.any_op)\n    transform.foreach %outline_",
        i, " : !transform.any_op {\n    ^bb0(%op: !transform.any_op):\n"
        "      %kernel, %call = transform.loop.outline %op {func_name = \"",
        OutlinedFunctionPrefix(entry.problem),
        "\"} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
        "      transform.annotate %kernel \"mtune.outlined\" : !transform.any_op\n"
        "      %private = transform.param.constant \"private\" -> !transform.any_param\n"
        "      transform.annotate %kernel \"sym_visibility\" = %private : !transform.any_op, "
        "!transform.any_param\n      transform.include @",
        symbol, " failures(propagate) (%kernel) : (!transform.any_op) -> ()\n    }\n");
  }
  // An outlined kernel's strategy bufferized it without its function boundary,
  // so its tensor arguments were not writable: the strategy only reads through
  // the bufferization.to_buffer of each argument (the output is copied into a
  // fresh buffer), and it returns its results through bufferization.to_tensor
  // of buffers it allocated itself, which nothing else reads or writes. Saying
  // so (`read_only`, `restrict`) lets the caller be bufferized with
  // bufferize-function-boundaries afterwards: One-Shot Analysis rejects
  // to_tensor without `restrict`, and without `read_only` it assumes the
  // kernel may write its inputs and copies them before every call (which made
  // a 256^3 matmul ~2.5x slower).
  absl::StrAppend(&text, R"mlir(    %kernels = transform.structured.match ops{["func.func"]} attributes {mtune.outlined} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %kernels : !transform.any_op {
    ^bb0(%kernel: !transform.any_op):
      %returned = transform.structured.match ops{["bufferization.to_tensor"]} in %kernel : (!transform.any_op) -> !transform.any_op
      transform.annotate %returned "restrict" : !transform.any_op
      %arguments = transform.structured.match ops{["bufferization.to_buffer"]} in %kernel : (!transform.any_op) -> !transform.any_op
      transform.annotate %arguments "read_only" : !transform.any_op
    }
    transform.yield
  }
)mlir");
  return text;
}

}  // namespace

std::string OutlinedFunctionPrefix(const std::string& problem) {
  std::string name = "mtune_kernel__" + problem;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return name;
}

std::string LibrarySymbol(const std::string& problem, const std::string& target_id) {
  std::string symbol = "mtune__" + problem + "__" + target_id;
  for (char& c : symbol)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return symbol;
}

absl::StatusOr<std::string> AdaptScriptToFunctionRoot(const std::string& script) {
  auto context = MakeMlirContext();
  DiagnosticCapture diagnostics(context.get());
  mlir::OwningOpRef<mlir::ModuleOp> holder;
  auto main = ParseEntryPoint(context.get(), diagnostics, script, "script", holder);
  if (!main.ok()) return main.status();
  std::string text;
  llvm::raw_string_ostream os(text);
  holder->print(os);
  return text;
}

absl::StatusOr<std::string> BuildTransformLibrary(const std::vector<LibraryEntry>& entries,
                                                  const std::string& dispatch_target,
                                                  mlir::MLIRContext* given_context) {
  std::set<std::string> targets;
  for (const LibraryEntry& entry : entries) targets.insert(entry.target_id);
  std::string target = dispatch_target;
  if (target.empty() && targets.size() == 1) target = *targets.begin();

  // Entries of the dispatch target whose key names an op pattern.
  std::vector<std::pair<const LibraryEntry*, OpPattern>> dispatched;
  std::vector<std::string> not_dispatched;
  for (const LibraryEntry& entry : entries) {
    if (target.empty() || entry.target_id != target) continue;
    absl::StatusOr<OpPattern> pattern = OpPatternForKey(entry.problem);
    if (pattern.ok())
      dispatched.emplace_back(&entry, std::move(*pattern));
    else
      not_dispatched.push_back(absl::StrCat(entry.problem, " (", pattern.status().message(), ")"));
  }

  std::unique_ptr<mlir::MLIRContext> own_context;
  if (given_context == nullptr) own_context = MakeMlirContext();
  mlir::MLIRContext* context = given_context ? given_context : own_context.get();
  DiagnosticCapture diagnostics(context);
  std::string dispatch_text;
  if (!target.empty()) {
    dispatch_text = dispatched.empty()
                        ? "  transform.named_sequence @__transform_main(%root: !transform.any_op "
                          "{transform.readonly}) {\n    transform.yield\n  }\n"
                        : DispatchText(dispatched);
  }
  // Verified below, once the sequences it dispatches to are in the module.
  mlir::ParserConfig unverified(context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> library = mlir::parseSourceString<mlir::ModuleOp>(
      absl::StrCat("module attributes {transform.with_named_sequence} {\n", dispatch_text, "}\n"),
      unverified, "mtune dispatch");
  if (!library)
    return diagnostics.ToStatus(absl::StatusCode::kInternal,
                                "the generated dispatch entry point does not parse");
  for (const LibraryEntry& entry : entries) {
    mlir::OwningOpRef<mlir::ModuleOp> holder;
    auto main = ParseEntryPoint(context, diagnostics, entry.script, entry.problem, holder);
    if (!main.ok()) return main.status();
    const std::string symbol = LibrarySymbol(entry.problem, entry.target_id);
    // The sequences the strategy includes (a template's helpers) go along, renamed
    // after the entry: two entries of one template would otherwise both define them.
    std::vector<mlir::transform::NamedSequenceOp> helpers;
    for (auto sequence : holder->getBody()->getOps<mlir::transform::NamedSequenceOp>())
      if (sequence != *main) helpers.push_back(sequence);
    for (mlir::transform::NamedSequenceOp helper : helpers) {
      const std::string renamed = absl::StrCat(symbol, "__", helper.getSymName().str());
      if (mlir::failed(mlir::SymbolTable::replaceAllSymbolUses(
              helper, mlir::StringAttr::get(context, renamed), holder->getOperation())))
        return absl::InternalError(absl::StrCat("cannot rename @", helper.getSymName().str(),
                                                " of ", entry.problem));
      helper.setSymName(renamed);
    }
    main->setSymName(symbol);
    (*main)->remove();
    library->getBody()->push_back(*main);
    for (mlir::transform::NamedSequenceOp helper : helpers) {
      helper->remove();
      library->getBody()->push_back(helper);
    }
  }
  if (mlir::failed(mlir::verify(*library)))
    return diagnostics.ToStatus(absl::StatusCode::kInternal, "transform library does not verify");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// mtune transform library: one tuned strategy per (problem, target).\n";
  if (target.empty()) {
    os << "// Entries of several targets and none chosen: no @__transform_main; apply one\n"
          "// with --transform-interpreter=entry-point=SYMBOL.\n";
  } else {
    os << "// @__transform_main tunes every tensor op of these problems on "
       << target << ":\n";
    for (const auto& [entry, pattern] : dispatched) os << "//   " << entry->problem << "\n";
    for (const std::string& skipped : not_dispatched) os << "// not dispatched: " << skipped << "\n";
  }
  os << "// Sequences (usable alone as entry points):\n";
  for (const LibraryEntry& entry : entries)
    os << "//   @" << LibrarySymbol(entry.problem, entry.target_id) << "  " << entry.problem
       << " on " << entry.target_id << "\n";
  library->print(os);
  return text;
}

}  // namespace mtune::strategies
