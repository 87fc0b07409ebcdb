#include "strategies/op_key.h"

#include <charconv>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mtune::strategies {
namespace {

using Dims = std::vector<std::pair<std::string, int64_t>>;

absl::Status NoFamily(mlir::Operation* op, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat(op->getName().getStringRef().str(), " is no mtune problem: ", why));
}

std::string Key(absl::string_view family, const Dims& dims, absl::string_view type) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : dims) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrCat(family, ":", absl::StrJoin(parts, ","), ":", type);
}

std::string TypeName(mlir::Type type) {
  if (type.isF32()) return "f32";
  if (type.isF64()) return "f64";
  if (type.isBF16()) return "bf16";
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

// Static shapes of the operands in operand order; error for anything else.
absl::StatusOr<std::vector<mlir::ShapedType>> StaticOperands(mlir::Operation* op) {
  std::vector<mlir::ShapedType> shaped;
  for (mlir::Value operand : op->getOperands()) {
    auto type = mlir::dyn_cast<mlir::ShapedType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return NoFamily(op, "operands must be statically shaped tensors or memrefs");
    shaped.push_back(type);
  }
  return shaped;
}

// Element type spelling for a family: all operands share one of `same_types`,
// or (when `allow_bf16_mixed`) inputs are bf16 and the output f32.
absl::StatusOr<std::string> ElementType(mlir::Operation* op,
                                        const std::vector<mlir::ShapedType>& operands,
                                        std::initializer_list<const char*> same_types,
                                        bool allow_bf16_mixed) {
  const std::string out = TypeName(operands.back().getElementType());
  bool inputs_equal = true;
  for (size_t i = 0; i + 1 < operands.size(); ++i)
    inputs_equal &= operands[i].getElementType() == operands[0].getElementType();
  const std::string in = TypeName(operands[0].getElementType());
  if (inputs_equal && in == out) {
    for (const char* t : same_types)
      if (out == t) return out;
  }
  if (allow_bf16_mixed && inputs_equal && in == "bf16" && out == "f32") return std::string("bf16");
  return NoFamily(op, absl::StrCat("element types ", in, " -> ", out, " are not supported"));
}

mlir::AffineMap Map(mlir::MLIRContext* context, unsigned dims, std::vector<unsigned> results) {
  std::vector<mlir::AffineExpr> exprs;
  for (unsigned r : results) exprs.push_back(mlir::getAffineDimExpr(r, context));
  return mlir::AffineMap::get(dims, 0, exprs, context);
}

// Loops of linalg.matmul: d0 = m, d1 = n, d2 = k.
enum class MatmulForm { kPlain, kTransposeA, kTransposeB, kOther };

MatmulForm ClassifyMatmul(mlir::linalg::LinalgOp op) {
  mlir::MLIRContext* context = op->getContext();
  llvm::SmallVector<mlir::AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != Map(context, 3, {0, 1})) return MatmulForm::kOther;
  const mlir::AffineMap a_mk = Map(context, 3, {0, 2}), a_km = Map(context, 3, {2, 0});
  const mlir::AffineMap b_kn = Map(context, 3, {2, 1}), b_nk = Map(context, 3, {1, 2});
  if (maps[0] == a_mk && maps[1] == b_kn) return MatmulForm::kPlain;
  if (maps[0] == a_km && maps[1] == b_kn) return MatmulForm::kTransposeA;
  if (maps[0] == a_mk && maps[1] == b_nk) return MatmulForm::kTransposeB;
  return MatmulForm::kOther;
}

absl::StatusOr<std::string> MatmulKey(mlir::linalg::MatmulOp op) {
  auto operands = StaticOperands(op);
  if (!operands.ok()) return operands.status();
  if (operands->size() != 3) return NoFamily(op, "expected two inputs and one output");
  auto type = ElementType(op, *operands, {"f32", "f64"}, /*allow_bf16_mixed=*/true);
  if (!type.ok()) return type.status();
  const auto a = (*operands)[0].getShape(), c = (*operands)[2].getShape();
  switch (ClassifyMatmul(mlir::cast<mlir::linalg::LinalgOp>(op.getOperation()))) {
    case MatmulForm::kPlain:
      return Key("matmul", {{"m", c[0]}, {"n", c[1]}, {"k", a[1]}}, *type);
    case MatmulForm::kTransposeA:
      return Key("matmul_transpose_a", {{"m", c[0]}, {"n", c[1]}, {"k", a[0]}}, *type);
    case MatmulForm::kTransposeB:
      return Key("matmul_transpose_b", {{"m", c[0]}, {"n", c[1]}, {"k", a[1]}}, *type);
    case MatmulForm::kOther:
      break;
  }
  return NoFamily(op, "indexing maps are neither the default nor transposed-A / transposed-B");
}

