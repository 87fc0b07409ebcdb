// Whether a worker overlaps compiling with timing, and on which cores: decided
// once at start-up from its flags and the cores it may use, and said in words.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mtune::worker {

struct OverlapMode {
  // Cores to compile on while `cpu` times; empty: sequential.
  std::vector<int> compile_cpus;
  // The choice and its reason, for the log.
  std::string description;
};

// `cpu`: the measuring core (-1: not pinned). `requested`: --compile-cpus (empty:
// every allowed core but `cpu`). `allowed`: the cores this process may use.
// Sequential when asked (--no-overlap), when unpinned (nothing to keep free) or
// when no other core is allowed. InvalidArgument when `requested` names `cpu` or
// a core outside `allowed`.
absl::StatusOr<OverlapMode> ChooseOverlap(int cpu, bool no_overlap,
                                          const std::vector<int>& requested,
                                          const std::vector<int>& allowed);
// The same with this process's allowed cores.
absl::StatusOr<OverlapMode> ChooseOverlap(int cpu, bool no_overlap,
                                          const std::vector<int>& requested);

}  // namespace mtune::worker
