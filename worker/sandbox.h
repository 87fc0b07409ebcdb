// Isolation of generated code: candidates are compiled and run in a child process
// so that a kernel that crashes or hangs costs a result, not the worker.
//
// The child is a long-lived process (started again after it dies) speaking
// length-prefixed SandboxRequest/SandboxResponse messages over a socket pair.
#pragma once

#include <sys/types.h>

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
  explicit Sandbox(std::vector<std::string> argv);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Sends `request` and waits up to `timeout_s` for the answer. When the child dies
  // or runs out of time the answer is a CRASH / TIMEOUT result naming why, and the
  // next call starts a fresh child. Errors only when no child can be started.
  absl::StatusOr<mtune::v1::SandboxResponse> Call(const mtune::v1::SandboxRequest& request,
                                                  double timeout_s);

  // Measures the machine's ceilings in the child (on its pinned core).
  absl::StatusOr<mtune::v1::Calibration> Calibrate(double timeout_s = 120);

  // Pid of the running child, or -1.
  pid_t child_pid() const { return pid_; }

 private:
  absl::Status EnsureStarted();
  // Kills (if needed) and reaps the child; returns how it ended, in words.
  std::string Reap(bool kill_first);

  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  // Both ends of the parent's socket (the same descriptor).
  int to_child_ = -1;
  int from_child_ = -1;
};

// Child side: pins to `cpu` (if >= 0), then serves requests read from `in_fd`,
// answering on `out_fd`, until the parent closes the pipe. Returns an exit code.
int RunSandboxServer(int in_fd, int out_fd, int cpu);

// File descriptors the child reads requests from and writes answers to.
inline constexpr int kSandboxRequestFd = 3;
inline constexpr int kSandboxResponseFd = 4;

}  // namespace mtune::worker
