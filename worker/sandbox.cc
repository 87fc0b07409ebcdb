#include "worker/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "worker/affinity.h"
#include "worker/calibration.h"
#include "worker/measure.h"

extern char** environ;

namespace mtune::worker {
namespace {

// Messages are a 4-byte little-endian length followed by the serialized proto.
constexpr uint32_t kMaxMessageBytes = 64 << 20;

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

Sandbox::Sandbox(std::vector<std::string> argv) : argv_(std::move(argv)) {}

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
  if (kill_first) kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFSIGNALED(status))
    return absl::StrCat("killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)),
                        ")");
  if (WIFEXITED(status)) return absl::StrCat("exited with code ", WEXITSTATUS(status));
  return "ended";
}

absl::StatusOr<mtune::v1::SandboxResponse> Sandbox::Call(const mtune::v1::SandboxRequest& request,
                                                         double timeout_s) {
  using Clock = std::chrono::steady_clock;
  if (absl::Status s = EnsureStarted(); !s.ok()) return s;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  if (!WriteMessage(to_child_, request)) {
    std::string how = Reap(/*kill_first=*/true);
    return FailedResponse(mtune::v1::RESULT_STATUS_CRASH, "sandbox " + how, elapsed());
  }
  pollfd pfd{from_child_, POLLIN, 0};
  while (true) {
    double left = timeout_s - elapsed();
    if (left <= 0) {
      Reap(/*kill_first=*/true);
      return FailedResponse(mtune::v1::RESULT_STATUS_TIMEOUT,
                            absl::StrCat("no result within ", timeout_s, " s: sandbox killed"),
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

int RunSandboxServer(int in_fd, int out_fd, int cpu) {
  if (cpu >= 0) {
    if (absl::Status s = PinCurrentThreadToCpu(cpu); !s.ok()) {
      fprintf(stderr, "mtune sandbox: %s\n", s.ToString().c_str());
      return 2;
    }
  }
  Measurer measurer;  // lives across requests: it caches operands and references
  mtune::v1::SandboxRequest request;
  while (ReadMessage(in_fd, &request)) {
    mtune::v1::SandboxResponse response;
    if (request.has_measure()) {
      *response.mutable_result() = measurer.Measure(request.measure(), request.calibration());
    } else {
      *response.mutable_calibration() = Calibrate(CalibrationOptions());
    }
    if (!WriteMessage(out_fd, response)) return 1;
  }
  return 0;
}

}  // namespace mtune::worker
