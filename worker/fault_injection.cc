#include "worker/fault_injection.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mtune::worker {

const std::vector<std::string>& InjectableFaults() {
  static const std::vector<std::string> kinds = {"none", "segv",  "sigill", "sigbus",
                                                 "oom",  "hang", "wrong"};
  return kinds;
}

absl::StatusOr<std::vector<std::string>> ParseInjectedFaults(const std::string& list) {
  std::vector<std::string> faults;
  if (list.empty()) return faults;
  const auto& known = InjectableFaults();
  for (absl::string_view piece : absl::StrSplit(list, ',')) {
    std::string kind(piece);
    if (std::find(known.begin(), known.end(), kind) == known.end())
      return absl::InvalidArgumentError(absl::StrCat("unknown fault '", kind,
                                                     "' (known: ", absl::StrJoin(known, ", "), ")"));
    faults.push_back(kind);
  }
  return faults;
}

void RaiseInjectedFaultBeforeKernel(const std::string& kind) {
  if (kind == "segv") {
    // A page mapped without any access: the store faults like a stray pointer would.
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *static_cast<volatile int*>(page) = 1;
  } else if (kind == "sigill") {
    __builtin_trap();  // ud2 on x86: a real illegal instruction
  } else if (kind == "sigbus") {
    // A shared mapping of an empty file: touching it is past the end of file.
    char path[] = "/tmp/mtune-sigbus-XXXXXX";
    const int fd = mkstemp(path);
    unlink(path);
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    *static_cast<volatile int*>(page) = 1;
  } else if (kind == "oom") {
    // Allocate until an allocation fails: the sandbox's new-handler then ends the
    // child as out of memory. Its address-space limit is what fails it, so one
    // byte per chunk is touched: quick, and the machine's memory is left alone.
    for (;;) {
      constexpr size_t kChunk = 64 << 20;
      char* chunk = new char[kChunk];
      chunk[0] = 1;
      asm volatile("" : : "r"(chunk) : "memory");  // keep it (and the store)
    }
  } else if (kind == "hang") {
    volatile uint64_t spin = 0;
    while (true) spin = spin + 1;
  }
}

}  // namespace mtune::worker
