// `mtune measure`: compile, verify and time one candidate on this machine, no server.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "proto/mtune.pb.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "strategies/vector_registers.h"

namespace mtune::client {

struct MeasureRequest {
  std::string problem;
  // Empty: the template strategies::ChooseTemplate picks for the problem on this host.
  std::string template_name;
  // A template file to use instead of a built-in template (for template authors).
  std::string template_file;
  // LLVM features of the target whose vector registers the register tiles are sized
  // for (strategies/vector_registers.h); empty: this host's.
  std::string target_features;
  // Knobs not given keep the template's default (else their first option).
  std::map<std::string, std::string> knobs;
  int cpu = -1;
  double min_time_s = 0.2;
  double time_limit_s = 120;
  bool calibrate = true;
  // Command line that starts a sandbox server (this program's hidden mode).
  std::vector<std::string> sandbox_argv;
};

struct MeasureOutcome {
  mtune::v1::Candidate candidate;
  std::string script;
  mtune::v1::Calibration calibration;
  mtune::v1::Result result;
};

struct ProblemTemplate {
  strategies::Problem problem;
  strategies::StrategyTemplate tpl;
  // What its knob space is sized for: the target of request.target_features, else this host.
  strategies::VectorRegisters registers;
};

// The problem `request` names and its template: --template-file, --template, or the
// template chosen for the problem on the target (ChooseTemplate). Errors for a bad
// key, an unknown template, an unreadable file or a target whose vector registers
// cannot be told.
absl::StatusOr<ProblemTemplate> LoadProblemTemplate(const MeasureRequest& request);

// The candidate `request` names (template defaults for knobs not given) and its
// instantiated script; InvalidArgument for unknown knobs or values outside options.
absl::StatusOr<MeasureOutcome> ResolveCandidate(const MeasureRequest& request);

// Runs the candidate in a sandbox process; a failed candidate is an OK outcome
// with a failed result. Errors for bad input (unknown knob, value outside options).
absl::StatusOr<MeasureOutcome> MeasureLocally(const MeasureRequest& request);

}  // namespace mtune::client
