// libFuzzer target: template knob extraction and candidate instantiation
// (strategies/knob_space.h, links MLIR). Input: a problem key on the first line
// (a fixed matmul when it does not parse), the template text after it. A template
// either yields a knob space or a clear InvalidArgument; candidates built from its
// options either instantiate into a script whose knobs read back as the candidate,
// or are refused with InvalidArgument.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "strategies/candidate.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"

namespace {

using mtune::strategies::KnobSpace;
using mtune::strategies::KnobValues;

constexpr char kFallbackProblem[] = "matmul:m=96,n=80,k=64:f32";

[[noreturn]] void Fail(const std::string& what) {
  fprintf(stderr, "knob_space_fuzzer: %s\n", what.c_str());
  abort();
}

void ExpectRefusal(const absl::Status& status, const std::string& what) {
  if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument)
    Fail(what + ": refused with a code other than InvalidArgument: " + status.ToString());
}

// Instantiates `values`; when accepted, the script's knobs must read back as `values`.
void InstantiateAndReadBack(const std::string& text, const mtune::strategies::Problem& problem,
                            const KnobSpace& space, const KnobValues& values) {
  (void)mtune::strategies::MakeCandidate("fuzz", "", values);
  (void)space.SatisfiesConstraints(values);
  const absl::Status check = space.Check(values);
  ExpectRefusal(check, "Check");
  auto script = mtune::strategies::Instantiate(text, problem, values);
  ExpectRefusal(script.status(), "Instantiate");
  if (!script.ok()) return;
  if (!check.ok()) Fail("Instantiate accepted values that Check refused: " + check.ToString());
  auto again = mtune::strategies::ExtractKnobSpace(*script, problem);
  if (!again.ok()) Fail("instantiated script has no knob space: " + again.status().ToString());
  auto selected = again->Defaults();
  if (!selected || *selected != values) {
    std::string detail;
    for (const auto& [name, value] : values) {
      std::string got = "(no defaults)";
      if (selected) {
        const auto it = selected->find(name);
        got = it == selected->end() ? "(missing)" : it->second;
      }
      if (got != value) detail += " " + name + ": " + value + " read back as " + got + ";";
    }
    if (selected)
      for (const auto& [name, value] : *selected)
        if (!values.contains(name)) detail += " " + name + " = " + value + " was not instantiated;";
    Fail("instantiated script does not select the candidate's values:" + detail);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string key = input.substr(0, newline);
  const std::string text = newline == std::string::npos ? "" : input.substr(newline + 1);
  auto problem = mtune::strategies::ParseProblemKey(key);
  if (!problem.ok()) problem = mtune::strategies::ParseProblemKey(kFallbackProblem);
  if (!problem.ok()) Fail("fallback problem does not parse");

  auto space = mtune::strategies::ExtractKnobSpace(text, *problem);
  ExpectRefusal(space.status(), "ExtractKnobSpace");
  if (!space.ok()) return 0;
  (void)space->Size();
  for (const auto& knob : space->knobs)
    if (knob.options.empty()) Fail("knob '" + knob.name + "' accepted with no options");

  // Three candidates from the space (first, last and default options) and one
  // with a value that is no option.
  KnobValues first, last;
  for (const auto& knob : space->knobs) {
    first[knob.name] = knob.options.front();
    last[knob.name] = knob.options.back();
  }
  InstantiateAndReadBack(text, *problem, *space, first);
  InstantiateAndReadBack(text, *problem, *space, last);
  if (auto defaults = space->Defaults()) InstantiateAndReadBack(text, *problem, *space, *defaults);
  if (!space->knobs.empty()) {
    KnobValues wrong = first;
    wrong[space->knobs.front().name] = "not-an-option";
    if (mtune::strategies::Instantiate(text, *problem, wrong).ok())
      Fail("a value outside the options was instantiated");
    KnobValues extra = first;
    extra["no_such_knob_in_the_template"] = "1";
    if (mtune::strategies::Instantiate(text, *problem, extra).ok())
      Fail("a knob the template does not have was instantiated");
  }
  return 0;
}
