#include "worker/overlap_mode.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/affinity.h"

namespace mtune::worker {

absl::StatusOr<OverlapMode> ChooseOverlap(int cpu, bool no_overlap,
                                          const std::vector<int>& requested,
                                          const std::vector<int>& allowed) {
  OverlapMode mode;
  if (no_overlap) {
    mode.description = "--no-overlap: each candidate is compiled and timed on one core before the next";
    return mode;
  }
  if (cpu < 0) {
    mode.description =
        "not pinned (--cpu -1): candidates are compiled and timed one after another (overlap "
        "needs a measuring core to keep free of compiles)";
    return mode;
  }
  auto is_allowed = [&](int c) { return std::find(allowed.begin(), allowed.end(), c) != allowed.end(); };
  if (!requested.empty()) {
    for (int c : requested) {
      if (c == cpu)
        return absl::InvalidArgumentError(absl::StrCat(
            "--compile-cpus ", absl::StrJoin(requested, ","), " includes the measuring core --cpu ",
            cpu, ": compiles would disturb its timings"));
      if (!is_allowed(c))
        return absl::InvalidArgumentError(
            absl::StrCat("--compile-cpus: cpu ", c, " is not among this process's cpus (",
                         absl::StrJoin(allowed, ","), ")"));
    }
    mode.compile_cpus = requested;
  } else {
    for (int c : allowed)
      if (c != cpu) mode.compile_cpus.push_back(c);
    if (mode.compile_cpus.empty()) {
      mode.description = absl::StrCat(
          "only cpu ", cpu,
          " is available: no spare core to compile on, so candidates are compiled and timed one "
          "after another on it (no overlap)");
      return mode;
    }
  }
  mode.description = absl::StrCat("overlap: compiling upcoming candidates on cpus ",
                                  absl::StrJoin(mode.compile_cpus, ","), " while timing on cpu ",
                                  cpu, " (--no-overlap to turn off; keep --compile-cpus off other "
                                  "workers' measuring cores)");
  return mode;
}

absl::StatusOr<OverlapMode> ChooseOverlap(int cpu, bool no_overlap,
                                          const std::vector<int>& requested) {
  auto allowed = AllowedCpus();
  if (!allowed.ok()) return allowed.status();
  return ChooseOverlap(cpu, no_overlap, requested, *allowed);
}

}  // namespace mtune::worker
