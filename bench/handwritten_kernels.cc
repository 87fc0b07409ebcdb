#include "bench/handwritten_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mtune::bench {
namespace {

#define MTUNE_AVX512 __attribute__((target("avx512f")))
// Tiles are inlined into their loops: with a call per 4 x 16 depthwise tile (36 FMAs)
// 58x58x64 ran at 66.8 GB/s, inlined at 72.5.
#define MTUNE_AVX512_TILE inline __attribute__((target("avx512f"), always_inline))
// The tile loops must be unrolled for the accumulators to live in registers; -O2
// (this project's build) leaves them rolled, with the tile on the stack (a 7 x 64
// conv tile ran at 46 GFLOP/s so, 170 unrolled).
#define MTUNE_UNROLL _Pragma("GCC unroll 32")

// Shapes and strides of a 2-D NHWC convolution, depthwise or not.
struct Conv2d {
  int64_t n, h, w, c, kh, kw, f, sh, sw, dh, dw, oh, ow;
};

Conv2d ShapeOf(const strategies::Problem& p, bool depthwise) {
  return {p.Dim("n"),  p.Dim("h"),  p.Dim("w"),  p.Dim("c"),  p.Dim("kh"),
          p.Dim("kw"), depthwise ? p.Dim("c") : p.Dim("f"),   p.Dim("sh"), p.Dim("sw"),
          p.Dim("dh"), p.Dim("dw"), p.Dim("oh"), p.Dim("ow")};
}

// --- depthwise ----------------------------------------------------------------

// TW outputs x 16 channels of one output row, any strides and dilations.
template <int TW>
MTUNE_AVX512_TILE void DepthwiseTile(const Conv2d& s, const float* in, const float* filter, float* out,
                                     int64_t n, int64_t oh, int64_t ow, int64_t c) {
  __m512 acc[TW];
  float* o = out + ((n * s.oh + oh) * s.ow + ow) * s.c + c;
  MTUNE_UNROLL
  for (int i = 0; i < TW; ++i) acc[i] = _mm512_loadu_ps(o + i * s.c);
  for (int64_t y = 0; y < s.kh; ++y) {
    const float* row = in + ((n * s.h + oh * s.sh + y * s.dh) * s.w + ow * s.sw) * s.c + c;
    for (int64_t x = 0; x < s.kw; ++x) {
      const __m512 tap = _mm512_loadu_ps(filter + (y * s.kw + x) * s.c + c);
      MTUNE_UNROLL
      for (int i = 0; i < TW; ++i)
        acc[i] = _mm512_fmadd_ps(_mm512_loadu_ps(row + (i * s.sw + x * s.dw) * s.c), tap, acc[i]);
    }
  }
  MTUNE_UNROLL
  for (int i = 0; i < TW; ++i) _mm512_storeu_ps(o + i * s.c, acc[i]);
}

// The same for a 3 x 3 filter with unit strides and dilations along w: a filter row's
// TW + 2 input vectors are loaded once and serve its 3 x TW FMAs, and the taps are
// unrolled, as in mtune's kernel of static shape.
// kC: the channel count where it is one the kernel is specialized for (0: s.c).
template <int TW, int kC>
MTUNE_AVX512_TILE void DepthwiseTile3x3(const Conv2d& s, const float* in, const float* filter, float* out,
                                        int64_t n, int64_t oh, int64_t ow, int64_t c) {
  const int64_t channels = kC > 0 ? kC : s.c;
  __m512 acc[TW];
  float* o = out + ((n * s.oh + oh) * s.ow + ow) * channels + c;
  MTUNE_UNROLL
  for (int i = 0; i < TW; ++i) acc[i] = _mm512_loadu_ps(o + i * channels);
  MTUNE_UNROLL
  for (int y = 0; y < 3; ++y) {
    const float* row = in + ((n * s.h + oh * s.sh + y * s.dh) * s.w + ow) * channels + c;
    __m512 x[TW + 2];
    MTUNE_UNROLL
    for (int j = 0; j < TW + 2; ++j) x[j] = _mm512_loadu_ps(row + j * channels);
    MTUNE_UNROLL
    for (int t = 0; t < 3; ++t) {
      const __m512 tap = _mm512_loadu_ps(filter + (y * 3 + t) * channels + c);
      MTUNE_UNROLL
      for (int i = 0; i < TW; ++i) acc[i] = _mm512_fmadd_ps(x[i + t], tap, acc[i]);
    }
  }
  MTUNE_UNROLL
  for (int i = 0; i < TW; ++i) _mm512_storeu_ps(o + i * channels, acc[i]);
}

constexpr int kDepthwiseTile = 4;
constexpr int64_t kDepthwiseStrip = 28;  // 7 tiles

template <bool k3x3, int kC>
MTUNE_AVX512 void DepthwiseStrips(const Conv2d& s, const float* in, const float* filter, float* out) {
  const int64_t channels = kC > 0 ? kC : s.c;
  for (int64_t strip = 0; strip < s.ow; strip += kDepthwiseStrip) {
    const int64_t end = std::min(s.ow, strip + kDepthwiseStrip);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t oh = 0; oh < s.oh; ++oh) {
        int64_t ow = strip;
        for (; ow + kDepthwiseTile <= end; ow += kDepthwiseTile)
          // Unrolled, as LLVM unrolls the channel loop of mtune's kernel of static
          // shape: the tiles' FMA chains are independent (76.5 -> 78.2 GB/s at
          // 58x58x64 before the channel count was made a constant).
          _Pragma("GCC unroll 4")
          for (int64_t c = 0; c < channels; c += 16)
            k3x3 ? DepthwiseTile3x3<kDepthwiseTile, kC>(s, in, filter, out, n, oh, ow, c)
                 : DepthwiseTile<kDepthwiseTile>(s, in, filter, out, n, oh, ow, c);
        for (; ow < end; ++ow)
          for (int64_t c = 0; c < channels; c += 16)
            k3x3 ? DepthwiseTile3x3<1, kC>(s, in, filter, out, n, oh, ow, c)
                 : DepthwiseTile<1>(s, in, filter, out, n, oh, ow, c);
      }
  }
}

