// `mtune space`: a template's search space for one problem, for template authors and
// for choosing a job's trials: the knobs with their options and defaults, how many
// candidates are valid, and (with --audit) whether each free knob changes the code.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/measure_command.h"
#include "nlohmann/json.hpp"

namespace mtune::client {

// The space of `request`'s problem and template (its knobs are ignored) as JSON:
// template, problem, knobs [{name, options, default, alternatives, derived,
// only_with}], constraints, combinations, valid, valid_exact, and with `audit` an
// audit list [{name, compared, changed}].
absl::StatusOr<nlohmann::json> DescribeSpace(const MeasureRequest& request, bool audit);

// DescribeSpace()'s JSON as the text `mtune space` prints.
std::string FormatSpace(const nlohmann::json& space);

}  // namespace mtune::client
