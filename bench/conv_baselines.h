// Single-threaded oneDNN convolution (its convolution primitive, NHWC / NWC with
// channel-last filters) for the convolution families, timed like the GEMM baselines.
#ifndef MTUNE_BENCH_CONV_BASELINES_H_
#define MTUNE_BENCH_CONV_BASELINES_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace mtune::bench {

// One convolution in mtune's problem terms; 1-D when h == kh == 1 (sh = dh = 1).
// Depthwise when `depthwise` (then f == c, one filter per channel).
struct ConvShape {
  int64_t n = 1, h = 1, w = 1, c = 1, kh = 1, kw = 1, f = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  bool depthwise = false;
  bool one_d = false;
  bool f64 = false;
};

// Median time of one oneDNN forward convolution (direct algorithm, no bias) on the
// calling thread: warm-up, then calls until `min_time_s` (at least 3).
// Unimplemented for f64 (oneDNN has no f64 CPU convolution).
absl::StatusOr<double> TimeOneDnnConvolution(const ConvShape& shape, double min_time_s);

}  // namespace mtune::bench

#endif  // MTUNE_BENCH_CONV_BASELINES_H_
