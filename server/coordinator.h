// The coordinator: validates jobs, turns search proposals into tasks, leases them
// to workers with deadlines, commits every result before acknowledging it, and
// ends jobs. Transport-free: server/services.{h,cc} adapt it to gRPC.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <functional>

#include "absl/status/statusor.h"
#include "db/store.h"
#include "proto/mtune.pb.h"
#include "search/budget.h"
#include "search/search.h"
#include "server/candidate_space.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"

namespace mtune::server {

struct CoordinatorOptions {
  // Time limit of a task (compile + verify + measure), seconds, counted by the
  // worker from the start of the run (not from enqueue): the largest limit ever
  // given, and the one given while a problem has no OK result yet. A task not
  // reported within its limit plus a grace period after it is leased is re-queued.
  double task_time_limit_s = 120;
  // Once a problem has OK results its tasks get task_time_multiple times the
  // shortest OK task so far (wall time on the worker), but at least
  // task_time_floor_s: a kernel far slower than the best is not worth waiting for.
  double task_time_multiple = 10;
  double task_time_floor_s = 10;
  // Minimum timed duration per candidate, seconds.
  double min_measure_s = 0.1;
  // A worker silent for this long loses its task and is considered gone.
  double heartbeat_timeout_s = 6;
  // How often workers are asked to heartbeat.
  double heartbeat_interval_s = 1;
  // TESTS ONLY: replaces the instantiation of every candidate (problem key,
  // knob values -> script or error), so a test can make the coordinator's
  // instantiation fail. Unset in production.
  std::function<absl::StatusOr<std::string>(const std::string&, const strategies::KnobValues&)>
      test_instantiate;
};

// The target that trials which never reached a worker are stored against: a
// candidate whose instantiation failed in the coordinator is an
// invalid_candidate result of this target (no worker, no hardware).
inline constexpr char kCoordinatorTargetId[] = "none:coordinator";

// Coordinator state and logic. Thread-safe.
class Coordinator {
 public:
  Coordinator(db::Store* store, CoordinatorOptions options);
  ~Coordinator();

  // Resumes jobs left RUNNING in the store (after a restart): measured
  // candidates are skipped, the rest of each budget is proposed again.
  absl::Status ResumeRunningJobs();

  // --- client side ---
  absl::StatusOr<mtune::v1::Job> SubmitJob(const mtune::v1::JobSpec& spec);
  // The stored job plus per-problem progress (trials, best so far, why stopped).
  absl::StatusOr<mtune::v1::Job> GetJob(int64_t job_id);
  // The stored jobs (spec, state, counters, best per problem), newest first: the
  // newest `limit` (0: all), only those in `state` unless it is UNSPECIFIED.
  absl::StatusOr<mtune::v1::ListJobsResponse> ListJobs(uint32_t limit, mtune::v1::JobState state);
  // Every stored trial's GFLOP/s (and GB/s where the problem has no FLOPs) per
  // problem, in storing order.
  absl::StatusOr<mtune::v1::ConvergenceResponse> GetConvergence(int64_t job_id);
  absl::StatusOr<mtune::v1::Job> CancelJob(int64_t job_id);
  // Blocks until the job's progress changes from `seen_version`, it ends, or
  // `timeout_s` passes; returns the new version.
  uint64_t WaitForJobChange(int64_t job_id, uint64_t seen_version, double timeout_s);
  std::vector<mtune::v1::WorkerInfo> ListWorkers();
  // The task leased under `task_id` (what a busy worker measures); nullopt once
  // it is reported or re-queued.
  std::optional<mtune::v1::Task> LeasedTask(int64_t task_id);

  // --- worker side ---
  absl::StatusOr<mtune::v1::RegisterResponse> Register(const mtune::v1::RegisterRequest& request);
  // Blocks until a task is available for the worker and it holds fewer than
  // `window` tasks (1: only when idle), the worker is unknown (NotFound) or
  // `timeout_s` passes (nullopt); leases the task.
  // The task is shared, read-only, with the coordinator's lease (no copy of
  // its script per lease); null when none came.
  absl::StatusOr<std::shared_ptr<const mtune::v1::Task>> NextTask(const std::string& worker_id,
                                                                  double timeout_s,
                                                                  uint32_t window = 1);
  // Whether `worker_id` is registered (a Work stream of an unknown worker is
  // refused before it starts).
  bool KnowsWorker(const std::string& worker_id);
  // The worker's Work stream closed: its unfinished tasks go back to the queue.
  // `stream`: the push-mode stream that closed (StartPushing's key); when the
  // worker has opened a newer one since (a reconnect noticed late), its tasks are
  // re-queued but the newer stream keeps receiving.
  void WorkerDisconnected(const std::string& worker_id, const void* stream = nullptr);

