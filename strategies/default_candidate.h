// The candidate a template means by default for one problem.
//
// A template's `selected` values are written once for all problems, so for a given
// problem they may not be options (a 256 k tile when k=67 offers at most 128) or may
// break a constraint (an 8x32 accumulator tile is 16 zmm registers for f32 but 32 for
// f64, which spills). Everything that starts from "the default" (the coordinator's
// first proposal, `mtune measure`, the benches) takes it from here, so they agree.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "strategies/knob_space.h"

namespace mtune::strategies {

// `values` with its derived knobs (`mtune.derived`, except those named in `keep`)
// set so that the constraints hold: the values as given when they hold, else the
// first combination of the derived knobs' options that does (in option order).
// Derived knobs absent from `values` are added (a search point names only the free
// knobs). nullopt when none does (or there are over 256 combinations).
std::optional<KnobValues> SolveDerivedKnobs(const KnobSpace& space, KnobValues values,
                                            const std::set<std::string>& keep = {});

// Every knob's `selected` value where that is an option for this problem; else, for
// numeric knobs, the option nearest to it on a log scale (ties: the smaller), else
// the first option. Constraints are not checked.
KnobValues NearestDefaults(const KnobSpace& space);

// NearestDefaults() when it satisfies the constraints. Otherwise the first of the
// template's `mtune.fallback_defaults` (knob_space.h) applied to it, as a start point
// is in StartingCandidates, that satisfies them; otherwise the valid
// candidate that changes the fewest knobs (at most four, and each count only while
// its combinations number at most two million), then the least (summed distance in
// option positions); ties go to the knob declared last, because templates declare coarse
// choices (cache tiles) before fine ones (register tiles) and changing a fine one
// perturbs the strategy least. Derived knobs (`mtune.derived`) are not counted as
// changes: each candidate considered takes the first of their values (its own, then
// in option order) for which the constraints hold. nullopt when no such candidate exists.
std::optional<KnobValues> DefaultCandidate(const KnobSpace& space);

// What a search tries before anything else: DefaultCandidate(), then each of the
// template's `mtune.start_points` (knob_space.h) applied to it, without duplicates.
// A start point's value that is not an option for this problem, or a tile that would
// pad its dimension by more than an eighth (the rule `mtune.padded_default` applies
// to the default), keeps the default's value; derived knobs are solved again, and a
// point whose constraints cannot hold is left out. Empty when there is no default.
std::vector<KnobValues> StartingCandidates(const KnobSpace& space);

}  // namespace mtune::strategies
