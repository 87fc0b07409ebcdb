// The coordinator's life cycle and its client side: submitting, listing,
// watching and cancelling jobs. Planning and proposing candidates:
// coordinator_planning.cc; workers and leases: coordinator_leases.cc; storing
// results: coordinator_results.cc.
#include "server/coordinator.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/cache_capacity.h"
#include "server/coordinator_locked.h"
#include "strategies/figure.h"

namespace mtune::server {

Coordinator::Coordinator(db::Store* store, CoordinatorOptions options)
    : store_(store), options_(options) {
  reaper_ = std::thread([this] { ReaperLoop(); });
  committer_ = std::thread([this] { CommitLoop(); });
}

Coordinator::~Coordinator() {
  Stop();
  reaper_.join();
  {
    std::lock_guard lock(commit_mu_);
    commit_stop_ = true;  // after committing what is queued
  }
  commit_wake_.notify_all();
  committer_.join();
}

void Coordinator::Stop() {
  {
    Locked lock(*this);
    stopping_ = true;
    for (auto& [id, w] : workers_) {
      w.wake->notify_all();
      // Push-mode streams end (null task), once.
      if (w.sink) deliveries_.emplace_back(std::exchange(w.sink, nullptr), nullptr);
    }
  }
  job_changed_.notify_all();
  reaper_wake_.notify_all();
}

double Coordinator::Now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

absl::Status Coordinator::ResumeRunningJobs() {
  auto ids = store_->ListJobIds(mtune::v1::JOB_STATE_RUNNING);
  if (!ids.ok()) return ids.status();
  Locked lock(*this);
  for (int64_t id : *ids) {
    auto stored = store_->GetJob(id);
    if (!stored.ok()) return stored.status();
    // No worker has registered yet: a job stored without its templates (before
    // schema v3) gets its template_name or each family's portable default, as then.
    auto job = PlanJob(id, stored->spec(), /*resuming=*/true, /*target_features=*/{});
    if (!job.ok()) {
      (void)store_->FinishJob(id, mtune::v1::JOB_STATE_FAILED,
                              "cannot resume: " + std::string(job.status().message()));
      continue;
    }
    JobRun& run = *jobs_.emplace(id, std::move(*job)).first->second;
    uint32_t measured = 0;
    for (const auto& problem : run.problems) measured += problem->measured_before;
    fprintf(stderr, "mtune-coordinator: resuming job %lld: %u trials already stored\n",
            static_cast<long long>(id), measured);
    RefillLocked(run);
    MaybeFinishLocked(run);
  }
  WakeWorkersLocked();
  job_changed_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<mtune::v1::Job> Coordinator::SubmitJob(const mtune::v1::JobSpec& spec) {
  // Validate everything before storing anything. Templates are chosen for the
  // targets of the workers registered now (the same job submitted before any worker
  // registers gets each family's portable default; its status says so).
  if (spec.estimate_l2_bytes() != 0)
    return absl::InvalidArgumentError(
        "JobSpec.estimate_l2_bytes is set by the coordinator from the registered workers' calibrations");
  std::vector<std::string> target_features;
  mtune::v1::JobSpec canonical = spec;
  {
    Locked lock(*this);
    int64_t smallest_l2 = 0;
    for (const auto& [id, w] : workers_) {
      if (w.gone) continue;
      target_features.push_back(w.info.target().features());
      const int64_t l2 = mtune::v1::CacheCapacityBytes(w.info.calibration(), "L2");
      if (l2 > 0 && (smallest_l2 == 0 || l2 < smallest_l2)) smallest_l2 = l2;
    }
    canonical.set_estimate_l2_bytes(static_cast<uint64_t>(smallest_l2));
  }
  auto planned = PlanJob(0, canonical, /*resuming=*/false, target_features);
  if (!planned.ok()) return planned.status();
  std::vector<std::pair<std::string, uint32_t>> problems;
  canonical.clear_problems();
  for (const auto& run : (*planned)->problems) {
    uint64_t size = search::SpaceSize(run->candidates.search_space());
    // Planned per problem is the nominal share, also when the job shares its trials.
    problems.emplace_back(run->problem.Key(),
                          run->confirm_top > 0 ? run->budget
                                          : static_cast<uint32_t>(std::min<uint64_t>(spec.trials(), size)));
    canonical.add_problems(run->problem.Key());
    canonical.add_problem_templates(run->template_name);
    mtune::v1::VectorRegisterFile* registers = canonical.add_problem_registers();
    registers->set_count(static_cast<uint32_t>(run->registers.count));
    registers->set_bytes(static_cast<uint32_t>(run->registers.bytes));
  }
  auto id = store_->CreateJob(canonical, problems);
  if (!id.ok()) return id.status();
  {
    Locked lock(*this);
    (*planned)->id = *id;
    (*planned)->spec = canonical;
    JobRun& run = *jobs_.emplace(*id, std::move(*planned)).first->second;
    RefillLocked(run);
    MaybeFinishLocked(run);
    WakeWorkersLocked();
  }
  job_changed_.notify_all();
  return GetJob(*id);  // with each problem's template and why
}

absl::StatusOr<mtune::v1::ListJobsResponse> Coordinator::ListJobs(uint32_t limit,
                                                                   mtune::v1::JobState state) {
  auto ids = store_->ListJobIds(state == mtune::v1::JOB_STATE_UNSPECIFIED
                                    ? std::nullopt
                                    : std::optional<mtune::v1::JobState>(state));
  if (!ids.ok()) return ids.status();
  mtune::v1::ListJobsResponse response;
  for (auto id = ids->rbegin(); id != ids->rend(); ++id) {
    if (limit > 0 && static_cast<uint32_t>(response.jobs_size()) >= limit) break;
    auto job = store_->GetJob(*id);
    if (!job.ok()) return job.status();
    *response.add_jobs() = *std::move(job);
  }
  return response;
}

absl::StatusOr<mtune::v1::Job> Coordinator::GetJob(int64_t job_id) {
  auto job = store_->GetJob(job_id);
  if (!job.ok()) return job;
  auto convergence = GetConvergence(job_id);
  if (!convergence.ok()) return convergence.status();
  Locked lock(*this);
  auto live = jobs_.find(job_id);
  for (const auto& problem : convergence->problems()) {
    mtune::v1::ProblemProgress* progress = job->add_progress();
    progress->set_problem(problem.problem());
    progress->set_trials_done(problem.figures_size());
    progress->set_unit(problem.unit());
    for (int i = 0; i < problem.figures_size(); ++i) {
      if (problem.figures(i) <= 0) progress->set_trials_failed(progress->trials_failed() + 1);
      if (problem.figures(i) > progress->best_figure()) {
        progress->set_best_figure(problem.figures(i));
        progress->set_best_gflops(problem.gflops(i));
        progress->set_best_trial(i + 1);
      }
    }
    if (live == jobs_.end()) continue;
    if (ProblemRun* run = FindProblemLocked(*live->second, problem.problem())) {
      progress->set_trials_planned(run->budget + run->measured_before);
      progress->set_stopped(run->stopped);
      progress->set_warm_start_seeds(run->warm_start_seeds);
      progress->set_warm_start_prior(run->warm_start_prior);
      progress->set_estimated_start(run->estimated_start);
      progress->set_template_reason(run->template_reason);
      if (!run->needs_features.empty() && !live->second->ended) {
        size_t registered = 0;
        bool runnable = false;
        for (const auto& [id, w] : workers_) {
          if (w.gone) continue;
          ++registered;
          runnable = runnable || HasFeatures(w, run->needs_features);
        }
        if (!runnable)
          progress->set_waiting_for(absl::StrCat(
              "a worker with ", absl::StrJoin(run->needs_features, ", "), " (", run->template_name,
              " needs them; none of the ", registered, " live workers has them all)"));
      }
    }
  }
  return job;
}

absl::StatusOr<mtune::v1::ConvergenceResponse> Coordinator::GetConvergence(int64_t job_id) {
  auto job = store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  mtune::v1::ConvergenceResponse response;
  response.set_job_id(job_id);
  const auto problems = job->spec().problems();
  for (const std::string& key : problems) {
    // Results come best first; the hashes give the order they were stored in.
    auto hashes = store_->ResultCandidateHashes(job_id, key);
    if (!hashes.ok()) return hashes.status();
    auto results = store_->ListResults(job_id, key, 0);
    if (!results.ok()) return results.status();
    // A stored key this build cannot parse (another mtune's grammar) shows GFLOP/s.
    auto problem = strategies::ParseProblemKey(key);
    std::map<std::string, const mtune::v1::Result*> result_of;
    for (const auto& trial : *results) result_of[trial.candidate().hash()] = &trial.result();
    mtune::v1::ProblemConvergence* out = response.add_problems();
    out->set_problem(key);
    out->set_unit(problem.ok() ? std::string(strategies::FigureUnit(*problem)) : "GFLOP/s");
    for (const std::string& hash : *hashes) {
      const mtune::v1::Result* result = result_of[hash];
      const bool ok = result != nullptr && result->status() == mtune::v1::RESULT_STATUS_OK;
      out->add_gflops(ok ? result->gflops() : 0.0);
      out->add_figures(!ok ? 0.0 : problem.ok() ? strategies::FigureOf(*problem, *result) : result->gflops());
    }
  }
  return response;
}

absl::StatusOr<mtune::v1::Job> Coordinator::CancelJob(int64_t job_id) {
  {
    Locked lock(*this);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || it->second->ended) {
      auto job = store_->GetJob(job_id);
      if (!job.ok()) return job.status();
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", job_id, " already ended (", mtune::v1::JobState_Name(job->state()), ")"));
    }
    JobRun& job = *it->second;
    // Queued tasks are dropped; leased ones finish and their results are kept.
    std::erase_if(queue_, [&](const QueuedTask& q) { return q.task->job_id() == job_id; });
    for (auto& p : job.problems) p->exhausted = true;
    uint32_t done = 0;
    for (auto& p : job.problems) done += p->finished;
    if (absl::Status s = store_->FinishJob(job_id, mtune::v1::JOB_STATE_CANCELLED,
                                           absl::StrCat("cancelled by user after ", done, " trials"));
        !s.ok())
      return s;
    job.ended = true;
    ++job.version;
  }
  job_changed_.notify_all();
  return store_->GetJob(job_id);
}

uint64_t Coordinator::WaitForJobChange(int64_t job_id, uint64_t seen_version, double timeout_s) {
  std::unique_lock lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return seen_version + 1;  // not live here: nothing to wait for
  JobRun* job = it->second.get();
  job_changed_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                        [&] { return stopping_ || job->version != seen_version; });
  return job->version;
}

}  // namespace mtune::server
