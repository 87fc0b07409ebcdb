// Option forms: the string a knob's `options` may be instead of an array, expanded per
// problem ("32, 48, roundup(k, 16), divisors(ow, 16)"). Internal to strategies/ (the
// knob space and its default rules read them); README "How it works" lists the forms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "strategies/problem.h"

namespace mtune::strategies {

// Expanded option sets larger than this are refused: a typo like pow2(1, 1e9) must
// not turn into an endless space.
inline constexpr size_t kMaxOptions = 4096;

// The integer a knob value stands for, if it is one.
std::optional<int64_t> IntegerValue(absl::string_view text);

// The values of a string option form's terms (one term, or several separated by
// top-level commas), in the order written, duplicates kept. `knob` names the knob in
// errors: an unknown form, an operand that is neither an integer nor a dimension of
// the problem, unbalanced parentheses.
absl::StatusOr<std::vector<int64_t>> ExpandTermsInOrder(absl::string_view form, const Problem& problem,
                                                        absl::string_view knob);

// A string option form's values, the union of its terms' in ascending order
// (duplicates dropped).
absl::StatusOr<std::vector<int64_t>> ExpandOptionForm(absl::string_view form, const Problem& problem,
                                                      absl::string_view knob);

}  // namespace mtune::strategies