  // --- worker side, push mode (the callback Work stream) ---
  // Receives each task leased to a push-mode worker, or null once when the
  // coordinator stops (the stream should end). Called without the coordinator's
  // lock, on whichever thread made the task available (usually the one that
  // read the worker's previous report), so it must not block; it may call back
  // into the coordinator.
  using TaskSink = std::function<void(std::shared_ptr<const mtune::v1::Task>)>;
  // Instead of a thread blocking in NextTask, the worker's stream gives a sink:
  // whenever the worker holds fewer than `window` tasks and one is queued, the
  // coordinator leases it and hands it to `sink` (here already, if one is
  // queued now). NotFound for an unknown worker. Ended by WorkerDisconnected.
  // `stream` identifies the stream (any unique address) for WorkerDisconnected.
  absl::Status StartPushing(const std::string& worker_id, uint32_t window, TaskSink sink,
                            const void* stream = nullptr);
  // Called once per report with its outcome: OK once the result is committed.
  using ReportDone = std::function<void(absl::Status)>;
  // ReportResult without blocking: frees the worker's place in its window and
  // hands out its next task (through the sink, on this thread) at once, then
  // queues the result for the commit thread, which stores the results queued
  // meanwhile in one transaction and calls `done` for each after the COMMIT.
  // Unknown workers and late reports are answered here, on this thread.
  void ReportResultAsync(const std::string& worker_id, int64_t task_id,
                         mtune::v1::Result result, ReportDone done);
  mtune::v1::HeartbeatResponse Heartbeat(const mtune::v1::HeartbeatRequest& request);
  // Commits the result of `task_id`, measured by `worker_id`, then updates the
  // job; OK only once it is stored (or was stored by an earlier report). The
  // worker's place in its window is freed (and its next task handed out) before
  // the commit.
  absl::Status ReportResult(const std::string& worker_id, int64_t task_id,
                            const mtune::v1::Result& result);

  db::Store* store() { return store_; }
  // Results stored by the commit thread (ReportResultAsync): transactions and
  // trials, for the group-commit log line.
  db::Store::GroupCommitStats async_commit_stats();

  // Wakes every blocked NextTask / WaitForJobChange call and makes later ones
  // return at once, so that RPC handlers end promptly when the server stops.
  void Stop();

 private:
  struct QueuedTask {
    // Shared with the Work stream sending it (see NextTask); changed only under
    // mu_ and only while no stream holds it.
    std::shared_ptr<mtune::v1::Task> task;
    search::Point point;
    // CPU features its template needs (mtune.cpu_features): only a worker whose
    // target has them all is leased it.
    std::vector<std::string> needs_features;
  };
  struct ProblemRun {
    strategies::Problem problem;
    std::string template_name;
    std::string template_text;
    std::string template_digest;  // strategies::TemplateDigest(template_text)
    // Why the template was chosen (strategies/template_choice.h); empty when the job named it.
    std::string template_reason;
    // The template's mtune.cpu_features: its tasks go only to workers that have them.
    std::vector<std::string> needs_features;
    // The register file its knob space is sized for (JobSpec.problem_registers). A
    // worker with fewer registers that registers later still runs its tasks, which
    // may spill there.
    strategies::VectorRegisters registers;
    // The template's knobs; the search proposes over its free ones.
    CandidateSpace candidates;
    std::optional<strategies::TemplateInstantiator> instantiator;
    // Null for a confirmation job's problem (it proposes from `to_confirm`).
    std::unique_ptr<search::SearchAlgorithm> search;
    uint32_t budget = 0;       // trials to run in this coordinator's lifetime
    uint32_t proposed = 0;     // tasks made (queued, leased or done)
    uint32_t finished = 0;     // results stored
    bool exhausted = false;    // the search has nothing more to propose
    uint32_t measured_before = 0;  // results stored before a resume
    std::optional<search::Budget> limits;  // time and patience
    std::string stopped;       // why proposing stopped early (time, patience, shared budget)
    uint32_t warm_start_seeds = 0;
    // Stored results of the nearest problems given to `model` as its prior.
    uint32_t warm_start_prior = 0;
    // `model` draws its initial points, or `genetic` its first generation, by the
    // kernel estimate (ProblemProgress).
    bool estimated_start = false;
    std::vector<double> scores;  // each stored result's figure (strategies/figure.h; 0: failed), in order
    // A confirmation job's problem (JobSpec.confirm_top) proposes stored candidates
    // instead of asking its search: those ranked among the best confirm_top that the
    // job has not measured, in rank order, re-ranked whenever its proposals are all
    // measured (a measurement moves a candidate in the ranking), until every one of
    // the best confirm_top has been measured by the job or `budget` is spent.
    uint32_t confirm_top = 0;
    std::deque<search::Point> to_confirm;
    // Stored hashes of the candidates the job has proposed or measured.
    std::set<std::string> confirmed;
    double best_total_s = 0;     // shortest OK task wall time so far (0: none yet)
  };
  struct JobRun {
    int64_t id = 0;
    mtune::v1::JobSpec spec;
    std::vector<std::unique_ptr<ProblemRun>> problems;
    uint64_t version = 0;  // bumped on every change watchers care about
    bool ended = false;
    // Trials shared by all problems, allocated by expected gain; 0 = each problem
    // has its own `budget` (equal allocation).
    uint32_t shared_budget = 0;
  };
  struct WorkerState {
    std::string id;
    mtune::v1::RegisterRequest info;
    // The features its target enables ("+name" in info.target().features()).
    std::set<std::string> features;
    double last_seen = 0;  // monotonic seconds
    bool streaming = false;
    bool gone = false;
    // Tasks leased and not yet reported, oldest (the one it measures) first.
    std::set<int64_t> leased;
    // How many it may hold at once (WorkStart.window, capped).
    uint32_t window = 1;
    uint32_t tasks_done = 0;
    // Signalled when this worker's blocked NextTask may have work (or must
    // return). One per worker: a queued task wakes one waiting worker instead of
    // every Work stream (with 64 workers, waking all of them on each report
    // cost more CPU than everything else the coordinator did). Shared so a
    // waiter keeps it alive if the worker is replaced while it waits.
    std::shared_ptr<std::condition_variable> wake = std::make_shared<std::condition_variable>();
    bool waiting = false;  // listed in waiting_
    // Push mode (StartPushing): tasks go to this sink instead of waking a
    // blocked NextTask; set while its stream is open.
    TaskSink sink;
    const void* push_stream = nullptr;  // StartPushing's key of that sink
  };
  struct Lease {
    QueuedTask queued;
    std::string worker_id;
    double deadline = 0;  // monotonic seconds
  };

