// Jobs: submit, confirm, status, explain, watch, cancel, jobs.
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "client/cli.h"
#include "client/connection.h"
#include "client/format.h"
#include "search/budget.h"
#include "search/search.h"

namespace mtune::client::cli {
namespace {

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
    if (!tty && !first && running && !NewProgressStep(last_done, job.trials_done(), job.trials_total())) {
      last_done = job.trials_done();
      continue;
    }
    last_done = job.trials_done();
    std::string line = ProgressBar(job.trials_done(), job.trials_total()) + " " + FormatJobLine(job);
    if (tty)
      fprintf(stderr, "\r\033[K%s", FitToWidth(line, columns - 1).c_str());
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
  for (const auto& best : job.best()) printf("%s", FormatBest(best).c_str());
  if (job.state() == mtune::v1::JOB_STATE_SUCCEEDED) return 0;
  fprintf(stderr, "mtune: job %lld ended %s%s%s\n", static_cast<long long>(job.id()),
          mtune::v1::JobState_Name(job.state()).c_str(), job.message().empty() ? "" : ": ",
          job.message().c_str());
  return kFailed;
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
    printf("%s", FormatBest(*best).c_str());
  }
  return 0;
}

// Waits until `count` workers are registered (not gone) with the coordinator, so
// that a job submitted next is planned for their targets; DeadlineExceeded after
// `timeout_s`, saying how many did.
absl::Status WaitForWorkers(mtune::v1::Tuner::Stub& stub, uint32_t count, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    grpc::ClientContext context;
    mtune::v1::ListWorkersResponse response;
    if (auto s = FromGrpc(stub.ListWorkers(&context, mtune::v1::ListWorkersRequest(), &response)); !s.ok())
      return s;
    uint32_t live = 0;
    for (const auto& w : response.workers()) live += w.state() != "gone";
    if (live >= count) return absl::OkStatus();
    if (std::chrono::steady_clock::now() >= deadline)
      return absl::DeadlineExceededError(absl::StrFormat(
          "--workers %u: %u worker(s) registered within %g s; nothing submitted", count, live, timeout_s));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

struct SubmitFlags {
  std::vector<std::string> problems;
  // The model is the default: replayed cold on the 58 measured tables in bench/data, it
  // reaches 95% of the best in a third or less of random search's trials on 51 of them
  // (bench/README.md, session 69).
  std::string template_name, search = "model";
  uint32_t trials = 32;
  uint64_t seed = 0;
  CLI::Option* seed_option = nullptr;
  std::string time_budget, allocation = "gain";
  uint32_t patience = 0, confirm = 0, workers = 0;
  double workers_timeout_s = 120;
  bool wait = false, warm_start = true;
};

Command AddSubmit(CLI::App& app, CoordinatorFlags& coordinator) {
  auto* submit = app.add_subcommand("submit", "submit a tuning job");
  AddCoordinatorFlags(submit, coordinator);
  auto flags = std::make_shared<SubmitFlags>();
  submit->add_option("--problem", flags->problems, "problem key(s), e.g. matmul:m=512,n=512,k=512:f32")
      ->required();
  submit->add_option("--template", flags->template_name,
                     "strategy template (default: per problem, the best suited one that the "
                     "registered workers' CPUs can run; `mtune families` lists them)");
  submit->add_option("--search", flags->search, "search algorithm")
      ->check(CLI::IsMember(search::SearchAlgorithmNames()))
      ->capture_default_str();
  submit->add_option("--trials", flags->trials, "trials per problem (with several problems and "
                                                "--allocate gain: their sum is shared)")
      ->capture_default_str();
  flags->seed_option = submit->add_option(
      "--seed", flags->seed, "seed of the search; the job records it, so the same seed replays a run "
                             "(default: a fresh random seed, printed)");
  submit->add_option("--time", flags->time_budget,
                     "wall-time budget of the job, e.g. 90s, 10m, 1h30m (default: none)");
  submit->add_option("--patience", flags->patience,
                     "stop a problem after N trials without a >1% improvement (0: never)")
      ->capture_default_str();
  submit->add_option("--allocate", flags->allocation,
                     "spread trials over several problems by expected gain, or equally")
      ->check(CLI::IsMember({"gain", "equal"}))
      ->capture_default_str();
  submit->add_flag("!--no-warm-start", flags->warm_start,
                   "do not seed the search with the best candidates of the nearest stored problems");
  submit->add_flag("--wait", flags->wait, "show progress until the job ends, then the best strategy");
  submit->add_option("--confirm", flags->confirm,
                     "when the job ends, measure each problem's N best stored candidates once more, "
                     "and those that then rise among the best N (a second job, as `mtune confirm`), "
                     "so that one lucky timing cannot stay best; implies --wait (0: none)")
      ->capture_default_str();
  submit->add_option("--workers", flags->workers,
                     "first wait until N workers are registered, so that templates and register tiles "
                     "are chosen for their CPUs (0: submit at once, for the workers registered now)")
      ->capture_default_str();
  submit->add_option("--workers-timeout", flags->workers_timeout_s,
                     "seconds to wait for --workers before giving up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return {submit, [flags, &coordinator] {
            SubmitFlags& f = *flags;
            double time_budget_s = 0;
            if (!f.time_budget.empty()) {
              auto parsed = search::ParseDuration(f.time_budget);
              if (!parsed.ok())
                return Fail(absl::InvalidArgumentError("--time: " + std::string(parsed.status().message())));
              time_budget_s = *parsed;
            }
            if (f.seed_option->count() == 0) {
              // A fresh seed per job, recorded with it: `--seed` replays the run.
              std::random_device entropy;
              f.seed = (uint64_t{entropy()} << 32 | entropy()) >> 1;
            }
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            if (f.workers > 0)
              if (auto s = WaitForWorkers(**stub, f.workers, f.workers_timeout_s); !s.ok()) return Fail(s);
            mtune::v1::JobSpec spec;
            for (const auto& p : f.problems) spec.add_problems(p);
            spec.set_template_name(f.template_name);
            spec.set_search(f.search);
            spec.set_trials(f.trials);
            spec.set_seed(f.seed);
            spec.set_time_budget_s(time_budget_s);
            spec.set_patience(f.patience);
            spec.set_warm_start(f.warm_start);
            spec.set_allocation(f.allocation);
            grpc::ClientContext context;
            mtune::v1::SubmitJobRequest request;
            *request.mutable_spec() = spec;
            mtune::v1::SubmitJobResponse response;
            if (auto s = FromGrpc((*stub)->SubmitJob(&context, request, &response)); !s.ok()) return Fail(s);
            printf("job %lld submitted: %u trials planned, search %s, seed %llu\n",
                   static_cast<long long>(response.job().id()), response.job().trials_total(),
                   f.search.c_str(), static_cast<unsigned long long>(f.seed));
            printf("%s", FormatTemplates(response.job()).c_str());
            fflush(stdout);
            if (!f.wait && f.confirm == 0) return 0;
            auto job = Watch(**stub, response.job().id());
            if (!job.ok()) return Fail(job.status());
            if (f.confirm == 0 || job->state() != mtune::v1::JOB_STATE_SUCCEEDED) return PrintBestOfJob(*job);
            // Only the problems with a candidate that ran (a confirmation of a problem
            // with none would be refused).
            std::vector<std::string> measured;
            for (const auto& best : job->best()) measured.push_back(best.problem());
            return ConfirmAndPrintBest(**stub, measured, f.template_name, f.confirm);
          }};
}