// 3 x 3 filters with unit strides along w and 32 or 64 channels (the bench's rows) are
// specialized as mtune's kernels of static shape are: with the channel count a
// constant, 58x58x64 ran at 0.88x mtune's kernel, 0.81x without.
MTUNE_AVX512 void Depthwise(const Conv2d& s, const float* in, const float* filter, float* out) {
  if (!(s.kh == 3 && s.kw == 3 && s.sw == 1 && s.dw == 1))
    DepthwiseStrips<false, 0>(s, in, filter, out);
  else if (s.c == 64)
    DepthwiseStrips<true, 64>(s, in, filter, out);
  else if (s.c == 32)
    DepthwiseStrips<true, 32>(s, in, filter, out);
  else
    DepthwiseStrips<true, 0>(s, in, filter, out);
}

// --- convolution ----------------------------------------------------------------

constexpr int kConvTileOw = 7;
constexpr int kConvTileF = 64;  // 4 vectors
constexpr int64_t kConvTileC = 16;

// TW outputs x 64 output channels of one output row, over input channels [c0, c1).
template <int TW>
MTUNE_AVX512_TILE void ConvTile(const Conv2d& s, const float* in, const float* filter, float* out, int64_t n,
                           int64_t oh, int64_t ow, int64_t f, int64_t c0, int64_t c1) {
  constexpr int kV = kConvTileF / 16;
  __m512 acc[TW][kV];
  float* o = out + ((n * s.oh + oh) * s.ow + ow) * s.f + f;
  MTUNE_UNROLL
  for (int i = 0; i < TW; ++i)
    MTUNE_UNROLL
    for (int v = 0; v < kV; ++v) acc[i][v] = _mm512_loadu_ps(o + i * s.f + 16 * v);
  for (int64_t y = 0; y < s.kh; ++y)
    for (int64_t x = 0; x < s.kw; ++x) {
      const float* pixel = in + ((n * s.h + oh * s.sh + y * s.dh) * s.w + ow * s.sw + x * s.dw) * s.c;
      const float* taps = filter + (y * s.kw + x) * s.c * s.f + f;
      for (int64_t c = c0; c < c1; ++c) {
        __m512 weights[kV];
        MTUNE_UNROLL
        for (int v = 0; v < kV; ++v) weights[v] = _mm512_loadu_ps(taps + c * s.f + 16 * v);
        MTUNE_UNROLL
        for (int i = 0; i < TW; ++i) {
          const __m512 input = _mm512_set1_ps(pixel[i * s.sw * s.c + c]);
          MTUNE_UNROLL
          for (int v = 0; v < kV; ++v) acc[i][v] = _mm512_fmadd_ps(input, weights[v], acc[i][v]);
        }
      }
    }
  MTUNE_UNROLL
  for (int i = 0; i < TW; ++i)
    MTUNE_UNROLL
    for (int v = 0; v < kV; ++v) _mm512_storeu_ps(o + i * s.f + 16 * v, acc[i][v]);
}

