// The worker daemon: calibrates its pinned core, registers with the coordinator,
// receives tasks and sends their results over one Work stream, measures each in
// the sandbox, and reconnects with backoff when the coordinator goes away.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/mtune.pb.h"
#include "proto/transport_security.h"
#include "worker/footprint_figures.h"
#include "worker/peak_figures.h"

namespace mtune::worker {

struct DaemonOptions {
  // host:port of the coordinator.
  std::string coordinator;
  // Core the sandbox (compile + measure) is pinned to; -1 = not pinned.
  int cpu = 0;
  // Unique worker name; default "<hostname>/cpu<N>".
  std::string name;
  // Command line that starts this program's sandbox mode.
  std::vector<std::string> sandbox_argv;
  // Give up after this long without reaching the coordinator, seconds (0 = never).
  double give_up_after_s = 0;
  // TLS and worker token towards the coordinator.
  transport::ClientSecurity security;
  // Address-space limit the sandbox applies to itself, MiB (0 = none); the
  // sandbox argv must pass the same value (named in diagnostics).
  uint64_t sandbox_memory_limit_mib = 0;
  // Tasks compiled ahead (on other cores, named in sandbox_argv's
  // --compile-cpus) while one is timed on `cpu`; 0: compile and time one task
  // after another. See worker/pipeline.h.
  int prefetch = 0;
  // Age after which the figures timed at a bandwidth-bound problem's footprint are
  // timed again, seconds; <= 0: never (worker/footprint_figures.h).
  double footprint_figures_max_age_s = kDefaultFootprintFiguresMaxAgeS;
  // Age after which the compute peaks are timed again before a compute-bound result is
  // held against them, seconds; <= 0: never (worker/peak_figures.h).
  double peaks_max_age_s = kDefaultPeaksMaxAgeS;
  // TEST ONLY: the i-th task this worker receives raises test_inject_faults[i]
  // where its kernel runs ("none": no fault); see worker/fault_injection.h.
  std::vector<std::string> test_inject_faults;
};

// The target (triple, CPU, features) code is generated for on this machine.
mtune::v1::Target HostTarget();

class WorkerDaemon {
 public:
  explicit WorkerDaemon(DaemonOptions options);
  // Runs until Stop() or an unrecoverable error (e.g. the name is taken).
  absl::Status Run();
  // Asks Run() to return soon (async-signal-safe: sets a flag).
  void Stop() { stop_ = true; }

 private:
  DaemonOptions options_;
  std::atomic<bool> stop_{false};
};

}  // namespace mtune::worker