struct ConfirmFlags {
  std::vector<std::string> problems;
  std::string template_name;
  uint32_t top = 3;
};

Command AddConfirm(CLI::App& app, CoordinatorFlags& coordinator) {
  auto* confirm = app.add_subcommand(
      "confirm",
      "measure the best stored candidates of problems once more (ranked by their median), and "
      "those that rise among the best as they do, until the best --top have all been measured again");
  AddCoordinatorFlags(confirm, coordinator);
  auto flags = std::make_shared<ConfirmFlags>();
  confirm->add_option("--problem", flags->problems, "problem key(s) with stored results")->required();
  confirm->add_option("--template", flags->template_name,
                      "strategy template (default: chosen per problem as `submit` does)");
  confirm->add_option("--top", flags->top, "candidates per problem, best first")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return {confirm, [flags, &coordinator] {
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            return ConfirmAndPrintBest(**stub, flags->problems, flags->template_name, flags->top);
          }};
}

// A subcommand whose one argument is a job id.
CLI::App* AddJobSubcommand(CLI::App& app, CoordinatorFlags& coordinator, const std::string& name,
                           const std::string& description, int64_t& job_id) {
  auto* command = app.add_subcommand(name, description);
  AddCoordinatorFlags(command, coordinator);
  command->add_option("job", job_id, "job id (`mtune jobs` lists them)")->required();
  return command;
}

