// Commands that run here, without a coordinator: families, measure, payload,
// instantiate, space, and the hidden sandbox server that runs `measure`'s candidate.
#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli.h"
#include "client/format.h"
#include "client/measure_command.h"
#include "client/offline.h"
#include "client/space_command.h"
#include "nlohmann/json.hpp"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "worker/roofline.h"
#include "worker/sandbox.h"

namespace mtune::client::cli {
namespace {

Command AddFamilies(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* families = app.add_subcommand("families", "list op families and their key grammar");
  families->add_flag("--json", *json, "print JSON");
  return {families, [json] {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& f : strategies::Families()) {
              // Built-in templates a job may name instead of the default (`--template`).
              // Preferred where they apply (element type, shape, the CPU's features), best first.
              const std::vector<std::string>& preferred = f.target_templates;
              std::vector<std::string> others;
              for (const auto& t : strategies::BuiltinTemplates())
                if (t.TunesFamily(f.name) && t.name != f.default_template &&
                    std::find(preferred.begin(), preferred.end(), t.name) == preferred.end())
                  others.push_back(t.name);
              list.push_back({{"family", f.name}, {"grammar", f.grammar}, {"example", f.example},
                              {"default_template", f.default_template}, {"preferred_templates", preferred},
                              {"other_templates", others}});
              if (!*json)
                printf("%-10s %s\n           e.g. %s (template %s%s%s)\n", f.name.c_str(), f.grammar.c_str(),
                       f.example.c_str(), f.default_template.c_str(),
                       preferred.empty()
                           ? ""
                           : absl::StrCat("; preferred where they apply: ", absl::StrJoin(preferred, ", "))
                                 .c_str(),
                       others.empty() ? "" : absl::StrCat("; also ", absl::StrJoin(others, ", ")).c_str());
            }
            if (*json) printf("%s\n", list.dump(2).c_str());
            return 0;
          }};
}

// --knob NAME=VALUE arguments into `request.knobs`.
absl::Status ParseKnobArgs(const std::vector<std::string>& args, MeasureRequest& request) {
  for (const std::string& arg : args) {
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return absl::InvalidArgumentError("--knob takes NAME=VALUE, got '" + arg + "'");
    request.knobs[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  return absl::OkStatus();
}

// --problem, --template and --template-file, shared by measure, instantiate and space.
void AddCandidateSource(CLI::App* command, MeasureRequest& request, const std::string& template_file_help) {
  command->add_option("--problem", request.problem, "problem key")->required();
  command->add_option("--template", request.template_name,
                      "strategy template (default: the best suited one this CPU can run)");
  command->add_option("--template-file", request.template_file, template_file_help);
  command->add_option("--target-features", request.target_features,
                      "size register tiles for a CPU with these LLVM features, e.g. \"+avx2,+fma\" "
                      "(default: this host's)");
}

struct MeasureFlags {
  MeasureRequest request;
  std::vector<std::string> knob_args;
  bool no_calibrate = false, json = false, print_script = false;
  std::string record_in;
};

void PrintMeasurement(const MeasureFlags& f, const MeasureOutcome& outcome) {
  const auto& r = outcome.result;
  if (f.json) {
    mtune::v1::BestStrategy as_best;
    as_best.set_problem(f.request.problem);
    *as_best.mutable_candidate() = outcome.candidate;
    as_best.set_script(outcome.script);
    *as_best.mutable_result() = r;
    auto j = BestToJson(as_best);
    j["status"] = mtune::v1::ResultStatus_Name(r.status());
    j["error"] = r.error();
    j["compile_s"] = r.compile_s();
    j["peak_gflops"] = outcome.calibration.peak_gflops_f32();
    if (outcome.calibration.peak_gflops_amx_bf16() > 0)
      j["peak_gflops_amx_bf16"] = outcome.calibration.peak_gflops_amx_bf16();
    if (outcome.calibration.peak_gflops_bf16_dot() > 0)
      j["peak_gflops_bf16_dot"] = outcome.calibration.peak_gflops_bf16_dot();
    printf("%s\n", j.dump(2).c_str());
    return;
  }
  const std::string bf16_peak = worker::Bf16PeakText(outcome.calibration);
  printf("candidate %s\n", outcome.candidate.canonical_json().c_str());
  printf("status    %s %s\n", mtune::v1::ResultStatus_Name(r.status()).c_str(), r.error().c_str());
  if (r.status() == mtune::v1::RESULT_STATUS_OK) {
    printf("speed     %.1f GFLOP/s, %.1f GB/s, median %s, cv %.1f%%, %u reps%s\n", r.gflops(), r.gbps(),
           DurationText(r.timing().median_s()).c_str(), r.timing().cv() * 100, r.timing().repetitions(),
           r.timing().calls_per_sample() > 1
               ? absl::StrCat(" in samples of ", r.timing().calls_per_sample(), " calls").c_str()
               : "");
    // Without a calibration there is no peak or bandwidth to hold the speed against.
    if (f.request.calibrate)
      printf("roofline  %s; FMA peak %.1f GFLOP/s%s\n", RooflineText(f.request.problem, r).c_str(),
             outcome.calibration.peak_gflops_f32(),
             bf16_peak.empty() ? "" : absl::StrCat(", ", bf16_peak, " (bf16 problems' peak)").c_str());
    else
      printf("roofline  not measured (--no-calibrate)\n");
    printf("compile   %.3f s, verify %.3f s, total %.3f s\n", r.compile_s(), r.verify_s(), r.total_s());
  }
  if (f.print_script) printf("%s\n", outcome.script.c_str());
}

Command AddMeasure(CLI::App& app) {
  auto flags = std::make_shared<MeasureFlags>();
  MeasureRequest& mreq = flags->request;
  auto* measure = app.add_subcommand("measure", "compile, verify and time one candidate here");
  AddCandidateSource(measure, mreq, "use this template file instead (same family as the problem)");
  measure->add_option("--knob", flags->knob_args, "NAME=VALUE (repeatable); others keep defaults");
  measure->add_option("--cpu", mreq.cpu, "pin to this core (-1: no pinning)")->capture_default_str();
  measure->add_option("--min-time", mreq.min_time_s, "minimum timed seconds")->capture_default_str();
  measure->add_flag("--no-calibrate", flags->no_calibrate, "skip calibration (no roofline fraction)");
  measure->add_flag("--json", flags->json, "print JSON");
  measure->add_option("--export", flags->record_in,
                      "record an OK result in this best-strategy database file (created if "
                      "missing; kept only if faster than the stored entry)");
  measure->add_flag("--script", flags->print_script, "also print the instantiated strategy");
  return {measure, [flags] {
            MeasureFlags& f = *flags;
            if (absl::Status s = ParseKnobArgs(f.knob_args, f.request); !s.ok()) return Fail(s);
            f.request.calibrate = !f.no_calibrate;
            f.request.sandbox_argv = {"/proc/self/exe", "__sandbox", "--cpu", std::to_string(f.request.cpu)};
            auto outcome = MeasureLocally(f.request);
            if (!outcome.ok()) return Fail(outcome.status());
            PrintMeasurement(f, *outcome);
            if (outcome->result.status() != mtune::v1::RESULT_STATUS_OK) return kFailed;
            if (!f.record_in.empty()) {
              auto stored = RecordInExport(f.record_in, f.request.problem, *outcome);
              if (!stored.ok()) return Fail(stored.status());
              fprintf(stderr, "mtune: %s %s in %s\n", *stored ? "recorded" : "kept the faster entry of",
                      f.request.problem.c_str(), f.record_in.c_str());
            }
            return 0;
          }};
}

Command AddPayload(CLI::App& app) {
  auto problem_key = std::make_shared<std::string>();
  auto* payload = app.add_subcommand("payload", "print the payload MLIR of a problem");
  payload->add_option("--problem", *problem_key, "problem key")->required();
  return {payload, [problem_key] {
            auto problem = strategies::ParseProblemKey(*problem_key);
            if (!problem.ok()) return Fail(problem.status());
            auto text = strategies::MakePayload(*problem);
            if (!text.ok()) return Fail(text.status());
            printf("%s", text->c_str());
            return 0;
          }};
}

Command AddInstantiate(CLI::App& app) {
  struct Flags {
    MeasureRequest request;
    std::vector<std::string> knob_args;
  };
  auto flags = std::make_shared<Flags>();
  auto* instantiate = app.add_subcommand(
      "instantiate", "print a template with every knob selected (runs in mlir-opt as is)");
  AddCandidateSource(instantiate, flags->request, "use this template file instead");
  instantiate->add_option("--knob", flags->knob_args, "NAME=VALUE (repeatable); others keep defaults");
  return {instantiate, [flags] {
            if (absl::Status s = ParseKnobArgs(flags->knob_args, flags->request); !s.ok()) return Fail(s);
            auto resolved = ResolveCandidate(flags->request);
            if (!resolved.ok()) return Fail(resolved.status());
            printf("// mtune candidate %s %s\n%s", resolved->candidate.template_name().c_str(),
                   resolved->candidate.canonical_json().c_str(), resolved->script.c_str());
            return 0;
          }};
}

Command AddSpace(CLI::App& app) {
  struct Flags {
    MeasureRequest request;
    bool audit = false, json = false;
  };
  auto flags = std::make_shared<Flags>();
  auto* space = app.add_subcommand(
      "space", "show a template's search space for a problem: knobs, options, defaults, valid candidates");
  AddCandidateSource(space, flags->request, "use this template file instead");
  space->add_flag("--audit", flags->audit,
                  "also check that each free knob changes the code (runs the transform interpreter "
                  "on a few candidates)");
  space->add_flag("--json", flags->json, "print JSON");
  return {space, [flags] {
            auto described = DescribeSpace(flags->request, flags->audit);
            if (!described.ok()) return Fail(described.status());
            printf("%s", flags->json ? (described->dump(2) + "\n").c_str() : FormatSpace(*described).c_str());
            return 0;
          }};
}

// The sandbox server (worker/sandbox.h): `measure` runs its candidate in a child
// process started in this mode, so that a crash or a hang is a result, not a crash.
Command AddSandbox(CLI::App& app) {
  auto cpu = std::make_shared<int>(-1);
  auto* sandbox = app.add_subcommand("__sandbox", "internal")->group("");
  sandbox->add_option("--cpu", *cpu);
  return {sandbox, [cpu] {
            return worker::RunSandboxServer(worker::kSandboxRequestFd, worker::kSandboxResponseFd, *cpu);
          }};
}

}  // namespace

std::vector<Command> AddLocalCommands(CLI::App& app) {
  std::vector<Command> commands;
  commands.push_back(AddFamilies(app));
  commands.push_back(AddMeasure(app));
  commands.push_back(AddPayload(app));
  commands.push_back(AddInstantiate(app));
  commands.push_back(AddSpace(app));
  commands.push_back(AddSandbox(app));
  return commands;
}

}  // namespace mtune::client::cli
