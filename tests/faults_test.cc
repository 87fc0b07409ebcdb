// Faults survived (issue 5): real coordinator and worker processes on 127.0.0.1
// (free ports), a real SQLite file and real MLIR compilation; processes are
// killed, frozen and restarted for real. Every wait polls for a condition with a
// generous deadline, so a loaded machine makes the tests slower, not flaky.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "db/store.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/mtune.grpc.pb.h"
#include "tests/subprocess.h"

namespace mtune {
namespace {

using testing::MakeTempDir;
using testing::ReadFile;
using testing::RunCommand;
using testing::SleepS;
using testing::Subprocess;
using Clock = std::chrono::steady_clock;

// Small enough that a trial takes a fraction of a second, with a knob space far
// larger than any budget below.
constexpr char kProblem[] = "matmul:m=64,n=64,k=64:f32";

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Polls `condition` every 50 ms for up to `timeout_s`.
bool WaitFor(const std::function<bool()>& condition, double timeout_s) {
  const auto start = Clock::now();
  while (SecondsSince(start) < timeout_s) {
    if (condition()) return true;
    SleepS(0.05);
  }
  return condition();
}

// Rows of a query on a SQLite file, every column as text (read-only; WAL lets it
// read while the coordinator writes).
std::vector<std::vector<std::string>> Query(const std::string& path, const std::string& sql) {
  std::vector<std::vector<std::string>> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path;
    sqlite3_close_v2(db);
    return rows;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  } else {
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const unsigned char* text = sqlite3_column_text(stmt, i);
        row.push_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  }
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return rows;
}

class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("mtune-faults-");
    db_path_ = dir_ + "/mtune.sqlite";
  }

  // Starts the coordinator on `port_` (0 the first time: a free port, kept for
  // restarts) with the shared flags plus `extra`.
  void StartCoordinator(const std::vector<std::string>& extra = {}) {
    coordinator_extra_ = extra;
    std::remove((dir_ + "/port").c_str());
    std::vector<std::string> argv = {MTUNE_COORDINATOR_BIN, "--listen",
                                     "127.0.0.1:" + std::to_string(port_), "--port-file",
                                     dir_ + "/port", "--db", db_path_, "--min-measure", "0.01"};
    // Tests that freeze workers want a short heartbeat timeout; the others a
    // generous one, so that a loaded machine's late heartbeat re-queues nothing.
    if (std::find(extra.begin(), extra.end(), "--heartbeat-timeout") == extra.end())
      argv.insert(argv.end(), {"--heartbeat-timeout", "8"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    coordinator_ = std::make_unique<Subprocess>(argv, dir_ + "/coordinator.log");
    ASSERT_TRUE(WaitFor([&] { return !ReadFile(dir_ + "/port").empty(); }, 30))
        << coordinator_->Log();
    const std::string port = ReadFile(dir_ + "/port");
    const int bound = std::stoi(port.substr(0, port.find('\n')));
    if (port_ != 0) {
      ASSERT_EQ(bound, port_) << "restarted on another port";
    }
    port_ = bound;
    address_ = "127.0.0.1:" + std::to_string(port_);
    tuner_ = mtune::v1::Tuner::NewStub(
        grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  // SIGKILLs the coordinator mid-whatever and starts it again on the same port
  // and SQLite file; `while_down` runs after the kill, before the restart (what
  // it reads from the file is what the restarted coordinator finds there).
  void KillAndRestartCoordinator(double down_s, const std::function<void()>& while_down = {}) {
    coordinator_->Signal(SIGKILL);
    ASSERT_NE(coordinator_->Wait(10), -1);
    ++coordinator_kills_;
    if (while_down) while_down();
    SleepS(down_s);
    StartCoordinator(coordinator_extra_);
  }

  Subprocess* StartWorker(const std::string& name, int cpu,
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {MTUNE_WORKER_BIN, "--coordinator", address_, "--cpu",
                                     std::to_string(cpu), "--name", name, "--give-up-after",
                                     "120"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    workers_[name] = std::make_unique<Subprocess>(argv, dir_ + "/" + name + ".log");
    return workers_[name].get();
  }

  template <typename Request, typename Response, typename Method>
  grpc::Status Call(Method method, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*tuner_).*method)(&context, request, response);
  }

  mtune::v1::ListWorkersResponse Workers() {
    mtune::v1::ListWorkersResponse response;
    (void)Call(&mtune::v1::Tuner::Stub::ListWorkers, mtune::v1::ListWorkersRequest(), &response);
    return response;
  }

  // Live (not gone) workers the coordinator knows.
  int LiveWorkers() {
    int n = 0;
    const auto workers = Workers();  // not a temporary's member: range-for would dangle
    for (const auto& w : workers.workers()) n += w.state() != "gone";
    return n;
  }

  void WaitForWorkers(int n) {
    ASSERT_TRUE(WaitFor([&] { return LiveWorkers() >= n; }, 120))
        << "workers did not register:\n" << coordinator_->Log();
  }

  mtune::v1::Job Submit(const mtune::v1::JobSpec& spec) {
    mtune::v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    mtune::v1::SubmitJobResponse response;
    grpc::Status status = Call(&mtune::v1::Tuner::Stub::SubmitJob, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.job();
  }

  // The job, or nullopt while the coordinator does not answer.
  std::optional<mtune::v1::Job> TryGetJob(int64_t id) {
    mtune::v1::GetJobRequest request;
    request.set_job_id(id);
    mtune::v1::Job job;
    if (!Call(&mtune::v1::Tuner::Stub::GetJob, request, &job).ok()) return std::nullopt;
    return job;
  }

  uint32_t TrialsDone(int64_t id) {
    auto job = TryGetJob(id);
    return job ? job->trials_done() : 0;
  }

  mtune::v1::Job WaitForEnd(int64_t id, double timeout_s) {
    std::optional<mtune::v1::Job> job;
    const bool ended = WaitFor(
        [&] {
          job = TryGetJob(id);
          return job && job->state() != mtune::v1::JOB_STATE_RUNNING;
        },
        timeout_s);
    EXPECT_TRUE(ended) << "job " << id << " still running after " << timeout_s << " s\n"
                       << coordinator_->Log();
    return job.value_or(mtune::v1::Job());
  }

  static mtune::v1::JobSpec Spec(uint32_t trials, uint64_t seed) {
    mtune::v1::JobSpec spec;
    spec.add_problems(kProblem);
    spec.set_search("random");
    spec.set_trials(trials);
    spec.set_seed(seed);
    return spec;
  }

  // Every stored result of the job: (candidate hash, worker, status, error,
  // total_s), in storing order.
  std::vector<std::vector<std::string>> StoredResults(int64_t job_id) {
    return Query(db_path_, "SELECT candidate_hash, worker_name, status, error, total_s, gflops "
                           "FROM results WHERE job_id = " + std::to_string(job_id) +
                               " ORDER BY id");
  }

  // The job ended well and every trial of its budget has exactly one result.
  void ExpectExactlyOneResultPerTrial(const mtune::v1::Job& job, uint32_t trials) {
    EXPECT_EQ(job.state(), mtune::v1::JOB_STATE_SUCCEEDED) << job.message();
    EXPECT_EQ(job.trials_done(), trials);
    const auto rows = StoredResults(job.id());
    EXPECT_EQ(rows.size(), trials);
    std::set<std::string> hashes;
    for (const auto& row : rows) hashes.insert(row[0]);
    EXPECT_EQ(hashes.size(), rows.size()) << "a candidate was stored twice";
  }

  int CountInLog(const std::string& log, const std::string& needle) {
    int n = 0;
    for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
    return n;
  }

  std::string dir_, db_path_, address_;
  int port_ = 0;
  std::vector<std::string> coordinator_extra_;
  int coordinator_kills_ = 0;
  std::unique_ptr<Subprocess> coordinator_;
  std::map<std::string, std::unique_ptr<Subprocess>> workers_;
  std::unique_ptr<mtune::v1::Tuner::Stub> tuner_;
};

// A worker frozen with SIGSTOP stops heartbeating: its task is re-queued and
// measured elsewhere. Thawed, it reports late (a straggler): that report is
// deduplicated, the worker serves again, and every trial has exactly one result.
// (A worker killed with SIGKILL mid-task: integration_test's
// TunesWithTwoWorkersSurvivesAKilledWorkerAndExports and the chaos test below.)
TEST_F(Faults, FrozenWorkerLosesItsTaskAndItsLateReportIsStoredOnce) {
  StartCoordinator({"--heartbeat-timeout", "3"});
  StartWorker("w0", 0);
  StartWorker("w1", 1);
  WaitForWorkers(2);
  const uint32_t trials = 12;
  const mtune::v1::Job job = Submit(Spec(trials, 5));
  ASSERT_GT(job.id(), 0);

  ASSERT_TRUE(WaitFor(
      [&] {
        if (TrialsDone(job.id()) < 1) return false;
        const auto workers = Workers();
        for (const auto& w : workers.workers()) {
          if (w.name() == "w0" && w.state() == "busy") {
            workers_["w0"]->Signal(SIGSTOP);
            return true;
          }
        }
        return false;
      },
      120))
      << "w0 never seen busy mid-job";
  ASSERT_LT(TrialsDone(job.id()), trials) << "froze too late";

  // The coordinator notices the silence (heartbeat timeout 3 s) and re-queues what
  // w0 holds. Which tasks that is comes from the log, not from the listing above:
  // w0 may have reported the task listed there between the listing and SIGSTOP,
  // and then holds the one leased to it next.
  const std::regex requeued_re("task ([0-9]+) re-queued: its worker w0#[0-9]+ stopped heartbeating");
  auto requeued_tasks = [&] {
    std::set<std::string> ids;
    const std::string log = coordinator_->Log();
    for (std::sregex_iterator it(log.begin(), log.end(), requeued_re), end; it != end; ++it)
      ids.insert((*it)[1]);
    return ids;
  };
  ASSERT_TRUE(WaitFor([&] { return !requeued_tasks().empty(); }, 60)) << coordinator_->Log();
  const std::set<std::string> requeued = requeued_tasks();
  // w1 finishes what it holds, then the re-queued tasks (they went to the front).
  const uint32_t at_requeue = TrialsDone(job.id());
  WaitFor([&] { return TrialsDone(job.id()) >= std::min(trials, at_requeue + 2); }, 120);

  // Thawed, w0 reports a re-queued task late: stored once, whichever report came
  // first (the log says which).
  workers_["w0"]->Signal(SIGCONT);
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string log = coordinator_->Log();
        for (const auto& id : requeued)
          if (log.find("task " + id + ": late report from w0") != std::string::npos) return true;
        return false;
      },
      60))
      << coordinator_->Log();
  // It heartbeats again and is given work again.
  EXPECT_TRUE(WaitFor(
      [&] {
        const auto workers = Workers();
        for (const auto& w : workers.workers())
          if (w.name() == "w0" && w.state() != "gone") return true;
        return false;
      },
      30));

  const mtune::v1::Job ended = WaitForEnd(job.id(), 240);
  ExpectExactlyOneResultPerTrial(ended, trials);
  EXPECT_TRUE(workers_["w0"]->running()) << workers_["w0"]->Log();
}

