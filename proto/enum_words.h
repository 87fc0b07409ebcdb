// The words users see for mtune.v1 enum values: "ok", "compile_error", "running", ...
// (DESIGN.md's vocabulary), shared by the dashboard's JSON, the CLI and the benches.
#pragma once

#include <string>

#include "proto/mtune.pb.h"

namespace mtune::v1 {

// The value's name without its RESULT_STATUS_ prefix, lower case; "status_N" for a
// value this build does not know.
std::string StatusWord(ResultStatus status);

// "running", "succeeded", "cancelled", "failed"; "state_N" for an unknown value.
std::string JobStateWord(JobState state);

}  // namespace mtune::v1
