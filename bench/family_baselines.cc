#include "bench/family_baselines.h"
#include "bench/handwritten_kernels.h"

#include <omp.h>

#include <Eigen/Core>
#include <functional>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.h"
#include "oneapi/dnnl/dnnl.hpp"

// Debian's oneDNN 2.6 uses the OpenMP CPU runtime: its thread count is the calling
// thread's OpenMP setting (see baselines.cc).
static_assert(DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP,
              "oneDNN is not built with OpenMP: limit its threads another way");

namespace mtune::bench {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrix = Eigen::Map<const RowMajor>;
// Rows of `cols` elements, `stride` elements apart (strided windows of an NWC row).
using StridedRows = Eigen::Map<const RowMajor, 0, Eigen::OuterStride<>>;
// A contiguous row of C floats (a filter tap, or one input pixel's channels).
using FilterRow = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;
using dnnl::memory;

// Shapes every implementation reads from the problem.
struct Dims {
  explicit Dims(const strategies::Problem& p) : p(p) {}
  int64_t operator()(const char* name) const { return p.Dim(name); }
  const strategies::Problem& p;
};

bool IsMatmul(const std::string& family) {
  return family == "matmul" || family == "matmul_transpose_a" || family == "matmul_transpose_b";
}

// --- oneDNN -------------------------------------------------------------------

// Engine, stream and the primitive with its arguments; omp threads set per call
// because omp_set_num_threads only affects the calling thread.
struct DnnlState {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::vector<memory> keep;  // memories the arguments refer to
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
};

absl::Status Execute(DnnlState& state) {
  omp_set_num_threads(1);
  try {
    state.primitive.execute(state.stream, state.args);
    state.stream.wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
  return absl::OkStatus();
}

memory::desc Plain(const memory::dims& dims, memory::format_tag tag) {
  return memory::desc(dims, memory::data_type::f32, tag);
}

memory::desc Strided(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

// Convolution (plain or grouped) with src/dst in the problem's channels-last layout
// and weights either in the given user layout or in the primitive's own (reordered
// once here, outside any timing). dst += conv (a sum post-op), as the linalg
// convolution accumulates into its output.
absl::StatusOr<std::unique_ptr<FamilyKernel>> DnnlConvolution(
    const memory::desc& src_md, const memory::desc& user_weights_md, const memory::desc& dst_md,
    const memory::dims& strides, const memory::dims& dilations, const float* src,
    const float* weights, float* dst, bool plain_weights) {
  // oneDNN plans a primitive for the threads OpenMP offers when it is created: one,
  // or the first primitive of the process is planned for every core and then run on
  // one (a depthwise 2-D one ran at 0.3 GB/s instead of 37).
  omp_set_num_threads(1);
  auto state = std::make_shared<DnnlState>();
  memory::dims padding(strides.size(), 0);
  memory::dims dnnl_dilations;  // oneDNN counts dilation from 0
  for (int64_t d : dilations) dnnl_dilations.push_back(d - 1);
  const memory::desc weights_any(user_weights_md.dims(), memory::data_type::f32,
                                 memory::format_tag::any);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
      plain_weights ? user_weights_md : weights_any, dst_md, strides, dnnl_dilations, padding,
      padding);
  dnnl::post_ops accumulate;
  accumulate.append_sum(1.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(accumulate);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, state->engine);
  memory src_mem(src_md, state->engine, const_cast<float*>(src));
  memory dst_mem(dst_md, state->engine, dst);
  memory user_weights(user_weights_md, state->engine, const_cast<float*>(weights));
  memory weights_mem = user_weights;
  if (pd.weights_desc() != user_weights_md) {
    weights_mem = memory(pd.weights_desc(), state->engine);
    omp_set_num_threads(1);
    dnnl::reorder(user_weights, weights_mem).execute(state->stream, user_weights, weights_mem);
    state->stream.wait();
  }
  state->primitive = dnnl::convolution_forward(pd);
  state->args = {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, weights_mem}, {DNNL_ARG_DST, dst_mem}};
  state->keep = {src_mem, dst_mem, user_weights, weights_mem};
  const bool reordered = pd.weights_desc() != user_weights_md;
  return MakeFunctionKernel(absl::StrCat("convolution_forward ", pd.impl_info_str(),
                             reordered ? ", weights reordered once" : ", plain weights"),
                [state] { return Execute(*state); });
}

// oneDNN's matmul primitive computing C += A B (a sum post-op, as the linalg ops
// accumulate) on the caller's buffers, described by `label` and the kernel it picked.
std::unique_ptr<FamilyKernel> DnnlAccumulatingMatmul(const memory::desc& a_md, const memory::desc& b_md,
                                                     const memory::desc& c_md, const float* a,
                                                     const float* b, float* c, absl::string_view label) {
  auto state = std::make_shared<DnnlState>();
  dnnl::post_ops accumulate;
  accumulate.append_sum(1.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(accumulate);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, state->engine);
  memory a_mem(a_md, state->engine, const_cast<float*>(a));
  memory b_mem(b_md, state->engine, const_cast<float*>(b));
  memory c_mem(c_md, state->engine, c);
  state->primitive = dnnl::matmul(pd);
  state->args = {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}};
  state->keep = {a_mem, b_mem, c_mem};
  return MakeFunctionKernel(absl::StrCat(label, pd.impl_info_str()), [state] { return Execute(*state); });
}

