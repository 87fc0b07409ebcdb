// Every op family: its example key parses and prints canonically, its payload is
// valid MLIR, its work counts follow the definition, and bad shapes are rejected.
#include "gtest/gtest.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "strategies/mlir_support.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"

namespace mtune::strategies {
namespace {

TEST(Families, EveryExampleParsesAndItsPayloadVerifies) {
  auto context = MakeMlirContext();
  ASSERT_GE(Families().size(), 12u);
  for (const FamilyInfo& family : Families()) {
    auto problem = ParseProblemKey(family.example);
    ASSERT_TRUE(problem.ok()) << family.name << ": " << problem.status();
    EXPECT_EQ(problem->Key(), family.example) << "example keys are canonical";
    auto payload = MakePayload(*problem);
    ASSERT_TRUE(payload.ok()) << payload.status();
    DiagnosticCapture diagnostics(context.get());
    auto module = mlir::parseSourceString<mlir::ModuleOp>(*payload, context.get());
    EXPECT_TRUE(module) << family.name << ":\n" << *payload << diagnostics.text();
    EXPECT_GT(problem->CompulsoryBytes(), 0);
    if (!family.default_template.empty()) {
      auto tpl = DefaultTemplateFor(family.name);
      ASSERT_TRUE(tpl.ok()) << tpl.status();
      EXPECT_TRUE(tpl->TunesFamily(family.name)) << tpl->name << " does not list " << family.name;
    }
    for (const std::string& name : family.target_templates) {
      auto tpl = FindTemplate(name);
      ASSERT_TRUE(tpl.ok()) << tpl.status();
      EXPECT_TRUE(tpl->TunesFamily(family.name)) << name << " does not list " << family.name;
    }
  }
}

TEST(Families, ConvolutionShapesFollowStridesAndDilations) {
  // ow = floor((w - dw*(kw-1) - 1) / sw) + 1 = floor((17 - 4 - 1) / 2) + 1 = 7.
  auto p = ParseProblemKey("conv_1d_nwc_wcf:n=2,w=17,c=3,kw=3,f=5,sw=2,dw=2:f32");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Dim("ow"), 7);
  EXPECT_EQ(p->Operands().back().shape, (std::vector<int64_t>{2, 7, 5}));
  EXPECT_DOUBLE_EQ(p->Flops(), 2.0 * 2 * 7 * 5 * 3 * 3);
  EXPECT_EQ(p->TermsPerOutput(), 9);
  // Strides and dilations default to 1 and are printed.
  auto q = ParseProblemKey("depthwise_conv_2d_nhwc_hwc:n=1,h=8,w=8,c=4,kh=3,kw=3:f32");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->Key(), "depthwise_conv_2d_nhwc_hwc:n=1,h=8,w=8,c=4,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32");
  EXPECT_EQ(q->Operands().back().shape, (std::vector<int64_t>{1, 6, 6, 4}));
}

TEST(Families, ElementTypesSetOperandTypesAndBytes) {
  auto bf16 = ParseProblemKey("matmul:m=4,n=8,k=16:bf16");
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->Operands()[0].element_type, "bf16");
  EXPECT_EQ(bf16->Operands()[2].element_type, "f32");  // accumulates in f32
  EXPECT_DOUBLE_EQ(bf16->CompulsoryBytes(), 2.0 * (4 * 16 + 16 * 8) + 4.0 * 2 * 4 * 8);
  auto f64 = ParseProblemKey("matmul_transpose_a:m=4,n=8,k=16:f64");
  ASSERT_TRUE(f64.ok());
  EXPECT_EQ(f64->Operands()[0].shape, (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(f64->FootprintBytes(), 8u * (16 * 4 + 16 * 8 + 4 * 8));
  // Copies do not read their output.
  auto copy = ParseProblemKey("copy_2d:m=3,n=5:f32");
  ASSERT_TRUE(copy.ok());
  EXPECT_DOUBLE_EQ(copy->CompulsoryBytes(), 4.0 * 2 * 15);
}

struct BadShape {
  const char* key;
  const char* message_part;
};
class BadFamilyShape : public testing::TestWithParam<BadShape> {};

TEST_P(BadFamilyShape, IsRejectedWithAClearMessage) {
  auto p = ParseProblemKey(GetParam().key);
  ASSERT_FALSE(p.ok()) << GetParam().key;
  EXPECT_NE(p.status().message().find(GetParam().message_part), std::string::npos)
      << p.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Keys, BadFamilyShape,
    testing::Values(
        BadShape{"conv_1d_nwc_wcf:n=1,w=4,c=3,kw=3,f=5,dw=2:f32", "spans 5 elements, more than the input w=4"},
        BadShape{"conv_2d_nhwc_hwcf:n=1,h=2,w=9,c=3,kh=3,kw=3,f=5:f32", "more than the input h=2"},
        BadShape{"depthwise_conv_1d_nwc_wc:n=1,w=9,c=0,kw=3:f32", "must be positive"},
        BadShape{"conv_1d_nwc_wcf:n=1,w=9,c=3,kw=3,f=5,sw=-1:f32", "must be positive"},
        BadShape{"conv_1d_nwc_wcf:n=1,w=9,c=3,f=5:f32", "missing dimension 'kw'"},
        BadShape{"transpose_2d:m=4,n=4:f64", "not supported"},
        BadShape{"batch_matmul:b=65536,m=65536,n=1,k=1:f32", "exceeds"}));

}  // namespace
}  // namespace mtune::strategies
