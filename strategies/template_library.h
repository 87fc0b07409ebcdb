// The built-in strategy templates (strategies/templates/*.mlir, embedded at build time).
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace mtune::strategies {

// A transform-dialect module with `@__transform_main` and tune knobs.
struct StrategyTemplate {
  // File stem, e.g. "matmul_2level".
  std::string name;
  // Op families it tunes, comma-separated, from its "// mtune-family:" line (or the
  // stem before "_").
  std::string family;
  std::string text;

  // Whether `problem_family` is one of the families this template tunes.
  bool TunesFamily(absl::string_view problem_family) const;
};

// Every template compiled into this build.
const std::vector<StrategyTemplate>& BuiltinTemplates();

// The template `name`; NotFound lists the known names.
absl::StatusOr<StrategyTemplate> FindTemplate(absl::string_view name);

// The template used for `family` when a job names none.
absl::StatusOr<StrategyTemplate> DefaultTemplateFor(absl::string_view family);

}  // namespace mtune::strategies
