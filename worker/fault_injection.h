// TEST ONLY: faults raised on demand where a candidate's kernel runs, so that the
// integration tests exercise the real recording path of generated code that
// segfaults, raises SIGILL or SIGBUS, loops forever, exhausts memory or computes a
// wrong result (real generated code cannot be made to do each of these on demand).
//
// Never on by default: a worker injects faults only when started with
// `--test-inject-fault LIST`, and only into the tasks that list names.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mtune::worker {

// The kinds, as written on the command line. "none" injects nothing.
//   segv   write to a page mapped without access         -> SIGSEGV (crash)
//   sigill execute an illegal instruction (ud2)          -> SIGILL  (crash)
//   sigbus touch a file mapping beyond the end of file   -> SIGBUS  (crash)
//   oom    allocate memory until an allocation fails     -> out of memory (crash),
//          bounded by the sandbox's address-space limit
//   hang   spin forever                                  -> timeout
//   wrong  run the kernel, then corrupt one output value -> wrong_result
const std::vector<std::string>& InjectableFaults();

// Parses a comma-separated list ("none,segv,hang"): one kind per task, in the
// order the worker receives its tasks. InvalidArgument names an unknown kind.
absl::StatusOr<std::vector<std::string>> ParseInjectedFaults(const std::string& list);

// Raises `kind` before the kernel would run ("segv", "sigill", "sigbus", "oom",
// "hang" never return). Does nothing for "", "none" and "wrong" (which the caller
// applies to the output after the kernel ran).
void RaiseInjectedFaultBeforeKernel(const std::string& kind);

}  // namespace mtune::worker