MTUNE_AVX512 void Conv(const Conv2d& s, const float* in, const float* filter, float* out) {
  for (int64_t c0 = 0; c0 < s.c; c0 += kConvTileC) {
    const int64_t c1 = std::min(s.c, c0 + kConvTileC);
    for (int64_t f = 0; f < s.f; f += kConvTileF)
      for (int64_t n = 0; n < s.n; ++n)
        for (int64_t oh = 0; oh < s.oh; ++oh) {
          int64_t ow = 0;
          for (; ow + kConvTileOw <= s.ow; ow += kConvTileOw)
            ConvTile<kConvTileOw>(s, in, filter, out, n, oh, ow, f, c0, c1);
          for (; ow < s.ow; ++ow) ConvTile<1>(s, in, filter, out, n, oh, ow, f, c0, c1);
        }
  }
}

// --- column sum -----------------------------------------------------------------

// reduce_cols_2d in the nest of mtune's column sums (8 x 32 tiles, innerparallel):
// rows outer, kColumnSumRows at a time, each step adding them to 32 columns of the
// output (two vectors; the output row stays in the L1). At the right edge 16 columns,
// then single ones; at the bottom single rows. From 4 MiB of input, as mtune's tuned
// column sums since session 42 (prefetch_ahead = 2, mtune-prefetch-reads): each step
// first prefetches into the L2 the lines of the rows two steps later (its own rows
// where those would pass the last whole step).
constexpr int kColumnSumRows = 8;
constexpr int64_t kColumnSumPrefetchSteps = 2;
constexpr int64_t kColumnSumPrefetchFromBytes = int64_t{4} << 20;

template <int R>
MTUNE_AVX512_TILE void AddRowsInto(const float* rows, const float* ahead, int64_t n, float* out) {
  int64_t c = 0;
  for (; c + 32 <= n; c += 32) {
    if (ahead != nullptr) {
      MTUNE_UNROLL
      for (int i = 0; i < R; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(ahead + i * n + c), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(ahead + i * n + c + 16), _MM_HINT_T1);
      }
    }
    __m512 a = _mm512_loadu_ps(out + c), b = _mm512_loadu_ps(out + c + 16);
    MTUNE_UNROLL
    for (int i = 0; i < R; ++i) {
      a = _mm512_add_ps(a, _mm512_loadu_ps(rows + i * n + c));
      b = _mm512_add_ps(b, _mm512_loadu_ps(rows + i * n + c + 16));
    }
    _mm512_storeu_ps(out + c, a);
    _mm512_storeu_ps(out + c + 16, b);
  }
  for (; c + 16 <= n; c += 16) {
    __m512 a = _mm512_loadu_ps(out + c);
    MTUNE_UNROLL
    for (int i = 0; i < R; ++i) a = _mm512_add_ps(a, _mm512_loadu_ps(rows + i * n + c));
    _mm512_storeu_ps(out + c, a);
  }
  for (; c < n; ++c) {
    float sum = out[c];
    for (int i = 0; i < R; ++i) sum += rows[i * n + c];
    out[c] = sum;
  }
}

