#include "client/measure_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "strategies/candidate.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/template_choice.h"
#include "strategies/template_library.h"
#include "strategies/template_policy.h"
#include "worker/jit_kernel.h"
#include "worker/sandbox.h"

namespace mtune::client {

absl::StatusOr<ProblemTemplate> LoadProblemTemplate(const MeasureRequest& request) {
  auto problem = strategies::ParseProblemKey(request.problem);
  if (!problem.ok()) return problem.status();
  const std::string target =
      request.target_features.empty() ? worker::JitKernel::HostFeatures() : request.target_features;
  absl::StatusOr<strategies::StrategyTemplate> tpl;
  if (!request.template_file.empty()) {
    std::ifstream in(request.template_file);
    if (!in) return absl::NotFoundError("cannot read template file " + request.template_file);
    // Refuse a huge file before reading it; ExtractKnobSpace applies the rest of
    // the template policy (strategies/template_policy.h).
    std::error_code size_error;
    const auto size = std::filesystem::file_size(request.template_file, size_error);
    if (!size_error && size > strategies::kMaxTemplateBytes)
      return absl::InvalidArgumentError(absl::StrCat(
          "template file ", request.template_file, " has ", size,
          " bytes, more than the limit of ", strategies::kMaxTemplateBytes));
    std::stringstream text;
    text << in.rdbuf();
    tpl = strategies::StrategyTemplate{"file:" + request.template_file, problem->family, text.str()};
  } else {
    tpl = strategies::FindTemplate(request.template_name);
    // None named: the one that suits the problem on the target's CPU, as a coordinator
    // chooses for its workers' (e.g. AMX tiles for a bf16 matmul where there are some).
    if (request.template_name.empty()) {
      auto choice = strategies::ChooseTemplate(*problem, {target});
      tpl = choice.ok() ? absl::StatusOr<strategies::StrategyTemplate>(std::move(choice->tpl)) : choice.status();
    }
  }
  if (!tpl.ok()) return tpl.status();
  if (request.template_file.empty() && !tpl->TunesFamily(problem->family))
    return absl::InvalidArgumentError(absl::StrCat("template ", tpl->name, " tunes ", tpl->family,
                                                   ", not ", problem->family));
  // Sized for the target even when the template needs features it lacks: the user
  // asked for this template.
  auto registers = strategies::VectorRegistersOf(target);
  if (!registers.ok()) return registers.status();
  return ProblemTemplate{*std::move(problem), *std::move(tpl), *registers};
}

absl::StatusOr<MeasureOutcome> ResolveCandidate(const MeasureRequest& request) {
  auto loaded = LoadProblemTemplate(request);
  if (!loaded.ok()) return loaded.status();
  const strategies::Problem* problem = &loaded->problem;
  const strategies::StrategyTemplate* tpl = &loaded->tpl;
  auto space = strategies::ExtractKnobSpace(tpl->text, *problem, loaded->registers);
  if (!space.ok()) return space.status();
  // Without --knob the default candidate (the template's, or the valid one nearest
  // to it). With --knob, the overrides apply to the template's own values as near as
  // this problem allows; if that breaks a constraint, to the default candidate's
  // values (a knob the user did not name may have been repaired for this problem,
  // e.g. copy_tiled's nt_stores on a small shape). A combination that breaks a
  // constraint either way is an error rather than silently repaired into something
  // the user did not ask for.
  std::optional<strategies::KnobValues> defaults = strategies::DefaultCandidate(*space);
  if (request.knobs.empty() && !defaults)
    return absl::FailedPreconditionError(absl::StrCat(
        "template ", tpl->name, " has no valid candidate near its defaults for ",
        problem->Key(), "; choose knobs with --knob"));
  auto with_overrides = [&](strategies::KnobValues values) -> absl::StatusOr<strategies::KnobValues> {
    for (const auto& [name, value] : request.knobs) {
      if (!values.contains(name))
        return absl::InvalidArgumentError(
            absl::StrCat("template ", tpl->name, " has no knob '", name, "'"));
      values[name] = value;
    }
    if (absl::Status s = space->Check(values); !s.ok()) {
      // Derived knobs the user did not name follow the ones they did (peel the
      // last register tile when a named tile leaves one); a value that is not an
      // option at all is reported as it is.
      for (const strategies::KnobSpec& knob : space->knobs)
        if (std::find(knob.options.begin(), knob.options.end(), values[knob.name]) == knob.options.end())
          return s;
      std::set<std::string> named;
      for (const auto& [name, value] : request.knobs) named.insert(name);
      std::optional<strategies::KnobValues> solved = strategies::SolveDerivedKnobs(*space, values, named);
      if (!solved) return s;
      values = *std::move(solved);
      if (absl::Status again = space->Check(values); !again.ok()) return again;
    }
    return values;
  };
  absl::StatusOr<strategies::KnobValues> resolved =
      with_overrides(request.knobs.empty() ? *defaults : strategies::NearestDefaults(*space));
  if (!resolved.ok() && !request.knobs.empty() && defaults) {
    // If this fails too, its error is the one reported: it names the values
    // `mtune instantiate` without --knob shows.
    resolved = with_overrides(*defaults);
  }
  if (!resolved.ok()) return resolved.status();
  strategies::KnobValues values = *std::move(resolved);
  auto script = strategies::Instantiate(tpl->text, *problem, values, loaded->registers);
  if (!script.ok()) return script.status();

  MeasureOutcome outcome;
  outcome.candidate = strategies::MakeCandidate(tpl->name, strategies::TemplateDigest(tpl->text), values);
  outcome.script = *script;
  return outcome;
}

absl::StatusOr<MeasureOutcome> MeasureLocally(const MeasureRequest& request) {
  auto resolved = ResolveCandidate(request);
  if (!resolved.ok()) return resolved.status();
  MeasureOutcome outcome = *std::move(resolved);
  auto problem = strategies::ParseProblemKey(request.problem);
  if (!problem.ok()) return problem.status();
  worker::Sandbox sandbox(request.sandbox_argv);
  if (request.calibrate) {
    auto calibration = sandbox.Calibrate();
    if (!calibration.ok()) return calibration.status();
    outcome.calibration = *calibration;
  }
  mtune::v1::SandboxRequest measure;
  measure.mutable_measure()->set_problem(problem->Key());
  *measure.mutable_measure()->mutable_candidate() = outcome.candidate;
  measure.mutable_measure()->set_script(outcome.script);
  measure.mutable_measure()->set_time_limit_s(request.time_limit_s);
  measure.mutable_measure()->set_min_measure_s(request.min_time_s);
  *measure.mutable_calibration() = outcome.calibration;
  auto response = sandbox.Call(measure, request.time_limit_s);
  if (!response.ok()) return response.status();
  outcome.result = response->result();
  return outcome;
}

}  // namespace mtune::client