// A matmul with bf16 inputs and f32 accumulation (C += A B, C f32): oneDNN's matmul
// primitive, which picks its own kernel for the CPU (AMX or AVX512-BF16 where there
// are), on the operands as they lie (the transposed layouts as strides).
absl::StatusOr<std::unique_ptr<FamilyKernel>> OneDnnBf16Matmul(const strategies::Problem& p,
                                                               const std::vector<const float*>& in,
                                                               float* out) {
  if (!IsMatmul(p.family))
    return absl::UnimplementedError(absl::StrCat("no bf16 oneDNN baseline for ", p.family));
  omp_set_num_threads(1);
  const Dims d(p);
  const int64_t m = d("m"), n = d("n"), k = d("k");
  using tag = memory::format_tag;
  const tag a_tag = p.family == "matmul_transpose_a" ? tag::ba : tag::ab;
  const tag b_tag = p.family == "matmul_transpose_b" ? tag::ba : tag::ab;
  // The inputs are bf16 data behind the float pointers the harness passes.
  return DnnlAccumulatingMatmul(memory::desc({m, k}, memory::data_type::bf16, a_tag),
                                memory::desc({k, n}, memory::data_type::bf16, b_tag),
                                memory::desc({m, n}, memory::data_type::f32, tag::ab), in[0], in[1], out,
                                "matmul bf16 ");
}

