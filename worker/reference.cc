#include "worker/reference.h"

#include <cmath>
#include <functional>
#include <vector>

namespace mtune::worker {
namespace {

// Inputs as doubles, so every family's loop reads one type.
std::vector<double> AsDoubles(const TypedBuffer& buffer) {
  std::vector<double> values(buffer.elements());
  for (int64_t i = 0; i < buffer.elements(); ++i) values[i] = buffer.Get(i);
  return values;
}

struct Accumulator {
  std::vector<double>& want;
  std::vector<double>& scale;
  void Add(int64_t out, double term) {
    want[out] += term;
    scale[out] += std::fabs(term);
  }
};

void Matmul(const strategies::Problem& p, const std::vector<double>& a,
            const std::vector<double>& b, Accumulator acc) {
  const int64_t batches = p.family == "batch_matmul" ? p.Dim("b") : 1;
  const int64_t m = p.Dim("m"), n = p.Dim("n"), k = p.Dim("k");
  const bool at = p.family == "matmul_transpose_a", bt = p.family == "matmul_transpose_b";
  for (int64_t batch = 0; batch < batches; ++batch) {
    const double* A = &a[batch * m * k];
    const double* B = &b[batch * k * n];
    const int64_t out0 = batch * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t q = 0; q < k; ++q) {
        const double av = at ? A[q * m + i] : A[i * k + q];
        for (int64_t j = 0; j < n; ++j) acc.Add(out0 + i * n + j, av * (bt ? B[j * k + q] : B[q * n + j]));
      }
  }
}

// 1-D convolutions are 2-D ones with h = kh = oh = 1.
void Conv(const strategies::Problem& p, bool depthwise, const std::vector<double>& in,
          const std::vector<double>& filter, int64_t oh, int64_t ow, Accumulator acc) {
  const bool two_d = p.Dim("h") > 0;
  const int64_t n = p.Dim("n"), c = p.Dim("c"), f = depthwise ? c : p.Dim("f");
  const int64_t h = two_d ? p.Dim("h") : 1, w = p.Dim("w");
  const int64_t kh = two_d ? p.Dim("kh") : 1, kw = p.Dim("kw");
  const int64_t sh = two_d ? p.Dim("sh") : 1, sw = p.Dim("sw");
  const int64_t dh = two_d ? p.Dim("dh") : 1, dw = p.Dim("dw");
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t r = 0; r < kh; ++r)
          for (int64_t s = 0; s < kw; ++s) {
            const int64_t iy = y * sh + r * dh, ix = x * sw + s * dw;
            const double* pixel = &in[((b * h + iy) * w + ix) * c];
            const int64_t out_pixel = ((b * oh + y) * ow + x) * f;
            if (depthwise) {
              const double* taps = &filter[(r * kw + s) * c];
              for (int64_t ch = 0; ch < c; ++ch) acc.Add(out_pixel + ch, pixel[ch] * taps[ch]);
            } else {
              const double* taps = &filter[(r * kw + s) * c * f];
              for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t o = 0; o < f; ++o) acc.Add(out_pixel + o, pixel[ch] * taps[ch * f + o]);
            }
          }
}

}  // namespace

void ComputeReference(const strategies::Problem& p, KernelOperands& ops) {
  const std::vector<int64_t> out_shape = ops.buffers.back().shape().shape;
  const int64_t outputs = ops.buffers.back().elements();
  ops.want.assign(outputs, 0.0);
  ops.scale.assign(outputs, 0.0);
  Accumulator acc{ops.want, ops.scale};
  const std::vector<double> in0 = AsDoubles(ops.buffers[0]);
  const std::string& family = p.family;
  if (family == "matmul" || family == "matmul_transpose_a" || family == "matmul_transpose_b" ||
      family == "batch_matmul") {
    Matmul(p, in0, AsDoubles(ops.buffers[1]), acc);
  } else if (family == "conv_1d_nwc_wcf" || family == "depthwise_conv_1d_nwc_wc") {
    Conv(p, family.starts_with("depthwise"), in0, AsDoubles(ops.buffers[1]), 1, out_shape[1], acc);
  } else if (family == "conv_2d_nhwc_hwcf" || family == "depthwise_conv_2d_nhwc_hwc") {
    Conv(p, family.starts_with("depthwise"), in0, AsDoubles(ops.buffers[1]), out_shape[1],
         out_shape[2], acc);
  } else {
    const int64_t m = p.Dim("m"), n = p.Dim("n");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double x = in0[i * n + j];
        if (family == "transpose_2d") acc.Add(j * m + i, x);
        else if (family == "reduce_rows_2d") acc.Add(i, x);
        else if (family == "reduce_cols_2d") acc.Add(j, x);
        else acc.Add(i * n + j, x);  // copy_2d
      }
  }
}

}  // namespace mtune::worker
