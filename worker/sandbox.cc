#include "worker/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <new>
#include <optional>

#include "absl/strings/str_cat.h"
#include "worker/affinity.h"
#include "worker/calibration.h"
#include "worker/measure.h"

extern char** environ;

namespace mtune::worker {
namespace {

// Messages are a 4-byte little-endian length followed by the serialized proto.
constexpr uint32_t kMaxMessageBytes = 64 << 20;
// The child's first byte, once it is set up: the parent starts a task's clock after it.
constexpr char kSandboxReady = 'R';

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    // MSG_NOSIGNAL: a dead peer is an error to report, not a SIGPIPE that kills us.
    ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= n;
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= n;
  }
  return true;
}

bool WriteMessage(int fd, const google::protobuf::Message& message) {
  std::string bytes = message.SerializeAsString();
  uint32_t size = bytes.size();
  return WriteAll(fd, &size, sizeof size) && WriteAll(fd, bytes.data(), bytes.size());
}

bool ReadMessage(int fd, google::protobuf::Message* message) {
  uint32_t size = 0;
  if (!ReadAll(fd, &size, sizeof size) || size > kMaxMessageBytes) return false;
  std::string bytes(size, '\0');
  return ReadAll(fd, bytes.data(), size) && message->ParseFromString(bytes);
}

mtune::v1::SandboxResponse FailedResponse(mtune::v1::ResultStatus status, std::string error,
                                          double seconds) {
  mtune::v1::SandboxResponse response;
  response.mutable_result()->set_status(status);
  response.mutable_result()->set_error(std::move(error));
  response.mutable_result()->set_total_s(seconds);
  return response;
}

}  // namespace

Sandbox::Sandbox(std::vector<std::string> argv, uint64_t memory_limit_mib)
    : argv_(std::move(argv)), memory_limit_mib_(memory_limit_mib) {}

Sandbox::~Sandbox() {
  if (pid_ > 0) Reap(/*kill_first=*/true);
}

absl::Status Sandbox::EnsureStarted() {
  if (pid_ > 0) return absl::OkStatus();
  // A socket pair rather than pipes: send() with MSG_NOSIGNAL then reports a dead
  // child as an error instead of raising SIGPIPE in the worker.
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return absl::InternalError(absl::StrCat("socketpair: ", strerror(errno)));
  // posix_spawn rather than fork: the worker is multithreaded (gRPC).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kSandboxRequestFd);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kSandboxResponseFd);
  std::vector<char*> args;
  for (std::string& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::InternalError(absl::StrCat("cannot start sandbox ", argv_[0], ": ", strerror(rc)));
  }
  pid_ = pid;
  to_child_ = fds[0];
  from_child_ = fds[0];
  return absl::OkStatus();
}

std::string Sandbox::Reap(bool kill_first) {
  if (to_child_ >= 0) close(to_child_);
  to_child_ = from_child_ = -1;
  int status = 0;
  struct rusage usage {};
  bool reaped = false;
  if (!kill_first) {
    // It closed the socket, so it is ending: give it a moment to be reaped with its
    // own cause of death; one that lingers is killed.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!reaped && std::chrono::steady_clock::now() < give_up) {
      const pid_t r = wait4(pid_, &status, WNOHANG, &usage);
      if (r == pid_) reaped = true;
      else if (r < 0 && errno != EINTR) break;
      else usleep(1000);
    }
    if (!reaped) kill_first = true;
  }
  if (!reaped) {
    kill(pid_, SIGKILL);
    while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  // Peak memory tells a crash from exhausted memory apart: generated code whose
  // malloc fails under the limit usually dies by SIGSEGV on the null pointer.
  const std::string memory =
      absl::StrCat("; peak memory ", usage.ru_maxrss / 1024, " MiB",
                   memory_limit_mib_ > 0
                       ? absl::StrCat(" (sandbox address-space limit ", memory_limit_mib_, " MiB)")
                       : std::string());
  if (kill_first) return "killed by the worker" + memory;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return absl::StrCat("was killed by signal ", sig, " (SIG", abbrev ? abbrev : "?", ": ",
                        strsignal(sig), ")", memory);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kSandboxOutOfMemoryExit)
    return "ran out of memory: an allocation failed" + memory;
  if (WIFEXITED(status)) return absl::StrCat("exited with code ", WEXITSTATUS(status), memory);
  return "ended" + memory;
}

