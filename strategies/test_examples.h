// Tests' problems for a template: a family's example, in an element type the
// template tunes (mtune.element_types).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "strategies/template_requirements.h"

namespace mtune::strategies {

// `example_key` (a family's example, "...:f32") with its element type replaced by
// the template's first where the template does not tune the example's.
inline absl::StatusOr<Problem> ExampleProblemFor(const StrategyTemplate& tpl, const std::string& example_key) {
  auto requirements = ReadTemplateRequirements(tpl.text);
  if (!requirements.ok()) return requirements.status();
  auto problem = ParseProblemKey(example_key);
  if (!problem.ok() || CheckElementType(*requirements, *problem).ok()) return problem;
  return ParseProblemKey(example_key.substr(0, example_key.rfind(':') + 1) +
                         requirements->element_types.front());
}

}  // namespace mtune::strategies
