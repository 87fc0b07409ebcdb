// Hand-written AVX-512 loops for the families whose goals mtune's kernels miss (the
// two convolutions, session 28; column sums, session 39): yardsticks, not libraries.
// Each is the loop nest of mtune's best kernel of its family written with intrinsics
// and compiled by the host compiler, so that a row says, in the same rounds, what that
// loop reaches on this core without MLIR in between:
//   - depthwise_conv_2d_nhwc_hwc: 28-wide column strips (strip_ow) of tiles of 4
//     outputs x 16 channels, in the order (strip, n, oh, ow, c), the taps inside
//     (58x58x64's best, session 28); for a 3 x 3 filter with unit strides and
//     dilations along w, the 6 input vectors of a filter row are loaded once for its
//     12 FMAs, as the vectorized 1-D convolution of mtune's template does;
//   - conv_2d_nhwc_hwcf: the c_f_n_oh_ow nest: 16-channel cache tiles, 64-wide f
//     tiles, then 7 outputs x 64 f accumulators, taps and channels inside (7 x 64 is
//     the tile mtune's 9x9x512 kernel runs);
//   - reduce_cols_2d: rows outer, 8 at a time, added to 32 output columns per step
//     (mtune's default 8 x 32 tiles), from 4 MiB of input prefetching into the L2
//     the rows two steps ahead (mtune's prefetch_ahead = 2, session 42).
// The convolutions add into the output, like the linalg ops; the column sum overwrites
// it, like the libraries beside it.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/family_baselines.h"
#include "strategies/problem.h"

namespace mtune::bench {

// The hand-written kernel of `problem` on `inputs` (input, filter) and `output`.
// Unimplemented unless the problem is f32, the CPU has AVX-512F, and it is a
// depthwise_conv_2d_nhwc_hwc with a multiple of 16 channels, a conv_2d_nhwc_hwcf
// with a multiple of 64 output channels, or a reduce_cols_2d (`inputs`: its input).
absl::StatusOr<std::unique_ptr<FamilyKernel>> MakeHandWrittenKernel(const strategies::Problem& problem,
                                                                    const std::vector<const float*>& inputs,
                                                                    float* output);

}  // namespace mtune::bench