absl::StatusOr<mtune::v1::SandboxResponse> Sandbox::Call(const mtune::v1::SandboxRequest& request,
                                                         double timeout_s, double spent_s) {
  using Clock = std::chrono::steady_clock;
  const bool fresh = pid_ <= 0;
  if (absl::Status s = EnsureStarted(); !s.ok()) return s;
  if (fresh) {
    // A fresh child first loads the MLIR libraries and sets itself up; the task's
    // time limit counts from the start of its run, so wait for "ready" first (up
    // to the same limit: a child that cannot start is reported, not waited on).
    const auto spawned = Clock::now();
    pollfd ready{from_child_, POLLIN, 0};
    int rc;
    do {
      rc = poll(&ready, 1, static_cast<int>(timeout_s * 1000) + 1);
    } while (rc < 0 && errno == EINTR);
    char byte = 0;
    const double waited = std::chrono::duration<double>(Clock::now() - spawned).count();
    if (rc == 0) {
      std::string how = Reap(/*kill_first=*/true);
      return FailedResponse(mtune::v1::RESULT_STATUS_TIMEOUT,
                            absl::StrCat("the sandbox was not ready within ", timeout_s,
                                         " s: ", how),
                            waited);
    }
    if (!ReadAll(from_child_, &byte, 1) || byte != kSandboxReady) {
      std::string how = Reap(/*kill_first=*/false);
      return FailedResponse(mtune::v1::RESULT_STATUS_CRASH,
                            "the sandbox " + how + " before it was ready", waited);
    }
  }
  const auto start = Clock::now();
  auto elapsed = [&] {
    return spent_s + std::chrono::duration<double>(Clock::now() - start).count();
  };
  if (!WriteMessage(to_child_, request)) {
    // The child died before it took the request: say how, do not kill blindly.
    std::string how = Reap(/*kill_first=*/false);
    return FailedResponse(mtune::v1::RESULT_STATUS_CRASH, "the sandbox " + how, elapsed());
  }
  pollfd pfd{from_child_, POLLIN, 0};
  while (true) {
    double left = timeout_s - elapsed();
    if (left <= 0) {
      std::string how = Reap(/*kill_first=*/true);
      return FailedResponse(mtune::v1::RESULT_STATUS_TIMEOUT,
                            absl::StrCat("no result within ", timeout_s,
                                         " s (counted from the start of the run): sandbox ", how),
                            elapsed());
    }
    int rc = poll(&pfd, 1, static_cast<int>(left * 1000) + 1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc > 0) break;
  }
  mtune::v1::SandboxResponse response;
  if (!ReadMessage(from_child_, &response)) {
    std::string how = Reap(/*kill_first=*/false);
    return FailedResponse(mtune::v1::RESULT_STATUS_CRASH,
                          "the process running the candidate " + how, elapsed());
  }
  return response;
}

absl::StatusOr<mtune::v1::Calibration> Sandbox::Calibrate(double timeout_s) {
  mtune::v1::SandboxRequest request;
  request.set_calibrate(true);
  auto response = Call(request, timeout_s);
  if (!response.ok()) return response.status();
  if (!response->has_calibration())
    return absl::InternalError("calibration failed: " + response->result().error());
  return response->calibration();
}

namespace {
// operator new's last resort in the child: report out-of-memory by exit code
// (nothing that allocates is safe here) so the parent records it as such.
void OutOfMemory() {
  static const char kMessage[] = "mtune sandbox: out of memory (an allocation failed)\n";
  (void)!write(2, kMessage, sizeof kMessage - 1);
  _exit(kSandboxOutOfMemoryExit);
}
}  // namespace

int RunSandboxServer(int in_fd, int out_fd, int cpu, uint64_t memory_limit_mib,
                     const std::string& test_inject_fault, const std::vector<int>& compile_cpus) {
  if (memory_limit_mib > 0) {
    const rlim_t bytes = static_cast<rlim_t>(memory_limit_mib) << 20;
    const struct rlimit limit{bytes, bytes};
    if (setrlimit(RLIMIT_AS, &limit) != 0) {
      fprintf(stderr, "mtune sandbox: cannot limit memory to %llu MiB: %s\n",
              static_cast<unsigned long long>(memory_limit_mib), strerror(errno));
      return 2;
    }
  }
  std::set_new_handler(OutOfMemory);
  // Overlapped: live on the compile cores (threads MLIR starts inherit them) and
  // visit the measuring core only to time. Otherwise everything on `cpu`.
  const bool overlapped = !compile_cpus.empty() && cpu >= 0;
  const std::vector<int> home = overlapped ? compile_cpus : std::vector<int>{cpu};
  if (cpu >= 0) {
    if (absl::Status s = PinCurrentThreadToCpus(home); !s.ok()) {
      fprintf(stderr, "mtune sandbox: %s\n", s.ToString().c_str());
      return 2;
    }
  }
  // Runs `work` on the measuring core; false (and `error` set) if it cannot move.
  auto on_measuring_core = [&](const std::function<void()>& work, std::string* error) {
    if (overlapped) {
      if (absl::Status s = PinCurrentThreadToCpu(cpu); !s.ok()) {
        *error = s.ToString();
        return false;
      }
    }
    work();
    if (overlapped) {
      if (absl::Status s = PinCurrentThreadToCpus(home); !s.ok()) {
        *error = s.ToString();
        return false;
      }
    }
    return true;
  };
  Measurer measurer;  // lives across requests: it caches operands and references
  if (!WriteAll(out_fd, &kSandboxReady, 1)) return 1;
  mtune::v1::SandboxRequest request;
  while (ReadMessage(in_fd, &request)) {
    mtune::v1::SandboxResponse response;
    std::string error;
    bool moved = true;
    measurer.set_peaks_max_age_s(request.peaks_max_age_s());
    if (request.has_measure()) {
      moved = on_measuring_core(
          [&] {
            *response.mutable_result() =
                measurer.Measure(request.measure(), request.calibration(), test_inject_fault);
          },
          &error);
    } else if (request.has_compile()) {
      if (std::optional<mtune::v1::Result> failed =
              measurer.Prepare(request.compile(), request.calibration())) {
        *response.mutable_result() = *failed;
      } else {
        response.set_compiled(true);
        response.mutable_result()->set_total_s(measurer.prepared_s());
      }
    } else if (request.has_measure_compiled()) {
      moved = on_measuring_core(
          [&] {
            *response.mutable_result() = measurer.MeasurePrepared(
                test_inject_fault, request.has_calibration() ? &request.calibration() : nullptr);
          },
          &error);
    } else {
      moved = on_measuring_core(
          [&] { *response.mutable_calibration() = Calibrate(CalibrationOptions()); }, &error);
    }
    if (!moved) {
      // Never time on the wrong core: a result without a timing is a failure.
      response.Clear();
      response.mutable_result()->set_status(mtune::v1::RESULT_STATUS_CRASH);
      response.mutable_result()->set_error("sandbox cannot move between cores: " + error);
    }
    if (!WriteMessage(out_fd, response)) return 1;
  }
  return 0;
}

}  // namespace mtune::worker