absl::StatusOr<std::string> BatchMatmulKey(mlir::linalg::BatchMatmulOp op) {
  auto operands = StaticOperands(op);
  if (!operands.ok()) return operands.status();
  if (operands->size() != 3) return NoFamily(op, "expected two inputs and one output");
  if (!mlir::linalg::BatchMatmulOp::isDefaultIndexingMaps(op.getIndexingMaps()))
    return NoFamily(op, "only the default indexing maps have a family");
  auto type = ElementType(op, *operands, {"f32", "f64"}, /*allow_bf16_mixed=*/false);
  if (!type.ok()) return type.status();
  const auto a = (*operands)[0].getShape(), c = (*operands)[2].getShape();
  return Key("batch_matmul", {{"b", c[0]}, {"m", c[1]}, {"n", c[2]}, {"k", a[2]}}, *type);
}

// Strides and dilations of a named convolution (upstream defaults are 1).
std::vector<int64_t> Values(mlir::DenseIntElementsAttr attr) {
  std::vector<int64_t> values;
  for (const llvm::APInt& v : attr.getValues<llvm::APInt>()) values.push_back(v.getSExtValue());
  return values;
}

template <typename ConvOp>
absl::StatusOr<std::string> ConvKey(ConvOp op, absl::string_view family, bool depthwise,
                                    int spatial) {
  auto operands = StaticOperands(op);
  if (!operands.ok()) return operands.status();
  if (operands->size() != 3) return NoFamily(op, "expected two inputs and one output");
  // Depthwise convolutions are tuned in f32 only.
  auto type = depthwise ? ElementType(op, *operands, {"f32"}, false)
                        : ElementType(op, *operands, {"f32", "f64"}, false);
  if (!type.ok()) return type.status();
  const auto in = (*operands)[0].getShape(), filter = (*operands)[1].getShape(),
             out = (*operands)[2].getShape();
  const std::vector<int64_t> strides = Values(op.getStrides()),
                             dilations = Values(op.getDilations());
  Dims dims = {{"n", in[0]}};
  if (spatial == 2) dims.push_back({"h", in[1]});
  dims.push_back({"w", in[spatial]});
  dims.push_back({"c", in[spatial + 1]});
  if (spatial == 2) dims.push_back({"kh", filter[0]});
  dims.push_back({"kw", filter[spatial - 1]});
  if (!depthwise) dims.push_back({"f", out[spatial + 1]});
  if (spatial == 2) dims.push_back({"sh", strides[0]});
  dims.push_back({"sw", strides[spatial - 1]});
  if (spatial == 2) dims.push_back({"dh", dilations[0]});
  dims.push_back({"dw", dilations[spatial - 1]});
  return Key(family, dims, *type);
}

absl::StatusOr<std::string> TransposeKey(mlir::linalg::TransposeOp op) {
  auto operands = StaticOperands(op);
  if (!operands.ok()) return operands.status();
  const auto in = (*operands)[0].getShape();
  if (in.size() != 2 || op.getPermutation() != llvm::ArrayRef<int64_t>{1, 0})
    return NoFamily(op, "only 2-D transposes (permutation [1, 0]) have a family");
  auto type = ElementType(op, *operands, {"f32"}, false);
  if (!type.ok()) return type.status();
  return Key("transpose_2d", {{"m", in[0]}, {"n", in[1]}}, *type);
}

// A reduction body that is exactly `yield(addf(in, acc))`.
bool IsSumBody(mlir::Block& body) {
  if (body.getNumArguments() != 2 || body.getOperations().size() != 2) return false;
  auto add = mlir::dyn_cast<mlir::arith::AddFOp>(&body.front());
  if (!add) return false;
  auto yield = mlir::dyn_cast<mlir::linalg::YieldOp>(body.back());
  if (!yield || yield->getNumOperands() != 1 || yield->getOperand(0) != add.getResult())
    return false;
  auto uses = [&](unsigned i) {
    return add.getLhs() == body.getArgument(i) || add.getRhs() == body.getArgument(i);
  };
  return uses(0) && uses(1);
}