// The coordinator killed with SIGKILL mid-job and restarted on the same SQLite
// file and port: the job resumes where it was, the workers reconnect by
// themselves (with backoff), and every result committed before the kill stays.
TEST_F(Faults, CoordinatorKilledMidJobResumesAndWorkersReconnect) {
  StartCoordinator();
  StartWorker("w0", 0);
  StartWorker("w1", 1);
  WaitForWorkers(2);
  const uint32_t trials = 16;
  const mtune::v1::Job job = Submit(Spec(trials, 9));
  ASSERT_TRUE(WaitFor([&] { return TrialsDone(job.id()) >= 4; }, 120));

  // Down for a few seconds: long enough for the workers to notice and back off.
  // The committed results are read while it is down: once it is back, a worker
  // may reconnect and store another one before the test looks.
  std::vector<std::vector<std::string>> committed;
  KillAndRestartCoordinator(/*down_s=*/4, [&] { committed = StoredResults(job.id()); });
  ASSERT_GE(committed.size(), 4u);
  ASSERT_LT(committed.size(), trials) << "killed too late";
  EXPECT_NE(coordinator_->Log().find("resuming job " + std::to_string(job.id()) + ": " +
                                     std::to_string(committed.size()) + " trials already stored"),
            std::string::npos)
      << coordinator_->Log();

  WaitForWorkers(2);
  // Each registered again by itself. They retried with backoff while it was down:
  // registering (coordinator unreachable) or reporting (a task finished meanwhile);
  // one still measuring through the whole outage had no reason to, hence "any".
  int retried = 0;
  for (const char* name : {"w0", "w1"}) {
    EXPECT_TRUE(
        WaitFor([&] { return CountInLog(workers_[name]->Log(), "registered as") >= 2; }, 60))
        << workers_[name]->Log();
    retried += workers_[name]->Log().find("retrying in") != std::string::npos;
  }
  EXPECT_GE(retried, 1) << workers_["w0"]->Log() << workers_["w1"]->Log();

  const mtune::v1::Job ended = WaitForEnd(job.id(), 240);
  ExpectExactlyOneResultPerTrial(ended, trials);
  // The committed results are still there, unchanged.
  const auto after = StoredResults(job.id());
  std::map<std::string, std::vector<std::string>> by_hash;
  for (const auto& row : after) by_hash[row[0]] = row;
  for (const auto& row : committed) {
    ASSERT_TRUE(by_hash.contains(row[0])) << "committed result " << row[0] << " lost";
    EXPECT_EQ(by_hash[row[0]], row);
  }
}

