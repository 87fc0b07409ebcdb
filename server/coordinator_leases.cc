// The worker side of the coordinator: registration, heartbeats, leasing tasks
// (pulled or pushed, within each worker's window), re-queueing what a lost
// worker or an expired lease leaves behind, and the reaper that enforces
// leases and jobs' time limits.
#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/coordinator.h"
#include "server/coordinator_locked.h"

namespace mtune::server {
namespace {

// Beyond its time limit a task gets this much longer before the coordinator
// takes it back: the worker's sandbox enforces the limit itself.
constexpr double kLeaseGraceS = 15;

// Most tasks one worker may hold at once: a few compiled ahead keep its measuring
// core busy; more would only starve other workers.
constexpr uint32_t kMaxLeaseWindow = 8;

}  // namespace

std::vector<mtune::v1::WorkerInfo> Coordinator::ListWorkers() {
  Locked lock(*this);
  std::vector<mtune::v1::WorkerInfo> out;
  const double now = Now();
  for (const auto& [id, w] : workers_) {
    mtune::v1::WorkerInfo info;
    info.set_name(w.info.name());
    *info.mutable_target() = w.info.target();
    *info.mutable_calibration() = w.info.calibration();
    info.set_cpu(w.info.cpu());
    info.set_state(w.gone ? "gone" : (!w.leased.empty() ? "busy" : "idle"));
    // The oldest task it holds is the one it measures (it measures in lease order).
    info.set_current_task_id(w.leased.empty() ? 0 : *w.leased.begin());
    info.set_last_seen_s_ago(now - w.last_seen);
    info.set_tasks_done(w.tasks_done);
    out.push_back(std::move(info));
  }
  return out;
}

std::optional<mtune::v1::Task> Coordinator::LeasedTask(int64_t task_id) {
  Locked lock(*this);
  auto it = leases_.find(task_id);
  if (it == leases_.end()) return std::nullopt;
  return *it->second.queued.task;
}

absl::StatusOr<mtune::v1::RegisterResponse> Coordinator::Register(
    const mtune::v1::RegisterRequest& request) {
  if (request.name().empty()) return absl::InvalidArgumentError("a worker needs a name");
  if (request.target().id().empty()) return absl::InvalidArgumentError("a worker needs a target");
  if (!(request.calibration().peak_gflops_f32() > 0))
    return absl::InvalidArgumentError("a worker needs a calibration with a positive FMA peak");
  Locked lock(*this);
  const double now = Now();
  for (auto it = workers_.begin(); it != workers_.end(); ++it) {
    WorkerState& w = it->second;
    if (w.info.name() != request.name()) continue;
    const bool alive = !w.gone && (w.streaming || now - w.last_seen < options_.heartbeat_timeout_s);
    if (alive)
      return absl::AlreadyExistsError(absl::StrCat(
          "a live worker named '", request.name(), "' is already registered (cpu ", w.info.cpu(),
          "); stop it or give this one another --name"));
    for (int64_t task_id : std::set<int64_t>(w.leased))
      RequeueLocked(task_id, "its worker registered again");
    w.wake->notify_all();  // its blocked NextTask returns NotFound
    if (w.sink) deliveries_.emplace_back(std::exchange(w.sink, nullptr), nullptr);  // ends its stream
    workers_.erase(it);
    break;
  }
  if (absl::Status s = store_->UpsertTarget(request.target(), request.calibration()); !s.ok())
    return s;
  WorkerState w;
  w.id = absl::StrCat(request.name(), "#", next_worker_serial_++);
  w.info = request;
  for (absl::string_view f : absl::StrSplit(request.target().features(), ',', absl::SkipEmpty()))
    if (absl::ConsumePrefix(&f, "+")) w.features.emplace(f);
  w.last_seen = now;
  mtune::v1::RegisterResponse response;
  response.set_worker_id(w.id);
  response.set_heartbeat_interval_s(options_.heartbeat_interval_s);
  workers_.emplace(w.id, std::move(w));
  // More workers: a wider window of queued tasks.
  for (auto& [id, job] : jobs_) RefillLocked(*job);
  WakeWorkersLocked();
  return response;
}

absl::StatusOr<std::shared_ptr<const mtune::v1::Task>> Coordinator::NextTask(
    const std::string& worker_id, double timeout_s, uint32_t window) {
  Locked locked(*this);
  std::unique_lock<std::mutex>& lock = locked.lock();
  auto it = workers_.find(worker_id);
  if (it == workers_.end())
    return absl::NotFoundError(absl::StrCat("unknown worker '", worker_id, "': register again"));
  // An open stream says nothing about the worker being alive (a frozen process
  // keeps its connection): only heartbeats and reports refresh last_seen.
  it->second.streaming = true;
  if (const uint32_t capped = std::clamp<uint32_t>(window, 1, kMaxLeaseWindow);
      capped != it->second.window) {
    it->second.window = capped;
    for (auto& [id, job] : jobs_) RefillLocked(*job);  // a wider window wants more queued
    WakeWorkersLocked();
  }
  const std::shared_ptr<std::condition_variable> wake = it->second.wake;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  for (;;) {
    it = workers_.find(worker_id);
    if (it == workers_.end())
      return absl::NotFoundError(absl::StrCat("worker '", worker_id, "' was replaced"));
    WorkerState& w = it->second;
    if (stopping_) return nullptr;
    if (!w.streaming) return nullptr;  // its Work stream ended meanwhile
    if (CanTakeTaskLocked(w) && FirstRunnableLocked(w) != queue_.end()) {
      if (w.waiting) {  // woken by something else than WakeWorkersLocked
        w.waiting = false;
        std::erase(waiting_, worker_id);
      }
      break;
    }
    // WakeWorkersLocked takes a woken worker off the list; it lists itself again
    // if the task went to someone else meanwhile.
    if (!w.waiting) {
      w.waiting = true;
      waiting_.push_back(worker_id);
    }
    if (wake->wait_until(lock, deadline) == std::cv_status::timeout) {
      it = workers_.find(worker_id);
      if (it != workers_.end() && it->second.waiting) {
        it->second.waiting = false;
        std::erase(waiting_, worker_id);
      }
      return nullptr;
    }
  }
  return LeaseLocked(it->second);
}

bool Coordinator::HasFeatures(const WorkerState& w, const std::vector<std::string>& features) {
  return std::all_of(features.begin(), features.end(),
                     [&](const std::string& f) { return w.features.contains(f); });
}

std::deque<Coordinator::QueuedTask>::iterator Coordinator::FirstRunnableLocked(const WorkerState& w) {
  return std::find_if(queue_.begin(), queue_.end(),
                      [&](const QueuedTask& q) { return HasFeatures(w, q.needs_features); });
}

std::shared_ptr<const mtune::v1::Task> Coordinator::LeaseLocked(WorkerState& w) {
  const auto first = FirstRunnableLocked(w);
  QueuedTask queued = std::move(*first);
  queue_.erase(first);
  // Shared with the stream that sends it, which serializes it outside mu_: a task
  // still held by an earlier stream (re-queued while being sent) is copied before
  // it changes.
  if (queued.task.use_count() > 1) queued.task = std::make_shared<mtune::v1::Task>(*queued.task);
  mtune::v1::Task& task = *queued.task;
  // The limit is set now, when the run starts, from the best time known now;
  // time spent waiting in the queue is not counted.
  task.set_time_limit_s(TimeLimitLocked(task));
  // A task leased behind others waits for them: its run starts at the latest
  // when every task ahead of it has used up its own limit.
  double ahead_s = 0;
  for (int64_t held : w.leased)
    if (auto l = leases_.find(held); l != leases_.end()) ahead_s += l->second.queued.task->time_limit_s();
  const double lease_s = ahead_s + task.time_limit_s() + kLeaseGraceS;
  Lease lease;
  lease.worker_id = w.id;
  lease.deadline = Now() + lease_s;
  task.set_lease_deadline_unix_s(UnixNow() + lease_s);
  std::shared_ptr<const mtune::v1::Task> leased = queued.task;
  lease.queued = std::move(queued);
  w.leased.insert(leased->task_id());
  leases_[leased->task_id()] = std::move(lease);
  return leased;
}

void Coordinator::ListWaitingLocked(WorkerState& w) {
  if (!w.sink || w.waiting) return;
  w.waiting = true;
  waiting_.push_back(w.id);
}

double Coordinator::TimeLimitLocked(const mtune::v1::Task& task) {
  const double ceiling = options_.task_time_limit_s;
  auto job = jobs_.find(task.job_id());
  if (job == jobs_.end()) return ceiling;
  ProblemRun* run = FindProblemLocked(*job->second, task.problem());
  if (run == nullptr || run->best_total_s <= 0) return ceiling;
  return std::min(ceiling,
                  std::max(options_.task_time_floor_s, options_.task_time_multiple * run->best_total_s));
}

void Coordinator::RequeueLocked(int64_t task_id, const std::string& why) {
  auto it = leases_.find(task_id);
  if (it == leases_.end()) return;
  auto w = workers_.find(it->second.worker_id);
  if (w != workers_.end()) {
    w->second.leased.erase(task_id);
    ListWaitingLocked(w->second);
  }
  fprintf(stderr, "mtune-coordinator: task %lld re-queued: %s\n", static_cast<long long>(task_id),
          why.c_str());
  // To the front: it has waited longest.
  queue_.push_front(std::move(it->second.queued));
  leases_.erase(it);
}

bool Coordinator::CanTakeTaskLocked(const WorkerState& w) const {
  return !w.gone && w.leased.size() < w.window;
}

void Coordinator::WakeWorkersLocked() {
  size_t tasks = queue_.size();
  for (auto it = waiting_.begin(); it != waiting_.end() && tasks > 0;) {
    auto w = workers_.find(*it);
    if (w == workers_.end()) {  // replaced or removed: nobody to wake
      it = waiting_.erase(it);
      continue;
    }
    // Busy (window full), gone, or nothing queued that it can run (tasks of
    // templates needing CPU features it lacks wait for a worker that has them).
    if (!CanTakeTaskLocked(w->second) || FirstRunnableLocked(w->second) == queue_.end()) {
      ++it;
      continue;
    }
    if (w->second.sink) {
      // Push mode: leased here, sent when mu_ is released (Locked), by this thread.
      while (tasks > 0 && CanTakeTaskLocked(w->second) &&
             FirstRunnableLocked(w->second) != queue_.end()) {
        deliveries_.emplace_back(w->second.sink, LeaseLocked(w->second));
        --tasks;
      }
      if (CanTakeTaskLocked(w->second)) {  // the queue ran dry: it waits on
        ++it;
        continue;
      }
      w->second.waiting = false;
      it = waiting_.erase(it);
      continue;
    }
    w->second.waiting = false;
    w->second.wake->notify_one();
    it = waiting_.erase(it);
    --tasks;
  }
}

absl::Status Coordinator::StartPushing(const std::string& worker_id, uint32_t window,
                                       TaskSink sink, const void* stream) {
  Locked lock(*this);
  auto it = workers_.find(worker_id);
  if (it == workers_.end())
    return absl::NotFoundError(absl::StrCat("unknown worker '", worker_id, "': register again"));
  WorkerState& w = it->second;
  if (stopping_) return absl::UnavailableError("coordinator shutting down");
  w.streaming = true;
  w.sink = std::move(sink);
  w.push_stream = stream;
  w.window = std::clamp<uint32_t>(window, 1, kMaxLeaseWindow);
  for (auto& [id, job] : jobs_) RefillLocked(*job);  // a wider window wants more queued
  ListWaitingLocked(w);
  WakeWorkersLocked();
  return absl::OkStatus();
}

bool Coordinator::KnowsWorker(const std::string& worker_id) {
  Locked lock(*this);
  return workers_.contains(worker_id);
}

void Coordinator::WorkerDisconnected(const std::string& worker_id, const void* stream) {
  {
    Locked lock(*this);
    auto it = workers_.find(worker_id);
    if (it == workers_.end()) return;
    if (stream != nullptr && it->second.sink && it->second.push_stream != stream) {
      // An older stream of a worker that reconnected: what it held goes back to
      // the queue (as with the sync stream), the newer stream stays open.
      for (int64_t task_id : std::set<int64_t>(it->second.leased))
        RequeueLocked(task_id, "an older stream of " + worker_id + " closed");
      WakeWorkersLocked();
      return;
    }
    it->second.streaming = false;
    it->second.gone = true;
    it->second.sink = nullptr;
    it->second.push_stream = nullptr;
    it->second.wake->notify_all();  // a NextTask of the ended stream returns now
    if (it->second.waiting) {
      it->second.waiting = false;
      std::erase(waiting_, worker_id);
    }
    for (int64_t task_id : std::set<int64_t>(it->second.leased))
      RequeueLocked(task_id, "its worker " + worker_id + " disconnected");
    WakeWorkersLocked();
  }
}

mtune::v1::HeartbeatResponse Coordinator::Heartbeat(const mtune::v1::HeartbeatRequest& request) {
  mtune::v1::HeartbeatResponse response;
  Locked lock(*this);
  auto it = workers_.find(request.worker_id());
  if (it == workers_.end()) return response;  // known = false: register again
  response.set_known(true);
  it->second.last_seen = Now();
  if (it->second.gone) {
    it->second.gone = false;
    WakeWorkersLocked();  // it may take queued work again
  }
  if (request.task_id() != 0) {
    auto lease = leases_.find(request.task_id());
    if (lease != leases_.end()) {
      auto job = jobs_.find(lease->second.queued.task->job_id());
      if (job != jobs_.end() && job->second->ended) response.set_cancel_task(true);
    }
  }
  return response;
}

void Coordinator::ReaperLoop() {
  Locked locked(*this);
  std::unique_lock<std::mutex>& lock = locked.lock();
  while (!stopping_) {
    // Hands out what the last round leased to push-mode workers.
    locked.Unlock();
    lock.lock();
    reaper_wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (stopping_) break;
    const double now = Now();
    std::vector<std::pair<int64_t, std::string>> expired;
    for (const auto& [task_id, lease] : leases_) {
      auto w = workers_.find(lease.worker_id);
      if (now > lease.deadline)
        expired.emplace_back(task_id, "its lease deadline passed");
      else if (w == workers_.end() || now - w->second.last_seen > options_.heartbeat_timeout_s)
        expired.emplace_back(task_id, "its worker " + lease.worker_id + " stopped heartbeating");
    }
    // Silent idle workers get no more tasks until they heartbeat again.
    for (auto& [id, w] : workers_)
      if (!w.gone && now - w.last_seen > options_.heartbeat_timeout_s) w.gone = true;
    for (const auto& [task_id, why] : expired) {
      auto w = workers_.find(leases_[task_id].worker_id);
      if (w != workers_.end() && now - w->second.last_seen > options_.heartbeat_timeout_s)
        w->second.gone = true;
      RequeueLocked(task_id, why);
    }
    // Time budgets end jobs even while no result arrives.
    bool timed_out = false;
    for (auto& [id, job] : jobs_) {
      if (job->ended || job->spec.time_budget_s() <= 0) continue;
      const double unix_now = UnixNow();
      bool stopped = false;
      for (auto& run : job->problems) {
        if (run->exhausted) continue;
        if (std::string why = run->limits->Exhausted(unix_now); !why.empty()) {
          StopProblemLocked(*run, id, why);
          stopped = timed_out = true;
        }
      }
      if (stopped) {
        ++job->version;
        MaybeFinishLocked(*job);
      }
    }
    // Also a safety net: push-mode workers have no timed wait of their own.
    if (!expired.empty() || (!queue_.empty() && !waiting_.empty())) WakeWorkersLocked();
    if (timed_out) job_changed_.notify_all();
  }
}

}  // namespace mtune::server
