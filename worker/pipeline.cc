#include "worker/pipeline.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "proto/compute_peaks.h"
#include "worker/sandbox.h"

namespace mtune::worker {
namespace {

using Clock = std::chrono::steady_clock;

bool HasFault(const PipelineTask& item) {
  return !item.inject_fault.empty() && item.inject_fault != "none";
}

mtune::v1::Result ResultOf(const absl::StatusOr<mtune::v1::SandboxResponse>& response) {
  if (!response.ok()) return SandboxUnavailable(std::string(response.status().message()));
  return response->result();
}

}  // namespace

mtune::v1::Result SandboxUnavailable(const std::string& why) {
  mtune::v1::Result result;
  result.set_status(mtune::v1::RESULT_STATUS_CRASH);
  result.set_error(why);
  return result;
}

Pipeline::Pipeline(PipelineOptions options, mtune::v1::Calibration calibration)
    : options_(std::move(options)),
      calibration_(std::move(calibration)),
      footprint_figures_(options_.footprint_figures_max_age_s) {
  const int children = options_.prefetch > 0 ? options_.prefetch + 1 : 1;
  for (int i = 0; i < children; ++i)
    sandboxes_.push_back(std::make_unique<Sandbox>(options_.sandbox_argv, options_.memory_limit_mib));
}

Pipeline::~Pipeline() = default;

mtune::v1::Calibration Pipeline::CurrentCalibration() const {
  std::lock_guard lock(figures_mu_);
  mtune::v1::Calibration calibration = calibration_;
  footprint_figures_.AddFreshTo(calibration, UnixNowS());
  return calibration;
}

void Pipeline::LearnPeaks(const mtune::v1::Result& result) {
  if (!result.has_retimed_peaks()) return;
  std::lock_guard lock(figures_mu_);
  mtune::v1::TakeNewerPeaks(result.retimed_peaks(), calibration_);
}

void Pipeline::LearnFootprintBandwidth(const mtune::v1::Result& result) {
  // Set by the sandbox (measure.cc) for a bandwidth-bound problem inside the caches.
  if (result.status() != mtune::v1::RESULT_STATUS_OK || !result.has_footprint_bandwidth()) return;
  std::lock_guard lock(figures_mu_);
  footprint_figures_.Learn(result.footprint_bandwidth());
}

std::unique_ptr<Sandbox> Pipeline::FaultySandbox(const std::string& fault) const {
  std::vector<std::string> argv = options_.sandbox_argv;
  argv.insert(argv.end(), {"--test-inject-fault", fault});
  return std::make_unique<Sandbox>(argv, options_.memory_limit_mib);
}

void Pipeline::Run(const PipelineCallbacks& callbacks) {
  if (overlapped())
    RunOverlapped(callbacks);
  else
    RunSequential(callbacks);
}

void Pipeline::RunSequential(const PipelineCallbacks& callbacks) {
  while (!callbacks.stop()) {
    std::optional<PipelineTask> item = callbacks.next();
    if (!item) return;
    // A task given a fault runs in a child of its own (TEST ONLY).
    std::unique_ptr<Sandbox> faulty = HasFault(*item) ? FaultySandbox(item->inject_fault) : nullptr;
    mtune::v1::SandboxRequest request;
    *request.mutable_measure() = item->task;
    *request.mutable_calibration() = CurrentCalibration();
    request.set_peaks_max_age_s(options_.peaks_max_age_s);
    callbacks.measuring(item->task.task_id());
    auto response = (faulty ? *faulty : *sandboxes_[0]).Call(request, item->task.time_limit_s());
    faulty.reset();
    const mtune::v1::Result result = ResultOf(response);
    LearnFootprintBandwidth(result);
    LearnPeaks(result);
    callbacks.done(item->task, result, 0);
  }
}

void Pipeline::RunOverlapped(const PipelineCallbacks& callbacks) {
  // A task through its compile half, waiting for the measuring core.
  struct Compiled {
    PipelineTask item;
    size_t slot = 0;
    std::unique_ptr<Sandbox> faulty;
    std::optional<mtune::v1::Result> failed;  // set: the compile half ended it
    double spent_s = 0;                       // the compile half's share of the limit
    Clock::time_point compile_start, compile_end;
    bool end = false;                         // next() had no more tasks
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Compiled> ready;
  std::vector<size_t> free_slots;
  for (size_t i = sandboxes_.size(); i > 0; --i) free_slots.push_back(i - 1);
  bool quit = false;
  // The last timings (task, start, end): a compile that overlapped one of them is
  // reported as such.
  struct Timed {
    int64_t task_id;
    Clock::time_point start, end;
  };
  std::deque<Timed> recent;

  std::thread compiler([&] {
    while (true) {
      size_t slot;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return quit || !free_slots.empty(); });
        if (quit) return;
        slot = free_slots.back();
        free_slots.pop_back();
      }
      std::optional<PipelineTask> item = callbacks.next();
      Compiled c;
      c.slot = slot;
      if (!item) {
        c.end = true;
      } else {
        c.item = std::move(*item);
        if (HasFault(c.item)) c.faulty = FaultySandbox(c.item.inject_fault);
        Sandbox& sandbox = c.faulty ? *c.faulty : *sandboxes_[slot];
        mtune::v1::SandboxRequest request;
        *request.mutable_compile() = c.item.task;
        *request.mutable_calibration() = CurrentCalibration();
        c.compile_start = Clock::now();
        auto response = sandbox.Call(request, c.item.task.time_limit_s());
        c.compile_end = Clock::now();
        if (response.ok() && response->compiled())
          c.spent_s = response->result().total_s();
        else
          c.failed = ResultOf(response);
      }
      std::lock_guard lock(mu);
      const bool end = c.end;
      ready.push_back(std::move(c));
      cv.notify_all();
      if (end) return;
    }
  });

  while (true) {
    Compiled c;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return !ready.empty(); });
      c = std::move(ready.front());
      ready.pop_front();
    }
    if (c.end) break;
    if (callbacks.stop()) break;  // the rest of what is held is dropped
    mtune::v1::Result result;
    if (c.failed) {
      result = *c.failed;
    } else {
      Sandbox& sandbox = c.faulty ? *c.faulty : *sandboxes_[c.slot];
      mtune::v1::SandboxRequest request;
      request.set_measure_compiled(true);
      // Figures that went stale while the candidate waited are timed again now.
      *request.mutable_calibration() = CurrentCalibration();
      request.set_peaks_max_age_s(options_.peaks_max_age_s);
      callbacks.measuring(c.item.task.task_id());
      const auto start = Clock::now();
      // The clock goes on from where the compile half left it.
      result = ResultOf(sandbox.Call(request, c.item.task.time_limit_s(), c.spent_s));
      recent.push_back({c.item.task.task_id(), start, Clock::now()});
      if (recent.size() > sandboxes_.size()) recent.pop_front();
    }
    c.faulty.reset();
    // The child is free again once its result is out of it; reporting (which may
    // retry for a while) need not hold up the next compile.
    {
      std::lock_guard lock(mu);
      free_slots.push_back(c.slot);
      cv.notify_all();
    }
    // Every earlier timing is over by now: which one did this compile overlap?
    int64_t overlapped_with = 0;
    for (const Timed& t : recent)
      if (t.task_id != c.item.task.task_id() && t.start < c.compile_end && c.compile_start < t.end)
        overlapped_with = t.task_id;
    LearnFootprintBandwidth(result);
    LearnPeaks(result);
    callbacks.done(c.item.task, result, overlapped_with);
  }
  {
    std::lock_guard lock(mu);
    quit = true;
    cv.notify_all();
  }
  callbacks.interrupt();
  compiler.join();
}

}  // namespace mtune::worker