// The libraries timed beside it overwrite a reduction's output (the bench checks them
// from an output of NaNs), so it zeroes the output row first (16 KiB for 4096
// columns, next to the 64 MiB it reads), then adds into it as mtune's kernel does.
MTUNE_AVX512 void ColumnSum(const float* in, int64_t m, int64_t n, float* out) {
  std::fill_n(out, n, 0.0f);
  const bool prefetch = m * n * static_cast<int64_t>(sizeof(float)) >= kColumnSumPrefetchFromBytes;
  const int64_t distance = kColumnSumPrefetchSteps * kColumnSumRows;
  int64_t r = 0;
  for (; r + kColumnSumRows <= m; r += kColumnSumRows) {
    const int64_t later = r + distance + kColumnSumRows <= m ? r + distance : r;
    AddRowsInto<kColumnSumRows>(in + r * n, prefetch ? in + later * n : nullptr, n, out);
  }
  for (; r < m; ++r) AddRowsInto<1>(in + r * n, nullptr, n, out);
}

}  // namespace

absl::StatusOr<std::unique_ptr<FamilyKernel>> MakeHandWrittenKernel(const strategies::Problem& problem,
                                                                    const std::vector<const float*>& inputs,
                                                                    float* output) {
  const std::string& family = problem.family;
  const bool column_sum = family == "reduce_cols_2d";
  if (family != "depthwise_conv_2d_nhwc_hwc" && family != "conv_2d_nhwc_hwcf" && !column_sum)
    return absl::UnimplementedError(absl::StrCat("no hand-written kernel for ", family));
  if (problem.element_type != "f32" || inputs.size() != (column_sum ? 1u : 2u))
    return absl::UnimplementedError("the hand-written kernels are f32 only");
  if (!__builtin_cpu_supports("avx512f"))
    return absl::UnimplementedError("the hand-written kernels need AVX-512F, which this CPU lacks");
  if (column_sum) {
    const float* in = inputs[0];
    const int64_t m = problem.Dim("m"), n = problem.Dim("n");
    return MakeFunctionKernel("AVX-512 intrinsics: rows outer, 8 at a time, added to 32 output columns per step",
                              [=] {
                                ColumnSum(in, m, n, output);
                                return absl::OkStatus();
                              });
  }
  const bool depthwise = family == "depthwise_conv_2d_nhwc_hwc";
  const Conv2d shape = ShapeOf(problem, depthwise);
  const float* in = inputs[0];
  const float* filter = inputs[1];
  if (depthwise) {
    if (shape.c % 16 != 0)
      return absl::UnimplementedError(absl::StrCat("the hand-written depthwise kernel needs a multiple of "
                                                   "16 channels, not ", shape.c));
    return MakeFunctionKernel(
        "AVX-512 intrinsics: 28-wide column strips of 1 x 4 x 16 tiles, order (strip, n, oh, ow, c)",
        [=] {
          Depthwise(shape, in, filter, output);
          return absl::OkStatus();
        });
  }
  if (shape.f % kConvTileF != 0)
    return absl::UnimplementedError(absl::StrCat("the hand-written conv kernel needs a multiple of ",
                                                 kConvTileF, " output channels, not ", shape.f));
  return MakeFunctionKernel("AVX-512 intrinsics: c_f_n_oh_ow, 16-channel cache tiles, 1 x 7 x 64 tiles",
                            [=] {
                              Conv(shape, in, filter, output);
                              return absl::OkStatus();
                            });
}

}  // namespace mtune::bench