  // Validates `spec` and builds the job's runtime state; when `resuming`, the
  // candidates the store already holds for the job are never proposed again and its
  // stored templates are kept. A problem of a job that names no template gets the
  // one strategies::ChooseTemplate picks for `target_features` (the registered
  // workers' targets).
  absl::StatusOr<std::unique_ptr<JobRun>> PlanJob(int64_t job_id, const mtune::v1::JobSpec& spec,
                                                  bool resuming,
                                                  const std::vector<std::string>& target_features) const;
  // Builds `run`'s search for a job that searches (spec.search()): seeded with the
  // template's starting candidates and, with warm start, the nearest stored
  // problems' best (and `model`'s prior); `measured` are never proposed.
  absl::Status PlanSearch(const mtune::v1::JobSpec& spec, const strategies::KnobSpace& knobs,
                          const std::set<std::string>& measured, ProblemRun& run) const;
  // Tops up the queue from each problem's search (caller holds mu_).
  void RefillLocked(JobRun& job);
  // Queues one proposal of `run`'s search; false when it has none left.
  bool ProposeOneLocked(JobRun& job, ProblemRun& run);
  // Stops proposing for `run` and drops its queued (not leased) tasks.
  void StopProblemLocked(ProblemRun& run, int64_t job_id, const std::string& why);
  // Counts one stored result of `run` towards its budgets.
  void RecordResultLocked(ProblemRun& run, bool ok, double figure);
  // Keys of the stored problems nearest to `run`'s (same family; its own key first
  // when it has stored results: an earlier job's results are the nearest there are).
  std::vector<std::string> NearestStoredProblems(const ProblemRun& run) const;
  // Best stored candidates of the `nearest` problems, as points of `run`'s space (a
  // knob a stored candidate lacks, from before the template had it, at `defaults`).
  std::vector<search::Point> WarmStartSeeds(const ProblemRun& run, const std::vector<std::string>& nearest,
                                            const strategies::KnobValues& defaults) const;
  // Queues the candidates of `run`'s confirmation (see ProblemRun::confirm_top)
  // still to measure now, at most what its budget has left: the best confirm_top
  // stored candidates of its problem and template (ranked by median, any target)
  // that are not in run.confirmed.
  struct ConfirmRanking {
    bool all_measured = false;  // none of the best confirm_top is left to measure
    // Ranked candidates passed over: measured with another text of the template.
    uint32_t other_text_candidates = 0;
  };
  absl::StatusOr<ConfirmRanking> QueueCandidatesToConfirm(ProblemRun& run) const;
  // The `nearest` problems' stored results of `run`'s template, for `model` to learn
  // from (features against their own problems, laid out as `feature_names`, the
  // names of `run`'s rows; scores relative to their best).
  std::vector<search::PriorResult> WarmStartPrior(const ProblemRun& run, const std::vector<std::string>& nearest,
                                                  const std::vector<std::string>& feature_names) const;
  // Ends the job if every problem is done (caller holds mu_).
  void MaybeFinishLocked(JobRun& job);
  void RequeueLocked(int64_t task_id, const std::string& why);
  // Wakes as many waiting workers able to take a task as there are queued tasks
  // (caller holds mu_). Call after anything that queues tasks or frees a worker.
  void WakeWorkersLocked();
  // Whether `w` may be leased one more task now: not gone, room in its window.
  bool CanTakeTaskLocked(const WorkerState& w) const;
  // The time limit a task of `task`'s problem gets if it starts now (see options).
  double TimeLimitLocked(const mtune::v1::Task& task);
  void ReaperLoop();
  // mu_, held; on unlocking (Unlock() or the destructor) hands the tasks that
  // WakeWorkersLocked leased to push-mode workers meanwhile to their sinks,
  // outside mu_ (a sink writes to the network and may call back in).
  class Locked;
  // Whether `w`'s target has every one of `features`.
  static bool HasFeatures(const WorkerState& w, const std::vector<std::string>& features);
  // The first queued task `w` can run (its CPU has the features the task's template
  // needs), or queue_.end().
  std::deque<QueuedTask>::iterator FirstRunnableLocked(const WorkerState& w);
  // Leases the first queued task `w` can run to `w` (caller holds mu_; there is one).
  std::shared_ptr<const mtune::v1::Task> LeaseLocked(WorkerState& w);
  // Lists a push-mode worker as waiting for work (it has room in its window).
  void ListWaitingLocked(WorkerState& w);
  // A report taken off its lease, to be committed.
  struct Released {
    QueuedTask done;
    std::string worker_id, worker_name, target_id;
    mtune::v1::Result result;
    ReportDone done_callback;
  };
  // Takes task_id off `worker_id`'s lease and frees its place (its next task is
  // leased before the commit). nullopt with an OK status: a late report of a
  // task already stored, nothing to commit.
  absl::StatusOr<std::optional<Released>> ReleaseLocked(const std::string& worker_id,
                                                        int64_t task_id);
  // The job bookkeeping after `r` was committed (`inserted` = its outcome).
  void AfterCommitLocked(Released& r, const absl::StatusOr<bool>& inserted);
  // Takes in the compute peaks the worker timed again for `result`, if newer than
  // those it holds, and stores them with its target.
  void TakeRetimedPeaksLocked(WorkerState& worker, const mtune::v1::Result& result);
  static mtune::v1::TrialResult TrialOf(const Released& r);
  void CommitLoop();
  double Now() const;
  ProblemRun* FindProblemLocked(JobRun& job, const std::string& key);
  // Registers kCoordinatorTargetId in the store (once per coordinator).
  absl::Status EnsureCoordinatorTargetLocked();

