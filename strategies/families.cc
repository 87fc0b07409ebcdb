#include "strategies/families.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace mtune::strategies::internal {
namespace {

using Shapes = std::vector<OperandShape>;

// Inputs have the key's element type, except bf16: bf16 inputs accumulate in f32.
std::string InputType(const Problem& p) { return p.element_type; }
std::string OutputType(const Problem& p) {
  return p.element_type == "bf16" ? "f32" : p.element_type;
}

OperandShape In(const Problem& p, std::string name, std::vector<int64_t> shape) {
  return {std::move(name), std::move(shape), InputType(p)};
}
OperandShape Out(const Problem& p, std::vector<int64_t> shape) {
  return {"out", std::move(shape), OutputType(p)};
}

std::string Ins(const std::vector<std::string>& args, const std::vector<std::string>& types,
                size_t count) {
  std::vector<std::string> names(args.begin(), args.begin() + count);
  std::vector<std::string> tys(types.begin(), types.begin() + count);
  return absl::StrCat("ins(", absl::StrJoin(names, ", "), " : ", absl::StrJoin(tys, ", "), ")");
}
std::string Outs(const std::vector<std::string>& args, const std::vector<std::string>& types) {
  return absl::StrCat("outs(", args.back(), " : ", types.back(), ") -> ", types.back());
}

// "linalg.NAME ATTRS ins(...) outs(...) -> T" for ops whose operands are all tensors.
auto NamedOp(std::string name, std::function<std::string(const Problem&)> attrs = nullptr) {
  return [name, attrs](const Problem& p, const std::vector<std::string>& args,
                       const std::vector<std::string>& types, const std::string& result) {
    return absl::StrCat(result, " = linalg.", name, attrs ? " " + attrs(p) : std::string(), " ",
                        Ins(args, types, args.size() - 1), " ", Outs(args, types));
  };
}

std::string MatmulMaps(absl::string_view a, absl::string_view b) {
  return absl::StrFormat(
      "indexing_maps = [affine_map<(d0, d1, d2) -> (%s)>, affine_map<(d0, d1, d2) -> (%s)>, "
      "affine_map<(d0, d1, d2) -> (d0, d1)>]",
      a, b);
}

std::string ConvAttrs(const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  auto dense = [](const std::vector<int64_t>& v) {
    return v.size() == 1 ? absl::StrCat("dense<", v[0], "> : tensor<1xi64>")
                         : absl::StrCat("dense<[", absl::StrJoin(v, ", "), "]> : tensor<",
                                        v.size(), "xi64>");
  };
  return absl::StrCat("{dilations = ", dense(dilations), ", strides = ", dense(strides), "}");
}

// Checks that the dilated window fits the input along one spatial dimension.
absl::Status WindowFits(const Problem& p, absl::string_view in, absl::string_view kernel,
                        absl::string_view stride, absl::string_view dilation) {
  if (WindowOutput(p.Dim(in), p.Dim(kernel), p.Dim(stride), p.Dim(dilation)) >= 1)
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "the filter window %s=%d with dilation %s=%d spans %d elements, more than the input "
      "%s=%d",
      kernel, p.Dim(kernel), dilation, p.Dim(dilation),
      p.Dim(dilation) * (p.Dim(kernel) - 1) + 1, in, p.Dim(in)));
}

int64_t OutW(const Problem& p) { return WindowOutput(p.Dim("w"), p.Dim("kw"), p.Dim("sw"), p.Dim("dw")); }
int64_t OutH(const Problem& p) { return WindowOutput(p.Dim("h"), p.Dim("kh"), p.Dim("sh"), p.Dim("dh")); }

absl::Status NoCheck(const Problem&) { return absl::OkStatus(); }

FamilySpec Matmul(std::string name, std::string layout_note, std::string a_index,
                  std::string b_index, bool a_transposed, bool b_transposed) {
  FamilySpec f;
  f.info = {name,
            absl::StrCat(name, ":m=<M>,n=<N>,k=<K>:{f32,f64,bf16}   ", layout_note),
            absl::StrCat(name, ":m=512,n=512,k=512:f32"), "matmul_packed",
            // bf16: AMX tiles (16x the f32 FMA peak) where the CPU has them, else
            // AVX512-BF16 dot products (2x).
            {"matmul_bf16_amx", "matmul_bf16_vnni"}};
  f.dims = {{"m"}, {"n"}, {"k"}};
  f.element_types = {"f32", "f64", "bf16"};
  f.validate = NoCheck;
  f.operands = [a_transposed, b_transposed](const Problem& p) {
    const int64_t m = p.Dim("m"), n = p.Dim("n"), k = p.Dim("k");
    return Shapes{In(p, "A", a_transposed ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}),
                  In(p, "B", b_transposed ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}),
                  Out(p, {m, n})};
  };
  f.flops = [](const Problem& p) { return 2.0 * p.Dim("m") * p.Dim("n") * p.Dim("k"); };
  f.terms_per_output = [](const Problem& p) { return p.Dim("k"); };
  if (!a_transposed && !b_transposed) {
    f.linalg_op = NamedOp("matmul");
  } else {
    const std::string maps = MatmulMaps(a_index, b_index);
    f.linalg_op = NamedOp("matmul", [maps](const Problem&) { return maps; });
  }
  return f;
}