// status (progress and best so far) or cancel (then the same line).
Command AddStatusOrCancel(CLI::App& app, CoordinatorFlags& coordinator, bool cancel) {
  auto job_id = std::make_shared<int64_t>(0);
  auto* command = cancel ? AddJobSubcommand(app, coordinator, "cancel",
                                            "stop a job (measured trials stay stored)", *job_id)
                         : AddJobSubcommand(app, coordinator, "status",
                                            "show a job's progress and best so far", *job_id);
  return {command, [job_id, &coordinator, cancel] {
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            grpc::ClientContext context;
            mtune::v1::Job job;
            grpc::Status s;
            if (cancel) {
              mtune::v1::CancelJobRequest request;
              request.set_job_id(*job_id);
              s = (*stub)->CancelJob(&context, request, &job);
            } else {
              mtune::v1::GetJobRequest request;
              request.set_job_id(*job_id);
              s = (*stub)->GetJob(&context, request, &job);
            }
            if (!s.ok()) return Fail(FromGrpc(s));
            printf("%s %s\n", ProgressBar(job.trials_done(), job.trials_total()).c_str(),
                   FormatJobLine(job).c_str());
            if (!cancel) printf("%s%s", FormatProgress(job).c_str(), FormatTemplates(job).c_str());
            return 0;
          }};
}

Command AddExplain(CLI::App& app, CoordinatorFlags& coordinator) {
  struct Flags {
    int64_t job_id = 0;
    int chart_width = 60;
  };
  auto flags = std::make_shared<Flags>();
  auto* explain = AddJobSubcommand(
      app, coordinator, "explain",
      "show a job's convergence: best-so-far GFLOP/s against trial, as a text chart", flags->job_id);
  explain->add_option("--width", flags->chart_width, "chart columns")->capture_default_str()
      ->check(CLI::Range(8, 400));
  return {explain, [flags, &coordinator] {
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            grpc::ClientContext context;
            mtune::v1::ConvergenceRequest request;
            request.set_job_id(flags->job_id);
            mtune::v1::ConvergenceResponse response;
            if (auto s = FromGrpc((*stub)->GetConvergence(&context, request, &response)); !s.ok())
              return Fail(s);
            printf("%s", FormatConvergence(response, flags->chart_width).c_str());
            return 0;
          }};
}

Command AddWatch(CLI::App& app, CoordinatorFlags& coordinator) {
  auto job_id = std::make_shared<int64_t>(0);
  auto* watch = AddJobSubcommand(app, coordinator, "watch",
                                 "follow a job with a progress bar until it ends", *job_id);
  return {watch, [job_id, &coordinator] {
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            auto job = Watch(**stub, *job_id);
            if (!job.ok()) return Fail(job.status());
            return PrintBestOfJob(*job);
          }};
}

Command AddJobs(CLI::App& app, CoordinatorFlags& coordinator) {
  struct Flags {
    uint32_t limit = 20;
    std::string state;
  };
  auto flags = std::make_shared<Flags>();
  auto* jobs = app.add_subcommand("jobs", "list the stored jobs, newest first");
  AddCoordinatorFlags(jobs, coordinator);
  jobs->add_option("--limit", flags->limit, "the newest N jobs (0: all)")->capture_default_str();
  jobs->add_option("--state", flags->state, "only jobs in this state (default: any)")
      ->check(CLI::IsMember({"running", "succeeded", "cancelled", "failed"}));
  return {jobs, [flags, &coordinator] {
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            grpc::ClientContext context;
            mtune::v1::ListJobsRequest request;
            request.set_limit(flags->limit);
            if (!flags->state.empty()) {
              mtune::v1::JobState state = mtune::v1::JOB_STATE_UNSPECIFIED;
              mtune::v1::JobState_Parse("JOB_STATE_" + absl::AsciiStrToUpper(flags->state), &state);
              request.set_state(state);
            }
            mtune::v1::ListJobsResponse response;
            if (auto s = FromGrpc((*stub)->ListJobs(&context, request, &response)); !s.ok()) return Fail(s);
            printf("%s", FormatJobs(response).c_str());
            return 0;
          }};
}

}  // namespace

std::vector<Command> AddJobCommands(CLI::App& app, CoordinatorFlags& coordinator) {
  std::vector<Command> commands;
  commands.push_back(AddSubmit(app, coordinator));
  commands.push_back(AddConfirm(app, coordinator));
  commands.push_back(AddStatusOrCancel(app, coordinator, /*cancel=*/false));
  commands.push_back(AddExplain(app, coordinator));
  commands.push_back(AddWatch(app, coordinator));
  commands.push_back(AddStatusOrCancel(app, coordinator, /*cancel=*/true));
  commands.push_back(AddJobs(app, coordinator));
  return commands;
}

}  // namespace mtune::client::cli
