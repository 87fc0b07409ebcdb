// Compile, verify and time one candidate: the body of a task, run inside the sandbox.
#pragma once

#include <memory>
#include <string>

#include "proto/mtune.pb.h"
#include "worker/kernel_operands.h"
#include "worker/timing.h"

namespace mtune::worker {

// Measures candidates on the calling thread (pin it first). Keeps the operands and
// reference of the last problem, since consecutive tasks usually share it.
class Measurer {
 public:
  Measurer();
  ~Measurer();

  // A result for every outcome: a failed candidate is a result, not an error.
  // `calibration` supplies the roofline the result is normalized against.
  // `test_inject_fault` (test only, see fault_injection.h) raises that fault where
  // the kernel runs.
  mtune::v1::Result Measure(const mtune::v1::Task& task, const mtune::v1::Calibration& calibration,
                            const std::string& test_inject_fault = "");

 private:
  std::string operands_key_;
  std::unique_ptr<KernelOperands> operands_;
};

}  // namespace mtune::worker
