// mtune-bench-load: the coordinator under load. Starts a real mtune-coordinator on
// loopback (or uses --connect), registers --workers simulated workers (the fast
// measurement mode of bench/load/simulated_worker.h: the real worker protocol,
// synthetic results reported at once, no compiling), submits jobs worth --tasks
// tasks, and measures
//   - the dispatch rate: tasks leased, reported and committed per second, from
//     submission until the last result is stored;
//   - lease latency (p50, p99, max): from a worker sending its report, which frees it
//     (window 1), to receiving its next task: how long a worker waits for work. Each
//     worker's first task is counted apart, as the job's start-up (submission until
//     every worker has a task).
// By default the workers report at once, so the coordinator is saturated: that run
// gives the dispatch rate, and its lease latency is mostly queueing (in a closed
// loop of W workers its mean is about W / rate). `--task-time-ms T` makes each
// worker spend T ms per task (sleeping) before reporting, as a fleet whose tasks
// take T ms: W workers then offer up to W / T tasks per second, and the lease
// latency is the coordinator's response at that load. The goals are met together
// when one run dispatches >= 5,000 tasks/s with a lease p99 <= 10 ms (e.g. 64
// workers, --task-time-ms 11: up to 5,800 tasks/s offered).
// It then checks correctness: every task was leased exactly once, every trial of
// every job has exactly one stored result, and every job succeeded. --check-only
// skips the figures (ctest runs it that way). Goals: >= 5,000 tasks/s, p99 <= 10 ms.
// --kill-coordinator-after N checks durability instead: it SIGKILLs the coordinator
// once N reports are acknowledged and checks that the SQLite file holds every
// acknowledged result (acknowledged means committed, group commit or not).
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "db/store.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/load/simulated_worker.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "proto/mtune.grpc.pb.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using mtune::bench::SimulatedWorker;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::chrono::system_clock::time_point In(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The coordinator process, its output in `log`; killed when this ends.
class CoordinatorProcess {
 public:
  absl::Status Start(const std::string& binary, const std::string& dir,
                     const std::vector<std::string>& extra) {
    log_ = dir + "/coordinator.log";
    const std::string port_file = dir + "/port";
    std::vector<std::string> argv = {binary, "--listen", "127.0.0.1:0", "--port-file", port_file,
                                     "--db", dir + "/mtune.sqlite"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return absl::InternalError(absl::StrCat("cannot start ", binary, ": ", strerror(rc)));
    for (int i = 0; i < 400; ++i) {
      const std::string port = ReadFile(port_file);
      if (!port.empty()) {
        address_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
        return absl::OkStatus();
      }
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return absl::UnavailableError("the coordinator did not start:\n" + ReadFile(log_));
  }
  // Whether the started coordinator has exited (crashed) on its own.
  bool Exited() {
    if (pid_ <= 0 || waitpid(pid_, nullptr, WNOHANG) != pid_) return false;
    pid_ = -1;
    return true;
  }
  // SIGKILL: no shutdown path runs, as when the machine loses the process.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  ~CoordinatorProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < 100 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  const std::string& address() const { return address_; }
  std::string Log() const { return ReadFile(log_); }

 private:
  pid_t pid_ = -1;
  std::string address_, log_;
};

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
};

Percentiles Summarize(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) { return samples[static_cast<size_t>(q * (samples.size() - 1))]; };
  return {at(0.5), at(0.99), samples.back()};
}

int Fail(const std::string& why) {
  fprintf(stderr, "mtune-bench-load: FAILED: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune-bench-load: coordinator dispatch rate and lease latency with simulated "
               "workers (synthetic results, nothing compiled)"};
  int workers = 64, tasks = 10000;
  std::string coordinator_bin = MTUNE_COORDINATOR_BIN, connect, json_path, dir;
  // Matmuls of matmul_packed, whose knob spaces (about two million combinations
  // before its constraints) are far larger than the ~2,500 tasks per problem, so all
  // are distinct candidates the search finds easily.
  std::vector<std::string> problems = {
      "matmul:m=4096,n=4096,k=4096:f32", "matmul:m=2048,n=4096,k=4096:f32",
      "matmul:m=1024,n=4096,k=4096:f32", "matmul:m=512,n=4096,k=4096:f32"};
  std::string search = "random";
  bool check_only = false;
  int64_t kill_after = 0;
  double timeout_s = 600, task_time_ms = 0;
  app.add_option("--workers", workers, "simulated workers, each on its own connection")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--tasks", tasks, "tasks in all, split evenly over --problem")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--problem", problems, "problems of the job (one job, equal allocation)")
      ->capture_default_str();
  app.add_option("--search", search, "search algorithm proposing the candidates")
      ->capture_default_str();
  app.add_option("--task-time-ms", task_time_ms,
                 "simulated measuring time per task, ms (0: report at once, saturating the "
                 "coordinator)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10000.0));
  app.add_option("--coordinator-bin", coordinator_bin, "mtune-coordinator to start")
      ->capture_default_str();
  app.add_option("--connect", connect,
                 "use the coordinator at host:port instead of starting one (its database "
                 "then gets the synthetic results: use a scratch one)");
  app.add_option("--dir", dir, "scratch directory for the started coordinator (default: a new "
                               "one under $TMPDIR, removed afterwards)");
  app.add_option("--json", json_path, "also write the figures to this JSON file");
  app.add_option("--timeout", timeout_s, "give up after this many seconds")->capture_default_str();
  app.add_flag("--check-only", check_only,
               "check correctness only (every task leased once, one result per trial), "
               "print no figures");
  app.add_option("--kill-coordinator-after", kill_after,
                 "durability check instead of figures: SIGKILL the started coordinator once "
                 "this many reports are acknowledged, then check that its SQLite file holds "
                 "every acknowledged result")
      ->check(CLI::PositiveNumber)
      ->excludes("--connect");
  CLI11_PARSE(app, argc, argv);
  if (kill_after >= tasks) return Fail("--kill-coordinator-after must be below --tasks");
  if (tasks < static_cast<int>(problems.size()))
    return Fail("--tasks must be at least the number of problems");

  bool remove_dir = false;
  if (dir.empty()) {
    const char* base = getenv("TMPDIR");
    std::string templ = std::string(base ? base : "/tmp") + "/mtune-bench-load-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) return Fail("mkdtemp failed");
    dir = templ;
    remove_dir = true;
  }
  std::filesystem::create_directories(dir);
  CoordinatorProcess coordinator;
  std::string address = connect;
  if (address.empty()) {
    // Leases and heartbeats as in production; only the results are synthetic.
    if (absl::Status s = coordinator.Start(coordinator_bin, dir, {}); !s.ok())
      return Fail(std::string(s.message()));
    address = coordinator.address();
  }
  fprintf(stderr, "mtune-bench-load: coordinator %s, %d simulated workers, %d tasks, %g ms per task\n",
          address.c_str(), workers, tasks, task_time_ms);

  // Workers register and open their Work streams before any work exists, so the
  // measurement starts with every worker waiting.
  std::atomic<int64_t> stored{0};
  std::vector<std::unique_ptr<SimulatedWorker>> sims;
  for (int i = 0; i < workers; ++i) {
    sims.push_back(std::make_unique<SimulatedWorker>(
        address, i, &stored, std::chrono::microseconds(static_cast<int64_t>(task_time_ms * 1e3))));
    if (absl::Status s = sims.back()->Register(); !s.ok()) return Fail(std::string(s.message()));
  }
  std::vector<std::thread> threads;
  std::vector<grpc::Status> ends(workers);
  for (int i = 0; i < workers; ++i) threads.emplace_back([&, i] { ends[i] = sims[i]->Serve(); });
  std::atomic<bool> beating{true};
  std::thread heartbeats([&] {
    while (beating) {
      for (auto& sim : sims) sim->Heartbeat();
      const auto until = Clock::now() + std::chrono::duration<double>(sims[0]->heartbeat_interval_s());
      while (beating && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  // ListResults of 10,000 trials is larger than gRPC's default 4 MB.
  grpc::ChannelArguments client_args;
  client_args.SetMaxReceiveMessageSize(256 << 20);
  auto channel =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), client_args);
  auto tuner = mtune::v1::Tuner::NewStub(channel);
  mtune::v1::SubmitJobRequest submit;
  for (const auto& p : problems) submit.mutable_spec()->add_problems(p);
  submit.mutable_spec()->set_search(search);
  submit.mutable_spec()->set_seed(1);
  submit.mutable_spec()->set_allocation("equal");
  const uint32_t per_problem = static_cast<uint32_t>(tasks / problems.size());
  submit.mutable_spec()->set_trials(per_problem);
  const uint32_t expected = per_problem * static_cast<uint32_t>(problems.size());
  if (expected != static_cast<uint32_t>(tasks))
    fprintf(stderr, "mtune-bench-load: %d tasks do not split evenly over %zu problems: running %u\n",
            tasks, problems.size(), expected);

  const Clock::time_point start = Clock::now();
  mtune::v1::SubmitJobResponse submitted;
  {
    grpc::ClientContext context;
    context.set_deadline(In(60));
    grpc::Status s = tuner->SubmitJob(&context, submit, &submitted);
    if (!s.ok()) return Fail("SubmitJob: " + s.error_message());
  }
  const int64_t job_id = submitted.job().id();
  if (submitted.job().trials_total() != expected)
    return Fail(absl::StrCat("the job plans ", submitted.job().trials_total(), " trials, not ",
                             expected, " (knob spaces too small for --tasks?)"));

  if (kill_after > 0) {
    while (stored.load() < kill_after) {
      if (coordinator.Exited()) return Fail("the coordinator exited:\n" + coordinator.Log());
      if (Seconds(Clock::now() - start) > timeout_s)
        return Fail(absl::StrCat("after ", timeout_s, " s only ", stored.load(), " of ",
                                 kill_after, " results stored"));
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    coordinator.Kill();
    for (auto& sim : sims) sim->Stop();
    for (auto& t : threads) t.join();
    beating = false;
    heartbeats.join();
    // Only this process reads the file now; every acknowledged trial must be in it.
    auto store = mtune::db::Store::Open(dir + "/mtune.sqlite");
    if (!store.ok()) return Fail("cannot open the killed coordinator's store: " +
                                 std::string(store.status().message()));
    size_t acknowledged = 0, missing = 0;
    for (auto& sim : sims) {
      for (const auto& ack : sim->acknowledged()) {
        ++acknowledged;
        auto has = (*store)->HasResult(ack.job_id, ack.problem, ack.candidate_hash);
        if (!has.ok() || !*has) {
          if (++missing <= 10)
            fprintf(stderr, "mtune-bench-load: acknowledged but not stored: job %lld %s %s\n",
                    static_cast<long long>(ack.job_id), ack.problem.c_str(),
                    ack.candidate_hash.c_str());
        }
      }
    }
    auto rows = (*store)->ListResults(job_id, "", 0);
    if (!rows.ok()) return Fail(std::string(rows.status().message()));
    if (missing > 0)
      return Fail(absl::StrCat(missing, " of ", acknowledged,
                               " acknowledged results are not in the store"));
    fprintf(stderr,
            "mtune-bench-load: coordinator killed after %zu acknowledged results; all are in "
            "the store (%zu stored rows: a result may be committed and its acknowledgement "
            "lost, never the other way round)\n",
            acknowledged, rows->size());
    if (rows->size() < acknowledged) return Fail("fewer stored rows than acknowledgements");
    if (remove_dir) std::filesystem::remove_all(dir);
    return 0;
  }

  // The workers count acknowledged reports, so waiting costs the coordinator nothing
  // (polling GetJob would: it reads every stored result of the job).
  Clock::time_point last_progress = start;
  while (stored.load() < static_cast<int64_t>(expected)) {
    const Clock::time_point now = Clock::now();
    if (connect.empty() && coordinator.Exited())
      return Fail("the coordinator exited:\n" + coordinator.Log());
    if (Seconds(now - start) > timeout_s)
      return Fail(absl::StrCat("after ", timeout_s, " s only ", stored.load(), " of ", expected,
                               " results stored"));
    if (Seconds(now - last_progress) >= 2) {
      fprintf(stderr, "mtune-bench-load: %lld / %u results stored (%.0f tasks/s so far)\n",
              static_cast<long long>(stored.load()), expected,
              stored.load() / Seconds(now - start));
      last_progress = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const Clock::time_point end = Clock::now();
  // The job ends with its last stored result.
  mtune::v1::Job job;
  for (int i = 0;; ++i) {
    grpc::ClientContext context;
    context.set_deadline(In(30));
    mtune::v1::GetJobRequest get;
    get.set_job_id(job_id);
    if (grpc::Status s = tuner->GetJob(&context, get, &job); !s.ok())
      return Fail("GetJob: " + s.error_message());
    if (job.state() != mtune::v1::JOB_STATE_RUNNING || i == 100) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double elapsed_s = Seconds(end - start);

  for (auto& sim : sims) sim->Stop();
  for (auto& t : threads) t.join();
  beating = false;
  heartbeats.join();

  // --- correctness ----------------------------------------------------------------
  std::vector<std::string> errors;
  if (job.state() != mtune::v1::JOB_STATE_SUCCEEDED)
    errors.push_back(absl::StrCat("job ended ", mtune::v1::JobState_Name(job.state()), ": ",
                                  job.message()));
  if (job.trials_done() != expected)
    errors.push_back(absl::StrCat(job.trials_done(), " trials stored, expected ", expected));
  std::map<int64_t, int> leased;
  std::vector<double> latencies;
  int failed_reports = 0;
  for (auto& sim : sims) {
    for (int64_t id : sim->task_ids()) ++leased[id];
    latencies.insert(latencies.end(), sim->lease_latencies_s().begin(),
                     sim->lease_latencies_s().end());
    failed_reports += sim->failed_reports();
  }
  int twice = 0;
  for (const auto& [id, count] : leased) twice += count > 1;
  if (leased.size() != expected)
    errors.push_back(absl::StrCat(leased.size(), " distinct tasks leased, expected ", expected));
  if (twice > 0) errors.push_back(absl::StrCat(twice, " tasks leased more than once"));
  if (failed_reports > 0) errors.push_back(absl::StrCat(failed_reports, " reports not stored"));
  {
    grpc::ClientContext context;
    context.set_deadline(In(60));
    mtune::v1::ListResultsRequest list;
    list.set_job_id(job_id);
    mtune::v1::ListResultsResponse results;
    if (grpc::Status s = tuner->ListResults(&context, list, &results); !s.ok()) {
      errors.push_back("ListResults: " + s.error_message());
    } else {
      std::set<std::pair<std::string, std::string>> trials;
      for (const auto& r : results.results()) trials.emplace(r.problem(), r.candidate().hash());
      if (static_cast<uint32_t>(results.results_size()) != expected || trials.size() != expected)
        errors.push_back(absl::StrCat(results.results_size(), " stored results (",
                                      trials.size(), " distinct trials), expected ", expected));
    }
  }
  for (int i = 0; i < workers; ++i)
    if (ends[i].error_code() != grpc::StatusCode::CANCELLED)
      errors.push_back(absl::StrCat(sims[i]->name(), "'s Work stream ended early: ",
                                    ends[i].error_message()));
  if (!errors.empty()) {
    for (const auto& e : errors) fprintf(stderr, "mtune-bench-load: %s\n", e.c_str());
    if (!connect.empty()) return Fail("see above");
    return Fail("see above; coordinator log tail:\n" +
                coordinator.Log().substr(coordinator.Log().size() > 4000
                                             ? coordinator.Log().size() - 4000 : 0));
  }
  fprintf(stderr, "mtune-bench-load: correct: %u tasks leased once each, %u results stored, "
                  "job succeeded\n", expected, expected);
  if (remove_dir) std::filesystem::remove_all(dir);
  if (check_only) return 0;

  // --- figures ----------------------------------------------------------------------
  const Percentiles lease = Summarize(latencies);
  // Job start-up: planning (knob spaces, the first proposals) until every worker has
  // its first task.
  Clock::time_point last_first = start;
  for (auto& sim : sims) last_first = std::max(last_first, sim->first_task_at());
  const double startup_s = Seconds(last_first - start);
  const double rate = expected / elapsed_s;
  printf("workers  tasks  task ms  seconds  tasks/s  lease p50 ms  lease p99 ms  lease max ms  "
         "start-up ms\n");
  printf("%7d  %5u  %7.1f  %7.2f  %7.0f  %12.3f  %12.3f  %12.3f  %11.1f\n", workers, expected,
         task_time_ms, elapsed_s, rate, lease.p50 * 1e3, lease.p99 * 1e3, lease.max * 1e3,
         startup_s * 1e3);
  const bool rate_met = rate >= 5000, latency_met = lease.p99 <= 0.010;
  printf("goals: >= 5000 tasks/s %s, lease p99 <= 10 ms %s%s\n", rate_met ? "met" : "NOT met",
         latency_met ? "met" : "NOT met",
         rate_met && latency_met ? " (both in this run)"
         : task_time_ms == 0     ? " (saturated run: its latency is queueing; see --task-time-ms)"
                                 : "");
  if (!json_path.empty()) {
    nlohmann::json out = {{"workers", workers},       {"tasks", expected},
                          {"seconds", elapsed_s},     {"tasks_per_s", rate},
                          {"lease_p50_ms", lease.p50 * 1e3}, {"lease_p99_ms", lease.p99 * 1e3},
                          {"lease_max_ms", lease.max * 1e3}, {"startup_ms", startup_s * 1e3},
                          {"task_time_ms", task_time_ms},
                          {"problems", problems},
                          {"search", search}};
    std::ofstream(json_path) << out.dump(2) << "\n";
  }
  return 0;
}
