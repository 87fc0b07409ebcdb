#include "worker/affinity.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mtune::worker {
namespace {

// Large enough for any machine Linux supports today; dynamic sets because the fixed
// cpu_set_t stops at 1024 CPUs.
constexpr int kMaxCpus = 8192;

struct CpuSetDeleter {
  void operator()(cpu_set_t* set) const { CPU_FREE(set); }
};
using CpuSet = std::unique_ptr<cpu_set_t, CpuSetDeleter>;

CpuSet NewCpuSet() {
  CpuSet set(CPU_ALLOC(kMaxCpus));
  CPU_ZERO_S(CPU_ALLOC_SIZE(kMaxCpus), set.get());
  return set;
}

std::string AllowedCpusText() {
  absl::StatusOr<std::vector<int>> cpus = AllowedCpus();
  return cpus.ok() ? absl::StrJoin(*cpus, ",") : std::string("unknown");
}

}  // namespace

absl::Status PinCurrentThreadToCpu(int cpu) {
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  if (cpu < 0 || cpu >= kMaxCpus || (configured > 0 && cpu >= configured)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot pin to cpu ", cpu, ": this machine has cpus 0..",
                     configured - 1, " and this thread is allowed ", AllowedCpusText()));
  }
  CpuSet set = NewCpuSet();
  CPU_SET_S(cpu, CPU_ALLOC_SIZE(kMaxCpus), set.get());
  const int err = pthread_setaffinity_np(pthread_self(), CPU_ALLOC_SIZE(kMaxCpus), set.get());
  if (err != 0) {
    // EINVAL here means the cpu is offline or outside our cpuset (container limits).
    return absl::InvalidArgumentError(
        absl::StrCat("cannot pin to cpu ", cpu, ": ", std::strerror(err),
                     " (this thread is allowed cpus ", AllowedCpusText(), ")"));
  }
  return absl::OkStatus();
}

absl::Status PinCurrentThreadToCpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return absl::InvalidArgumentError("cannot pin to an empty set of cpus");
  if (cpus.size() == 1) return PinCurrentThreadToCpu(cpus[0]);
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  CpuSet set = NewCpuSet();
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= kMaxCpus || (configured > 0 && cpu >= configured))
      return absl::InvalidArgumentError(
          absl::StrCat("cannot pin to cpu ", cpu, ": this machine has cpus 0..", configured - 1,
                       " and this thread is allowed ", AllowedCpusText()));
    CPU_SET_S(cpu, CPU_ALLOC_SIZE(kMaxCpus), set.get());
  }
  const int err = pthread_setaffinity_np(pthread_self(), CPU_ALLOC_SIZE(kMaxCpus), set.get());
  if (err != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot pin to cpus ", absl::StrJoin(cpus, ","), ": ", std::strerror(err),
                     " (this thread is allowed cpus ", AllowedCpusText(), ")"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& text) {
  std::vector<int> cpus;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    std::vector<absl::string_view> ends = absl::StrSplit(part, absl::MaxSplits('-', 1));
    int first = 0, last = 0;
    if (!absl::SimpleAtoi(ends[0], &first) ||
        !absl::SimpleAtoi(ends.size() > 1 ? ends[1] : ends[0], &last) || first < 0 ||
        last < first || last >= kMaxCpus)
      return absl::InvalidArgumentError(absl::StrCat("bad cpu list '", text, "': '", part,
                                                     "' is not a cpu or a range like 2-5"));
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

int CurrentCpu() { return sched_getcpu(); }

absl::StatusOr<std::vector<int>> AllowedCpus() {
  CpuSet set = NewCpuSet();
  const int err = pthread_getaffinity_np(pthread_self(), CPU_ALLOC_SIZE(kMaxCpus), set.get());
  if (err != 0) {
    return absl::InternalError(absl::StrCat("pthread_getaffinity_np: ", std::strerror(err)));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < kMaxCpus; ++cpu) {
    if (CPU_ISSET_S(cpu, CPU_ALLOC_SIZE(kMaxCpus), set.get())) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace mtune::worker
