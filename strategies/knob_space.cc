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
#include "strategies/mlir_support.h"
#include "strategies/option_forms.h"
#include "strategies/smt_constraints.h"
#include "strategies/template_policy.h"

namespace mtune::strategies {
namespace {

using mlir::transform::tune::AlternativesOp;
using mlir::transform::tune::KnobOp;

constexpr char kLabelsAttr[] = "mtune.labels";
constexpr char kDividesAttr[] = "mtune.divides";
constexpr char kOnlyForAttr[] = "mtune.only_for";
constexpr char kOtherwiseAttr[] = "mtune.otherwise";
constexpr char kLabelFamiliesAttr[] = "mtune.label_families";
constexpr char kDefaultForAttr[] = "mtune.default_for";
constexpr char kSplitsAttr[] = "mtune.splits";
constexpr char kOnlyWithAttr[] = "mtune.only_with";
constexpr char kStartPointsAttr[] = "mtune.start_points";
constexpr char kDerivedAttr[] = "mtune.derived";
constexpr char kTilesAttr[] = "mtune.tiles";
constexpr char kPaddedDefaultAttr[] = "mtune.padded_default";
constexpr char kRestDefaultAttr[] = "mtune.rest_default";
// Knob names and values travel in proto strings and canonical JSON, which both
// require UTF-8 (an invalid byte once made the JSON encoder throw).
bool IsUtf8(const std::string& text) {
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(text.data());
  return llvm::isLegalUTF8String(&begin, begin + text.size());
}

// Canonical text of one option attribute.
std::string OptionText(mlir::Attribute attr) {
  if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(attr)) return std::to_string(i.getInt());
  if (auto s = llvm::dyn_cast<mlir::StringAttr>(attr)) return s.getValue().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

// `mtune.only_for = ["family", ...]` with `mtune.otherwise = V` on a knob or an
// alternatives op: a choice that only matters to some of a template's families is
// the single option V for the others, else each of its options would be a duplicate
// candidate there (the same code compiled and measured again), or a candidate that
// cannot be good there. Returns V's text for a family not listed, nullopt for a
// listed one or an op without the attribute; `options` are the option texts.
absl::StatusOr<std::optional<std::string>> OnlyForOption(mlir::Operation* op,
                                                         const std::string& name,
                                                         const std::vector<std::string>& options,
                                                         const Problem& problem) {
  auto only_for = op->getAttrOfType<mlir::ArrayAttr>(kOnlyForAttr);
  if (!only_for) return std::nullopt;
  mlir::Attribute otherwise = op->getAttr(kOtherwiseAttr);
  if (!otherwise ||
      std::find(options.begin(), options.end(), OptionText(otherwise)) == options.end())
    return absl::InvalidArgumentError(absl::StrCat("knob '", name, "': ", kOnlyForAttr, " needs ",
                                                   kOtherwiseAttr, ", one of its options"));
  bool applies = false;
  for (mlir::Attribute family : only_for) {
    auto text = llvm::dyn_cast<mlir::StringAttr>(family);
    if (!text)
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", name, "': ", kOnlyForAttr, " must list family names"));
    applies |= text.getValue() == problem.family;
  }
  if (applies) return std::nullopt;
  return OptionText(otherwise);
}

// `mtune.only_with = {OTHER = ["v", ...], ...}` into spec.only_with (the knobs named
// are checked once every knob is known).
absl::Status ReadOnlyWith(mlir::Operation* op, KnobSpec& spec) {
  mlir::Attribute attr = op->getAttr(kOnlyWithAttr);
  if (!attr) return absl::OkStatus();
  const auto bad = absl::InvalidArgumentError(
      absl::StrCat("knob '", spec.name, "': ", kOnlyWithAttr, " must map knob names to lists of values"));
  auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(attr);
  if (!dict || dict.empty()) return bad;
  for (mlir::NamedAttribute entry : dict) {
    auto list = llvm::dyn_cast<mlir::ArrayAttr>(entry.getValue());
    if (!list || list.empty()) return bad;
    std::vector<std::string> values;
    for (mlir::Attribute value : list) values.push_back(OptionText(value));
    spec.only_with.emplace_back(entry.getName().str(), std::move(values));
  }
  return absl::OkStatus();
}

// `mtune.default_for = {FAMILY = V, ...}` on a knob or an alternatives op: V is the
// default for problems of that family, the op's own selection for the others, where
// the families of one template start best from different points (a row sum from
// 4-row tiles, a column sum from 8-row ones). V must be an option for the family.
absl::Status ApplyFamilyDefault(mlir::Operation* op, const Problem& problem, KnobSpec& spec) {
  mlir::Attribute attr = op->getAttr(kDefaultForAttr);
  if (!attr) return absl::OkStatus();
  auto families = llvm::dyn_cast<mlir::DictionaryAttr>(attr);
  if (!families)
    return absl::InvalidArgumentError(absl::StrCat("knob '", spec.name, "': ", kDefaultForAttr,
                                                   " must map family names to values"));
  mlir::Attribute value = families.get(problem.family);
  if (!value) return absl::OkStatus();
  const std::string text = OptionText(value);
  if (std::find(spec.options.begin(), spec.options.end(), text) == spec.options.end())
    return absl::InvalidArgumentError(absl::StrCat("knob '", spec.name, "': ", kDefaultForAttr,
                                                   " gives ", problem.family, " the default '", text,
                                                   "', which is not one of its options"));
  spec.default_value = text;
  return absl::OkStatus();
}

// `mtune.splits = "DIM"` on an alternatives op whose integer labels are factors that
// split dimension DIM (reduce_tiled's split_reduction): a factor larger than DIM is
// no option for the problem (the whole dimension is one masked partial tile: rows of
// 8 split by 32 ran at 10 GB/s, by 8 at 54). Where that drops the default, the
// largest factor left is the default, else the first label that is no factor.
absl::Status DropSplitsWiderThanTheDimension(AlternativesOp alt, const Problem& problem, KnobSpec& spec) {
  auto dim_name = alt->getAttrOfType<mlir::StringAttr>(kSplitsAttr);
  if (!dim_name) return absl::OkStatus();
  const int64_t dim = problem.Dim(dim_name.getValue().str());
  if (dim <= 0)
    return absl::InvalidArgumentError(absl::StrCat("alternatives '", spec.name, "': ", kSplitsAttr, " \"",
                                                   dim_name.getValue().str(), "\" is not a dimension of ",
                                                   problem.family));
  std::vector<std::string> kept;
  for (const std::string& label : spec.options) {
    const std::optional<int64_t> factor = IntegerValue(label);
    if (!factor || *factor <= dim) kept.push_back(label);
  }
  if (std::find(kept.begin(), kept.end(), spec.default_value) == kept.end()) {
    std::optional<int64_t> largest;
    std::string other;
    for (const std::string& label : kept) {
      const std::optional<int64_t> factor = IntegerValue(label);
      if (factor && (!largest || *factor > *largest)) largest = factor;
      if (!factor && other.empty()) other = label;
    }
    spec.default_value = largest ? std::to_string(*largest) : other;
  }
  spec.options = std::move(kept);
  return absl::OkStatus();
}

// `mtune.label_families = {LABEL = ["family", ...], ...}` on an alternatives op: a
// region that only suits some of a template's families (reading an operand in place
// where another family stores it transposed) is not an option for the others. The
// default region must stay an option.
absl::Status KeepLabelsForFamily(AlternativesOp alt, const Problem& problem, KnobSpec& spec) {
  auto families = alt->getAttrOfType<mlir::DictionaryAttr>(kLabelFamiliesAttr);
  if (!families) return absl::OkStatus();
  for (mlir::NamedAttribute entry : families) {
    const std::string label = entry.getName().str();
    auto list = llvm::dyn_cast<mlir::ArrayAttr>(entry.getValue());
    if (std::find(spec.options.begin(), spec.options.end(), label) == spec.options.end() || !list)
      return absl::InvalidArgumentError(
          absl::StrCat("alternatives '", spec.name, "': ", kLabelFamiliesAttr,
                       " must map region labels to lists of families; '", label, "' is not"));
    bool applies = false;
    for (mlir::Attribute family : list) {
      auto text = llvm::dyn_cast<mlir::StringAttr>(family);
      if (!text)
        return absl::InvalidArgumentError(absl::StrCat(
            "alternatives '", spec.name, "': ", kLabelFamiliesAttr, " must list family names"));
      applies |= text.getValue() == problem.family;
    }
    if (applies) continue;
    if (label == spec.default_value)
      return absl::InvalidArgumentError(
          absl::StrCat("alternatives '", spec.name, "': the default region '", label,
                       "' must be an option for every family (", kLabelFamiliesAttr, ")"));
    spec.options.erase(std::find(spec.options.begin(), spec.options.end(), label));
  }
  return absl::OkStatus();
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
  std::vector<std::string> texts;
  for (mlir::Attribute a : result) texts.push_back(OptionText(a));
  auto only = OnlyForOption(knob, name, texts, problem);
  if (!only.ok()) return only.status();
  if (*only) result = {result[std::find(texts.begin(), texts.end(), **only) - texts.begin()]};
  if (result.size() > kMaxOptions)
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", name, "' expands to more than ", kMaxOptions, " options"));
  return result;
}

// The default of a tile knob that declares `mtune.tiles = "DIM"` and one of
// - `mtune.padded_default = "FORM"`, for a dimension tiled whole and padded to whole
//   tiles: the template's choice (`default_value`) while it pads DIM by at most an
//   eighth of DIM; otherwise, of the values FORM lists (in order) that are options,
//   the one that pads least, the first among equals. A default made for round shapes
//   (m blocks of 128) would otherwise compute a quarter more than m = 513 needs, when
//   the whole of m (513) pads nothing.
// - `mtune.rest_default = "FORM"`, for a dimension the template splits into whole
//   tiles and one rest tile (conv's F): the template's choice while it divides DIM;
//   otherwise, of the values FORM lists that are options and at most DIM, the one
//   that leaves the smallest rest (DIM mod value), the first among equals (list the
//   widest first). Whole tiles run at full speed, so the rest is what costs; where
//   every width leaves the same rest, the widest whole tiles win. Measured on conv
//   30x30x64 3x3: F = 100 leaves 4 with 32, 16 or 8 alike, and 32 ran at 160
//   GFLOP/s, 16 at 162, 8 at 97, where the padded rule took the 8 that pads least;
//   F = 48, 40, 24 ran fastest with the 16, 8, 8 this rule takes.
// Unchanged when no value of FORM qualifies.
absl::Status ApplyTileDefault(KnobOp knob, const Problem& problem, KnobSpec& spec) {
  auto tiles = knob->getAttrOfType<mlir::StringAttr>(kTilesAttr);
  auto padded = knob->getAttrOfType<mlir::StringAttr>(kPaddedDefaultAttr);
  auto rest = knob->getAttrOfType<mlir::StringAttr>(kRestDefaultAttr);
  if (!tiles && !padded && !rest) return absl::OkStatus();
  if (!tiles || (padded != nullptr) == (rest != nullptr))
    return absl::InvalidArgumentError(absl::StrCat("knob '", spec.name, "': ", kTilesAttr,
                                                   " goes with one of ", kPaddedDefaultAttr, " and ",
                                                   kRestDefaultAttr));
  const char* attr_name = padded ? kPaddedDefaultAttr : kRestDefaultAttr;
  const int64_t dim = problem.Dim(tiles.getValue().str());
  if (dim <= 0)
    return absl::InvalidArgumentError(absl::StrCat("knob '", spec.name, "': ", kTilesAttr, " \"",
                                                   tiles.getValue().str(),
                                                   "\" is not a dimension of ", problem.family));
  auto fallbacks = ExpandTermsInOrder((padded ? padded : rest).getValue().str(), problem, spec.name);
  if (!fallbacks.ok()) return fallbacks.status();
  if (fallbacks->size() > kMaxOptions)
    return absl::InvalidArgumentError(absl::StrCat("knob '", spec.name, "': ", attr_name,
                                                   " expands to more than ", kMaxOptions, " values"));
  // What a tile costs beyond whole tiles: the padding, or the rest left to split off.
  auto waste = [dim, split = rest != nullptr](int64_t tile) {
    return split ? dim % tile : (tile - dim % tile) % tile;
  };
  const std::optional<int64_t> current = IntegerValue(spec.default_value);
  if (padded) {
    spec.tiled_extent = dim;
    if (current && *current > 0 && !PadsMoreThanAnEighth(*current, dim)) return absl::OkStatus();
  } else if (current && *current > 0 && *current <= dim && dim % *current == 0) {
    return absl::OkStatus();
  }
  std::optional<int64_t> best;
  for (int64_t value : *fallbacks) {
    if (value <= 0 || (rest && value > dim) ||
        std::find(spec.options.begin(), spec.options.end(), std::to_string(value)) == spec.options.end())
      continue;
    if (!best || waste(value) < waste(*best)) best = value;
  }
  if (best) spec.default_value = std::to_string(*best);
  return absl::OkStatus();
}

}  // namespace

bool PadsMoreThanAnEighth(int64_t tile, int64_t extent) {
  return 8 * ((tile - extent % tile) % tile) > extent;
}

namespace {

// `mtune.start_points` of `@__transform_main` into space.start_points (after the knobs
// are known, so that a misspelt knob name is an error rather than a point that
// silently equals the default).
absl::Status ReadStartPoints(mlir::ModuleOp module, KnobSpace& space) {
  mlir::Operation* main = nullptr;
  module->walk([&](mlir::transform::NamedSequenceOp op) {
    if (op.getSymName() == mlir::transform::TransformDialect::kTransformEntryPointSymbolName)
      main = op;
  });
  if (main == nullptr) return absl::OkStatus();
  mlir::Attribute attr = main->getAttr(kStartPointsAttr);
  if (!attr) return absl::OkStatus();
  auto points = llvm::dyn_cast<mlir::ArrayAttr>(attr);
  if (!points)
    return absl::InvalidArgumentError(absl::StrCat(kStartPointsAttr, " must be an array of dictionaries"));
  for (mlir::Attribute point : points) {
    auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(point);
    if (!dict)
      return absl::InvalidArgumentError(absl::StrCat(kStartPointsAttr, " must be an array of dictionaries"));
    KnobValues values;
    for (mlir::NamedAttribute entry : dict) {
      const std::string name = entry.getName().str();
      if (std::none_of(space.knobs.begin(), space.knobs.end(),
                       [&](const KnobSpec& k) { return k.name == name; }))
        return absl::InvalidArgumentError(
            absl::StrCat(kStartPointsAttr, " names knob '", name, "', which the template does not declare"));
      values[name] = OptionText(entry.getValue());
    }
    space.start_points.push_back(std::move(values));
  }
  return absl::OkStatus();
}

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

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ParseTemplate(absl::string_view text,
                                                                mlir::MLIRContext* context) {
  // Every template, built in or not, passes the policy: it is code workers run.
  if (absl::Status size = CheckTemplateSize(text); !size.ok()) return size;
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

bool KnobSpace::SatisfiesConstraints(const KnobValues& values) const {
  for (const KnobSpec& k : knobs) {
    if (k.divides.empty()) continue;
    auto mine = values.find(k.name), other = values.find(k.divides);
    if (mine == values.end() || other == values.end()) return false;
    const std::optional<int64_t> a = IntegerValue(mine->second), b = IntegerValue(other->second);
    if (!a || !b || *a <= 0 || *b % *a != 0) return false;
  }
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
  for (const KnobSpec& k : knobs)
    if (!k.divides.empty() && !SatisfiesConstraints(values))
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
                                                   absl::StrJoin(read, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<KnobSpace> ExtractKnobSpace(absl::string_view template_text, const Problem& problem) {
  mlir::MLIRContext* context = ThreadContext();
  auto module = ParseTemplate(template_text, context);
  if (!module.ok()) return module.status();
  KnobSpace space;
  absl::Status status;
  std::set<std::string> names;
  (*module)->walk([&](mlir::Operation* op) {
    if (!status.ok()) return;
    if (llvm::isa<mlir::transform::smt::ConstrainParamsOp>(op)) {
      auto constraint = CompileParamConstraint(op, problem);
      if (constraint.ok())
        space.constraints.push_back(std::move(*constraint));
      else
        status = constraint.status();
      return;
    }
    KnobSpec spec;
    if (auto knob = llvm::dyn_cast<KnobOp>(op)) {
      spec.name = knob.getName().str();
      auto options = ExpandOptions(knob, problem);
      if (!options.ok()) {
        status = options.status();
        return;
      }
      for (mlir::Attribute a : *options) spec.options.push_back(OptionText(a));
      if (auto selected = knob.getSelectedAttr()) {
        std::string text = OptionText(selected);
        spec.selected = text;
        if (std::find(spec.options.begin(), spec.options.end(), text) != spec.options.end())
          spec.default_value = text;
      }
      if (auto divides = op->getAttrOfType<mlir::StringAttr>(kDividesAttr))
        spec.divides = divides.getValue().str();
      if (absl::Status with = ReadOnlyWith(op, spec); !with.ok()) {
        status = with;
        return;
      }
      spec.derived = op->hasAttr(kDerivedAttr);
      if (absl::Status family = ApplyFamilyDefault(op, problem, spec); !family.ok()) {
        status = family;
        return;
      }
      if (absl::Status tiled = ApplyTileDefault(knob, problem, spec); !tiled.ok()) {
        status = tiled;
        return;
      }
    } else if (auto alt = llvm::dyn_cast<AlternativesOp>(op)) {
      spec.name = alt.getName().str();
      spec.is_alternatives = true;
      spec.options = AlternativeLabels(alt);
      if (spec.options.empty()) {
        status = absl::InvalidArgumentError(
            absl::StrCat("alternatives '", spec.name, "' have no regions"));
        return;
      }
      if (auto selected = alt.getSelectedRegionAttr(); selected && selected->getZExtValue() <
                                                                        spec.options.size())
        spec.default_value = spec.options[selected->getZExtValue()];
      if (absl::Status kept = KeepLabelsForFamily(alt, problem, spec); !kept.ok()) {
        status = kept;
        return;
      }
      auto only = OnlyForOption(alt, spec.name, spec.options, problem);
      if (!only.ok()) {
        status = only.status();
        return;
      }
      if (*only) spec.options = {**only}, spec.default_value = **only;
      if (absl::Status split = DropSplitsWiderThanTheDimension(alt, problem, spec); !split.ok()) {
        status = split;
        return;
      }
      if (spec.options.empty()) {
        status = absl::InvalidArgumentError(absl::StrCat("alternatives '", spec.name, "': ", kSplitsAttr,
                                                         " leaves no option for ", problem.Key()));
        return;
      }
      if (absl::Status family = ApplyFamilyDefault(op, problem, spec); !family.ok()) {
        status = family;
        return;
      }
      spec.selected = spec.default_value;
    } else {
      return;
    }
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
  if (absl::Status read = ReadStartPoints(**module, space); !read.ok()) return read;
  for (const KnobSpec& k : space.knobs)
    for (const auto& [other, allowed] : k.only_with) {
      auto it = std::find_if(space.knobs.begin(), space.knobs.end(),
                             [&](const KnobSpec& o) { return o.name == other; });
      if (it == space.knobs.end() || it->name == k.name)
        return absl::InvalidArgumentError(absl::StrCat("knob '", k.name, "': ", kOnlyWithAttr, " names knob '",
                                                       other, "', which is not another knob of the template"));
      if (k.default_value.empty())
        return absl::InvalidArgumentError(
            absl::StrCat("knob '", k.name, "': ", kOnlyWithAttr, " needs a default to hold it at"));
    }
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
                                        const KnobValues& values) {
  auto space = ExtractKnobSpace(template_text, problem);
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
      // Expanded arrays let the upstream verifier check `selected` too.
      knob.setOptionsAttr(b.getArrayAttr(*options));
    } else if (auto alt = llvm::dyn_cast<AlternativesOp>(op)) {
      std::vector<std::string> labels = AlternativeLabels(alt);
      const std::string& want = values.at(alt.getName().str());
      auto it = std::find(labels.begin(), labels.end(), want);
      alt.setSelectedRegionAttrAttr(b.getIndexAttr(it - labels.begin()));
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
                                                                 const Problem& problem) {
  TemplateInstantiator result;
  result.template_text_ = std::string(template_text);
  result.problem_ = problem;
  auto space = ExtractKnobSpace(template_text, problem);
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
      marker = "\"" + marker + "\"";
    } else if (auto alt = llvm::dyn_cast<AlternativesOp>(op)) {
      slot.knob = alt.getName().str();
      std::vector<std::string> labels = AlternativeLabels(alt);
      // The first label wins among duplicates, as in Instantiate().
      for (size_t i = labels.size(); i-- > 0;) slot.printed[labels[i]] = std::to_string(i);
      const int64_t sentinel = 900000000 + static_cast<int64_t>(markers.size());
      alt.setSelectedRegionAttrAttr(b.getIndexAttr(sentinel));
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
      auto slow = mtune::strategies::Instantiate(template_text, problem, probe);
      if (!fast.ok() || !slow.ok() || *fast != *slow) result.fast_ = false;
    }
  }
  if (!result.fast_) result.segments_.clear(), result.slots_.clear();
  return result;
}

absl::StatusOr<std::string> TemplateInstantiator::Instantiate(const KnobValues& values) const {
  if (!fast_) return mtune::strategies::Instantiate(template_text_, problem_, values);
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