// Generated code that segfaults, raises SIGILL or SIGBUS, exhausts memory, loops
// forever or computes a wrong result (raised on demand by the worker's test-only
// fault switch, where the kernel runs) is recorded with its signal or diagnostic,
// and the same worker process goes on serving. Timeouts scale with the problem:
// the hanging task gets a multiple of the shortest OK task so far (not the
// ceiling), counted from the start of its own run, not from enqueue.
TEST_F(Faults, GeneratedCodeFaultsAreRecordedAndTheWorkerKeepsServing) {
  // A floor below the multiple of a typical OK task, so the multiple shows. The
  // multiple leaves room for the faulted tasks: each runs in a fresh sandbox child
  // whose start-up counts (3-5x an OK task here, more when ctest runs cluster tests
  // beside this one on the same cores; with 6x the SIGBUS task sometimes timed out).
  const double floor_s = 0.5, multiple = 12, ceiling_s = 60;
  StartCoordinator({"--task-timeout", "60", "--task-timeout-floor", "0.5",
                    "--task-timeout-multiple", "12"});
  const std::vector<std::string> faults = {"none", "none", "segv", "sigill", "sigbus",
                                           "oom",  "hang", "wrong"};
  std::string list;
  for (const auto& f : faults) list += (list.empty() ? "" : ",") + f;
  Subprocess* worker =
      StartWorker("w0", 0, {"--test-inject-fault", list, "--sandbox-memory-limit", "2048"});
  WaitForWorkers(1);
  const uint32_t trials = 10;
  const mtune::v1::Job job = Submit(Spec(trials, 3));
  const mtune::v1::Job ended = WaitForEnd(job.id(), 240);
  EXPECT_EQ(ended.state(), mtune::v1::JOB_STATE_SUCCEEDED) << ended.message();

  // One worker measures its tasks one after another: storing order is task order.
  std::vector<std::vector<std::string>> rows;
  for (auto& row : StoredResults(job.id()))
    if (row[1] == "w0") rows.push_back(row);
  ASSERT_EQ(rows.size(), trials) << worker->Log();
  auto status = [&](size_t i) { return std::stoi(rows[i][2]); };
  auto error = [&](size_t i) { return rows[i][3]; };
  const int ok = mtune::v1::RESULT_STATUS_OK, crash = mtune::v1::RESULT_STATUS_CRASH;
  ASSERT_EQ(status(0), ok) << error(0) << "\n(pick a seed whose candidates all compile)";
  ASSERT_EQ(status(1), ok) << error(1);
  EXPECT_EQ(status(2), crash);
  EXPECT_NE(error(2).find("signal 11 (SIGSEGV"), std::string::npos) << error(2);
  EXPECT_EQ(status(3), crash);
  EXPECT_NE(error(3).find("signal 4 (SIGILL"), std::string::npos) << error(3);
  EXPECT_EQ(status(4), crash);
  EXPECT_NE(error(4).find("signal 7 (SIGBUS"), std::string::npos) << error(4);
  EXPECT_EQ(status(5), crash);
  EXPECT_NE(error(5).find("ran out of memory"), std::string::npos) << error(5);
  EXPECT_NE(error(5).find("limit 2048 MiB"), std::string::npos) << error(5);
  EXPECT_EQ(status(6), mtune::v1::RESULT_STATUS_TIMEOUT) << error(6);
  EXPECT_EQ(status(7), mtune::v1::RESULT_STATUS_WRONG_RESULT) << error(7);
  EXPECT_NE(error(7).find("tolerance"), std::string::npos) << error(7);
  for (size_t i = faults.size(); i < rows.size(); ++i)
    EXPECT_NE(status(i), crash) << "after the faults, task " << i << ": " << error(i);

  // The hang got multiple x the shortest OK task before it (rows 0, 1), not the
  // ceiling, and ran that long from its own start.
  std::smatch match;
  const std::string hang_error = error(6);
  ASSERT_TRUE(std::regex_search(hang_error, match, std::regex("no result within ([0-9.e+-]+) s")))
      << hang_error;
  const double limit = std::stod(match[1]);
  const double best = std::min(std::stod(rows[0][4]), std::stod(rows[1][4]));
  EXPECT_NEAR(limit, std::max(floor_s, multiple * best), 1e-3 * limit);
  EXPECT_LT(limit, ceiling_s);
  EXPECT_GE(std::stod(rows[6][4]), limit);
  // The next task waited in the queue while the hang ran, longer than the limit
  // it was then given; its clock started with its run, so it did not time out.
  EXPECT_EQ(status(7), mtune::v1::RESULT_STATUS_WRONG_RESULT);

  // The same worker process registered once and still serves.
  EXPECT_TRUE(worker->running()) << worker->Log();
  EXPECT_EQ(CountInLog(worker->Log(), "registered as"), 1) << worker->Log();
}

