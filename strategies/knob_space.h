// Knob spaces: the free choices of a strategy template for one problem, and the
// instantiation of a candidate (every knob selected) as a runnable script.
//
// Option sets. A knob's `options` is either a literal array attribute or a string
// in a small form that mtune expands per problem:
//   "pow2(LO, HI)"   every power of two p with LO <= p <= max(HI, LO): a tile of
//                    at least the dimension covers it whole, padded
//   "divisors(X)"    every divisor of X
//   "divisors(X, MAX)"  every divisor of X up to MAX (register tiles must stay small)
//   "roundup(X, Q)"  X rounded up to a multiple of Q (a tile covering an odd
//                    dimension whole: k = 129 -> 144 with Q = 16)
//   "rounddown(X, Q)"  X rounded down to a multiple of Q (the whole tiles of Q
//                    in X, 0 when Q > X: where a partial last tile is split off)
//   "N"              the integer N
// where LO, HI, X, MAX, Q and N are integers or problem dimension names ("m", "n",
// "k", and the derived output extents "oh", "ow" of windowed families). Terms joined
// by commas ("32, 48, 64, roundup(k, 16)") give the union of their options, in
// ascending order.
// `mtune.only_for = ["family", ...]` with `mtune.otherwise = V` on a knob or an
// alternatives op: for any other family the knob has the single option V (a choice
// that does not apply there).
// `mtune.label_families = {LABEL = ["family", ...]}` on an alternatives op: the region
// LABEL is an option only for the families listed (the default region must not be
// restricted). `mtune.label_types = {LABEL = ["f32", ...]}`: the same by the
// problem's element type.
// `mtune.option_families = {"VALUE" = ["family", ...]}` on a knob with literal array
// options: the same for a knob's values (copy_tiled's 1-row tiles, copies only).
// `mtune.derived` on a knob: its value is not a free choice but follows from the other
// knobs through the constraints (e.g. "peel the last register tile" exactly when the
// register tile does not divide the cache tile); the default repair and `--knob`
// overrides solve it rather than count it as a changed knob (default_candidate.h).
// `mtune.tiles = "DIM"` with `mtune.padded_default = "FORM"` on a tile knob: where the
// template's `selected` tile pads dimension DIM by more than an eighth of it (m = 513
// in blocks of 128), the default is instead the value of FORM (an option form, read
// in order: "roundup(m, 1)") that is an option and pads DIM least. The options and
// the search space are unchanged; only the default candidate moves.
// `mtune.start_points = [{KNOB = VALUE, ...}, ...]` on `@__transform_main`: candidates
// the template's author knows to be good on some machines (the default is written for
// one): each is the default with these knobs changed, proposed right after it, before
// any search (see StartingCandidates in default_candidate.h). A knob name that the
// template does not declare is an error. A value may be an option form of one term
// ("roundup(k, 1)"), evaluated per problem.
// `mtune.fallback_defaults = [{KNOB = VALUE, ...}, ...]` on `@__transform_main`, in
// the same form: where the template's default breaks a constraint for a problem and
// target (a register tile too large for AVX2's registers), the first of these points
// (applied to the default as a start point is) that holds is the default candidate,
// before any search for the nearest valid one (see DefaultCandidate).
// Alternatives (`transform.tune.alternatives`) are knobs whose options are their
// region labels, taken from the op's `mtune.labels` array (else "0", "1", ...).
// A candidate names an option by its text, so a knob's options (as they print) and
// an op's labels must all differ: one listed twice is an error.
//
// Constraints. `mtune.divides = "OTHER"` on a knob requires its value to divide
// the value of knob OTHER. `mtune.only_with = {OTHER = ["v", ...]}` on a knob (or
// alternatives op) that only some choices of OTHER read (reduce_tiled's tile_n, read
// only without a split; copy_tiled's edge_tiles, ignored by 1-row tiles) holds it at its default whenever OTHER is not one of those values, so that the
// same code is never a second candidate. Any other relation (footprints that must fit a cache,
// products of tiles, ...) is declared with upstream `transform.smt.constrain_params`
// over knob results (see param_constraint.h for what mtune evaluates), with an
// optional `mtune.rule = "..."` saying in words what it requires. Candidates
// breaking a constraint are pruned before compiling, and Instantiate removes the
// constrain_params ops (the interpreter would fail on them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "strategies/candidate.h"
#include "strategies/param_constraint.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

