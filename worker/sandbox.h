// Isolation of generated code: candidates are compiled and run in a child process
// so that a kernel that crashes or hangs costs a result, not the worker.
//
// The child is a long-lived process (started again after it dies) that first
// writes one "ready" byte once set up, then speaks length-prefixed
// SandboxRequest/SandboxResponse messages over a socket pair. A task's time limit
// counts from the start of its run: a fresh child's start-up is not part of it.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/mtune.pb.h"

namespace mtune::worker {

// Parent side: owns the child process.
class Sandbox {
 public:
  // `argv` starts a process that calls RunSandboxServer (e.g. {"/proc/self/exe", "--sandbox"}).
  // `memory_limit_mib` is the limit that process applies to itself (0: none), named
  // in the diagnostics of a child that dies.
  explicit Sandbox(std::vector<std::string> argv, uint64_t memory_limit_mib = 0);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Sends `request` and waits up to `timeout_s` for the answer. When the child dies
  // or runs out of time the answer is a CRASH / TIMEOUT result naming why, and the
  // next call starts a fresh child. Errors only when no child can be started.
  // `spent_s`: seconds of the task's limit an earlier call already used (the
  // compile half of an overlapped task): they count towards `timeout_s` and the
  // reported time; the wait between the calls does not.
  absl::StatusOr<mtune::v1::SandboxResponse> Call(const mtune::v1::SandboxRequest& request,
                                                  double timeout_s, double spent_s = 0);

  // Measures the machine's ceilings in the child (on its pinned core).
  absl::StatusOr<mtune::v1::Calibration> Calibrate(double timeout_s = 120);

  // Pid of the running child, or -1.
  pid_t child_pid() const { return pid_; }

 private:
  absl::Status EnsureStarted();
  // Kills (if needed) and reaps the child; returns how it ended, in words.
  std::string Reap(bool kill_first);

  std::vector<std::string> argv_;
  uint64_t memory_limit_mib_ = 0;
  pid_t pid_ = -1;
  // Both ends of the parent's socket (the same descriptor).
  int to_child_ = -1;
  int from_child_ = -1;
};

// Child side: pins to `cpu` (if >= 0), limits its own address space to
// `memory_limit_mib` (0: no limit) so that a kernel exhausting memory fails in
// here instead of hurting the machine, then serves requests read from `in_fd`,
// answering on `out_fd`, until the parent closes the pipe. Returns an exit code.
// `test_inject_fault` (TEST ONLY, see fault_injection.h): every measurement raises
// that fault where its kernel runs.
// `compile_cpus` (overlapped mode, non-empty): the child runs on these cores and
// moves to `cpu` only to calibrate, verify and time, then moves back; `compile`
// requests compile there while another child times on `cpu`.
int RunSandboxServer(int in_fd, int out_fd, int cpu, uint64_t memory_limit_mib = 0,
                     const std::string& test_inject_fault = "",
                     const std::vector<int>& compile_cpus = {});

// Exit code of a sandbox child in which an allocation failed (out of memory).
inline constexpr int kSandboxOutOfMemoryExit = 86;

// Default address-space limit of a worker's sandbox child, MiB: far above what
// compiling and measuring any supported problem takes (the MLIR libraries and the
// JIT reserve a few hundred MiB of address space), far below a machine's memory.
inline constexpr uint64_t kDefaultSandboxMemoryLimitMib = 8192;

// File descriptors the child reads requests from and writes answers to.
inline constexpr int kSandboxRequestFd = 3;
inline constexpr int kSandboxResponseFd = 4;

}  // namespace mtune::worker