absl::StatusOr<std::string> ReduceKey(mlir::linalg::ReduceOp op) {
  auto operands = StaticOperands(op);
  if (!operands.ok()) return operands.status();
  if (operands->size() != 2) return NoFamily(op, "only single-input reductions have a family");
  const auto in = (*operands)[0].getShape();
  if (in.size() != 2 || op.getDimensions().size() != 1)
    return NoFamily(op, "only 2-D reductions over one dimension have a family");
  if (!IsSumBody(op.getCombiner().front()))
    return NoFamily(op, "only sums (arith.addf) have a family");
  auto type = ElementType(op, *operands, {"f32"}, false);
  if (!type.ok()) return type.status();
  const char* family = op.getDimensions()[0] == 1 ? "reduce_rows_2d" : "reduce_cols_2d";
  return Key(family, {{"m", in[0]}, {"n", in[1]}}, *type);
}

absl::StatusOr<std::string> CopyKey(mlir::linalg::CopyOp op) {
  auto operands = StaticOperands(op);
  if (!operands.ok()) return operands.status();
  const auto in = (*operands)[0].getShape();
  if (in.size() != 2) return NoFamily(op, "only 2-D copies have a family");
  auto type = ElementType(op, *operands, {"f32"}, false);
  if (!type.ok()) return type.status();
  return Key("copy_2d", {{"m", in[0]}, {"n", in[1]}}, *type);
}

// --- key -> pattern ----------------------------------------------------------

struct KeyParts {
  std::string family;
  Dims dims;
  std::string type;
  int64_t Dim(absl::string_view name) const {
    for (const auto& [n, v] : dims)
      if (n == name) return v;
    return -1;
  }
};

absl::StatusOr<KeyParts> SplitKey(absl::string_view key) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad problem key '", key, "': ", why));
  };
  std::vector<absl::string_view> fields = absl::StrSplit(key, ':');
  if (fields.size() != 3) return bad("expected FAMILY:NAME=VALUE,...:TYPE");
  KeyParts parts{std::string(fields[0]), {}, std::string(fields[2])};
  for (absl::string_view item : absl::StrSplit(fields[1], ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.size() != 2 ||
        std::from_chars(kv[1].data(), kv[1].data() + kv[1].size(), value).ec != std::errc() ||
        value <= 0)
      return bad(absl::StrCat("'", item, "' is not NAME=POSITIVE_INTEGER"));
    parts.dims.emplace_back(std::string(kv[0]), value);
  }
  return parts;
}

std::string Tensor(std::initializer_list<int64_t> shape, absl::string_view type) {
  return absl::StrCat("tensor<", absl::StrJoin(shape, "x"), "x", type, ">");
}

// Requires exactly `names` (in order) in the key.
absl::Status ExpectDims(const KeyParts& parts, absl::string_view key,
                        std::initializer_list<const char*> names) {
  std::vector<std::string> given;
  for (const auto& d : parts.dims) given.push_back(d.first);
  std::vector<std::string> expected(names.begin(), names.end());
  if (given != expected)
    return absl::InvalidArgumentError(absl::StrCat("bad problem key '", key, "': ", parts.family,
                                                   " takes ", absl::StrJoin(expected, ","),
                                                   " in that order"));
  return absl::OkStatus();
}

std::string MatmulMaps(absl::string_view a, absl::string_view b) {
  return absl::StrCat("indexing_maps = [affine_map<(d0, d1, d2) -> (", a,
                      ")>, affine_map<(d0, d1, d2) -> (", b,
                      ")>, affine_map<(d0, d1, d2) -> (d0, d1)>]");
}

// Output size of a strided, dilated window.
int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t d) { return (in - (k - 1) * d - 1) / s + 1; }