// One free choice of a template.
struct KnobSpec {
  std::string name;
  // True for `transform.tune.alternatives` (a choice of region).
  bool is_alternatives = false;
  // Canonical value texts, in template order.
  std::vector<std::string> options;
  // The template's `selected` value when it is among `options` (or the value of
  // `mtune.default_for` or `mtune.padded_default` that replaces it for this
  // problem), else empty.
  std::string default_value;
  // The template's `selected` value as written, even when it is not an option for
  // this problem (a 256 tile of k=67); empty when the template selects nothing.
  std::string selected;
  // Name of the knob whose value this one must divide, or empty.
  std::string divides;
  // `mtune.only_with`: this knob is free only while each named knob has one of the
  // listed values, else it must be at its default.
  std::vector<std::pair<std::string, std::vector<std::string>>> only_with;
  // `mtune.derived`: fixed by the constraints once the other knobs are chosen.
  bool derived = false;
  // With `mtune.tiles = "DIM"`: DIM's extent in this problem (0 otherwise), so that a
  // start point's tile padding DIM by more than an eighth gives way to the default's.
  int64_t tiled_extent = 0;
};

// The rule of `mtune.padded_default`: whether a tile pads a dimension of `extent`
// (to a multiple of the tile) by more than an eighth of it.
bool PadsMoreThanAnEighth(int64_t tile, int64_t extent);

// Every knob of a template for one problem, in template order.
struct KnobSpace {
  std::vector<KnobSpec> knobs;
  // The template's transform.smt.constrain_params, compiled for the problem and for
  // `registers`.
  std::vector<ParamConstraint> constraints;
  // The target register file the constraints were compiled for.
  VectorRegisters registers;
  // `mtune.start_points` as written: knob name -> option text, one map per point.
  std::vector<KnobValues> start_points;
  // `mtune.fallback_defaults`, likewise.
  std::vector<KnobValues> fallback_defaults;
  // `mtune.cpu_features` of the template (template_requirements.h): LLVM feature
  // names its kernels need; empty: none.
  std::vector<std::string> cpu_features;

  // Number of candidates before constraints (saturates at UINT64_MAX).
  uint64_t Size() const;
  // The template's default candidate as written (with `mtune.padded_default` applied),
  // if every knob's default value is an option for this problem and the constraints hold (see
  // default_candidate.h for the nearest valid candidate otherwise).
  std::optional<KnobValues> Defaults() const;
  // OK when every knob has exactly one value among its options and every
  // constraint holds; InvalidArgument naming the first problem otherwise.
  absl::Status Check(const KnobValues& values) const;
  // True when the declared constraints hold (values assumed to be options).
  bool SatisfiesConstraints(const KnobValues& values) const;
  // Whether `k` is at its default or free under its `mtune.only_with`.
  bool OnlyWithHolds(const KnobSpec& k, const KnobValues& values) const;
};

// Parses `template_text` and expands its knobs for `problem` on a target with
// `registers` (the built-in templates' own target, AVX-512, unless given: callers
// that know where the kernels will run pass its register file). InvalidArgument
// (with MLIR diagnostics) when the template does not parse or a knob is malformed:
// duplicate names, empty or unknown option sets, dangling constraints.
absl::StatusOr<KnobSpace> ExtractKnobSpace(absl::string_view template_text, const Problem& problem,
                                           const VectorRegisters& registers = VectorRegisters::Avx512());

// The template with every knob's options expanded and `selected` set to `values`
// (alternatives: `selected_region`). Runs unchanged in mlir-opt --transform-interpreter.
// InvalidArgument when a value is missing, unknown or outside its options.
// `registers` as for ExtractKnobSpace.
absl::StatusOr<std::string> Instantiate(absl::string_view template_text, const Problem& problem,
                                        const KnobValues& values,
                                        const VectorRegisters& registers = VectorRegisters::Avx512());

// Instantiate() for many candidates of one (template, problem): parses, expands and
// prints the template once, then builds each script by splicing the selected values
// into the printed text (microseconds instead of milliseconds: the coordinator
// instantiates every task it queues). Gives exactly Instantiate()'s text; checked
// against it on creation, and Instantiate() itself is used when they would differ.
class TemplateInstantiator {
 public:
  // InvalidArgument as ExtractKnobSpace.
  static absl::StatusOr<TemplateInstantiator> Create(
      absl::string_view template_text, const Problem& problem,
      const VectorRegisters& registers = VectorRegisters::Avx512());
  const KnobSpace& space() const { return space_; }
  // Same contract as Instantiate(template_text, problem, values, registers).
  absl::StatusOr<std::string> Instantiate(const KnobValues& values) const;
  // False when splicing could not reproduce Instantiate() for this template.
  bool fast() const { return fast_; }

 private:
  std::string template_text_;
  Problem problem_;
  KnobSpace space_;
  bool fast_ = false;
  // Printed template split at each knob's selected value: segments_.size() ==
  // slots_.size() + 1.
  std::vector<std::string> segments_;
  struct Slot {
    std::string knob;
    // Option text (as in KnobValues) -> its text in the printed script.
    std::map<std::string, std::string> printed;
  };
  std::vector<Slot> slots_;
};

}  // namespace mtune::strategies
