#include "strategies/kernel_estimate.h"

#include "strategies/register_tile_estimate.h"
#include "strategies/row_sum_estimate.h"
#include "strategies/transpose_estimate.h"

namespace mtune::strategies {
namespace {

bool IsRowSum(std::string_view template_name, const Problem& problem) {
  return template_name == "reduce_tiled" && problem.family == "reduce_rows_2d";
}

bool IsTranspose(std::string_view template_name, const Problem& problem) {
  return template_name == "copy_tiled" && problem.family == "transpose_2d";
}

}  // namespace

bool HasKernelEstimate(std::string_view template_name, const Problem& problem) {
  return HasRegisterTileEstimate(template_name) || IsRowSum(template_name, problem) ||
         IsTranspose(template_name, problem);
}

std::optional<double> KernelEstimate(std::string_view template_name, const Problem& problem,
                                     const KnobValues& values, const VectorRegisters& registers,
                                     int64_t l2_bytes) {
  if (IsRowSum(template_name, problem)) return RowSumEstimate(problem, values, registers, l2_bytes);
  if (IsTranspose(template_name, problem)) return TransposeEstimate(problem, values, registers, l2_bytes);
  return RegisterTileEstimate(template_name, problem, values, registers);
}

}  // namespace mtune::strategies
