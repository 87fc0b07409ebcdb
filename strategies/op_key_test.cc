#include "strategies/op_key.h"

#include <string>

#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Parser/Parser.h"
#include "strategies/mlir_support.h"
#include "strategies/problem.h"

namespace mtune::strategies {
namespace {

struct OpCase {
  const char* name;
  // Operand types of a function whose body is `op` applied to its arguments.
  const char* body;
  const char* key;
};

std::string Print(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

class OpKeyTest : public testing::TestWithParam<OpCase> {
 protected:
  mlir::Operation* ParseOp(const std::string& body) {
    module_ = nullptr;  // before the context it lives in
    if (!context_) context_ = MakeMlirContext();
    module_ = mlir::parseSourceString<mlir::ModuleOp>(body, context_.get());
    if (!module_) return nullptr;
    mlir::Operation* found = nullptr;
    module_->walk([&](mlir::linalg::LinalgOp op) {
      if (!found) found = op;
    });
    return found;
  }

  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

TEST_P(OpKeyTest, DerivesTheKeyAndThePatternSelectsTheOp) {
  mlir::Operation* op = ParseOp(GetParam().body);
  ASSERT_NE(op, nullptr) << "does not parse:\n" << GetParam().body;
  absl::StatusOr<std::string> key = ProblemKeyForOp(op);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(*key, GetParam().key);
  // The key is what the problem grammar calls canonical.
  absl::StatusOr<Problem> problem = ParseProblemKey(*key);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->Key(), *key);

  // Only tensor-form ops are selected by the pattern: that is what strategies apply to.
  if (!mlir::isa<mlir::RankedTensorType>(op->getOperand(0).getType())) return;
  absl::StatusOr<OpPattern> pattern = OpPatternForKey(*key);
  ASSERT_TRUE(pattern.ok()) << pattern.status();
  EXPECT_EQ(pattern->op_name, op->getName().getStringRef().str());
  ASSERT_EQ(pattern->operand_types.size(), op->getNumOperands());
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    EXPECT_EQ(pattern->operand_types[i], Print(op->getOperand(i).getType())) << "operand " << i;
  if (!pattern->attributes.empty()) {
    mlir::Attribute dict =
        mlir::parseAttribute("{" + pattern->attributes + "}", context_.get());
    ASSERT_TRUE(dict) << pattern->attributes;
    for (mlir::NamedAttribute attr : mlir::cast<mlir::DictionaryAttr>(dict))
      EXPECT_EQ(op->getAttr(attr.getName()), attr.getValue()) << attr.getName().str();
  }
}

#define FUNC(ARGS, OP) "func.func @f(" ARGS ") {\n" OP "\n  return\n}\n"

INSTANTIATE_TEST_SUITE_P(
    Families, OpKeyTest,
    testing::Values(
        OpCase{"matmul",
               FUNC("%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>",
                    "%r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) "
                    "outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>"),
               "matmul:m=64,n=48,k=32:f32"},
        OpCase{"matmul_memref_f64",
               FUNC("%a: memref<8x4xf64>, %b: memref<4x2xf64>, %c: memref<8x2xf64>",
                    "linalg.matmul ins(%a, %b : memref<8x4xf64>, memref<4x2xf64>) "
                    "outs(%c : memref<8x2xf64>)"),
               "matmul:m=8,n=2,k=4:f64"},
        OpCase{"matmul_bf16",
               FUNC("%a: tensor<16x8xbf16>, %b: tensor<8x4xbf16>, %c: tensor<16x4xf32>",
                    "%r = linalg.matmul ins(%a, %b : tensor<16x8xbf16>, tensor<8x4xbf16>) "
                    "outs(%c : tensor<16x4xf32>) -> tensor<16x4xf32>"),
               "matmul:m=16,n=4,k=8:bf16"},
        OpCase{"matmul_transpose_a",
               FUNC("%a: tensor<32x64xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>",
                    "%r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, "
                    "affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] "
                    "ins(%a, %b : tensor<32x64xf32>, tensor<32x48xf32>) "
                    "outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>"),
               "matmul_transpose_a:m=64,n=48,k=32:f32"},
        OpCase{"matmul_transpose_b",
               FUNC("%a: tensor<64x32xf32>, %b: tensor<48x32xf32>, %c: tensor<64x48xf32>",
                    "%r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, "
                    "affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] "
                    "ins(%a, %b : tensor<64x32xf32>, tensor<48x32xf32>) "
                    "outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>"),
               "matmul_transpose_b:m=64,n=48,k=32:f32"},
        OpCase{"batch_matmul",
               FUNC("%a: tensor<3x64x32xf32>, %b: tensor<3x32x48xf32>, %c: tensor<3x64x48xf32>",
                    "%r = linalg.batch_matmul ins(%a, %b : tensor<3x64x32xf32>, "
                    "tensor<3x32x48xf32>) outs(%c : tensor<3x64x48xf32>) -> tensor<3x64x48xf32>"),
               "batch_matmul:b=3,m=64,n=48,k=32:f32"},
        OpCase{"conv_1d",
               FUNC("%i: tensor<2x34x8xf32>, %f: tensor<3x8x16xf32>, %o: tensor<2x32x16xf32>",
                    "%r = linalg.conv_1d_nwc_wcf ins(%i, %f : tensor<2x34x8xf32>, "
                    "tensor<3x8x16xf32>) outs(%o : tensor<2x32x16xf32>) -> tensor<2x32x16xf32>"),
               "conv_1d_nwc_wcf:n=2,w=34,c=8,kw=3,f=16,sw=1,dw=1:f32"},
        OpCase{"conv_1d_strided_dilated",
               FUNC("%i: tensor<1x20x4xf32>, %f: tensor<3x4x8xf32>, %o: tensor<1x8x8xf32>",
                    "%r = linalg.conv_1d_nwc_wcf {dilations = dense<2> : tensor<1xi64>, "
                    "strides = dense<2> : tensor<1xi64>} ins(%i, %f : tensor<1x20x4xf32>, "
                    "tensor<3x4x8xf32>) outs(%o : tensor<1x8x8xf32>) -> tensor<1x8x8xf32>"),
               "conv_1d_nwc_wcf:n=1,w=20,c=4,kw=3,f=8,sw=2,dw=2:f32"},
        OpCase{"conv_2d",
               FUNC("%i: tensor<1x18x18x8xf32>, %f: tensor<3x3x8x16xf32>, "
                    "%o: tensor<1x8x16x16xf32>",
                    "%r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, "
                    "strides = dense<[2, 1]> : tensor<2xi64>} ins(%i, %f : "
                    "tensor<1x18x18x8xf32>, tensor<3x3x8x16xf32>) "
                    "outs(%o : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>"),
               "conv_2d_nhwc_hwcf:n=1,h=18,w=18,c=8,kh=3,kw=3,f=16,sh=2,sw=1,dh=1,dw=1:f32"},
        OpCase{"conv_2d_f64_default",
               FUNC("%i: tensor<1x6x6x2xf64>, %f: tensor<3x3x2x4xf64>, %o: tensor<1x4x4x4xf64>",
                    "%r = linalg.conv_2d_nhwc_hwcf ins(%i, %f : tensor<1x6x6x2xf64>, "
                    "tensor<3x3x2x4xf64>) outs(%o : tensor<1x4x4x4xf64>) -> tensor<1x4x4x4xf64>"),
               "conv_2d_nhwc_hwcf:n=1,h=6,w=6,c=2,kh=3,kw=3,f=4,sh=1,sw=1,dh=1,dw=1:f64"},
        OpCase{"depthwise_1d",
               FUNC("%i: tensor<1x16x8xf32>, %f: tensor<3x8xf32>, %o: tensor<1x14x8xf32>",
                    "%r = linalg.depthwise_conv_1d_nwc_wc ins(%i, %f : tensor<1x16x8xf32>, "
                    "tensor<3x8xf32>) outs(%o : tensor<1x14x8xf32>) -> tensor<1x14x8xf32>"),
               "depthwise_conv_1d_nwc_wc:n=1,w=16,c=8,kw=3,sw=1,dw=1:f32"},
        OpCase{"depthwise_2d",
               FUNC("%i: tensor<1x10x10x8xf32>, %f: tensor<3x3x8xf32>, %o: tensor<1x6x6x8xf32>",
                    "%r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<2> : "
                    "tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : "
                    "tensor<1x10x10x8xf32>, tensor<3x3x8xf32>) outs(%o : tensor<1x6x6x8xf32>) "
                    "-> tensor<1x6x6x8xf32>"),
               "depthwise_conv_2d_nhwc_hwc:n=1,h=10,w=10,c=8,kh=3,kw=3,sh=1,sw=1,dh=2,dw=2:f32"},
        OpCase{"transpose",
               FUNC("%a: tensor<16x32xf32>, %b: tensor<32x16xf32>",
                    "%r = linalg.transpose ins(%a : tensor<16x32xf32>) "
                    "outs(%b : tensor<32x16xf32>) permutation = [1, 0]"),
               "transpose_2d:m=16,n=32:f32"},
        OpCase{"reduce_rows",
               FUNC("%a: tensor<16x32xf32>, %b: tensor<16xf32>",
                    "%r = linalg.reduce ins(%a : tensor<16x32xf32>) outs(%b : tensor<16xf32>) "
                    "dimensions = [1]\n (%x: f32, %acc: f32) {\n"
                    "  %s = arith.addf %x, %acc : f32\n  linalg.yield %s : f32\n }"),
               "reduce_rows_2d:m=16,n=32:f32"},
        OpCase{"reduce_cols",
               FUNC("%a: tensor<16x32xf32>, %b: tensor<32xf32>",
                    "%r = linalg.reduce ins(%a : tensor<16x32xf32>) outs(%b : tensor<32xf32>) "
                    "dimensions = [0]\n (%x: f32, %acc: f32) {\n"
                    "  %s = arith.addf %acc, %x : f32\n  linalg.yield %s : f32\n }"),
               "reduce_cols_2d:m=16,n=32:f32"},
        OpCase{"copy",
               FUNC("%a: tensor<16x32xf32>, %b: tensor<16x32xf32>",
                    "%r = linalg.copy ins(%a : tensor<16x32xf32>) outs(%b : tensor<16x32xf32>) "
                    "-> tensor<16x32xf32>"),
               "copy_2d:m=16,n=32:f32"}),
    [](const testing::TestParamInfo<OpCase>& info) { return std::string(info.param.name); });

struct Unsupported {
  const char* name;
  const char* body;
  const char* message_part;
};

class UnsupportedOpTest : public OpKeyTest {};

TEST_F(UnsupportedOpTest, OpsWithoutAFamilyAreUnimplementedWithAReason) {
  const Unsupported cases[] = {
      {"dynamic",
       FUNC("%a: tensor<?x32xf32>, %b: tensor<32x48xf32>, %c: tensor<?x48xf32>",
            "%r = linalg.matmul ins(%a, %b : tensor<?x32xf32>, tensor<32x48xf32>) "
            "outs(%c : tensor<?x48xf32>) -> tensor<?x48xf32>"),
       "statically shaped"},
      {"int",
       FUNC("%a: tensor<4x4xi32>, %b: tensor<4x4xi32>, %c: tensor<4x4xi32>",
            "%r = linalg.matmul ins(%a, %b : tensor<4x4xi32>, tensor<4x4xi32>) "
            "outs(%c : tensor<4x4xi32>) -> tensor<4x4xi32>"),
       "element types i32 -> i32"},
      {"both_transposed",
       FUNC("%a: tensor<32x64xf32>, %b: tensor<48x32xf32>, %c: tensor<64x48xf32>",
            "%r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, "
            "affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] "
            "ins(%a, %b : tensor<32x64xf32>, tensor<48x32xf32>) "
            "outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>"),
       "indexing maps"},
      {"max_reduce",
       FUNC("%a: tensor<16x32xf32>, %b: tensor<16xf32>",
            "%r = linalg.reduce ins(%a : tensor<16x32xf32>) outs(%b : tensor<16xf32>) "
            "dimensions = [1]\n (%x: f32, %acc: f32) {\n"
            "  %s = arith.maximumf %x, %acc : f32\n  linalg.yield %s : f32\n }"),
       "only sums"},
      {"transpose_f64",
       FUNC("%a: tensor<16x32xf64>, %b: tensor<32x16xf64>",
            "%r = linalg.transpose ins(%a : tensor<16x32xf64>) "
            "outs(%b : tensor<32x16xf64>) permutation = [1, 0]"),
       "element types f64 -> f64"},
      {"depthwise_f64",
       FUNC("%i: tensor<1x16x8xf64>, %f: tensor<3x8xf64>, %o: tensor<1x14x8xf64>",
            "%r = linalg.depthwise_conv_1d_nwc_wc ins(%i, %f : tensor<1x16x8xf64>, "
            "tensor<3x8xf64>) outs(%o : tensor<1x14x8xf64>) -> tensor<1x14x8xf64>"),
       "element types f64 -> f64"},
      {"batch_bf16",
       FUNC("%a: tensor<2x4x8xbf16>, %b: tensor<2x8x4xbf16>, %c: tensor<2x4x4xf32>",
            "%r = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xbf16>, tensor<2x8x4xbf16>) "
            "outs(%c : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>"),
       "element types bf16 -> f32"},
      {"fill",
       FUNC("%a: tensor<16x32xf32>, %v: f32",
            "%r = linalg.fill ins(%v : f32) outs(%a : tensor<16x32xf32>) -> tensor<16x32xf32>"),
       "no op family covers this op"},
  };
  for (const Unsupported& c : cases) {
    mlir::Operation* op = ParseOp(c.body);
    ASSERT_NE(op, nullptr) << c.name;
    absl::StatusOr<std::string> key = ProblemKeyForOp(op);
    ASSERT_FALSE(key.ok()) << c.name << " gave " << *key;
    EXPECT_EQ(key.status().code(), absl::StatusCode::kUnimplemented) << c.name;
    EXPECT_NE(key.status().message().find(c.message_part), std::string::npos)
        << c.name << ": " << key.status().message();
  }
}

TEST(OpPatternForKey, RejectsMalformedKeysAndUnknownFamilies) {
  EXPECT_EQ(OpPatternForKey("matmul:m=1,n=2:f32").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpPatternForKey("matmul:n=1,m=2,k=3:f32").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpPatternForKey("softmax:m=1:f32").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpPatternForKey("matmul").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mtune::strategies