  db::Store* store_;
  const CoordinatorOptions options_;
  mutable std::mutex mu_;
  // Job progress watchers (WaitForJobChange); workers wait on WorkerState::wake
  // and the reaper on reaper_wake_, so a report wakes only who it concerns.
  std::condition_variable job_changed_;
  std::condition_variable reaper_wake_;
  // Workers blocked in NextTask, longest waiting first (eligible or not).
  std::deque<std::string> waiting_;
  std::map<int64_t, std::unique_ptr<JobRun>> jobs_;
  std::deque<QueuedTask> queue_;
  std::map<int64_t, Lease> leases_;
  std::map<std::string, WorkerState> workers_;  // by worker id
  int64_t next_task_id_ = 1;
  uint64_t next_worker_serial_ = 1;
  bool stopping_ = false;
  bool coordinator_target_stored_ = false;
  // Sink calls waiting for mu_ to be released (see Locked).
  std::vector<std::pair<TaskSink, std::shared_ptr<const mtune::v1::Task>>> deliveries_;
  // Reports waiting for the commit thread (ReportResultAsync).
  std::mutex commit_mu_;
  std::condition_variable commit_wake_;
  std::vector<Released> commit_queue_;  // guarded by commit_mu_
  bool commit_stop_ = false;            // guarded by commit_mu_
  db::Store::GroupCommitStats commit_stats_;  // guarded by commit_mu_
  std::thread reaper_;
  std::thread committer_;
};

}  // namespace mtune::server
