// Compiles a payload with an instantiated strategy to host machine code, in process:
// parse -> transform interpreter -> lower to LLVM -> JIT at O3 for the host CPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/mtune.pb.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mlir {
class ExecutionEngine;
class MLIRContext;
}  // namespace mlir

namespace mtune::worker {

// Wall time of each compile stage, seconds.
struct CompileTimes {
  double parse_s = 0;
  double transform_s = 0;
  double lower_s = 0;
  double jit_s = 0;
  double total() const { return parse_s + transform_s + lower_s + jit_s; }
};

// Why a compile failed, as a result status: INVALID_CANDIDATE when the strategy
// did not apply, COMPILE_ERROR when lowering or code generation failed.
struct CompileFailure {
  mtune::v1::ResultStatus status;
  std::string error;
};

// Rank-2 memref descriptor as MLIR's C interface lays it out.
struct MemRef2D {
  float* allocated;
  float* aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
};

// A compiled kernel; owns its JIT'd code.
class JitKernel {
 public:
  ~JitKernel();
  JitKernel(const JitKernel&) = delete;
  JitKernel& operator=(const JitKernel&) = delete;

  // Compiles `payload` with `script` applied. `failure` describes any error.
  static std::unique_ptr<JitKernel> Compile(const std::string& payload, const std::string& script,
                                            CompileTimes* times, CompileFailure* failure);

  // Calls the kernel on three rank-2 operands (inputs first, output last).
  void Call(MemRef2D* a, MemRef2D* b, MemRef2D* c) const {
    reinterpret_cast<void (*)(void*, void*, void*)>(fn_)(a, b, c);
  }
  // Calls the kernel with one memref descriptor per operand (inputs first, output
  // last), each laid out as MLIR's C interface expects. 1 to 4 operands.
  void Call(const std::vector<void*>& descriptors) const;

  // The LLVM CPU name code is generated for (the host's).
  static std::string HostCpuName();
  // The host's LLVM target triple.
  static std::string HostTriple();
  // The host's LLVM feature string ("+avx512f,...", enabled features only, sorted).
  static std::string HostFeatures();
  // The vector registers of the host (strategies::VectorRegistersOf its features).
  static absl::StatusOr<strategies::VectorRegisters> HostVectorRegisters();

 private:
  using Fn = void (*)();
  JitKernel() = default;
  std::unique_ptr<mlir::MLIRContext> context_;
  // Errors LLVM's code generator reported (it runs inside engine_; declared first,
  // so it outlives the engine's LLVM context, whose diagnostic handler writes here).
  std::string codegen_errors_;
  std::unique_ptr<mlir::ExecutionEngine> engine_;
  Fn fn_ = nullptr;
};

}  // namespace mtune::worker
