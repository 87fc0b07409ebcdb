#include "strategies/template_choice.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/space_audit.h"
#include "strategies/template_requirements.h"

namespace mtune::strategies {
namespace {

// RegistersForTemplate for a template's requirements.
VectorRegisters RegistersForTargets(const TemplateRequirements& requirements,
                                    const std::vector<std::string>& target_features) {
  std::optional<VectorRegisters> smallest;
  for (const std::string& features : target_features) {
    if (!MissingCpuFeatures(requirements, features).empty()) continue;
    auto registers = VectorRegistersOf(features);
    if (!registers.ok()) continue;  // a target that reports no vector extension
    if (!smallest || registers->TotalBytes() < smallest->TotalBytes()) smallest = *registers;
  }
  return smallest.value_or(VectorRegisters::Avx512());
}

// Empty when `tpl` applies to `problem` on one of the targets (`*prepared` then holds
// the template prepared for it); else why not. Templates of other families or element
// types are no choice at all for the problem: `*not_for_problem` set.
absl::StatusOr<std::string> WhyNot(const StrategyTemplate& tpl, const Problem& problem,
                                   const std::vector<std::string>& target_features,
                                   bool* not_for_problem, std::optional<TemplateInstantiator>* prepared) {
  *not_for_problem = !tpl.TunesFamily(problem.family);
  if (*not_for_problem) return std::string("tunes other families");
  auto requirements = ReadTemplateRequirements(tpl.text);
  if (!requirements.ok()) return requirements.status();
  *not_for_problem = !CheckElementType(*requirements, problem).ok();
  if (*not_for_problem) return std::string("tunes other element types");
  if (!requirements->cpu_features.empty()) {
    bool runnable = false;
    for (const std::string& features : target_features)
      runnable = runnable || MissingCpuFeatures(*requirements, features).empty();
    if (!runnable) {
      const std::string needed = absl::StrJoin(requirements->cpu_features, ", ");
      return target_features.empty()
                 ? absl::StrCat("needs ", needed, " and no target is known yet (no worker registered)")
                 : absl::StrCat("needs ", needed, ", which no target has");
    }
  }
  auto instantiator =
      TemplateInstantiator::Create(tpl.text, problem, RegistersForTargets(*requirements, target_features));
  if (!instantiator.ok()) return absl::StrCat("does not tune it: ", instantiator.status().message());
  if (!DefaultCandidate(instantiator->space()).has_value() &&
      CountCandidates(instantiator->space()).valid == 0)
    return std::string("has no valid candidate for this shape");
  *prepared = *std::move(instantiator);
  return std::string();
}

}  // namespace

absl::StatusOr<VectorRegisters> RegistersForTemplate(const StrategyTemplate& tpl,
                                                     const std::vector<std::string>& target_features) {
  auto requirements = ReadTemplateRequirements(tpl.text);
  if (!requirements.ok()) return requirements.status();
  return RegistersForTargets(*requirements, target_features);
}

absl::StatusOr<TemplateChoice> ChooseTemplate(const Problem& problem,
                                              const std::vector<std::string>& target_features) {
  const FamilyInfo* family = nullptr;
  for (const FamilyInfo& f : Families())
    if (f.name == problem.family) family = &f;
  if (family == nullptr)
    return absl::NotFoundError(absl::StrCat("no template for op family '", problem.family, "'"));
  std::vector<std::string> passed_over;
  for (const std::string& name : family->target_templates) {
    auto tpl = FindTemplate(name);
    if (!tpl.ok()) return tpl.status();
    bool not_for_problem = false;
    std::optional<TemplateInstantiator> prepared;
    auto why_not = WhyNot(*tpl, problem, target_features, &not_for_problem, &prepared);
    if (!why_not.ok()) return why_not.status();
    if (why_not->empty()) {
      std::string reason = "preferred for this problem on the targets that can run it";
      if (!passed_over.empty()) absl::StrAppend(&reason, "; passed over: ", absl::StrJoin(passed_over, "; "));
      return TemplateChoice{*std::move(tpl), std::move(reason), std::move(prepared)};
    }
    if (!not_for_problem) passed_over.push_back(absl::StrCat(name, " ", *why_not));
  }
  auto tpl = DefaultTemplateFor(problem.family);
  if (!tpl.ok()) return tpl.status();
  std::string reason = "the family's default";
  if (!passed_over.empty()) absl::StrAppend(&reason, "; passed over: ", absl::StrJoin(passed_over, "; "));
  return TemplateChoice{*std::move(tpl), std::move(reason), std::nullopt};
}

}  // namespace mtune::strategies
