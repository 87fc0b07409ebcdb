// The figure of merit a problem's results are compared by. Searches maximize it,
// progress reports show it: GFLOP/s where the kernel computes, and GB/s of its
// compulsory traffic where it only moves data (transpose_2d and copy_2d count no
// FLOPs, so every one of their results has 0 GFLOP/s).
#pragma once

#include <string_view>

#include "proto/mtune.pb.h"
#include "strategies/problem.h"

namespace mtune::strategies {

// Whether `problem` is measured in GB/s rather than GFLOP/s.
bool MeasuredInGbps(const Problem& problem);
// "GFLOP/s" or "GB/s".
std::string_view FigureUnit(const Problem& problem);
// The result's GFLOP/s or GB/s by the rule above; 0 for a result that is not OK.
double FigureOf(const Problem& problem, const mtune::v1::Result& result);

}  // namespace mtune::strategies
