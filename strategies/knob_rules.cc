#include "strategies/knob_rules.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "strategies/option_forms.h"

namespace mtune::strategies {
namespace {

constexpr char kOnlyForAttr[] = "mtune.only_for";
constexpr char kOtherwiseAttr[] = "mtune.otherwise";
constexpr char kLabelFamiliesAttr[] = "mtune.label_families";
constexpr char kLabelTypesAttr[] = "mtune.label_types";
constexpr char kOptionFamiliesAttr[] = "mtune.option_families";
constexpr char kDefaultForAttr[] = "mtune.default_for";
constexpr char kSplitsAttr[] = "mtune.splits";
constexpr char kOnlyWithAttr[] = "mtune.only_with";
constexpr char kStartPointsAttr[] = "mtune.start_points";
constexpr char kFallbackDefaultsAttr[] = "mtune.fallback_defaults";
constexpr char kTilesAttr[] = "mtune.tiles";
constexpr char kPaddedDefaultAttr[] = "mtune.padded_default";
constexpr char kRestDefaultAttr[] = "mtune.rest_default";

// How errors name the op a rule sits on: "knob 'x'" or "alternatives 'x'".
std::string Subject(bool is_alternatives, const std::string& name) {
  return absl::StrCat(is_alternatives ? "alternatives '" : "knob '", name, "'");
}
std::string Subject(const KnobSpec& spec) { return Subject(spec.is_alternatives, spec.name); }

}  // namespace

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
  const std::string subject = Subject(llvm::isa<AlternativesOp>(op), name);
  mlir::Attribute otherwise = op->getAttr(kOtherwiseAttr);
  if (!otherwise ||
      std::find(options.begin(), options.end(), OptionText(otherwise)) == options.end())
    return absl::InvalidArgumentError(absl::StrCat(subject, ": ", kOnlyForAttr, " needs ",
                                                   kOtherwiseAttr, ", one of its options"));
  bool applies = false;
  for (mlir::Attribute family : only_for) {
    auto text = llvm::dyn_cast<mlir::StringAttr>(family);
    if (!text)
      return absl::InvalidArgumentError(
          absl::StrCat(subject, ": ", kOnlyForAttr, " must list family names"));
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
      absl::StrCat(Subject(spec), ": ", kOnlyWithAttr, " must map knob names to lists of values"));
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
    return absl::InvalidArgumentError(absl::StrCat(Subject(spec), ": ", kDefaultForAttr,
                                                   " must map family names to values"));
  mlir::Attribute value = families.get(problem.family);
  if (!value) return absl::OkStatus();
  const std::string text = OptionText(value);
  if (std::find(spec.options.begin(), spec.options.end(), text) == spec.options.end())
    return absl::InvalidArgumentError(absl::StrCat(Subject(spec), ": ", kDefaultForAttr,
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
  if (kept.empty())
    return absl::InvalidArgumentError(absl::StrCat("alternatives '", spec.name, "': ", kSplitsAttr,
                                                   " leaves no option for ", problem.Key()));
  spec.options = std::move(kept);
  return absl::OkStatus();
}

namespace {

// What an option-restricting attribute lists: families ("matmul") or element types
// ("f32"), and the problem's own.
struct Restriction {
  const char* attr_name;
  const char* nouns;  // "families", "element types"
  const char* noun;   // "family", "element type"
  std::string of_problem;  // the problem's family or element type
};

// `ATTR = {OPTION = ["family", ...], ...}` on `op` (or element types, as
// `restriction` says), whose options are `options` and whose default is
// `default_value`: the options that only suit the families listed and are no option
// for `problem`'s. `what` names the op in errors. The default must stay an option
// for every family.
absl::StatusOr<std::vector<std::string>> OptionsNotFor(mlir::Operation* op, const Restriction& restriction,
                                                       const std::string& what,
                                                       const std::vector<std::string>& options,
                                                       const std::string& default_value) {
  std::vector<std::string> dropped;
  const char* attr_name = restriction.attr_name;
  mlir::Attribute attr = op->getAttr(attr_name);
  if (!attr) return dropped;
  auto lists = llvm::dyn_cast<mlir::DictionaryAttr>(attr);
  if (!lists)
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", attr_name, " must map options to lists of ", restriction.nouns));
  for (mlir::NamedAttribute entry : lists) {
    const std::string option = entry.getName().str();
    auto list = llvm::dyn_cast<mlir::ArrayAttr>(entry.getValue());
    if (std::find(options.begin(), options.end(), option) == options.end() || !list)
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", attr_name, " must map options to lists of ",
                                                     restriction.nouns, "; '", option, "' is not"));
    bool applies = false;
    for (mlir::Attribute name : list) {
      auto text = llvm::dyn_cast<mlir::StringAttr>(name);
      if (!text)
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": ", attr_name, " must list ", restriction.noun, " names"));
      applies |= text.getValue() == restriction.of_problem;
    }
    if (option == default_value)
      return absl::InvalidArgumentError(absl::StrCat(what, ": the default '", option, "' must be an option for every ",
                                                     restriction.noun, " (", attr_name, ")"));
    if (!applies) dropped.push_back(option);
  }
  return dropped;
}