std::string ConvAttributes(std::vector<int64_t> strides, std::vector<int64_t> dilations) {
  bool all_one = true;
  for (int64_t v : strides) all_one &= v == 1;
  for (int64_t v : dilations) all_one &= v == 1;
  // Unit strides and dilations are often left out of the IR; the operand types
  // already pin them down, so only other values are required as attributes.
  if (all_one) return "";
  auto dense = [](const std::vector<int64_t>& v) {
    return absl::StrCat("dense<[", absl::StrJoin(v, ", "), "]> : tensor<", v.size(), "xi64>");
  };
  return absl::StrCat("dilations = ", dense(dilations), ", strides = ", dense(strides));
}

}  // namespace

absl::StatusOr<std::string> ProblemKeyForOp(mlir::Operation* op) {
  if (op == nullptr) return absl::InvalidArgumentError("ProblemKeyForOp: null op");
  if (auto matmul = mlir::dyn_cast<mlir::linalg::MatmulOp>(op)) return MatmulKey(matmul);
  if (auto batch = mlir::dyn_cast<mlir::linalg::BatchMatmulOp>(op)) return BatchMatmulKey(batch);
  if (auto conv = mlir::dyn_cast<mlir::linalg::Conv1DNwcWcfOp>(op))
    return ConvKey(conv, "conv_1d_nwc_wcf", false, 1);
  if (auto conv = mlir::dyn_cast<mlir::linalg::Conv2DNhwcHwcfOp>(op))
    return ConvKey(conv, "conv_2d_nhwc_hwcf", false, 2);
  if (auto conv = mlir::dyn_cast<mlir::linalg::DepthwiseConv1DNwcWcOp>(op))
    return ConvKey(conv, "depthwise_conv_1d_nwc_wc", true, 1);
  if (auto conv = mlir::dyn_cast<mlir::linalg::DepthwiseConv2DNhwcHwcOp>(op))
    return ConvKey(conv, "depthwise_conv_2d_nhwc_hwc", true, 2);
  if (auto transpose = mlir::dyn_cast<mlir::linalg::TransposeOp>(op)) return TransposeKey(transpose);
  if (auto reduce = mlir::dyn_cast<mlir::linalg::ReduceOp>(op)) return ReduceKey(reduce);
  if (auto copy = mlir::dyn_cast<mlir::linalg::CopyOp>(op)) return CopyKey(copy);
  return NoFamily(op, "no op family covers this op");
}

