#include "strategies/knob_space.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/SMTExtension/SMTExtensionOps.h"
#include "mlir/Dialect/Transform/TuneExtension/TuneExtensionOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "strategies/knob_rules.h"
#include "strategies/mlir_support.h"
#include "strategies/option_forms.h"
#include "strategies/smt_constraints.h"
#include "strategies/template_policy.h"
#include "strategies/template_requirements.h"

namespace mtune::strategies {
namespace {

constexpr char kLabelsAttr[] = "mtune.labels";
constexpr char kDividesAttr[] = "mtune.divides";
constexpr char kDerivedAttr[] = "mtune.derived";
// Knob names and values travel in proto strings and canonical JSON, which both
// require UTF-8 (an invalid byte once made the JSON encoder throw).
bool IsUtf8(const std::string& text) {
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(text.data());
  return llvm::isLegalUTF8String(&begin, begin + text.size());
}

// The first text that `texts` holds twice; nullopt when all differ. A candidate
// names an option by its text, so two options of one text would be one candidate
// counted twice (and a second alternatives region of the same label could never be
// chosen).
std::optional<std::string> RepeatedText(const std::vector<std::string>& texts) {
  std::set<std::string> seen;
  for (const std::string& text : texts)
    if (!seen.insert(text).second) return text;
  return std::nullopt;
}

// The option attributes of a knob for `problem`, in order.
absl::StatusOr<std::vector<mlir::Attribute>> ExpandOptions(KnobOp knob, const Problem& problem) {
  const std::string name = knob.getName().str();
  mlir::Attribute options = knob.getOptionsAttr();
  std::vector<mlir::Attribute> result;
  if (auto array = llvm::dyn_cast<mlir::ArrayAttr>(options)) {
    result.assign(array.begin(), array.end());
  } else if (auto form = llvm::dyn_cast<mlir::StringAttr>(options)) {
    auto values = ExpandOptionForm(form.getValue().str(), problem, name);
    if (!values.ok()) return values.status();
    mlir::Builder b(knob.getContext());
    for (int64_t v : *values) result.push_back(b.getI64IntegerAttr(v));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", name, "': options must be an array or an option-form string"));
  }
  if (result.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", name, "' has no options for problem ", problem.Key()));
  auto kept = KeepKnobOptionsForFamily(knob, problem, std::move(result));
  if (!kept.ok()) return kept.status();
  result = *std::move(kept);
  std::vector<std::string> texts;
  for (mlir::Attribute a : result) texts.push_back(OptionText(a));
  if (auto twice = RepeatedText(texts))
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", name, "' lists the option '", *twice, "' twice"));
  auto only = OnlyForOption(knob, name, texts, problem);
  if (!only.ok()) return only.status();
  if (*only) result = {result[std::find(texts.begin(), texts.end(), **only) - texts.begin()]};
  if (result.size() > kMaxOptions)
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", name, "' expands to more than ", kMaxOptions, " options"));
  return result;
}

}  // namespace

bool PadsMoreThanAnEighth(int64_t tile, int64_t extent) {
  return 8 * ((tile - extent % tile) % tile) > extent;
}

namespace {

std::vector<std::string> AlternativeLabels(AlternativesOp op) {
  std::vector<std::string> labels;
  if (auto array = op->getAttrOfType<mlir::ArrayAttr>(kLabelsAttr))
    for (mlir::Attribute a : array) labels.push_back(OptionText(a));
  if (labels.size() != op->getNumRegions()) {
    labels.clear();
    for (unsigned i = 0; i < op->getNumRegions(); ++i) labels.push_back(std::to_string(i));
  }
  return labels;
}

// A knob's spec for `problem`: its options expanded, then the attribute rules that
// choose its default (knob_rules.h), in this order.
absl::StatusOr<KnobSpec> ReadKnob(KnobOp knob, const Problem& problem) {
  KnobSpec spec;
  spec.name = knob.getName().str();
  auto options = ExpandOptions(knob, problem);
  if (!options.ok()) return options.status();
  for (mlir::Attribute a : *options) spec.options.push_back(OptionText(a));
  if (auto selected = knob.getSelectedAttr()) {
    spec.selected = OptionText(selected);
    if (std::find(spec.options.begin(), spec.options.end(), spec.selected) != spec.options.end())
      spec.default_value = spec.selected;
  }
  if (auto divides = knob->getAttrOfType<mlir::StringAttr>(kDividesAttr)) spec.divides = divides.getValue().str();
  spec.derived = knob->hasAttr(kDerivedAttr);
  if (absl::Status with = ReadOnlyWith(knob, spec); !with.ok()) return with;
  if (absl::Status family = ApplyFamilyDefault(knob, problem, spec); !family.ok()) return family;
  if (absl::Status tiled = ApplyTileDefault(knob, problem, spec); !tiled.ok()) return tiled;
  return spec;
}

// An alternatives op's spec for `problem`: its region labels, narrowed and given a
// default by the attribute rules (knob_rules.h), in this order.
absl::StatusOr<KnobSpec> ReadAlternatives(AlternativesOp alt, const Problem& problem) {
  KnobSpec spec;
  spec.name = alt.getName().str();
  spec.is_alternatives = true;
  spec.options = AlternativeLabels(alt);
  if (spec.options.empty())
    return absl::InvalidArgumentError(absl::StrCat("alternatives '", spec.name, "' have no regions"));
  if (auto twice = RepeatedText(spec.options))
    return absl::InvalidArgumentError(
        absl::StrCat("alternatives '", spec.name, "' label two regions '", *twice, "'"));
  if (auto selected = alt.getSelectedRegionAttr(); selected && selected->getZExtValue() < spec.options.size())
    spec.default_value = spec.options[selected->getZExtValue()];
  if (absl::Status kept = KeepLabelsForFamily(alt, problem, spec); !kept.ok()) return kept;
  auto only = OnlyForOption(alt, spec.name, spec.options, problem);
  if (!only.ok()) return only.status();
  if (*only) spec.options = {**only}, spec.default_value = **only;
  if (absl::Status split = DropSplitsWiderThanTheDimension(alt, problem, spec); !split.ok()) return split;
  if (absl::Status family = ApplyFamilyDefault(alt, problem, spec); !family.ok()) return family;
  if (absl::Status with = ReadOnlyWith(alt, spec); !with.ok()) return with;
  spec.selected = spec.default_value;
  return spec;
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ParseTemplate(absl::string_view text,
                                                                mlir::MLIRContext* context) {
  // Every template, built in or not, passes the policy: it is code workers run.
  if (absl::Status checked = CheckTemplateText(text); !checked.ok()) return checked;
  DiagnosticCapture diagnostics(context);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      llvm::StringRef(text.data(), text.size()), context, "template");
  if (!module) return diagnostics.ToStatus(absl::StatusCode::kInvalidArgument,
                                           "strategy template does not parse");
  if (absl::Status allowed = CheckTemplatePolicy(module.get()); !allowed.ok()) return allowed;
  return module;
}

mlir::MLIRContext* ThreadContext() {
  // Parsing a template is cheap; building a context with every dialect is not.
  thread_local std::unique_ptr<mlir::MLIRContext> context = MakeMlirContext();
  return context.get();
}

}  // namespace

uint64_t KnobSpace::Size() const {
  uint64_t size = 1;
  for (const KnobSpec& k : knobs) {
    if (k.options.empty()) return 0;
    if (size > std::numeric_limits<uint64_t>::max() / k.options.size())
      return std::numeric_limits<uint64_t>::max();
    size *= k.options.size();
  }
  return size;
}

std::optional<KnobValues> KnobSpace::Defaults() const {
  KnobValues values;
  for (const KnobSpec& k : knobs) {
    if (k.default_value.empty()) return std::nullopt;
    values[k.name] = k.default_value;
  }
  if (!SatisfiesConstraints(values)) return std::nullopt;
  return values;
}

namespace {

// Whether `k`'s value divides that of the knob it names in mtune.divides (true when
// it names none).
bool DividesHolds(const KnobSpec& k, const KnobValues& values) {
  if (k.divides.empty()) return true;
  auto mine = values.find(k.name), other = values.find(k.divides);
  if (mine == values.end() || other == values.end()) return false;
  const std::optional<int64_t> a = IntegerValue(mine->second), b = IntegerValue(other->second);
  return a && b && *a > 0 && *b % *a == 0;
}

}  // namespace

bool KnobSpace::SatisfiesConstraints(const KnobValues& values) const {
  for (const KnobSpec& k : knobs)
    if (!DividesHolds(k, values)) return false;
  for (const KnobSpec& k : knobs)
    if (!OnlyWithHolds(k, values)) return false;
  for (const ParamConstraint& c : constraints)
    if (!c.Holds(values)) return false;
  return true;
}

bool KnobSpace::OnlyWithHolds(const KnobSpec& k, const KnobValues& values) const {
  if (k.only_with.empty()) return true;
  auto mine = values.find(k.name);
  if (mine == values.end()) return false;
  if (mine->second == k.default_value) return true;
  for (const auto& [other, allowed] : k.only_with) {
    auto it = values.find(other);
    if (it == values.end() || std::find(allowed.begin(), allowed.end(), it->second) == allowed.end())
      return false;
  }
  return true;
}

absl::Status KnobSpace::Check(const KnobValues& values) const {
  std::set<std::string> known;
  for (const KnobSpec& k : knobs) {
    known.insert(k.name);
    auto it = values.find(k.name);
    if (it == values.end())
      return absl::InvalidArgumentError(absl::StrCat("no value for knob '", k.name, "'"));
    if (std::find(k.options.begin(), k.options.end(), it->second) == k.options.end())
      return absl::InvalidArgumentError(absl::StrCat("knob '", k.name, "': value '", it->second,
                                                     "' is not among its options [",
                                                     absl::StrJoin(k.options, ", "), "]"));
  }
  for (const auto& [name, value] : values)
    if (!known.contains(name))
      return absl::InvalidArgumentError(absl::StrCat("the template has no knob '", name, "'"));
  // Each kind of constraint on its own, so that the error names the one broken.
  for (const KnobSpec& k : knobs)
    if (!DividesHolds(k, values))
      return absl::InvalidArgumentError(absl::StrCat("constraint violated: ", k.name, "=",
                                                     values.at(k.name), " must divide ", k.divides,
                                                     "=", values.at(k.divides)));
  for (const KnobSpec& k : knobs) {
    if (OnlyWithHolds(k, values)) continue;
    std::vector<std::string> when;
    for (const auto& [other, allowed] : k.only_with)
      when.push_back(absl::StrCat(other, " is ", absl::StrJoin(allowed, " or ")));
    return absl::InvalidArgumentError(absl::StrCat("knob '", k.name, "' only matters when ",
                                                   absl::StrJoin(when, " and "), "; otherwise it stays at ",
                                                   k.default_value));
  }
  for (const ParamConstraint& c : constraints) {
    if (c.Holds(values)) continue;
    std::vector<std::string> read;
    for (const std::string& knob : c.Knobs()) read.push_back(knob + "=" + values.at(knob));
    return absl::InvalidArgumentError(absl::StrCat("constraint at ", c.where, " violated by ",
                                                   absl::StrJoin(read, ", "),
                                                   c.rule.empty() ? "" : absl::StrCat(" (", c.rule, ")")));
  }
  return absl::OkStatus();
}

absl::StatusOr<KnobSpace> ExtractKnobSpace(absl::string_view template_text, const Problem& problem,
                                           const VectorRegisters& registers) {
  mlir::MLIRContext* context = ThreadContext();
  auto module = ParseTemplate(template_text, context);
  if (!module.ok()) return module.status();
  KnobSpace space;
  auto requirements = ReadTemplateRequirements(**module);
  if (!requirements.ok()) return requirements.status();
  if (absl::Status type = CheckElementType(*requirements, problem); !type.ok()) return type;
  space.cpu_features = requirements->cpu_features;
  space.registers = registers;
  absl::Status status;
  std::set<std::string> names;
  (*module)->walk([&](mlir::Operation* op) {
    if (!status.ok()) return;
    if (llvm::isa<mlir::transform::smt::ConstrainParamsOp>(op)) {
      auto constraint = CompileParamConstraint(op, problem, registers);
      if (constraint.ok())
        space.constraints.push_back(std::move(*constraint));
      else
        status = constraint.status();
      return;
    }
    absl::StatusOr<KnobSpec> read;
    if (auto knob = llvm::dyn_cast<KnobOp>(op))
      read = ReadKnob(knob, problem);
    else if (auto alt = llvm::dyn_cast<AlternativesOp>(op))
      read = ReadAlternatives(alt, problem);
    else
      return;
    if (!read.ok()) {
      status = read.status();
      return;
    }
    KnobSpec spec = *std::move(read);
    for (const std::string* text : {&spec.name, &spec.default_value, &spec.selected})
      if (!IsUtf8(*text)) {
        status = absl::InvalidArgumentError(
            absl::StrCat("knob '", spec.name, "': name or value is not valid UTF-8"));
        return;
      }
    for (const std::string& option : spec.options)
      if (!IsUtf8(option)) {
        status = absl::InvalidArgumentError(
            absl::StrCat("knob '", spec.name, "': option is not valid UTF-8"));
        return;
      }
    if (!names.insert(spec.name).second) {
      status = absl::InvalidArgumentError(absl::StrCat("knob '", spec.name, "' is declared twice"));
      return;
    }
    space.knobs.push_back(std::move(spec));
  });
  if (!status.ok()) return status;
  if (absl::Status read = ReadStartPoints(**module, problem, space); !read.ok()) return read;
  if (absl::Status with = CheckOnlyWith(space); !with.ok()) return with;
  for (const KnobSpec& k : space.knobs) {
    if (k.divides.empty()) continue;
    auto other = std::find_if(space.knobs.begin(), space.knobs.end(),
                              [&](const KnobSpec& o) { return o.name == k.divides; });
    if (other == space.knobs.end())
      return absl::InvalidArgumentError(absl::StrCat(
          "knob '", k.name, "' must divide knob '", k.divides, "', which does not exist"));
    // Divisibility is only defined between integer knobs.
    const KnobSpec* divided = &*other;
    for (const KnobSpec* spec : {&k, divided})
      for (const std::string& option : spec->options)
        if (!IntegerValue(option))
          return absl::InvalidArgumentError(absl::StrCat(
              "knob '", k.name, "' must divide knob '", k.divides, "', but knob '", spec->name,
              "' has the non-integer option '", option, "'"));
  }
  return space;
}

absl::StatusOr<std::string> Instantiate(absl::string_view template_text, const Problem& problem,
                                        const KnobValues& values, const VectorRegisters& registers) {
  auto space = ExtractKnobSpace(template_text, problem, registers);
  if (!space.ok()) return space.status();
  if (absl::Status s = space->Check(values); !s.ok()) return s;

  mlir::MLIRContext* context = ThreadContext();
  auto module = ParseTemplate(template_text, context);
  if (!module.ok()) return module.status();
  mlir::Builder b(context);
  absl::Status status;
  std::vector<mlir::Operation*> constraints;
  (*module)->walk([&](mlir::Operation* op) {
    if (llvm::isa<mlir::transform::smt::ConstrainParamsOp>(op)) constraints.push_back(op);
    if (auto knob = llvm::dyn_cast<KnobOp>(op)) {
      auto options = ExpandOptions(knob, problem);
      if (!options.ok()) {
        status = options.status();
        return;
      }
      const std::string& want = values.at(knob.getName().str());
      for (mlir::Attribute a : *options)
        if (OptionText(a) == want) knob.setSelectedAttr(a);
      DropTemplateOnlyRules(knob);
      // Expanded arrays let the upstream verifier check `selected` too.
      knob.setOptionsAttr(b.getArrayAttr(*options));
    } else if (auto alt = llvm::dyn_cast<AlternativesOp>(op)) {
      std::vector<std::string> labels = AlternativeLabels(alt);
      const std::string& want = values.at(alt.getName().str());
      auto it = std::find(labels.begin(), labels.end(), want);
      alt.setSelectedRegionAttrAttr(b.getIndexAttr(it - labels.begin()));
      DropTemplateOnlyRules(alt);
    }
  });
  if (!status.ok()) return status;
  // Checked above; the interpreter's own semantics for them is to always fail.
  for (mlir::Operation* op : constraints) op->erase();
  DiagnosticCapture diagnostics(context);
  if (mlir::failed(mlir::verify(module->get())))
    return diagnostics.ToStatus(absl::StatusCode::kInvalidArgument,
                                "instantiated template does not verify");
  std::string text;
  llvm::raw_string_ostream os(text);
  module->get()->print(os);
  return text;
}

absl::StatusOr<TemplateInstantiator> TemplateInstantiator::Create(absl::string_view template_text,
                                                                 const Problem& problem,
                                                                 const VectorRegisters& registers) {
  TemplateInstantiator result;
  result.template_text_ = std::string(template_text);
  result.problem_ = problem;
  auto space = ExtractKnobSpace(template_text, problem, registers);
  if (!space.ok()) return space.status();
  result.space_ = *std::move(space);

  // Print the template once with a unique marker as every knob's selected value,
  // options expanded as Instantiate() expands them.
  mlir::MLIRContext* context = ThreadContext();
  auto module = ParseTemplate(template_text, context);
  if (!module.ok()) return module.status();
  mlir::Builder b(context);
  std::vector<std::string> markers;
  std::vector<mlir::Operation*> constraints;
  absl::Status status;
  (*module)->walk([&](mlir::Operation* op) {
    if (!status.ok()) return;
    if (llvm::isa<mlir::transform::smt::ConstrainParamsOp>(op)) constraints.push_back(op);
    Slot slot;
    std::string marker;
    if (auto knob = llvm::dyn_cast<KnobOp>(op)) {
      auto options = ExpandOptions(knob, problem);
      if (!options.ok()) {
        status = options.status();
        return;
      }
      slot.knob = knob.getName().str();
      for (mlir::Attribute a : *options) {
        std::string text;
        llvm::raw_string_ostream os(text);
        a.print(os);  // as the op printer prints `selected` (with its type)
        slot.printed.emplace(OptionText(a), text);
      }
      marker = absl::StrCat("__mtune_selected_", markers.size(), "__");
      knob.setSelectedAttr(b.getStringAttr(marker));
      knob.setOptionsAttr(b.getArrayAttr(*options));
      DropTemplateOnlyRules(knob);
      marker = "\"" + marker + "\"";
    } else if (auto alt = llvm::dyn_cast<AlternativesOp>(op)) {
      slot.knob = alt.getName().str();
      std::vector<std::string> labels = AlternativeLabels(alt);
      // The first label wins among duplicates, as in Instantiate().
      for (size_t i = labels.size(); i-- > 0;) slot.printed[labels[i]] = std::to_string(i);
      const int64_t sentinel = 900000000 + static_cast<int64_t>(markers.size());
      alt.setSelectedRegionAttrAttr(b.getIndexAttr(sentinel));
      DropTemplateOnlyRules(alt);
      marker = absl::StrCat("selected_region = ", sentinel);
      for (auto& [label, index] : slot.printed) index = "selected_region = " + index;
    } else {
      return;
    }
    markers.push_back(marker);
    result.slots_.push_back(std::move(slot));
  });
  if (!status.ok()) return status;
  // As in Instantiate(): constraints are checked by mtune, not left for the interpreter.
  for (mlir::Operation* op : constraints) op->erase();
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    // The markers do not verify; print the custom form regardless.
    module->get()->print(os, mlir::OpPrintingFlags().assumeVerified());
  }
  size_t from = 0;
  bool split = true;
  for (const std::string& marker : markers) {
    const size_t at = printed.find(marker, from);
    if (at == std::string::npos || printed.find(marker, at + marker.size()) != std::string::npos) {
      split = false;
      break;
    }
    result.segments_.push_back(printed.substr(from, at - from));
    from = at + marker.size();
  }
  result.segments_.push_back(printed.substr(from));

