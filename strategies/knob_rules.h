// The `mtune.*` attributes a template puts on its knobs and alternatives, each a rule
// that shapes one problem's knob space: which options a family has (only_for,
// label_families, option_families, splits), which default it starts from
// (default_for, padded_default, rest_default), which knobs are free only with others
// (only_with), and the template's start points. Internal to strategies/: ExtractKnobSpace applies them in order. Each
// rule's reason, with the figures that decided it, is in knob_rules.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mlir/Dialect/Transform/TuneExtension/TuneExtensionOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"

namespace mtune::strategies {

using mlir::transform::tune::AlternativesOp;
using mlir::transform::tune::KnobOp;

// Canonical text of one option attribute (an integer's digits, a string's value).
std::string OptionText(mlir::Attribute attr);

// `mtune.only_for` / `mtune.otherwise`: the single option text for a family not
// listed; nullopt for a listed family or an op without the attribute. Errors name
// the op as "knob 'NAME'" or "alternatives 'NAME'".
absl::StatusOr<std::optional<std::string>> OnlyForOption(mlir::Operation* op, const std::string& name,
                                                         const std::vector<std::string>& options,
                                                         const Problem& problem);

// `mtune.only_with` into spec.only_with; CheckOnlyWith() validates the knobs named
// once every knob is known.
absl::Status ReadOnlyWith(mlir::Operation* op, KnobSpec& spec);
absl::Status CheckOnlyWith(const KnobSpace& space);

// `mtune.default_for`: the family's own default, which must be one of its options.
absl::Status ApplyFamilyDefault(mlir::Operation* op, const Problem& problem, KnobSpec& spec);

// `mtune.splits`: drops split factors wider than the dimension (the default falls to
// the largest left); an error when nothing is left.
absl::Status DropSplitsWiderThanTheDimension(AlternativesOp alt, const Problem& problem, KnobSpec& spec);

// `mtune.label_families` and `mtune.label_types`: drops the regions that are no
// option for the family or the element type.
absl::Status KeepLabelsForFamily(AlternativesOp alt, const Problem& problem, KnobSpec& spec);

// `mtune.option_families`: of a knob's expanded `options`, those for the family.
absl::StatusOr<std::vector<mlir::Attribute>> KeepKnobOptionsForFamily(KnobOp knob, const Problem& problem,
                                                                     std::vector<mlir::Attribute> options);

// `mtune.tiles` with `mtune.padded_default` or `mtune.rest_default`: a tile's default
// for the problem's extent of that dimension.
absl::Status ApplyTileDefault(KnobOp knob, const Problem& problem, KnobSpec& spec);

// Removes from `op` the rules that choose a knob's default or its options per
// problem (`mtune.default_for`, `mtune.tiles` with `mtune.padded_default` or
// `mtune.rest_default`, `mtune.label_families`, `mtune.label_types`,
// `mtune.option_families`). An instantiated script selects one candidate's values
// for one problem, so read back as a template its defaults must be those values:
// not a tile the rules prefer for the problem (a 64-wide channel tile of a
// 16-channel depthwise convolution read back as 16), and not refused because the
// value is no option for another element type (a `dot` lowering of an f32 matmul,
// which bf16 lacks).
void DropTemplateOnlyRules(mlir::Operation* op);

// `mtune.start_points` and `mtune.fallback_defaults` of `@__transform_main` into
// space.start_points and space.fallback_defaults, option forms in them
// ("roundup(k, 1)") evaluated for `problem`.
absl::Status ReadStartPoints(mlir::ModuleOp module, const Problem& problem, KnobSpace& space);

}  // namespace mtune::strategies