// Chaos: a 60-trial job while workers are killed (SIGKILL) and frozen (SIGSTOP,
// then thawed: stragglers) and the coordinator is killed and restarted, at
// random points from a fixed seed. Afterwards every trial has exactly one result.
TEST_F(Faults, ChaosSixtyTrialsWithKilledWorkersAndCoordinator) {
  const uint32_t seed = 20261122;
  std::mt19937 rng(seed);
  StartCoordinator({"--task-timeout", "30", "--heartbeat-timeout", "3"});
  StartWorker("w0", 0);
  StartWorker("w1", 1);
  WaitForWorkers(2);
  const uint32_t trials = 60;
  const mtune::v1::Job job = Submit(Spec(trials, 17));
  ASSERT_GT(job.id(), 0);

  const auto start = Clock::now();
  std::map<std::string, int> actions;
  std::uniform_real_distribution<double> pause(0.5, 2.5);
  std::uniform_int_distribution<int> pick(0, 5);
  // Chaos for at most 60 s or until 50 trials are stored; then the job may finish.
  while (SecondsSince(start) < 60) {
    SleepS(pause(rng));
    auto live = TryGetJob(job.id());
    if (live && (live->trials_done() >= 50 || live->state() != mtune::v1::JOB_STATE_RUNNING))
      break;
    const int action = pick(rng);
    const std::string name = action % 2 == 0 ? "w0" : "w1";
    if (action <= 1) {
      // SIGKILL a worker, at whatever it was doing; a supervisor starts it again.
      workers_[name]->Signal(SIGKILL);
      workers_[name]->Wait(10);
      StartWorker(name, action % 2);
      ++actions["worker killed"];
    } else if (action <= 3) {
      // Freeze a worker past the heartbeat timeout (3 s) or not, then thaw it.
      workers_[name]->Signal(SIGSTOP);
      SleepS(std::uniform_real_distribution<double>(1, 5)(rng));
      workers_[name]->Signal(SIGCONT);
      ++actions["worker frozen"];
    } else {
      KillAndRestartCoordinator(std::uniform_real_distribution<double>(0.2, 2)(rng));
      ++actions["coordinator killed"];
    }
  }
  std::string summary;
  for (const auto& [what, n] : actions) summary += what + " x" + std::to_string(n) + ", ";
  fprintf(stderr, "chaos (seed %u) for %.1f s: %s%u trials stored\n", seed, SecondsSince(start),
          summary.c_str(), TrialsDone(job.id()));

  const mtune::v1::Job ended = WaitForEnd(job.id(), 180);
  ExpectExactlyOneResultPerTrial(ended, trials);
  // The schema itself holds each (job, problem, candidate) once.
  const auto duplicates = Query(db_path_,
                                "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, "
                                "problem, candidate_hash HAVING count(*) > 1)");
  ASSERT_EQ(duplicates.size(), 1u);
  EXPECT_EQ(duplicates[0][0], "0");
}

