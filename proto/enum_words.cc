#include "proto/enum_words.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace mtune::v1 {
namespace {

// `name` without `prefix`, lower case; `fallback` when nothing is left.
std::string Word(std::string name, absl::string_view prefix, std::string fallback) {
  if (absl::StartsWith(name, prefix)) name = name.substr(prefix.size());
  if (name.empty()) return fallback;
  return absl::AsciiStrToLower(name);
}

}  // namespace

std::string StatusWord(ResultStatus status) {
  return Word(ResultStatus_Name(status), "RESULT_STATUS_",
              absl::StrCat("status_", static_cast<int>(status)));
}

std::string JobStateWord(JobState state) {
  return Word(JobState_Name(state), "JOB_STATE_", absl::StrCat("state_", static_cast<int>(state)));
}

}  // namespace mtune::v1