  // Splicing must give Instantiate()'s exact text; try the candidates at hand.
  if (split) {
    result.fast_ = true;
    std::vector<KnobValues> probes;
    if (auto defaults = result.space_.Defaults()) probes.push_back(*defaults);
    KnobValues last;
    for (const KnobSpec& k : result.space_.knobs) last[k.name] = k.options.back();
    if (result.space_.Check(last).ok()) probes.push_back(last);
    for (const KnobValues& probe : probes) {
      auto fast = result.Instantiate(probe);
      auto slow = mtune::strategies::Instantiate(template_text, problem, probe, registers);
      if (!fast.ok() || !slow.ok() || *fast != *slow) result.fast_ = false;
    }
  }
  if (!result.fast_) result.segments_.clear(), result.slots_.clear();
  return result;
}

absl::StatusOr<std::string> TemplateInstantiator::Instantiate(const KnobValues& values) const {
  if (!fast_) return mtune::strategies::Instantiate(template_text_, problem_, values, space_.registers);
  if (absl::Status s = space_.Check(values); !s.ok()) return s;
  std::string out = segments_[0];
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = slots_[i];
    auto value = values.find(slot.knob);
    auto printed = value == values.end() ? slot.printed.end() : slot.printed.find(value->second);
    if (printed == slot.printed.end())
      return absl::InvalidArgumentError(absl::StrCat("no value for knob '", slot.knob, "'"));
    out += printed->second;
    out += segments_[i + 1];
  }
  return out;
}

}  // namespace mtune::strategies
