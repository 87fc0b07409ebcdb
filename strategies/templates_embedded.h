// Generated table of embedded templates (see strategies/CMakeLists.txt).
#pragma once

#include "absl/strings/string_view.h"

namespace mtune::strategies {

struct EmbeddedTemplate {
  absl::string_view name;
  absl::string_view text;
};

// Defined in the generated templates_embedded.cc, one entry per templates/*.mlir.
extern const EmbeddedTemplate kEmbeddedTemplates[];
extern const int kNumEmbeddedTemplates;

}  // namespace mtune::strategies