absl::StatusOr<OpPattern> OpPatternForKey(absl::string_view key) {
  absl::StatusOr<KeyParts> parsed = SplitKey(key);
  if (!parsed.ok()) return parsed.status();
  const KeyParts& p = *parsed;
  const std::string& t = p.type;
  // bf16 problems read bf16 and accumulate into f32.
  const std::string out_t = t == "bf16" ? "f32" : t;
  auto d = [&](const char* name) { return p.Dim(name); };
  OpPattern pattern;
  absl::Status dims_ok;
  if (p.family == "matmul" || p.family == "matmul_transpose_a" ||
      p.family == "matmul_transpose_b") {
    dims_ok = ExpectDims(p, key, {"m", "n", "k"});
    if (!dims_ok.ok()) return dims_ok;
    const int64_t m = d("m"), n = d("n"), k = d("k");
    pattern.op_name = "linalg.matmul";
    const bool ta = p.family == "matmul_transpose_a", tb = p.family == "matmul_transpose_b";
    pattern.attributes = MatmulMaps(ta ? "d2, d0" : "d0, d2", tb ? "d1, d2" : "d2, d1");
    pattern.operand_types = {ta ? Tensor({k, m}, t) : Tensor({m, k}, t),
                             tb ? Tensor({n, k}, t) : Tensor({k, n}, t), Tensor({m, n}, out_t)};
  } else if (p.family == "batch_matmul") {
    dims_ok = ExpectDims(p, key, {"b", "m", "n", "k"});
    if (!dims_ok.ok()) return dims_ok;
    const int64_t b = d("b"), m = d("m"), n = d("n"), k = d("k");
    pattern.op_name = "linalg.batch_matmul";
    pattern.operand_types = {Tensor({b, m, k}, t), Tensor({b, k, n}, t), Tensor({b, m, n}, out_t)};
  } else if (p.family == "conv_1d_nwc_wcf") {
    dims_ok = ExpectDims(p, key, {"n", "w", "c", "kw", "f", "sw", "dw"});
    if (!dims_ok.ok()) return dims_ok;
    pattern.op_name = "linalg.conv_1d_nwc_wcf";
    pattern.attributes = ConvAttributes({d("sw")}, {d("dw")});
    pattern.operand_types = {
        Tensor({d("n"), d("w"), d("c")}, t), Tensor({d("kw"), d("c"), d("f")}, t),
        Tensor({d("n"), OutSize(d("w"), d("kw"), d("sw"), d("dw")), d("f")}, t)};
  } else if (p.family == "conv_2d_nhwc_hwcf") {
    dims_ok = ExpectDims(p, key, {"n", "h", "w", "c", "kh", "kw", "f", "sh", "sw", "dh", "dw"});
    if (!dims_ok.ok()) return dims_ok;
    pattern.op_name = "linalg.conv_2d_nhwc_hwcf";
    pattern.attributes = ConvAttributes({d("sh"), d("sw")}, {d("dh"), d("dw")});
    pattern.operand_types = {Tensor({d("n"), d("h"), d("w"), d("c")}, t),
                             Tensor({d("kh"), d("kw"), d("c"), d("f")}, t),
                             Tensor({d("n"), OutSize(d("h"), d("kh"), d("sh"), d("dh")),
                                     OutSize(d("w"), d("kw"), d("sw"), d("dw")), d("f")},
                                    t)};
  } else if (p.family == "depthwise_conv_1d_nwc_wc") {
    dims_ok = ExpectDims(p, key, {"n", "w", "c", "kw", "sw", "dw"});
    if (!dims_ok.ok()) return dims_ok;
    pattern.op_name = "linalg.depthwise_conv_1d_nwc_wc";
    pattern.attributes = ConvAttributes({d("sw")}, {d("dw")});
    pattern.operand_types = {
        Tensor({d("n"), d("w"), d("c")}, t), Tensor({d("kw"), d("c")}, t),
        Tensor({d("n"), OutSize(d("w"), d("kw"), d("sw"), d("dw")), d("c")}, t)};
  } else if (p.family == "depthwise_conv_2d_nhwc_hwc") {
    dims_ok = ExpectDims(p, key, {"n", "h", "w", "c", "kh", "kw", "sh", "sw", "dh", "dw"});
    if (!dims_ok.ok()) return dims_ok;
    pattern.op_name = "linalg.depthwise_conv_2d_nhwc_hwc";
    pattern.attributes = ConvAttributes({d("sh"), d("sw")}, {d("dh"), d("dw")});
    pattern.operand_types = {Tensor({d("n"), d("h"), d("w"), d("c")}, t),
                             Tensor({d("kh"), d("kw"), d("c")}, t),
                             Tensor({d("n"), OutSize(d("h"), d("kh"), d("sh"), d("dh")),
                                     OutSize(d("w"), d("kw"), d("sw"), d("dw")), d("c")},
                                    t)};
  } else if (p.family == "transpose_2d") {
    dims_ok = ExpectDims(p, key, {"m", "n"});
    if (!dims_ok.ok()) return dims_ok;
    pattern.op_name = "linalg.transpose";
    pattern.attributes = "permutation = array<i64: 1, 0>";
    pattern.operand_types = {Tensor({d("m"), d("n")}, t), Tensor({d("n"), d("m")}, t)};
  } else if (p.family == "reduce_rows_2d" || p.family == "reduce_cols_2d") {
    dims_ok = ExpectDims(p, key, {"m", "n"});
    if (!dims_ok.ok()) return dims_ok;
    const bool rows = p.family == "reduce_rows_2d";
    pattern.op_name = "linalg.reduce";
    pattern.attributes = rows ? "dimensions = array<i64: 1>" : "dimensions = array<i64: 0>";
    pattern.operand_types = {Tensor({d("m"), d("n")}, t), Tensor({rows ? d("m") : d("n")}, t)};
  } else if (p.family == "copy_2d") {
    dims_ok = ExpectDims(p, key, {"m", "n"});
    if (!dims_ok.ok()) return dims_ok;
    pattern.op_name = "linalg.copy";
    pattern.operand_types = {Tensor({d("m"), d("n")}, t), Tensor({d("m"), d("n")}, t)};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("bad problem key '", key, "': no op pattern for family '", p.family, "'"));
  }
  return pattern;
}

}  // namespace mtune::strategies
