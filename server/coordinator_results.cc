// Results: a report is taken off its lease, committed to the store (at once, or
// grouped with others by the commit thread) before it is acknowledged, and then
// counted towards its job.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/compute_peaks.h"
#include "server/coordinator.h"
#include "server/coordinator_locked.h"
#include "strategies/figure.h"

namespace mtune::server {

Coordinator::ProblemRun* Coordinator::FindProblemLocked(JobRun& job, const std::string& key) {
  for (auto& run : job.problems)
    if (run->problem.Key() == key) return run.get();
  return nullptr;
}

absl::StatusOr<std::optional<Coordinator::Released>> Coordinator::ReleaseLocked(
    const std::string& worker_id, int64_t task_id) {
  auto w = workers_.find(worker_id);
  if (w == workers_.end())
    return absl::NotFoundError(absl::StrCat("unknown worker '", worker_id, "': register again"));
  Released r;
  w->second.last_seen = Now();
  r.worker_id = worker_id;
  r.worker_name = w->second.info.name();
  r.target_id = w->second.info.target().id();
  auto lease = leases_.find(task_id);
  if (lease != leases_.end()) {
    r.done = std::move(lease->second.queued);
    if (lease->second.worker_id != worker_id) {
      // A straggler: its lease expired and the task went to another worker, which
      // is still measuring it. This result is stored; the re-run's report will
      // find nothing leased and be dropped. The other worker stays busy (it is).
      fprintf(stderr,
              "mtune-coordinator: task %lld: late report from %s stored; the re-run on %s "
              "will be dropped\n",
              static_cast<long long>(task_id), worker_id.c_str(),
              lease->second.worker_id.c_str());
    }
    leases_.erase(lease);
  } else {
    // Re-queued after its lease expired, but the first worker finished after all.
    auto queued = std::find_if(queue_.begin(), queue_.end(), [&](const QueuedTask& q) {
      return q.task->task_id() == task_id;
    });
    if (queued == queue_.end()) {
      // Already stored from another report (or its job ended): storing is
      // idempotent by (job, problem, candidate), so there is nothing to do.
      fprintf(stderr,
              "mtune-coordinator: task %lld: late report from %s dropped: the task was "
              "already reported\n",
              static_cast<long long>(task_id), worker_id.c_str());
      w->second.leased.erase(task_id);
      ListWaitingLocked(w->second);
      WakeWorkersLocked();
      return std::nullopt;
    }
    fprintf(stderr,
            "mtune-coordinator: task %lld: late report from %s stored; its re-queued copy "
            "leaves the queue\n",
            static_cast<long long>(task_id), worker_id.c_str());
    r.done = std::move(*queued);
    queue_.erase(queued);
  }
  w->second.leased.erase(task_id);
  // The worker's next task goes out while this result is being committed, so
  // it is not idle for the commit; the acknowledgement still waits for it.
  ListWaitingLocked(w->second);
  WakeWorkersLocked();
  return r;
}

mtune::v1::TrialResult Coordinator::TrialOf(const Released& r) {
  mtune::v1::TrialResult trial;
  trial.set_job_id(r.done.task->job_id());
  trial.set_problem(r.done.task->problem());
  trial.set_target_id(r.target_id);
  *trial.mutable_candidate() = r.done.task->candidate();
  *trial.mutable_result() = r.result;
  trial.set_worker_name(r.worker_name);
  return trial;
}

void Coordinator::AfterCommitLocked(Released& r, const absl::StatusOr<bool>& inserted) {
  if (!inserted.ok()) {
    queue_.push_front(std::move(r.done));  // not stored: measure it again
    WakeWorkersLocked();
    return;
  }
  const mtune::v1::Result& result = r.result;
  auto w = workers_.find(r.worker_id);
  if (w != workers_.end()) {
    ++w->second.tasks_done;
    TakeRetimedPeaksLocked(w->second, result);
  }
  auto job = jobs_.find(r.done.task->job_id());
  if (job != jobs_.end()) {
    JobRun& run = *job->second;
    // Counted whether or not this insert added the row: the task was still
    // leased or queued, so it completes exactly once here; had its candidate been
    // stored already (proposed twice), not counting it would stall the job.
    if (ProblemRun* problem = FindProblemLocked(run, r.done.task->problem()); problem) {
      const bool ok = result.status() == mtune::v1::RESULT_STATUS_OK;
      const double total = result.total_s();
      if (ok && total > 0 && (problem->best_total_s == 0 || total < problem->best_total_s))
        problem->best_total_s = total;
      // GFLOP/s, or GB/s for a problem without arithmetic: with 0 GFLOP/s for every
      // candidate of a transpose, its search would learn nothing.
      const double figure = strategies::FigureOf(problem->problem, result);
      if (problem->search)
        problem->search->Observe(std::vector<search::Observation>{{r.done.point, ok, figure}});
      ++problem->finished;
      RecordResultLocked(*problem, ok, figure);
    }
    ++run.version;
    RefillLocked(run);
    MaybeFinishLocked(run);
  }
  WakeWorkersLocked();
}

void Coordinator::TakeRetimedPeaksLocked(WorkerState& worker, const mtune::v1::Result& result) {
  if (!result.has_retimed_peaks()) return;
  mtune::v1::Calibration& calibration = *worker.info.mutable_calibration();
  if (!mtune::v1::TakeNewerPeaks(result.retimed_peaks(), calibration)) return;
  // The target's stored calibration is its last worker's, as at registration: the
  // dashboard draws the roofline from it, which should be the peaks results are
  // now held against. About once a minute per worker (--peak-max-age).
  if (absl::Status s = store_->UpsertTarget(worker.info.target(), calibration); !s.ok())
    fprintf(stderr, "mtune-coordinator: the peaks %s timed again are not stored with its target: %s\n",
            worker.info.name().c_str(), s.ToString().c_str());
}

absl::Status Coordinator::ReportResult(const std::string& worker_id, int64_t task_id,
                                       const mtune::v1::Result& result) {
  absl::StatusOr<std::optional<Released>> released;
  {
    Locked lock(*this);
    released = ReleaseLocked(worker_id, task_id);
  }
  if (!released.ok()) return released.status();
  if (!released->has_value()) return absl::OkStatus();
  Released& r = **released;
  r.result = result;
  // Commit before acknowledging: once the worker hears "stored", the result is durable.
  const mtune::v1::TrialResult trial = TrialOf(r);
  absl::StatusOr<bool> inserted = store_->InsertResult(trial, r.done.task->script());
  {
    Locked lock(*this);
    AfterCommitLocked(r, inserted);
  }
  job_changed_.notify_all();
  return inserted.status();
}

void Coordinator::ReportResultAsync(const std::string& worker_id, int64_t task_id,
                                    mtune::v1::Result result, ReportDone done) {
  absl::StatusOr<std::optional<Released>> released;
  {
    Locked lock(*this);  // the next task is sent on unlocking, before the commit
    released = ReleaseLocked(worker_id, task_id);
  }
  if (!released.ok()) return done(released.status());
  if (!released->has_value()) return done(absl::OkStatus());
  Released& r = **released;
  r.result = std::move(result);
  r.done_callback = std::move(done);
  {
    std::lock_guard lock(commit_mu_);
    commit_queue_.push_back(std::move(r));
  }
  commit_wake_.notify_one();
}

void Coordinator::CommitLoop() {
  std::unique_lock lock(commit_mu_);
  for (;;) {
    commit_wake_.wait(lock, [&] { return commit_stop_ || !commit_queue_.empty(); });
    if (commit_queue_.empty()) return;  // stopping, nothing left
    // Everything reported while the previous group committed: one transaction.
    std::vector<Released> group;
    group.swap(commit_queue_);
    lock.unlock();
    std::vector<mtune::v1::TrialResult> trials;
    trials.reserve(group.size());
    std::vector<db::Store::TrialToStore> to_store;
    to_store.reserve(group.size());
    for (const Released& r : group) trials.push_back(TrialOf(r));
    for (size_t i = 0; i < group.size(); ++i)
      to_store.push_back({&trials[i], &group[i].done.task->script()});
    std::vector<absl::StatusOr<bool>> outcomes = store_->InsertResults(to_store);
    // One lock per result, not one for the group: report readers (which lease
    // the next tasks) get mu_ in between instead of waiting for a whole group's
    // searches and proposals.
    for (size_t i = 0; i < group.size(); ++i) {
      Locked locked(*this);
      AfterCommitLocked(group[i], outcomes[i]);
    }
    job_changed_.notify_all();
    for (size_t i = 0; i < group.size(); ++i) group[i].done_callback(outcomes[i].status());
    lock.lock();
    ++commit_stats_.transactions;
    commit_stats_.trials += group.size();
  }
}

db::Store::GroupCommitStats Coordinator::async_commit_stats() {
  std::lock_guard lock(commit_mu_);
  return commit_stats_;
}

}  // namespace mtune::server
