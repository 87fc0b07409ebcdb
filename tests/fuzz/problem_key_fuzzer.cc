// libFuzzer target: the problem-key parser (strategies/problem.h, no MLIR). Any
// byte string must either parse into a problem whose figures are finite and whose
// canonical key parses back to itself, or be refused with InvalidArgument.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "strategies/problem.h"

namespace {

[[noreturn]] void Fail(const std::string& what, const std::string& key) {
  fprintf(stderr, "problem_key_fuzzer: %s for key '%s'\n", what.c_str(), key.c_str());
  abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string key(reinterpret_cast<const char*>(data), size);
  auto problem = mtune::strategies::ParseProblemKey(key);
  if (!problem.ok()) {
    if (problem.status().code() != absl::StatusCode::kInvalidArgument)
      Fail("non-InvalidArgument refusal: " + problem.status().ToString(), key);
    return 0;
  }
  // The canonical key is a fixed point of parse + print.
  const std::string canonical = problem->Key();
  auto again = mtune::strategies::ParseProblemKey(canonical);
  if (!again.ok()) Fail("canonical key does not parse: " + again.status().ToString(), key);
  if (again->Key() != canonical) Fail("canonical key changes on re-parse", key);

  // Every derived figure of an accepted problem is finite and positive: they feed
  // the roofline and the timeouts, so an overflow here would mislead the service.
  if (!(std::isfinite(problem->Flops()) && problem->Flops() >= 0)) Fail("bad flop count", key);
  if (!(std::isfinite(problem->CompulsoryBytes()) && problem->CompulsoryBytes() > 0))
    Fail("bad compulsory bytes", key);
  if (problem->FootprintBytes() == 0) Fail("zero footprint", key);
  if (problem->TermsPerOutput() <= 0) Fail("no terms per output", key);
  for (const auto& operand : problem->Operands()) {
    if (operand.Elements() <= 0) Fail("operand " + operand.name + " has no elements", key);
    for (int64_t d : operand.shape)
      if (d <= 0) Fail("operand " + operand.name + " has a non-positive extent", key);
  }
  for (const auto& [name, value] : problem->dims)
    if (value <= 0 || problem->Dim(name) != value) Fail("dimension " + name + " lost", key);
  (void)problem->Dim("oh");
  (void)problem->Dim("ow");
  (void)problem->AccumulatorType();
  return 0;
}
