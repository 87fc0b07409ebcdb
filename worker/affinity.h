// CPU pinning of the measuring thread, so timings and calibration see one core.
#ifndef MTUNE_WORKER_AFFINITY_H_
#define MTUNE_WORKER_AFFINITY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mtune::worker {

// Restricts the calling thread to `cpu`. InvalidArgument when cpu is negative, not a
// CPU of this machine, or outside the affinity/cpuset this thread may use.
absl::Status PinCurrentThreadToCpu(int cpu);

// Restricts the calling thread to the CPUs in `cpus` (non-empty); threads it starts
// later inherit the set. InvalidArgument as above.
absl::Status PinCurrentThreadToCpus(const std::vector<int>& cpus);

// Parses a CPU list as taskset and cpusets write it: "1", "0,2", "2-5,8".
// InvalidArgument names the bad part.
absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& text);

// The CPU the calling thread runs on right now, or -1 if the kernel cannot say.
int CurrentCpu();

// CPUs the calling thread may run on, ascending (a worker picks its core from these).
absl::StatusOr<std::vector<int>> AllowedCpus();

}  // namespace mtune::worker

#endif  // MTUNE_WORKER_AFFINITY_H_
