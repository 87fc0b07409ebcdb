// mtune: the command-line client. Talks to a coordinator over gRPC; `measure`
// and `families` work locally.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "client/connection.h"
#include "client/format.h"
#include "client/measure_command.h"
#include "client/offline.h"
#include "client/space_command.h"
#include "nlohmann/json.hpp"
#include "strategies/payload.h"
#include "search/budget.h"
#include "search/search.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "worker/roofline.h"
#include "worker/sandbox.h"

namespace {

using mtune::client::ConnectToCoordinator;
using mtune::client::FromGrpc;

constexpr int kFailed = 1;

int Fail(const absl::Status& status) {
  fprintf(stderr, "mtune: %s\n", std::string(status.message()).c_str());
  return kFailed;
}

// Streams the job's progress until it ends; returns its final state.
absl::StatusOr<mtune::v1::Job> Watch(mtune::v1::Tuner::Stub& stub, int64_t job_id) {
  const bool tty = isatty(STDERR_FILENO);
  // On a terminal the line is redrawn in place, so it must fit on one row.
  size_t columns = 100;
  if (winsize size{}; tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    columns = size.ws_col;
  grpc::ClientContext context;
  mtune::v1::WatchJobRequest request;
  request.set_job_id(job_id);
  auto reader = stub.WatchJob(&context, request);
  mtune::v1::Job job;
  bool any = false;
  uint32_t last_done = UINT32_MAX;
  while (reader->Read(&job)) {
    const bool first = !any;
    any = true;
    const bool running = job.state() == mtune::v1::JOB_STATE_RUNNING;
    if (job.trials_done() == last_done && running) continue;
    // A log gets the first report, one per tenth of the trials and the last, not one
    // per trial (a several-problem job's line is hundreds of characters long).
    if (!tty && !first && running && !mtune::client::NewProgressStep(last_done, job.trials_done(), job.trials_total())) {
      last_done = job.trials_done();
      continue;
    }
    last_done = job.trials_done();
    std::string line = mtune::client::ProgressBar(job.trials_done(), job.trials_total()) + " " +
                       mtune::client::FormatJobLine(job);
    if (tty)
      fprintf(stderr, "\r\033[K%s", mtune::client::FitToWidth(line, columns - 1).c_str());
    else
      fprintf(stderr, "%s\n", line.c_str());
  }
  if (tty && any) fprintf(stderr, "\n");
  grpc::Status status = reader->Finish();
  if (!status.ok()) return FromGrpc(status);
  if (!any) return absl::InternalError("the coordinator sent no progress");
  return job;
}

int PrintBestOfJob(const mtune::v1::Job& job) {
  for (const auto& best : job.best()) printf("%s", mtune::client::FormatBest(best).c_str());
  if (job.state() == mtune::v1::JOB_STATE_SUCCEEDED) return 0;
  fprintf(stderr, "mtune: job %lld ended %s%s%s\n", static_cast<long long>(job.id()),
          mtune::v1::JobState_Name(job.state()).c_str(), job.message().empty() ? "" : ": ",
          job.message().c_str());
  return kFailed;
}

// The best strategy of `problem` as the coordinator ranks it (on `target`, or the
// best of any target when empty).
absl::StatusOr<mtune::v1::BestStrategy> FetchBest(mtune::v1::Tuner::Stub& stub, const std::string& problem,
                                                  const std::string& target) {
  grpc::ClientContext context;
  mtune::v1::GetBestRequest request;
  request.set_problem(problem);
  request.set_target_id(target);
  mtune::v1::BestStrategy best;
  if (auto s = FromGrpc(stub.GetBest(&context, request, &best)); !s.ok()) return s;
  return best;
}

// Submits a confirmation job (JobSpec.confirm_top) for `problems`, follows it to
// its end, then prints each problem's best strategy as the store now ranks it (by
// the median of its measurements).
int ConfirmAndPrintBest(mtune::v1::Tuner::Stub& stub, const std::vector<std::string>& problems,
                        const std::string& template_name, uint32_t top) {
  mtune::v1::SubmitJobRequest request;
  for (const auto& p : problems) request.mutable_spec()->add_problems(p);
  request.mutable_spec()->set_template_name(template_name);
  request.mutable_spec()->set_confirm_top(top);
  mtune::v1::SubmitJobResponse response;
  {
    grpc::ClientContext context;
    if (auto s = FromGrpc(stub.SubmitJob(&context, request, &response)); !s.ok()) return Fail(s);
  }
  printf("job %lld submitted: confirmation of the best %u stored candidates of each problem (they, "
         "and any that rise among the best %u, are measured again; %u measurements at most)\n",
         static_cast<long long>(response.job().id()), top, top, response.job().trials_total());
  fflush(stdout);
  auto job = Watch(stub, response.job().id());
  if (!job.ok()) return Fail(job.status());
  if (job->state() != mtune::v1::JOB_STATE_SUCCEEDED) return PrintBestOfJob(*job);
  for (const auto& p : problems) {
    auto best = FetchBest(stub, p, "");
    if (!best.ok()) return Fail(best.status());
    printf("%s", mtune::client::FormatBest(*best).c_str());
  }
  return 0;
}

bool WriteFile(const std::string& path, const std::string& bytes, bool force, std::string* error) {
  if (!force && access(path.c_str(), F_OK) == 0) {
    *error = path + " exists (use --force to replace it)";
    return false;
  }
  std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune: tune MLIR transform-dialect strategies for tensor kernels"};
  app.require_subcommand(1);
  // The address: a flag after the subcommand, else one before it (`mtune
  // --coordinator H:P status 3`), else $MTUNE_COORDINATOR (a cluster's address set
  // once per shell), else loopback. Resolved after parsing: CLI11 would apply the
  // environment over a flag given at the other level.
  const std::string kDefaultCoordinator = "127.0.0.1:7070";
  std::string coordinator, coordinator_before_subcommand;
  mtune::transport::ClientSecurity security;
  std::string token_file;
  const std::string coordinator_help = "coordinator address host:port (default: $MTUNE_COORDINATOR, else " +
                                       kDefaultCoordinator + ")";
  app.add_option("--coordinator", coordinator_before_subcommand, coordinator_help);
  auto add_coordinator = [&](CLI::App* cmd) {
    cmd->add_option("--coordinator", coordinator, coordinator_help);
    // The token itself is never a flag (command lines are visible to every user).
    cmd->add_option("--tls-ca", security.ca_file,
                    "PEM CA that signed the coordinator's certificate: connect with TLS "
                    "(default: plaintext, for a loopback coordinator in development)")
        ->envname("MTUNE_TLS_CA")
        ->group("Security");
    cmd->add_option("--token-file", token_file,
                    "file holding your token (chmod 600); default: $MTUNE_TOKEN, else none")
        ->envname("MTUNE_TOKEN_FILE")
        ->group("Security");
    cmd->add_flag("--insecure", security.insecure,
                  "allow sending the token in plaintext to a non-loopback coordinator")
        ->group("Security");
  };

  // submit
  auto* submit = app.add_subcommand("submit", "submit a tuning job");
  add_coordinator(submit);
  std::vector<std::string> problems;
  mtune::v1::JobSpec spec;
  std::string template_name, search = "random";
  uint32_t trials = 32;
  uint64_t seed = 0;
  std::string time_budget, allocation = "gain";
  uint32_t patience = 0, confirm = 0;
  bool wait = false, warm_start = true;
  submit->add_option("--problem", problems, "problem key(s), e.g. matmul:m=512,n=512,k=512:f32")
      ->required();
  submit->add_option("--template", template_name,
                     "strategy template (default: per problem, the best suited one that the "
                     "registered workers' CPUs can run; `mtune families` lists them)");
  std::vector<std::string> algorithm_names = mtune::search::SearchAlgorithmNames();
  submit->add_option("--search", search, "search algorithm")
      ->check(CLI::IsMember(algorithm_names))
      ->capture_default_str();
  submit->add_option("--trials", trials, "trials per problem (with several problems and "
                                         "--allocate gain: their sum is shared)")
      ->capture_default_str();
  auto* seed_option = submit->add_option(
      "--seed", seed, "seed of the search; the job records it, so the same seed replays a run "
                      "(default: a fresh random seed, printed)");
  submit->add_option("--time", time_budget,
                     "wall-time budget of the job, e.g. 90s, 10m, 1h30m (default: none)");
  submit->add_option("--patience", patience,
                     "stop a problem after N trials without a >1% improvement (0: never)")
      ->capture_default_str();
  submit->add_option("--allocate", allocation,
                     "spread trials over several problems by expected gain, or equally")
      ->check(CLI::IsMember({"gain", "equal"}))
      ->capture_default_str();
  submit->add_flag("!--no-warm-start", warm_start,
                   "do not seed the search with the best candidates of the nearest stored problems");
  submit->add_flag("--wait", wait, "show progress until the job ends, then the best strategy");
  submit->add_option("--confirm", confirm,
                     "when the job ends, measure each problem's N best stored candidates once more, "
                     "and those that then rise among the best N (a second job, as `mtune confirm`), "
                     "so that one lucky timing cannot stay best; implies --wait (0: none)")
      ->capture_default_str();

  // confirm
  auto* confirm_cmd = app.add_subcommand(
      "confirm",
      "measure the best stored candidates of problems once more (ranked by their median), and "
      "those that rise among the best as they do, until the best --top have all been measured again");
  add_coordinator(confirm_cmd);
  uint32_t confirm_top = 3;
  confirm_cmd->add_option("--problem", problems, "problem key(s) with stored results")->required();
  confirm_cmd->add_option("--template", template_name,
                          "strategy template (default: chosen per problem as `submit` does)");
  confirm_cmd->add_option("--top", confirm_top, "candidates per problem, best first")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  // status / watch / cancel
  int64_t job_id = 0;
  auto* status_cmd = app.add_subcommand("status", "show a job's progress and best so far");
  add_coordinator(status_cmd);
  status_cmd->add_option("job", job_id, "job id (`mtune jobs` lists them)")->required();
  auto* explain = app.add_subcommand(
      "explain", "show a job's convergence: best-so-far GFLOP/s against trial, as a text chart");
  add_coordinator(explain);
  explain->add_option("job", job_id, "job id (`mtune jobs` lists them)")->required();
  int chart_width = 60;
  explain->add_option("--width", chart_width, "chart columns")->capture_default_str()
      ->check(CLI::Range(8, 400));
  auto* watch = app.add_subcommand("watch", "follow a job with a progress bar until it ends");
  add_coordinator(watch);
  watch->add_option("job", job_id, "job id (`mtune jobs` lists them)")->required();
  auto* cancel = app.add_subcommand("cancel", "stop a job (measured trials stay stored)");
  add_coordinator(cancel);
  cancel->add_option("job", job_id, "job id (`mtune jobs` lists them)")->required();
  auto* jobs_cmd = app.add_subcommand("jobs", "list the stored jobs, newest first");
  add_coordinator(jobs_cmd);
  uint32_t jobs_limit = 20;
  jobs_cmd->add_option("--limit", jobs_limit, "the newest N jobs (0: all)")->capture_default_str();
  std::string jobs_state;
  jobs_cmd->add_option("--state", jobs_state, "only jobs in this state (default: any)")
      ->check(CLI::IsMember({"running", "succeeded", "cancelled", "failed"}));

  // results / best / export / workers
  auto* results = app.add_subcommand("results", "list stored trials, best first");
  add_coordinator(results);
  std::string problem;
  uint32_t limit = 20;
  results->add_option("--job", job_id, "only this job (0: any)");
  results->add_option("--problem", problem, "only this problem");
  results->add_option("--limit", limit, "at most this many (0: all)")->capture_default_str();
  auto* best = app.add_subcommand("best", "the best strategy measured for a problem");
  add_coordinator(best);
  std::string target, db_file;
  bool json = false, nearest = false;
  best->add_option("--problem", problem, "problem key")->required();
  best->add_option("--target", target,
                   "target id (default: whichever is best; with --db: this machine)");
  best->add_flag("--json", json, "print JSON (problem, target, knobs, script, figures)");
  best->add_option("--db", db_file,
                   "look up in this best-strategy database file instead of the coordinator "
                   "(prints JSON)");
  best->add_flag("--nearest", nearest,
                 "with --db: allow the flagged nearest-shape fallback when the shape is missing");
  auto* export_cmd = app.add_subcommand("export", "write the best-strategy database and library");
  add_coordinator(export_cmd);
  std::string out, library;
  bool force = false;
  std::string format = "sqlite";
  export_cmd->add_option("--out", out, "file to write ('-': stdout)")->required();
  export_cmd->add_option("--format", format,
                         "sqlite (best-strategy database), mlir (transform library whose "
                         "@__transform_main dispatches to the tuned strategies) or json")
      ->capture_default_str();
  export_cmd->add_option("--db", db_file,
                         "convert this best-strategy database file instead of asking the "
                         "coordinator");
  export_cmd->add_option("--target", target,
                         "only entries of this target (mlir: the target to dispatch; default: "
                         "the only target)");
  export_cmd->add_option("--library", library,
                         "sqlite from the coordinator: also write the transform library here "
                         "(default: --out with .mlir)");
  export_cmd->add_flag("--force", force, "replace existing files");

  auto* apply = app.add_subcommand(
      "apply", "apply the tuned strategies of a best-strategy database to an MLIR file");
  std::string apply_input, apply_output = "-";
  apply->add_option("--db", db_file, "best-strategy database file")->required();
  apply->add_option("--target", target, "target id (default: this machine)");
  apply->add_option("input", apply_input, "MLIR file ('-': stdin)")->required();
  apply->add_option("-o,--output", apply_output, "where to write the result ('-': stdout)")
      ->capture_default_str();
  auto* workers = app.add_subcommand("workers", "list workers, their targets and calibration");
  add_coordinator(workers);
  workers->add_flag("--json", json, "print JSON (name, state, target, calibration per worker)");

  // local commands
  auto* families = app.add_subcommand("families", "list op families and their key grammar");
  families->add_flag("--json", json, "print JSON");
  auto* measure = app.add_subcommand("measure", "compile, verify and time one candidate here");
  mtune::client::MeasureRequest mreq;
  std::vector<std::string> knob_args;
  bool no_calibrate = false;
  measure->add_option("--problem", mreq.problem, "problem key")->required();
  measure->add_option("--template", mreq.template_name,
                      "strategy template (default: the best suited one this CPU can run)");
  measure->add_option("--template-file", mreq.template_file,
                      "use this template file instead (same family as the problem)");
  measure->add_option("--knob", knob_args, "NAME=VALUE (repeatable); others keep defaults");
  measure->add_option("--cpu", mreq.cpu, "pin to this core (-1: no pinning)")->capture_default_str();
  measure->add_option("--min-time", mreq.min_time_s, "minimum timed seconds")->capture_default_str();
  measure->add_flag("--no-calibrate", no_calibrate, "skip calibration (no roofline fraction)");
  measure->add_flag("--json", json, "print JSON");
  std::string record_in;
  measure->add_option("--export", record_in,
                      "record an OK result in this best-strategy database file (created if "
                      "missing; kept only if faster than the stored entry)");
  bool print_script = false;
  measure->add_flag("--script", print_script, "also print the instantiated strategy");
  auto* payload_cmd = app.add_subcommand("payload", "print the payload MLIR of a problem");
  payload_cmd->add_option("--problem", mreq.problem, "problem key")->required();
  auto* instantiate = app.add_subcommand(
      "instantiate", "print a template with every knob selected (runs in mlir-opt as is)");
  instantiate->add_option("--problem", mreq.problem, "problem key")->required();
  instantiate->add_option("--template", mreq.template_name,
                          "strategy template (default: the best suited one this CPU can run)");
  instantiate->add_option("--template-file", mreq.template_file, "use this template file instead");
  instantiate->add_option("--knob", knob_args, "NAME=VALUE (repeatable); others keep defaults");
  auto* space_cmd = app.add_subcommand(
      "space", "show a template's search space for a problem: knobs, options, defaults, valid candidates");
  space_cmd->add_option("--problem", mreq.problem, "problem key")->required();
  space_cmd->add_option("--template", mreq.template_name,
                        "strategy template (default: the best suited one this CPU can run)");
  space_cmd->add_option("--template-file", mreq.template_file, "use this template file instead");
  bool audit = false;
  space_cmd->add_flag("--audit", audit,
                      "also check that each free knob changes the code (runs the transform interpreter "
                      "on a few candidates)");
  space_cmd->add_flag("--json", json, "print JSON");
  auto* sandbox = app.add_subcommand("__sandbox", "internal")->group("");
  int sandbox_cpu = -1;
  sandbox->add_option("--cpu", sandbox_cpu);

  CLI11_PARSE(app, argc, argv);
  if (coordinator.empty()) coordinator = coordinator_before_subcommand;
  if (const char* env = std::getenv("MTUNE_COORDINATOR"); coordinator.empty() && env && *env)
    coordinator = env;
  if (coordinator.empty()) coordinator = kDefaultCoordinator;

  if (*sandbox)
    return mtune::worker::RunSandboxServer(mtune::worker::kSandboxRequestFd,
                                           mtune::worker::kSandboxResponseFd, sandbox_cpu);

  if (*families) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : mtune::strategies::Families()) {
      // Built-in templates a job may name instead of the default (`--template`).
      // Preferred where they apply (element type, shape, the CPU's features), best first.
      const std::vector<std::string>& preferred = f.target_templates;
      std::vector<std::string> others;
      for (const auto& t : mtune::strategies::BuiltinTemplates())
        if (t.TunesFamily(f.name) && t.name != f.default_template &&
            std::find(preferred.begin(), preferred.end(), t.name) == preferred.end())
          others.push_back(t.name);
      list.push_back({{"family", f.name}, {"grammar", f.grammar}, {"example", f.example},
                      {"default_template", f.default_template}, {"preferred_templates", preferred},
                      {"other_templates", others}});
      if (!json)
        printf("%-10s %s\n           e.g. %s (template %s%s%s)\n", f.name.c_str(), f.grammar.c_str(),
               f.example.c_str(), f.default_template.c_str(),
               preferred.empty() ? ""
                                 : absl::StrCat("; preferred where they apply: ", absl::StrJoin(preferred, ", "))
                                       .c_str(),
               others.empty() ? "" : absl::StrCat("; also ", absl::StrJoin(others, ", ")).c_str());
    }
    if (json) printf("%s\n", list.dump(2).c_str());
    return 0;
  }

