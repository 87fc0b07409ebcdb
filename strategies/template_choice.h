// Which built-in template tunes a problem when a job names none. A family has one
// portable default template (FamilyInfo::default_template) and may list templates
// that beat it where they apply (FamilyInfo::target_templates: bf16 matmuls on AMX
// tiles, then on AVX512-BF16). Those apply to a problem when they tune its element
// type, have a valid candidate for its shape, and a target that will run it has the
// CPU features they declare (mtune.cpu_features); the first that applies wins.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

struct TemplateChoice {
  StrategyTemplate tpl;
  // One line for people: why this template, and why each preferred one was passed over.
  std::string reason;
  // `tpl` prepared for the problem, when choosing it took that (a target template,
  // whose candidates had to be checked); empty for the family's default. Callers
  // reuse it rather than parse the template again.
  std::optional<TemplateInstantiator> instantiator;
};

// The register file a template's knob space is sized for (vector_registers.h) when
// its tasks may run on the targets of `target_features` (LLVM feature strings): the
// smallest among the targets that have all the template's mtune.cpu_features, so
// that its register tiles fit wherever it runs. Targets whose features name no
// vector extension VectorRegistersOf knows (a worker registered without features)
// do not count; AVX-512's, the templates' own, when no target is left.
// InvalidArgument when the template's requirements do not read.
absl::StatusOr<VectorRegisters> RegistersForTemplate(const StrategyTemplate& tpl,
                                                     const std::vector<std::string>& target_features);

// `target_features`: the LLVM feature strings ("+avx512f,+amx-tile,...") of the
// targets that may run the problem's tasks (a coordinator's registered workers, or
// this host); a template needing features applies when one of them has them all,
// and its knob space is sized by RegistersForTemplate.
// NotFound when the family has no template at all.
absl::StatusOr<TemplateChoice> ChooseTemplate(const Problem& problem,
                                              const std::vector<std::string>& target_features);

}  // namespace mtune::strategies
