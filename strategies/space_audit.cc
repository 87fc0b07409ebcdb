#include "strategies/space_audit.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <random>

#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "strategies/default_candidate.h"
#include "strategies/mlir_support.h"
#include "strategies/payload.h"

namespace mtune::strategies {
namespace {

// The payload after `script`'s @__transform_main, printed.
absl::StatusOr<std::string> TransformedPayload(mlir::MLIRContext& context, const std::string& payload,
                                               const std::string& script) {
  DiagnosticCapture diagnostics(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(payload, &context);
  mlir::OwningOpRef<mlir::ModuleOp> library = mlir::parseSourceString<mlir::ModuleOp>(script, &context);
  if (!module || !library) return diagnostics.ToStatus(absl::StatusCode::kInvalidArgument, "parsing");
  mlir::Operation* entry = mlir::transform::detail::findTransformEntryPoint(
      *module, *library, mlir::transform::TransformDialect::kTransformEntryPointSymbolName);
  if (entry == nullptr) return absl::InvalidArgumentError("the script has no @__transform_main");
  if (mlir::failed(mlir::transform::applyTransformNamedSequence(module->getOperation(), entry, *library,
                                                                mlir::transform::TransformOptions())))
    return diagnostics.ToStatus(absl::StatusCode::kInternal, "applying the script");
  // As in the worker: an error the script went on after (a pass failing inside a
  // failure-suppressing sequence) is a failure, not a knob that changed nothing.
  if (diagnostics.has_error())
    return diagnostics.ToStatus(absl::StatusCode::kInternal, "the script reported an error while applying");
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

std::vector<const KnobSpec*> FreeKnobs(const KnobSpace& space) {
  std::vector<const KnobSpec*> free;
  for (const KnobSpec& knob : space.knobs)
    if (IsFreeKnob(knob)) free.push_back(&knob);
  return free;
}

// A valid candidate with every free knob drawn at random, or nullopt after many tries.
std::optional<KnobValues> RandomCandidate(const KnobSpace& space, const KnobValues& base, std::mt19937& rng) {
  const std::vector<const KnobSpec*> free = FreeKnobs(space);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    KnobValues values = base;
    for (const KnobSpec* knob : free) values[knob->name] = knob->options[rng() % knob->options.size()];
    if (auto solved = SolveDerivedKnobs(space, values)) return solved;
  }
  return std::nullopt;
}

// `base` with `knob` moved to another option for which a valid candidate exists.
std::optional<KnobValues> Neighbour(const KnobSpace& space, const KnobValues& base, const KnobSpec& knob,
                                    std::mt19937& rng) {
  std::vector<std::string> others;
  for (const std::string& option : knob.options)
    if (option != base.at(knob.name)) others.push_back(option);
  std::shuffle(others.begin(), others.end(), rng);
  for (const std::string& option : others) {
    KnobValues values = base;
    values[knob.name] = option;
    if (auto solved = SolveDerivedKnobs(space, values)) return solved;
  }
  return std::nullopt;
}

}  // namespace

bool IsFreeKnob(const KnobSpec& knob) { return !knob.derived && knob.options.size() > 1; }

CandidateCount CountCandidates(const KnobSpace& space, uint64_t exact_limit, uint32_t samples, uint32_t seed) {
  const std::vector<const KnobSpec*> free = FreeKnobs(space);
  CandidateCount count;
  count.combinations = 1;
  for (const KnobSpec* knob : free) {
    const uint64_t n = knob->options.size();
    count.combinations = count.combinations > std::numeric_limits<uint64_t>::max() / n
                             ? std::numeric_limits<uint64_t>::max()
                             : count.combinations * n;
  }
  // The fixed knobs (one option, or derived and solved per point) start from here.
  KnobValues base = NearestDefaults(space);
  auto valid_at = [&](auto&& option_of) {
    KnobValues values = base;
    for (size_t k = 0; k < free.size(); ++k) values[free[k]->name] = free[k]->options[option_of(k)];
    return SolveDerivedKnobs(space, values).has_value();
  };
  count.exact = count.combinations <= exact_limit;
  if (count.exact) {
    for (uint64_t index = 0; index < count.combinations; ++index) {
      uint64_t rest = index;
      count.valid += valid_at([&](size_t k) {
        const size_t option = rest % free[k]->options.size();
        rest /= free[k]->options.size();
        return option;
      });
    }
    return count;
  }
  std::mt19937 rng(seed);
  uint64_t hits = 0;
  for (uint32_t s = 0; s < samples; ++s)
    hits += valid_at([&](size_t k) { return rng() % free[k]->options.size(); });
  count.valid = static_cast<uint64_t>(static_cast<long double>(count.combinations) * hits / samples);
  return count;
}

absl::StatusOr<std::vector<KnobAudit>> AuditKnobs(absl::string_view template_text, const Problem& problem,
                                                  const VectorRegisters& registers, int random_bases,
                                                  uint32_t seed) {
  auto space = ExtractKnobSpace(template_text, problem, registers);
  if (!space.ok()) return space.status();
  auto payload = MakePayload(problem);
  if (!payload.ok()) return payload.status();
  std::optional<KnobValues> defaults = DefaultCandidate(*space);
  if (!defaults)
    return absl::FailedPreconditionError("the template has no valid candidate near its defaults for " +
                                         problem.Key());
  std::mt19937 rng(seed);
  std::vector<KnobValues> bases = {*defaults};
  for (int i = 0; i < random_bases; ++i)
    if (auto random = RandomCandidate(*space, *defaults, rng)) bases.push_back(*random);
  std::unique_ptr<mlir::MLIRContext> context = MakeMlirContext();
  auto code = [&](const KnobValues& values) -> absl::StatusOr<std::string> {
    auto script = Instantiate(template_text, problem, values, registers);
    if (!script.ok()) return script.status();
    return TransformedPayload(*context, *payload, *script);
  };
  // Each base's code once, not once per knob moved from it.
  std::vector<std::string> base_code;
  for (const KnobValues& base : bases) {
    auto text = code(base);
    if (!text.ok()) return text.status();
    base_code.push_back(*std::move(text));
  }
  std::vector<KnobAudit> audits;
  for (const KnobSpec* knob : FreeKnobs(*space)) {
    KnobAudit audit{knob->name};
    for (size_t b = 0; b < bases.size(); ++b) {
      std::optional<KnobValues> moved = Neighbour(*space, bases[b], *knob, rng);
      if (!moved) continue;
      auto after = code(*moved);
      if (!after.ok()) return after.status();
      ++audit.compared;
      audit.changed += base_code[b] != *after;
    }
    audits.push_back(std::move(audit));
  }
  return audits;
}

}  // namespace mtune::strategies