absl::StatusOr<std::unique_ptr<FamilyKernel>> MakeOneDnn(const strategies::Problem& p,
                                                         const std::vector<const float*>& in,
                                                         float* out,
                                                         const FamilyBaselineOptions& options) {
  const Dims d(p);
  const std::string& f = p.family;
  if (IsMatmul(f)) {
    const bool ta = f == "matmul_transpose_a", tb = f == "matmul_transpose_b";
    const int64_t m = d("m"), n = d("n"), k = d("k");
    const float* a = in[0];
    const float* b = in[1];
    const char trans_a = ta ? 'T' : 'N', trans_b = tb ? 'T' : 'N';
    return MakeFunctionKernel(absl::StrCat("dnnl_sgemm ", std::string(1, trans_a), std::string(1, trans_b)),
                  [=]() -> absl::Status {
                    omp_set_num_threads(1);
                    const dnnl_status_t status =
                        dnnl_sgemm(trans_a, trans_b, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n,
                                   1.0f, out, n);
                    if (status != dnnl_success)
                      return absl::InternalError(absl::StrCat("dnnl_sgemm failed: ", status));
                    return absl::OkStatus();
                  });
  }
  using tag = memory::format_tag;
  // A batch of matmuls: oneDNN's matmul primitive on 3-D row-major tensors (how a
  // framework calls it), C += A B through a sum post-op like the convolutions.
  if (f == "batch_matmul") {
    omp_set_num_threads(1);
    const int64_t b = d("b"), m = d("m"), n = d("n"), k = d("k");
    return DnnlAccumulatingMatmul(Plain({b, m, k}, tag::abc), Plain({b, k, n}, tag::abc),
                                  Plain({b, m, n}, tag::abc), in[0], in[1], out, "matmul ");
  }
  if (f == "conv_1d_nwc_wcf") {
    const int64_t n = d("n"), w = d("w"), c = d("c"), kw = d("kw"), fo = d("f"), ow = d("ow");
    return DnnlConvolution(Plain({n, c, w}, tag::nwc), Plain({fo, c, kw}, tag::wio),
                           Plain({n, fo, ow}, tag::nwc), {d("sw")}, {d("dw")}, in[0], in[1], out,
                           options.onednn_plain_weights);
  }
  if (f == "conv_2d_nhwc_hwcf") {
    const int64_t n = d("n"), h = d("h"), w = d("w"), c = d("c"), kh = d("kh"), kw = d("kw"),
                  fo = d("f"), oh = d("oh"), ow = d("ow");
    return DnnlConvolution(Plain({n, c, h, w}, tag::nhwc), Plain({fo, c, kh, kw}, tag::hwio),
                           Plain({n, fo, oh, ow}, tag::nhwc), {d("sh"), d("sw")},
                           {d("dh"), d("dw")}, in[0], in[1], out, options.onednn_plain_weights);
  }
  // Depthwise = grouped convolution with one input and one output channel per group;
  // the filter [KW, C] / [KH, KW, C] is described by strides (dims g, o, i, spatial).
  if (f == "depthwise_conv_1d_nwc_wc") {
    const int64_t n = d("n"), w = d("w"), c = d("c"), kw = d("kw"), ow = d("ow");
    return DnnlConvolution(Plain({n, c, w}, tag::nwc), Strided({c, 1, 1, kw}, {1, c * kw, c * kw, c}),
                           Plain({n, c, ow}, tag::nwc), {d("sw")}, {d("dw")}, in[0], in[1], out,
                           options.onednn_plain_weights);
  }
  if (f == "depthwise_conv_2d_nhwc_hwc") {
    const int64_t n = d("n"), h = d("h"), w = d("w"), c = d("c"), kh = d("kh"), kw = d("kw"),
                  oh = d("oh"), ow = d("ow");
    return DnnlConvolution(
        Plain({n, c, h, w}, tag::nhwc),
        Strided({c, 1, 1, kh, kw}, {1, c * kh * kw, c * kh * kw, kw * c, c}),
        Plain({n, c, oh, ow}, tag::nhwc), {d("sh"), d("sw")}, {d("dh"), d("dw")}, in[0], in[1],
        out, options.onednn_plain_weights);
  }
  if (f == "reduce_rows_2d" || f == "reduce_cols_2d") {
    const int64_t m = d("m"), n = d("n");
    const bool rows = f == "reduce_rows_2d";
    auto state = std::make_shared<DnnlState>();
    const memory::desc src_md = Plain({m, n}, tag::ab);
    const memory::desc dst_md = Plain(rows ? memory::dims{m, 1} : memory::dims{1, n}, tag::ab);
    dnnl::reduction::primitive_desc pd(
        dnnl::reduction::desc(dnnl::algorithm::reduction_sum, src_md, dst_md, 0.f, 0.f),
        state->engine);
    memory src(src_md, state->engine, const_cast<float*>(in[0]));
    memory dst(dst_md, state->engine, out);
    state->primitive = dnnl::reduction(pd);
    state->args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    return MakeFunctionKernel(absl::StrCat("reduction_sum ", pd.impl_info_str()),
                  [state] { return Execute(*state); });
  }
  if (f == "copy_2d" || f == "transpose_2d") {
    const int64_t m = d("m"), n = d("n");
    auto state = std::make_shared<DnnlState>();
    // Transposing = reordering the m x n matrix into column-major ("ba") storage,
    // which is the n x m row-major output.
    memory src(Plain({m, n}, tag::ab), state->engine, const_cast<float*>(in[0]));
    memory dst(Plain({m, n}, f == "copy_2d" ? tag::ab : tag::ba), state->engine, out);
    dnnl::reorder::primitive_desc pd(src, dst);
    state->primitive = dnnl::reorder(pd);
    state->args = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
    return MakeFunctionKernel(absl::StrCat("reorder ", f == "copy_2d" ? "ab->ab " : "ab->ba ",
                               pd.impl_info_str()),
                  [state] { return Execute(*state); });
  }
  return absl::UnimplementedError(absl::StrCat("no oneDNN baseline for ", f));
}

// --- Eigen --------------------------------------------------------------------

absl::Status EigenDone() { return absl::OkStatus(); }

