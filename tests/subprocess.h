// Test helpers: a child process with its output in a log file, killable and reaped;
// shell commands, files and waiting.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace mtune::testing {

class Subprocess {
 public:
  // Starts argv[0] with `argv`, stdout and stderr appended to `log_path`.
  Subprocess(std::vector<std::string> argv, std::string log_path);
  ~Subprocess();  // SIGKILLs the process if still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // Sends `signal`.
  void Signal(int signal);
  // Waits up to `timeout_s` for exit; returns the wait status, or -1 on timeout.
  int Wait(double timeout_s);
  bool running();
  // The log so far.
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string log_path_;
};

// Reads a whole file; empty if missing.
std::string ReadFile(const std::string& path);

// A fresh empty directory under $TMPDIR.
std::string MakeTempDir(const std::string& prefix);

// Runs `command` in a shell; returns its exit code (-1 if it did not exit) and fills
// `output` with its stdout and stderr.
int RunCommand(const std::string& command, std::string* output);

// Sleeps `s` seconds.
void SleepS(double s);

// The first line of the port file at `path` once its writer (a coordinator's
// --port-file) has written it; "" after `timeout_s`.
std::string WaitForPort(const std::string& path, double timeout_s);

}  // namespace mtune::testing