// Durability: an online backup taken while a job runs is a consistent SQLite
// file with every result committed before it started; the job goes on.
TEST_F(Faults, OnlineBackupWhileAJobRuns) {
  StartCoordinator();
  StartWorker("w0", 0);
  WaitForWorkers(1);
  const uint32_t trials = 12;
  const mtune::v1::Job job = Submit(Spec(trials, 21));
  ASSERT_TRUE(WaitFor([&] { return TrialsDone(job.id()) >= 3; }, 120));

  const size_t before = StoredResults(job.id()).size();
  const std::string copy = dir_ + "/backup.sqlite";
  std::string out;
  ASSERT_EQ(RunCommand(std::string(MTUNE_COORDINATOR_BIN) + " --db " + db_path_ + " --backup " +
                           copy,
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("backed up"), std::string::npos) << out;
  const size_t after = StoredResults(job.id()).size();
  ASSERT_LT(before, trials) << "the job ended before the backup";

  // The copy is a self-contained store: it opens, and holds the job and results.
  EXPECT_EQ(ReadFile(copy + "-wal"), "");
  auto store = db::Store::Open(copy);
  ASSERT_TRUE(store.ok()) << store.status();
  auto stored_job = (*store)->GetJob(job.id());
  ASSERT_TRUE(stored_job.ok()) << stored_job.status();
  EXPECT_GE(stored_job->trials_done(), before);
  EXPECT_LE(stored_job->trials_done(), after);
  auto results = (*store)->ListResults(job.id(), "", 0);
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->size(), stored_job->trials_done());

  // The job was not disturbed.
  const mtune::v1::Job ended = WaitForEnd(job.id(), 240);
  ExpectExactlyOneResultPerTrial(ended, trials);

  // Clear errors.
  EXPECT_NE(RunCommand(std::string(MTUNE_COORDINATOR_BIN) + " --db " + dir_ +
                           "/missing.sqlite --backup " + dir_ + "/x.sqlite",
                       &out),
            0);
  EXPECT_NE(out.find("no database at"), std::string::npos) << out;
}

}  // namespace
}  // namespace mtune
