#include "strategies/figure.h"

namespace mtune::strategies {

bool MeasuredInGbps(const Problem& problem) { return !(problem.Flops() > 0); }

std::string_view FigureUnit(const Problem& problem) {
  return MeasuredInGbps(problem) ? "GB/s" : "GFLOP/s";
}

double FigureOf(const Problem& problem, const mtune::v1::Result& result) {
  if (result.status() != mtune::v1::RESULT_STATUS_OK) return 0.0;
  return MeasuredInGbps(problem) ? result.gbps() : result.gflops();
}

}  // namespace mtune::strategies