std::vector<FamilySpec> MakeSpecs() {
  std::vector<FamilySpec> specs;
  specs.push_back(Matmul("matmul", "C[M,N] += A[M,K] * B[K,N]", "d0, d2", "d2, d1", false, false));
  specs.push_back(Matmul("matmul_transpose_a", "C[M,N] += A[K,M]^T * B[K,N]", "d2, d0", "d2, d1",
                         true, false));
  specs.push_back(Matmul("matmul_transpose_b", "C[M,N] += A[M,K] * B[N,K]^T", "d0, d2", "d1, d2",
                         false, true));
  {
    FamilySpec f;
    f.info = {"batch_matmul",
              "batch_matmul:b=<B>,m=<M>,n=<N>,k=<K>:{f32,f64}   C[B,M,N] += A[B,M,K] * B[B,K,N]",
              "batch_matmul:b=8,m=128,n=128,k=128:f32", "matmul_packed"};
    f.dims = {{"b"}, {"m"}, {"n"}, {"k"}};
    f.element_types = {"f32", "f64"};
    f.validate = NoCheck;
    f.operands = [](const Problem& p) {
      const int64_t b = p.Dim("b"), m = p.Dim("m"), n = p.Dim("n"), k = p.Dim("k");
      return Shapes{In(p, "A", {b, m, k}), In(p, "B", {b, k, n}), Out(p, {b, m, n})};
    };
    f.flops = [](const Problem& p) {
      return 2.0 * p.Dim("b") * p.Dim("m") * p.Dim("n") * p.Dim("k");
    };
    f.terms_per_output = [](const Problem& p) { return p.Dim("k"); };
    f.linalg_op = NamedOp("batch_matmul");
    specs.push_back(std::move(f));
  }
  {
    FamilySpec f;
    f.info = {"conv_1d_nwc_wcf",
              "conv_1d_nwc_wcf:n=<N>,w=<W>,c=<C>,kw=<KW>,f=<F>[,sw=<S>][,dw=<D>]:{f32,f64}   "
              "out[N,OW,F] += in[N,OW*S+KW*D,C] * filter[KW,C,F], w = input width",
              "conv_1d_nwc_wcf:n=1,w=258,c=64,kw=3,f=64,sw=1,dw=1:f32", "conv_1d_tiled"};
    f.dims = {{"n"}, {"w"}, {"c"}, {"kw"}, {"f"}, {"sw", 1}, {"dw", 1}};
    f.element_types = {"f32", "f64"};
    f.validate = [](const Problem& p) { return WindowFits(p, "w", "kw", "sw", "dw"); };
    f.operands = [](const Problem& p) {
      return Shapes{In(p, "input", {p.Dim("n"), p.Dim("w"), p.Dim("c")}),
                    In(p, "filter", {p.Dim("kw"), p.Dim("c"), p.Dim("f")}),
                    Out(p, {p.Dim("n"), OutW(p), p.Dim("f")})};
    };
    f.flops = [](const Problem& p) {
      return 2.0 * p.Dim("n") * OutW(p) * p.Dim("f") * p.Dim("kw") * p.Dim("c");
    };
    f.terms_per_output = [](const Problem& p) { return p.Dim("kw") * p.Dim("c"); };
    f.linalg_op = NamedOp("conv_1d_nwc_wcf", [](const Problem& p) {
      return ConvAttrs({p.Dim("sw")}, {p.Dim("dw")});
    });
    specs.push_back(std::move(f));
  }
  {
    FamilySpec f;
    f.info = {"conv_2d_nhwc_hwcf",
              "conv_2d_nhwc_hwcf:n=<N>,h=<H>,w=<W>,c=<C>,kh=<KH>,kw=<KW>,f=<F>[,sh=,sw=][,dh=,dw=]"
              ":{f32,f64}   out[N,OH,OW,F] += in[N,H,W,C] * filter[KH,KW,C,F]",
              "conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32",
              "conv_2d_decomposed"};
    f.dims = {{"n"}, {"h"}, {"w"}, {"c"}, {"kh"}, {"kw"}, {"f"},
              {"sh", 1}, {"sw", 1}, {"dh", 1}, {"dw", 1}};
    f.element_types = {"f32", "f64"};
    f.validate = [](const Problem& p) {
      if (absl::Status s = WindowFits(p, "h", "kh", "sh", "dh"); !s.ok()) return s;
      return WindowFits(p, "w", "kw", "sw", "dw");
    };
    f.operands = [](const Problem& p) {
      return Shapes{In(p, "input", {p.Dim("n"), p.Dim("h"), p.Dim("w"), p.Dim("c")}),
                    In(p, "filter", {p.Dim("kh"), p.Dim("kw"), p.Dim("c"), p.Dim("f")}),
                    Out(p, {p.Dim("n"), OutH(p), OutW(p), p.Dim("f")})};
    };
    f.flops = [](const Problem& p) {
      return 2.0 * p.Dim("n") * OutH(p) * OutW(p) * p.Dim("f") * p.Dim("kh") * p.Dim("kw") *
             p.Dim("c");
    };
    f.terms_per_output = [](const Problem& p) { return p.Dim("kh") * p.Dim("kw") * p.Dim("c"); };
    f.linalg_op = NamedOp("conv_2d_nhwc_hwcf", [](const Problem& p) {
      return ConvAttrs({p.Dim("sh"), p.Dim("sw")}, {p.Dim("dh"), p.Dim("dw")});
    });
    specs.push_back(std::move(f));
  }
  {
    FamilySpec f;
    f.info = {"depthwise_conv_1d_nwc_wc",
              "depthwise_conv_1d_nwc_wc:n=<N>,w=<W>,c=<C>,kw=<KW>[,sw=<S>][,dw=<D>]:f32   "
              "out[N,OW,C] += in[N,OW*S+KW*D,C] * filter[KW,C]",
              "depthwise_conv_1d_nwc_wc:n=1,w=1026,c=64,kw=3,sw=1,dw=1:f32", "depthwise_1d_tiled"};
    f.dims = {{"n"}, {"w"}, {"c"}, {"kw"}, {"sw", 1}, {"dw", 1}};
    f.element_types = {"f32"};
    f.validate = [](const Problem& p) { return WindowFits(p, "w", "kw", "sw", "dw"); };
    f.operands = [](const Problem& p) {
      return Shapes{In(p, "input", {p.Dim("n"), p.Dim("w"), p.Dim("c")}),
                    In(p, "filter", {p.Dim("kw"), p.Dim("c")}),
                    Out(p, {p.Dim("n"), OutW(p), p.Dim("c")})};
    };
    f.flops = [](const Problem& p) { return 2.0 * p.Dim("n") * OutW(p) * p.Dim("c") * p.Dim("kw"); };
    f.terms_per_output = [](const Problem& p) { return p.Dim("kw"); };
    f.linalg_op = NamedOp("depthwise_conv_1d_nwc_wc", [](const Problem& p) {
      return ConvAttrs({p.Dim("sw")}, {p.Dim("dw")});
    });
    specs.push_back(std::move(f));
  }
  {
    FamilySpec f;
    f.info = {"depthwise_conv_2d_nhwc_hwc",
              "depthwise_conv_2d_nhwc_hwc:n=<N>,h=<H>,w=<W>,c=<C>,kh=<KH>,kw=<KW>[,sh=,sw=]"
              "[,dh=,dw=]:f32   out[N,OH,OW,C] += in[N,H,W,C] * filter[KH,KW,C]",
              "depthwise_conv_2d_nhwc_hwc:n=1,h=58,w=58,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32",
              "depthwise_2d_decomposed"};
    f.dims = {{"n"}, {"h"}, {"w"}, {"c"}, {"kh"}, {"kw"}, {"sh", 1}, {"sw", 1}, {"dh", 1}, {"dw", 1}};
    f.element_types = {"f32"};
    f.validate = [](const Problem& p) {
      if (absl::Status s = WindowFits(p, "h", "kh", "sh", "dh"); !s.ok()) return s;
      return WindowFits(p, "w", "kw", "sw", "dw");
    };
    f.operands = [](const Problem& p) {
      return Shapes{In(p, "input", {p.Dim("n"), p.Dim("h"), p.Dim("w"), p.Dim("c")}),
                    In(p, "filter", {p.Dim("kh"), p.Dim("kw"), p.Dim("c")}),
                    Out(p, {p.Dim("n"), OutH(p), OutW(p), p.Dim("c")})};
    };
    f.flops = [](const Problem& p) {
      return 2.0 * p.Dim("n") * OutH(p) * OutW(p) * p.Dim("c") * p.Dim("kh") * p.Dim("kw");
    };
    f.terms_per_output = [](const Problem& p) { return p.Dim("kh") * p.Dim("kw"); };
    f.linalg_op = NamedOp("depthwise_conv_2d_nhwc_hwc", [](const Problem& p) {
      return ConvAttrs({p.Dim("sh"), p.Dim("sw")}, {p.Dim("dh"), p.Dim("dw")});
    });
    specs.push_back(std::move(f));
  }
  auto two_d = [](std::string name, std::string note, std::string example, std::string tpl) {
    FamilySpec f;
    f.info = {name, absl::StrCat(name, ":m=<M>,n=<N>:f32   ", note), example, tpl};
    f.dims = {{"m"}, {"n"}};
    f.element_types = {"f32"};
    f.validate = NoCheck;
    f.flops = [](const Problem&) { return 0.0; };
    f.terms_per_output = [](const Problem&) { return int64_t{1}; };
    return f;
  };
  {
    FamilySpec f = two_d("transpose_2d", "out[N,M] = in[M,N]^T",
                         "transpose_2d:m=1024,n=1024:f32", "copy_tiled");
    f.accumulates = false;
    f.operands = [](const Problem& p) {
      return Shapes{In(p, "input", {p.Dim("m"), p.Dim("n")}), Out(p, {p.Dim("n"), p.Dim("m")})};
    };
    f.linalg_op = [](const Problem&, const std::vector<std::string>& args,
                     const std::vector<std::string>& types, const std::string& result) {
      return absl::StrCat(result, " = linalg.transpose ", Ins(args, types, 1), " outs(", args[1],
                          " : ", types[1], ") permutation = [1, 0]");
    };
    specs.push_back(std::move(f));
  }
  auto reduce = [&](std::string name, std::string note, int dim) {
    FamilySpec f = two_d(name, note, absl::StrCat(name, ":m=1024,n=1024:f32"), "reduce_tiled");
    f.operands = [dim](const Problem& p) {
      return Shapes{In(p, "input", {p.Dim("m"), p.Dim("n")}),
                    Out(p, {dim == 1 ? p.Dim("m") : p.Dim("n")})};
    };
    f.flops = [](const Problem& p) { return 1.0 * p.Dim("m") * p.Dim("n"); };
    f.terms_per_output = [dim](const Problem& p) { return dim == 1 ? p.Dim("n") : p.Dim("m"); };
    f.linalg_op = [dim](const Problem& p, const std::vector<std::string>& args,
                        const std::vector<std::string>& types, const std::string& result) {
      const std::string t = OutputType(p);
      return absl::StrCat(result, " = linalg.reduce ", Ins(args, types, 1), " outs(", args[1],
                          " : ", types[1], ") dimensions = [", dim, "]\n    (%x: ", t,
                          ", %acc: ", t, ") {\n      %s = arith.addf %x, %acc : ", t,
                          "\n      linalg.yield %s : ", t, "\n    }");
    };
    specs.push_back(std::move(f));
  };
  reduce("reduce_rows_2d", "out[M] += sum over N of in[M,N]", 1);
  reduce("reduce_cols_2d", "out[N] += sum over M of in[M,N]", 0);
  {
    FamilySpec f = two_d("copy_2d", "out[M,N] = in[M,N]", "copy_2d:m=1024,n=1024:f32", "copy_tiled");
    f.accumulates = false;
    f.operands = [](const Problem& p) {
      return Shapes{In(p, "input", {p.Dim("m"), p.Dim("n")}), Out(p, {p.Dim("m"), p.Dim("n")})};
    };
    f.linalg_op = NamedOp("copy");
    specs.push_back(std::move(f));
  }
  return specs;
}

}  // namespace

int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  if (span > in || stride <= 0) return 0;
  return (in - span) / stride + 1;
}

const std::vector<FamilySpec>& FamilySpecs() {
  static const auto* specs = new std::vector<FamilySpec>(MakeSpecs());
  return *specs;
}

const FamilySpec* FindFamily(absl::string_view name) {
  for (const FamilySpec& f : FamilySpecs())
    if (f.info.name == name) return &f;
  return nullptr;
}

}  // namespace mtune::strategies::internal