Restriction ByFamily(const char* attr_name, const Problem& problem) {
  return {attr_name, "families", "family", problem.family};
}

}  // namespace

// `mtune.label_families = {LABEL = ["family", ...], ...}` on an alternatives op: a
// region that only suits some of a template's families (reading an operand in place
// where another family stores it transposed) is not an option for the others.
// `mtune.label_types = {LABEL = ["f32", ...], ...}` does the same by the problem's
// element type (matmul_packed's contraction lowerings other than outerproduct leave
// a bf16 x bf16 -> f32 vector.contract that nothing lowers to LLVM).
absl::Status KeepLabelsForFamily(AlternativesOp alt, const Problem& problem, KnobSpec& spec) {
  const std::string what = absl::StrCat("alternatives '", spec.name, "'");
  for (const Restriction& restriction :
       {ByFamily(kLabelFamiliesAttr, problem),
        Restriction{kLabelTypesAttr, "element types", "element type", problem.element_type}}) {
    auto dropped = OptionsNotFor(alt, restriction, what, spec.options, spec.default_value);
    if (!dropped.ok()) return dropped.status();
    for (const std::string& label : *dropped)
      if (auto it = std::find(spec.options.begin(), spec.options.end(), label); it != spec.options.end())
        spec.options.erase(it);
  }
  return absl::OkStatus();
}

// `mtune.option_families = {"VALUE" = ["family", ...], ...}` on a knob whose options
// are a literal array: a value that only suits some of a template's families is no
// option for the others. copy_tiled's 1-row tiles: a copy 1024x2048 ran 2.35x faster
// with 1 x 64 tiles than with 16 x 16 ones, while a transpose with 1-row tiles never
// finishes in the interpreter (see the template).
absl::StatusOr<std::vector<mlir::Attribute>> KeepKnobOptionsForFamily(KnobOp knob, const Problem& problem,
                                                                     std::vector<mlir::Attribute> options) {
  if (!knob->hasAttr(kOptionFamiliesAttr)) return options;
  const std::string what = absl::StrCat("knob '", knob.getName().str(), "'");
  if (!llvm::isa<mlir::ArrayAttr>(knob.getOptionsAttr()))
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", kOptionFamiliesAttr, " needs options written as an array"));
  std::vector<std::string> texts;
  for (mlir::Attribute a : options) texts.push_back(OptionText(a));
  const std::string default_value = knob.getSelectedAttr() ? OptionText(knob.getSelectedAttr()) : "";
  auto dropped = OptionsNotFor(knob, ByFamily(kOptionFamiliesAttr, problem), what, texts, default_value);
  if (!dropped.ok()) return dropped.status();
  std::vector<mlir::Attribute> kept;
  for (size_t i = 0; i < options.size(); ++i)
    if (std::find(dropped->begin(), dropped->end(), texts[i]) == dropped->end()) kept.push_back(options[i]);
  return kept;
}