absl::StatusOr<std::unique_ptr<FamilyKernel>> MakeEigen(const strategies::Problem& p,
                                                        const std::vector<const float*>& in,
                                                        float* out) {
  const Dims d(p);
  const std::string& f = p.family;
  const float* x = in[0];
  if (IsMatmul(f)) {
    const int64_t m = d("m"), n = d("n"), k = d("k");
    const float* b = in[1];
    if (f == "matmul")
      return MakeFunctionKernel("Map product A*B", [=] {
        Eigen::Map<RowMajor>(out, m, n).noalias() += ConstMatrix(x, m, k) * ConstMatrix(b, k, n);
        return EigenDone();
      });
    if (f == "matmul_transpose_a")
      return MakeFunctionKernel("Map product A^T*B", [=] {
        Eigen::Map<RowMajor>(out, m, n).noalias() +=
            ConstMatrix(x, k, m).transpose() * ConstMatrix(b, k, n);
        return EigenDone();
      });
    return MakeFunctionKernel("Map product A*B^T", [=] {
      Eigen::Map<RowMajor>(out, m, n).noalias() +=
          ConstMatrix(x, m, k) * ConstMatrix(b, n, k).transpose();
      return EigenDone();
    });
  }
  if (f == "batch_matmul") {
    const int64_t batches = d("b"), m = d("m"), n = d("n"), k = d("k");
    const float* b = in[1];
    return MakeFunctionKernel("Map product A*B per batch", [=] {
      for (int64_t i = 0; i < batches; ++i)
        Eigen::Map<RowMajor>(out + i * m * n, m, n).noalias() +=
            ConstMatrix(x + i * m * k, m, k) * ConstMatrix(b + i * k * n, k, n);
      return EigenDone();
    });
  }
  // Convolutions as a sum over filter taps of strided-window products: for one output
  // row, tap (kh, kw) multiplies the OW x C input rows it reads (stride sw*C apart) by
  // the tap's C x F filter slice. Plain Eigen Core; the Tensor module's convolve has no
  // channel contraction.
  if (f == "conv_1d_nwc_wcf" || f == "conv_2d_nhwc_hwcf") {
    const bool two_d = f == "conv_2d_nhwc_hwcf";
    const int64_t n = d("n"), h = two_d ? d("h") : 1, w = d("w"), c = d("c"),
                  kh = two_d ? d("kh") : 1, kw = d("kw"), fo = d("f"), oh = two_d ? d("oh") : 1,
                  ow = d("ow"), sh = two_d ? d("sh") : 1, sw = d("sw"), dh = two_d ? d("dh") : 1,
                  dw = d("dw");
    const float* filter = in[1];
    return MakeFunctionKernel("per-tap Map products (Eigen Core)", [=] {
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t r = 0; r < oh; ++r) {
          Eigen::Map<RowMajor> dst(out + (b * oh + r) * ow * fo, ow, fo);
          for (int64_t i = 0; i < kh; ++i) {
            const float* row = x + (b * h + r * sh + i * dh) * w * c;
            for (int64_t j = 0; j < kw; ++j) {
              dst.noalias() += StridedRows(row + j * dw * c, ow, c, Eigen::OuterStride<>(sw * c)) *
                               ConstMatrix(filter + (i * kw + j) * c * fo, c, fo);
            }
          }
        }
      }
      return EigenDone();
    });
  }
  if (f == "depthwise_conv_1d_nwc_wc" || f == "depthwise_conv_2d_nhwc_hwc") {
    const bool two_d = f == "depthwise_conv_2d_nhwc_hwc";
    const int64_t n = d("n"), h = two_d ? d("h") : 1, w = d("w"), c = d("c"),
                  kh = two_d ? d("kh") : 1, kw = d("kw"), oh = two_d ? d("oh") : 1, ow = d("ow"),
                  sh = two_d ? d("sh") : 1, sw = d("sw"), dh = two_d ? d("dh") : 1, dw = d("dw");
    const float* filter = in[1];
    // Per output pixel and tap, one contiguous C-wide multiply-add (vectorized over
    // channels); whole strided-window arrays broadcast against the filter row were
    // several times slower in Eigen 3.4.
    return MakeFunctionKernel("per-pixel, per-tap channel array products (Eigen Core)", [=] {
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t r = 0; r < oh; ++r) {
          for (int64_t o = 0; o < ow; ++o) {
            Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>> dst(out + ((b * oh + r) * ow + o) * c, c);
            for (int64_t i = 0; i < kh; ++i) {
              const float* row = x + (b * h + r * sh + i * dh) * w * c + o * sw * c;
              for (int64_t j = 0; j < kw; ++j)
                dst += FilterRow(row + j * dw * c, c) * FilterRow(filter + (i * kw + j) * c, c);
            }
          }
        }
      }
      return EigenDone();
    });
  }
  if (f == "reduce_rows_2d") {
    const int64_t m = d("m"), n = d("n");
    return MakeFunctionKernel("rowwise().sum()", [=] {
      Eigen::Map<Eigen::VectorXf>(out, m) = ConstMatrix(x, m, n).rowwise().sum();
      return EigenDone();
    });
  }
  if (f == "reduce_cols_2d") {
    const int64_t m = d("m"), n = d("n");
    return MakeFunctionKernel("colwise().sum()", [=] {
      Eigen::Map<Eigen::RowVectorXf>(out, n) = ConstMatrix(x, m, n).colwise().sum();
      return EigenDone();
    });
  }
  if (f == "copy_2d") {
    const int64_t m = d("m"), n = d("n");
    return MakeFunctionKernel("Map assignment", [=] {
      Eigen::Map<RowMajor>(out, m, n) = ConstMatrix(x, m, n);
      return EigenDone();
    });
  }
  if (f == "transpose_2d") {
    const int64_t m = d("m"), n = d("n");
    return MakeFunctionKernel("Map assignment of transpose()", [=] {
      Eigen::Map<RowMajor>(out, n, m) = ConstMatrix(x, m, n).transpose();
      return EigenDone();
    });
  }
  return absl::UnimplementedError(absl::StrCat("no Eigen baseline for ", f));
}

}  // namespace

