#include "bench/conv_baselines.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace mtune::bench {
namespace {

using Clock = std::chrono::steady_clock;
using dnnl::memory;
using Tag = memory::format_tag;

int64_t OutExtent(int64_t in, int64_t k, int64_t s, int64_t d) {
  return (in - d * (k - 1) - 1) / s + 1;
}

void Fill(std::vector<float>& v, uint32_t seed) {
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
}

}  // namespace

absl::StatusOr<double> TimeOneDnnConvolution(const ConvShape& s, double min_time_s) {
  if (s.f64) return absl::UnimplementedError("oneDNN has no f64 CPU convolution");
  // oneDNN's thread count is the calling thread's OpenMP setting (see baselines.cc).
  omp_set_num_threads(1);
  const int64_t oh = OutExtent(s.h, s.kh, s.sh, s.dh), ow = OutExtent(s.w, s.kw, s.sw, s.dw);
  const int64_t f = s.depthwise ? s.c : s.f;
  if (oh < 1 || ow < 1) return absl::InvalidArgumentError("the window does not fit the input");
  try {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    memory::dims src_dims, wei_dims, dst_dims, strides, dilates, pad;
    Tag src_tag, wei_tag;
    // oneDNN dilation counts the skipped elements: mtune's d is oneDNN's d - 1.
    if (s.one_d) {
      src_dims = {s.n, s.c, s.w};
      dst_dims = {s.n, f, ow};
      wei_dims = s.depthwise ? memory::dims{s.c, 1, 1, s.kw} : memory::dims{f, s.c, s.kw};
      wei_tag = s.depthwise ? Tag::wigo : Tag::wio;
      src_tag = Tag::nwc;
      strides = {s.sw};
      dilates = {s.dw - 1};
      pad = {0};
    } else {
      src_dims = {s.n, s.c, s.h, s.w};
      dst_dims = {s.n, f, oh, ow};
      wei_dims = s.depthwise ? memory::dims{s.c, 1, 1, s.kh, s.kw}
                             : memory::dims{f, s.c, s.kh, s.kw};
      wei_tag = s.depthwise ? Tag::hwigo : Tag::hwio;
      src_tag = Tag::nhwc;
      strides = {s.sh, s.sw};
      dilates = {s.dh - 1, s.dw - 1};
      pad = {0, 0};
    }
    const auto f32 = memory::data_type::f32;
    memory::desc src_md(src_dims, f32, src_tag), dst_md(dst_dims, f32, src_tag),
        wei_md(wei_dims, f32, wei_tag), wei_any(wei_dims, f32, Tag::any);
    // Activations in the caller's channel-last layout; the filter in whatever layout
    // the primitive prefers (reordered once, untimed, as for inference weights).
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, src_md, wei_any,
                                         dst_md, strides, dilates, pad, pad);
    dnnl::convolution_forward::primitive_desc pd(desc, engine);
    std::vector<float> src(src_md.get_size() / sizeof(float)),
        wei(wei_md.get_size() / sizeof(float)), dst(dst_md.get_size() / sizeof(float));
    Fill(src, 1);
    Fill(wei, 2);
    memory src_m(src_md, engine, src.data()), wei_m(wei_md, engine, wei.data()),
        dst_m(dst_md, engine, dst.data());
    memory wei_used = wei_m;
    if (pd.weights_desc() != wei_md) {
      wei_used = memory(pd.weights_desc(), engine);
      dnnl::reorder(wei_m, wei_used).execute(stream, wei_m, wei_used);
    }
    dnnl::convolution_forward conv(pd);
    auto run = [&] {
      conv.execute(stream, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_used},
                            {DNNL_ARG_DST, dst_m}});
      stream.wait();
    };
    run();
    run();
    std::vector<double> times;
    const auto start = Clock::now();
    while (times.size() < 3 ||
           std::chrono::duration<double>(Clock::now() - start).count() < min_time_s) {
      const auto t0 = Clock::now();
      run();
      times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return times[times.size() / 2];
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN convolution: ", e.what()));
  }
}

}  // namespace mtune::bench