  for (const std::string& arg : knob_args) {
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return Fail(absl::InvalidArgumentError("--knob takes NAME=VALUE, got '" + arg + "'"));
    mreq.knobs[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  if (*payload_cmd) {
    auto problem = mtune::strategies::ParseProblemKey(mreq.problem);
    if (!problem.ok()) return Fail(problem.status());
    auto text = mtune::strategies::MakePayload(*problem);
    if (!text.ok()) return Fail(text.status());
    printf("%s", text->c_str());
    return 0;
  }
  if (*space_cmd) {
    auto space = mtune::client::DescribeSpace(mreq, audit);
    if (!space.ok()) return Fail(space.status());
    printf("%s", json ? (space->dump(2) + "\n").c_str() : mtune::client::FormatSpace(*space).c_str());
    return 0;
  }
  if (*instantiate) {
    auto resolved = mtune::client::ResolveCandidate(mreq);
    if (!resolved.ok()) return Fail(resolved.status());
    printf("// mtune candidate %s %s\n%s", resolved->candidate.template_name().c_str(),
           resolved->candidate.canonical_json().c_str(), resolved->script.c_str());
    return 0;
  }
  if (*measure) {
    mreq.calibrate = !no_calibrate;
    mreq.sandbox_argv = {"/proc/self/exe", "__sandbox", "--cpu", std::to_string(mreq.cpu)};
    auto outcome = mtune::client::MeasureLocally(mreq);
    if (!outcome.ok()) return Fail(outcome.status());
    const auto& r = outcome->result;
    if (json) {
      mtune::v1::BestStrategy as_best;
      as_best.set_problem(mreq.problem);
      *as_best.mutable_candidate() = outcome->candidate;
      as_best.set_script(outcome->script);
      *as_best.mutable_result() = r;
      auto j = mtune::client::BestToJson(as_best);
      j["status"] = mtune::v1::ResultStatus_Name(r.status());
      j["error"] = r.error();
      j["compile_s"] = r.compile_s();
      j["peak_gflops"] = outcome->calibration.peak_gflops_f32();
      if (outcome->calibration.peak_gflops_amx_bf16() > 0)
        j["peak_gflops_amx_bf16"] = outcome->calibration.peak_gflops_amx_bf16();
      if (outcome->calibration.peak_gflops_bf16_dot() > 0)
        j["peak_gflops_bf16_dot"] = outcome->calibration.peak_gflops_bf16_dot();
      printf("%s\n", j.dump(2).c_str());
    } else {
      const std::string bf16_peak = mtune::worker::Bf16PeakText(outcome->calibration);
      printf("candidate %s\n", outcome->candidate.canonical_json().c_str());
      printf("status    %s %s\n", mtune::v1::ResultStatus_Name(r.status()).c_str(),
             r.error().c_str());
      if (r.status() == mtune::v1::RESULT_STATUS_OK)
        printf("speed     %.1f GFLOP/s, %.1f GB/s, median %s, cv %.1f%%, %u reps%s\n"
               "roofline  %s; FMA peak %.1f GFLOP/s%s\n"
               "compile   %.3f s, verify %.3f s, total %.3f s\n",
               r.gflops(), r.gbps(), mtune::client::DurationText(r.timing().median_s()).c_str(),
               r.timing().cv() * 100, r.timing().repetitions(),
               r.timing().calls_per_sample() > 1
                   ? absl::StrCat(" in samples of ", r.timing().calls_per_sample(), " calls").c_str()
                   : "",
               mtune::client::RooflineText(mreq.problem, r).c_str(), outcome->calibration.peak_gflops_f32(),
               bf16_peak.empty() ? "" : absl::StrCat(", ", bf16_peak, " (bf16 problems' peak)").c_str(),
               r.compile_s(), r.verify_s(), r.total_s());
      if (print_script) printf("%s\n", outcome->script.c_str());
    }
    if (r.status() != mtune::v1::RESULT_STATUS_OK) return kFailed;
    if (!record_in.empty()) {
      auto stored = mtune::client::RecordInExport(record_in, mreq.problem, *outcome);
      if (!stored.ok()) return Fail(stored.status());
      fprintf(stderr, "mtune: %s %s in %s\n", *stored ? "recorded" : "kept the faster entry of",
              mreq.problem.c_str(), record_in.c_str());
    }
    return 0;
  }
  if (*apply) {
    std::string input = apply_input;
    if (input == "-") input = "/dev/stdin";
    if (auto s = mtune::client::ApplyLocal(db_file, target, input, apply_output, stderr); !s.ok())
      return Fail(s);
    return 0;
  }
  if (*best && !db_file.empty()) {
    auto answer = mtune::client::LookupLocal(db_file, problem, target, nearest);
    if (!answer.ok()) return Fail(answer.status());
    printf("%s\n", answer->c_str());
    return 0;
  }
  std::optional<mtune::client::ExportFormat> export_format;
  if (*export_cmd) {
    auto parsed = mtune::client::ParseExportFormat(format);
    if (!parsed.ok()) return Fail(parsed.status());
    export_format = *parsed;
    if (!db_file.empty()) {
      auto summary = mtune::client::ExportLocal(db_file, *parsed, target, out, force);
      if (!summary.ok()) return Fail(summary.status());
      fprintf(stderr, "%s\n", summary->c_str());
      return 0;
    }
  }

  double time_budget_s = 0;
  if (*submit && !time_budget.empty()) {
    auto parsed = mtune::search::ParseDuration(time_budget);
    if (!parsed.ok()) return Fail(absl::InvalidArgumentError("--time: " + std::string(parsed.status().message())));
    time_budget_s = *parsed;
  }
  if (*submit && seed_option->count() == 0) {
    // A fresh seed per job, recorded with it: `--seed` replays the run.
    std::random_device entropy;
    seed = (uint64_t{entropy()} << 32 | entropy()) >> 1;
  }

  auto token = mtune::transport::LoadClientToken(token_file);
  if (!token.ok()) return Fail(token.status());
  security.token = *token;
  auto stub = ConnectToCoordinator(coordinator, security);
  if (!stub.ok()) return Fail(stub.status());

  if (*submit) {
    for (const auto& p : problems) spec.add_problems(p);
    spec.set_template_name(template_name);
    spec.set_search(search);
    spec.set_trials(trials);
    spec.set_seed(seed);
    spec.set_time_budget_s(time_budget_s);
    spec.set_patience(patience);
    spec.set_warm_start(warm_start);
    spec.set_allocation(allocation);
    grpc::ClientContext context;
    mtune::v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    mtune::v1::SubmitJobResponse response;
    if (auto s = FromGrpc((*stub)->SubmitJob(&context, request, &response)); !s.ok())
      return Fail(s);
    printf("job %lld submitted: %u trials planned, search %s, seed %llu\n",
           static_cast<long long>(response.job().id()), response.job().trials_total(),
           search.c_str(), static_cast<unsigned long long>(seed));
    printf("%s", mtune::client::FormatTemplates(response.job()).c_str());
    fflush(stdout);
    if (!wait && confirm == 0) return 0;
    auto job = Watch(**stub, response.job().id());
    if (!job.ok()) return Fail(job.status());
    if (confirm == 0 || job->state() != mtune::v1::JOB_STATE_SUCCEEDED) return PrintBestOfJob(*job);
    // Only the problems with a candidate that ran (a confirmation of a problem
    // with none would be refused).
    std::vector<std::string> measured;
    for (const auto& best : job->best()) measured.push_back(best.problem());
    return ConfirmAndPrintBest(**stub, measured, template_name, confirm);
  }
  if (*confirm_cmd) return ConfirmAndPrintBest(**stub, problems, template_name, confirm_top);
  if (*watch) {
    auto job = Watch(**stub, job_id);
    if (!job.ok()) return Fail(job.status());
    return PrintBestOfJob(*job);
  }
  if (*status_cmd || *cancel) {
    grpc::ClientContext context;
    mtune::v1::Job job;
    grpc::Status s;
    if (*cancel) {
      mtune::v1::CancelJobRequest request;
      request.set_job_id(job_id);
      s = (*stub)->CancelJob(&context, request, &job);
    } else {
      mtune::v1::GetJobRequest request;
      request.set_job_id(job_id);
      s = (*stub)->GetJob(&context, request, &job);
    }
    if (!s.ok()) return Fail(FromGrpc(s));
    printf("%s %s\n", mtune::client::ProgressBar(job.trials_done(), job.trials_total()).c_str(),
           mtune::client::FormatJobLine(job).c_str());
    if (*status_cmd)
      printf("%s%s", mtune::client::FormatProgress(job).c_str(), mtune::client::FormatTemplates(job).c_str());
    return 0;
  }
  if (*explain) {
    grpc::ClientContext context;
    mtune::v1::ConvergenceRequest request;
    request.set_job_id(job_id);
    mtune::v1::ConvergenceResponse response;
    if (auto s = FromGrpc((*stub)->GetConvergence(&context, request, &response)); !s.ok())
      return Fail(s);
    printf("%s", mtune::client::FormatConvergence(response, chart_width).c_str());
    return 0;
  }
  if (*results) {
    grpc::ClientContext context;
    mtune::v1::ListResultsRequest request;
    request.set_job_id(job_id);
    request.set_problem(problem);
    request.set_limit(limit);
    mtune::v1::ListResultsResponse response;
    if (auto s = FromGrpc((*stub)->ListResults(&context, request, &response)); !s.ok())
      return Fail(s);
    printf("%s", mtune::client::FormatResults(response).c_str());
    return 0;
  }
  if (*best) {
    auto response = FetchBest(**stub, problem, target);
    if (!response.ok()) return Fail(response.status());
    if (json)
      printf("%s\n", mtune::client::BestToJson(*response).dump(2).c_str());
    else
      printf("%s", mtune::client::FormatBest(*response).c_str());
    return 0;
  }
  if (*export_cmd && (*export_format != mtune::client::ExportFormat::kSqlite || !target.empty())) {
    // Other formats are built here from the coordinator's database.
    grpc::ClientContext context;
    mtune::v1::ExportResponse response;
    if (auto s = FromGrpc((*stub)->Export(&context, mtune::v1::ExportRequest(), &response));
        !s.ok())
      return Fail(s);
    char temp[] = "/tmp/mtune-export.XXXXXX";
    const int fd = mkstemp(temp);
    if (fd < 0) return Fail(absl::InternalError("cannot create a temporary file"));
    close(fd);
    absl::Status written = mtune::client::WriteFileAtomically(temp, response.sqlite_db(), true);
    auto summary = written.ok() ? mtune::client::ExportLocal(temp, *export_format, target, out, force)
                                : absl::StatusOr<std::string>(written);
    unlink(temp);
    if (!summary.ok()) return Fail(summary.status());
    fprintf(stderr, "%s\n", summary->c_str());
    return 0;
  }
  if (*export_cmd) {
    if (library.empty()) {
      auto dot = out.rfind('.');
      library = (dot == std::string::npos || out.find('/', dot) != std::string::npos
                     ? out
                     : out.substr(0, dot)) + ".mlir";
    }
    grpc::ClientContext context;
    mtune::v1::ExportResponse response;
    if (auto s = FromGrpc((*stub)->Export(&context, mtune::v1::ExportRequest(), &response));
        !s.ok())
      return Fail(s);
    std::string error;
    if (!WriteFile(out, response.sqlite_db(), force, &error) ||
        !WriteFile(library, response.transform_library(), force, &error))
      return Fail(absl::FailedPreconditionError(error));
    printf("exported %u best strategies to %s and %s\n", response.entries(), out.c_str(),
           library.c_str());
    return 0;
  }
  if (*jobs_cmd) {
    grpc::ClientContext context;
    mtune::v1::ListJobsRequest request;
    request.set_limit(jobs_limit);
    if (!jobs_state.empty()) {
      mtune::v1::JobState state = mtune::v1::JOB_STATE_UNSPECIFIED;
      mtune::v1::JobState_Parse("JOB_STATE_" + absl::AsciiStrToUpper(jobs_state), &state);
      request.set_state(state);
    }
    mtune::v1::ListJobsResponse response;
    if (auto s = FromGrpc((*stub)->ListJobs(&context, request, &response)); !s.ok()) return Fail(s);
    printf("%s", mtune::client::FormatJobs(response).c_str());
    return 0;
  }
  if (*workers) {
    grpc::ClientContext context;
    mtune::v1::ListWorkersResponse response;
    if (auto s = FromGrpc((*stub)->ListWorkers(&context, mtune::v1::ListWorkersRequest(), &response));
        !s.ok())
      return Fail(s);
    if (json)
      printf("%s\n", mtune::client::WorkersToJson(response).dump(2).c_str());
    else
      printf("%s", mtune::client::FormatWorkers(response).c_str());
    return 0;
  }
  return 0;
}