namespace {

class FunctionKernel : public FamilyKernel {
 public:
  FunctionKernel(std::string description, std::function<absl::Status()> run) : run_(std::move(run)) {
    description_ = std::move(description);
  }
  absl::Status Run() override { return run_(); }

 private:
  std::function<absl::Status()> run_;
};

}  // namespace

std::unique_ptr<FamilyKernel> MakeFunctionKernel(std::string description,
                                                 std::function<absl::Status()> run) {
  return std::make_unique<FunctionKernel>(std::move(description), std::move(run));
}

std::string_view FamilyLibraryName(FamilyLibrary library) {
  switch (library) {
    case FamilyLibrary::kOneDnn:
      return "onednn";
    case FamilyLibrary::kEigen:
      return "eigen";
    case FamilyLibrary::kHandWritten:
      return "handwritten";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<FamilyKernel>> MakeFamilyKernel(
    FamilyLibrary library, const strategies::Problem& problem,
    const std::vector<const float*>& inputs, float* output, const FamilyBaselineOptions& options) {
  const bool bf16 = problem.element_type == "bf16";
  if (problem.element_type != "f32" && !bf16)
    return absl::InvalidArgumentError(absl::StrCat("baselines are f32 (and bf16 matmuls for oneDNN) only; ",
                                                   problem.Key(), " has element type ",
                                                   problem.element_type));
  if (bf16 && library != FamilyLibrary::kOneDnn)
    return absl::UnimplementedError(absl::StrCat("no bf16 ", std::string(FamilyLibraryName(library)), " baseline"));
  if (inputs.size() + 1 != problem.Operands().size())
    return absl::InvalidArgumentError(absl::StrCat(problem.Key(), " takes ",
                                                   problem.Operands().size() - 1, " inputs, got ",
                                                   inputs.size()));
  // Eigen threads only when built with OpenMP (this library is, for oneDNN's sake).
  Eigen::setNbThreads(1);
  try {
    if (bf16) return OneDnnBf16Matmul(problem, inputs, output);
    if (library == FamilyLibrary::kOneDnn) return MakeOneDnn(problem, inputs, output, options);
    if (library == FamilyLibrary::kHandWritten) return MakeHandWrittenKernel(problem, inputs, output);
    return MakeEigen(problem, inputs, output);
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN cannot set up ", problem.Key(), ": ", e.what()));
  }
}

bool BaselineAccumulates(const strategies::Problem& problem) {
  const std::string& f = problem.family;
  return IsMatmul(f) || f == "batch_matmul" || f == "conv_1d_nwc_wcf" || f == "conv_2d_nhwc_hwcf" ||
         f == "depthwise_conv_1d_nwc_wc" || f == "depthwise_conv_2d_nhwc_hwc";
}

}  // namespace mtune::bench