void DropTemplateOnlyRules(mlir::Operation* op) {
  for (const char* attr : {kDefaultForAttr, kTilesAttr, kPaddedDefaultAttr, kRestDefaultAttr,
                           kLabelFamiliesAttr, kLabelTypesAttr, kOptionFamiliesAttr})
    op->removeAttr(attr);
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

absl::Status CheckOnlyWith(const KnobSpace& space) {
  for (const KnobSpec& k : space.knobs)
    for (const auto& [other, allowed] : k.only_with) {
      auto it = std::find_if(space.knobs.begin(), space.knobs.end(),
                             [&](const KnobSpec& o) { return o.name == other; });
      if (it == space.knobs.end() || it->name == k.name)
        return absl::InvalidArgumentError(absl::StrCat(Subject(k), ": ", kOnlyWithAttr, " names knob '",
                                                       other, "', which is not another knob of the template"));
      if (k.default_value.empty())
        return absl::InvalidArgumentError(
            absl::StrCat(Subject(k), ": ", kOnlyWithAttr, " needs a default to hold it at"));
    }
  return absl::OkStatus();
}

namespace {

// One array-of-dictionaries attribute of `main` (`attr_name`) into `points`.
absl::Status ReadPoints(mlir::Operation* main, const char* attr_name, const Problem& problem,
                        const KnobSpace& space, std::vector<KnobValues>& points) {
  mlir::Attribute attr = main->getAttr(attr_name);
  if (!attr) return absl::OkStatus();
  auto list = llvm::dyn_cast<mlir::ArrayAttr>(attr);
  if (!list) return absl::InvalidArgumentError(absl::StrCat(attr_name, " must be an array of dictionaries"));
  for (mlir::Attribute point : list) {
    auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(point);
    if (!dict) return absl::InvalidArgumentError(absl::StrCat(attr_name, " must be an array of dictionaries"));
    KnobValues values;
    for (mlir::NamedAttribute entry : dict) {
      const std::string name = entry.getName().str();
      if (std::none_of(space.knobs.begin(), space.knobs.end(),
                       [&](const KnobSpec& k) { return k.name == name; }))
        return absl::InvalidArgumentError(
            absl::StrCat(attr_name, " names knob '", name, "', which the template does not declare"));
      std::string text = OptionText(entry.getValue());
      if (llvm::isa<mlir::StringAttr>(entry.getValue()) && text.find('(') != std::string::npos) {
        auto form = ExpandTermsInOrder(text, problem, name);
        if (!form.ok()) return form.status();
        if (form->size() != 1)
          return absl::InvalidArgumentError(absl::StrCat(attr_name, ": the value of knob '", name,
                                                         "' must be one term, not \"", text, "\""));
        text = std::to_string(form->front());
      }
      values[name] = std::move(text);
    }
    points.push_back(std::move(values));
  }
  return absl::OkStatus();
}

}  // namespace

// `mtune.start_points` and `mtune.fallback_defaults` of `@__transform_main` into
// space.start_points and space.fallback_defaults (after the knobs
// are known, so that a misspelt knob name is an error rather than a point that
// silently equals the default). A value written as an option form of one term
// ("roundup(k, 1)": the whole of k) is evaluated for `problem`, so that a point can
// name a tile relative to the problem's shape.
absl::Status ReadStartPoints(mlir::ModuleOp module, const Problem& problem, KnobSpace& space) {
  mlir::Operation* main = nullptr;
  module->walk([&](mlir::transform::NamedSequenceOp op) {
    if (op.getSymName() == mlir::transform::TransformDialect::kTransformEntryPointSymbolName)
      main = op;
  });
  if (main == nullptr) return absl::OkStatus();
  if (absl::Status read = ReadPoints(main, kStartPointsAttr, problem, space, space.start_points); !read.ok())
    return read;
  return ReadPoints(main, kFallbackDefaultsAttr, problem, space, space.fallback_defaults);
}

}  // namespace mtune::strategies
