// The worker's task pipeline: runs tasks through sandbox children and hands back
// their results in the order the tasks came.
//
// Sequential (prefetch 0): one child compiles, verifies and times each task on
// the measuring core, one task after another.
//
// Overlapped (prefetch N > 0): N + 1 children live on the compile cores. A
// compile thread takes the next task, has a free child compile it there, and the
// child keeps the kernel; the calling thread then asks the children, one at a
// time and in task order, to move to the measuring core, verify and time, and
// move back. So the next candidates compile while one is timed, and only one
// child ever times on the measuring core. The JIT'd code never leaves the child
// that compiled it: a crash costs that child, as before. A task's time limit
// counts its compile and its measurement, not its wait for the measuring core.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "proto/mtune.pb.h"
#include "worker/footprint_figures.h"
#include "worker/peak_figures.h"

namespace mtune::worker {

class Sandbox;

struct PipelineOptions {
  // Starts one sandbox child; in overlapped mode it must carry the compile cores
  // (`--compile-cpus`) besides the measuring core.
  std::vector<std::string> sandbox_argv;
  uint64_t memory_limit_mib = 0;
  // Tasks compiled ahead of the one being timed; 0: sequential.
  int prefetch = 0;
  // Age after which the copy and read figures timed at a footprint are timed again,
  // seconds (worker/footprint_figures.h); <= 0: never.
  double footprint_figures_max_age_s = kDefaultFootprintFiguresMaxAgeS;
  // Age after which the compute peaks are timed again before a compute-bound result
  // is held against them, seconds (worker/peak_figures.h); <= 0: never.
  double peaks_max_age_s = kDefaultPeaksMaxAgeS;
};

struct PipelineTask {
  mtune::v1::Task task;
  // TEST ONLY (fault_injection.h): run this task in a child of its own that
  // raises this fault where the kernel runs; "" or "none": no fault.
  std::string inject_fault;
};

struct PipelineCallbacks {
  // The next task; blocks until one comes; nullopt: no more.
  std::function<std::optional<PipelineTask>()> next;
  // Each result, in task order, on the thread that called Run(). `overlapped_with`:
  // the task that was being timed while this one compiled (0: none).
  std::function<void(const mtune::v1::Task&, const mtune::v1::Result&, int64_t overlapped_with)>
      done;
  // Checked before each measurement: true drops the tasks compiled but not yet
  // timed and ends Run() (e.g. the Work stream ended: they are re-queued).
  std::function<bool()> stop = [] { return false; };
  // Wakes a next() blocked for a task, once Run() wants to end (optional).
  std::function<void()> interrupt = [] {};
  // Told the id of the task about to be timed (optional).
  std::function<void(int64_t)> measuring = [](int64_t) {};
};

class Pipeline {
 public:
  Pipeline(PipelineOptions options, mtune::v1::Calibration calibration);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Runs tasks until next() says there are no more (every task then has its
  // result) or stop() says to end. The children stay up for the next Run().
  void Run(const PipelineCallbacks& callbacks);

  bool overlapped() const { return options_.prefetch > 0; }

 private:
  void RunSequential(const PipelineCallbacks& callbacks);
  void RunOverlapped(const PipelineCallbacks& callbacks);
  std::unique_ptr<Sandbox> FaultySandbox(const std::string& fault) const;
  // The calibration sent with each request: the newest peaks, with the footprint
  // figures learnt so far that are not stale.
  mtune::v1::Calibration CurrentCalibration() const;
  // Keeps the peaks a sandbox timed again (Result.retimed_peaks) for the next tasks.
  void LearnPeaks(const mtune::v1::Result& result);
  // Keeps the copy and read bandwidth a result of a bandwidth-bound problem was
  // measured against at that problem's footprint (Result.footprint_bandwidth), so that
  // the next candidates of the problem (and of any problem of that footprint) reuse
  // them, until they are stale, instead of measuring them again.
  void LearnFootprintBandwidth(const mtune::v1::Result& result);

  PipelineOptions options_;
  // The compiling thread reads these while results add to them.
  mutable std::mutex figures_mu_;
  mtune::v1::Calibration calibration_;
  FootprintFigures footprint_figures_;
  // Sequential: one; overlapped: prefetch + 1.
  std::vector<std::unique_ptr<Sandbox>> sandboxes_;
};

// The result of a sandbox call that could not start a child at all.
mtune::v1::Result SandboxUnavailable(const std::string& why);

}  // namespace mtune::worker
