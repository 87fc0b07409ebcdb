#include "strategies/template_choice.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::strategies {
namespace {

using testing::HasSubstr;
using testing::Not;

constexpr char kAmx[] = "+avx512f,+avx512bf16,+amx-tile,+amx-bf16";
constexpr char kAvx512Bf16[] = "+avx512f,+avx512bf16,-amx-tile,-amx-bf16";
constexpr char kAvx2[] = "+avx2,+fma,-avx512f,-avx512bf16";

TemplateChoice Choose(const std::string& key, const std::vector<std::string>& targets) {
  auto problem = ParseProblemKey(key);
  EXPECT_TRUE(problem.ok()) << problem.status();
  auto choice = ChooseTemplate(*problem, targets);
  EXPECT_TRUE(choice.ok()) << choice.status();
  return choice.ok() ? *choice : TemplateChoice{};
}

TEST(ChooseTemplate, F32IsTheFamilysDefaultWhateverTheCpu) {
  const TemplateChoice choice = Choose("matmul:m=512,n=512,k=512:f32", {kAmx});
  EXPECT_EQ(choice.tpl.name, "matmul_packed");
  // The bf16-only templates are no choice for f32: not listed as passed over.
  EXPECT_EQ(choice.reason, "the family's default");
  EXPECT_EQ(Choose("conv_2d_nhwc_hwcf:n=1,h=10,w=10,c=32,kh=3,kw=3,f=32,sh=1,sw=1,dh=1,dw=1:f32", {kAmx})
                .tpl.name,
            "conv_2d_decomposed");
}

TEST(ChooseTemplate, Bf16MatmulTakesTheFastestTemplateTheTargetsCanRun) {
  for (const char* family : {"matmul", "matmul_transpose_a", "matmul_transpose_b"}) {
    const std::string key = std::string(family) + ":m=512,n=512,k=512:bf16";
    EXPECT_EQ(Choose(key, {kAmx}).tpl.name, "matmul_bf16_amx") << key;
    const TemplateChoice portable = Choose(key, {kAvx2});
    EXPECT_EQ(portable.tpl.name, "matmul_packed") << key;
    EXPECT_THAT(portable.reason, HasSubstr("matmul_bf16_amx needs amx-tile, amx-bf16, which no target has"));
  }
  for (const char* family : {"matmul", "matmul_transpose_a", "matmul_transpose_b"}) {
    const std::string key = std::string(family) + ":m=512,n=512,k=512:bf16";
    const TemplateChoice vnni = Choose(key, {kAvx512Bf16});
    EXPECT_EQ(vnni.tpl.name, "matmul_bf16_vnni") << key;
    EXPECT_THAT(vnni.reason, HasSubstr("matmul_bf16_amx needs amx-tile, amx-bf16, which no target has"));
    EXPECT_THAT(Choose(key, {kAvx2}).reason, HasSubstr("matmul_bf16_vnni needs avx512bf16, which no target has"));
  }
  // Templates of other families are no choice: batch_matmul has no bf16 template,
  // and none is said to be passed over.
  const TemplateChoice batch = Choose("batch_matmul:b=2,m=64,n=64,k=64:f32", {kAmx});
  EXPECT_EQ(batch.tpl.name, "matmul_packed");
  EXPECT_EQ(batch.reason, "the family's default");
}

TEST(ChooseTemplate, AChosenTargetTemplateComesPreparedForTheProblem) {
  // Choosing a target template instantiates it for the problem (to check that it has
  // candidates there); the coordinator plans the job with that rather than parsing
  // the template again. The family's default is not prepared.
  const std::string key = "matmul:m=127,n=255,k=513:bf16";
  const TemplateChoice vnni = Choose(key, {kAvx512Bf16});
  ASSERT_EQ(vnni.tpl.name, "matmul_bf16_vnni");
  ASSERT_TRUE(vnni.instantiator.has_value());
  auto fresh = TemplateInstantiator::Create(vnni.tpl.text, *ParseProblemKey(key));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_EQ(vnni.instantiator->space().knobs.size(), fresh->space().knobs.size());
  for (size_t i = 0; i < fresh->space().knobs.size(); ++i) {
    EXPECT_EQ(vnni.instantiator->space().knobs[i].name, fresh->space().knobs[i].name);
    EXPECT_EQ(vnni.instantiator->space().knobs[i].options, fresh->space().knobs[i].options);
  }
  EXPECT_FALSE(Choose(key, {kAvx2}).instantiator.has_value());
}

TEST(ChooseTemplate, OneTargetWithTheFeaturesIsEnough) {
  EXPECT_EQ(Choose("matmul:m=256,n=256,k=256:bf16", {kAvx2, kAmx}).tpl.name, "matmul_bf16_amx");
}

TEST(ChooseTemplate, NoKnownTargetMeansThePortableDefaultAndSaysSo) {
  const TemplateChoice choice = Choose("matmul:m=256,n=256,k=256:bf16", {});
  EXPECT_EQ(choice.tpl.name, "matmul_packed");
  EXPECT_THAT(choice.reason, HasSubstr("no worker registered"));
}

// A template's register tiles are sized for the smallest register file among the
// targets that can run it; targets that report no vector extension do not count.
TEST(RegistersForTemplate, TheSmallestOfTheTargetsThatCanRunIt) {
  auto portable = FindTemplate("matmul_packed");
  auto vnni = FindTemplate("matmul_bf16_vnni");
  ASSERT_TRUE(portable.ok() && vnni.ok());
  const VectorRegisters avx2{16, 32};
  EXPECT_EQ(*RegistersForTemplate(*portable, {kAmx, kAvx2}), avx2);
  EXPECT_EQ(*RegistersForTemplate(*portable, {kAmx}), VectorRegisters::Avx512());
  EXPECT_EQ(*RegistersForTemplate(*portable, {kAvx2, ""}), avx2);
  // Only the AVX-512 target has avx512bf16: the AVX2 one never runs its tasks.
  EXPECT_EQ(*RegistersForTemplate(*vnni, {kAvx512Bf16, kAvx2}), VectorRegisters::Avx512());
  // Nothing known: the templates' own target.
  EXPECT_EQ(*RegistersForTemplate(*portable, {}), VectorRegisters::Avx512());
  EXPECT_EQ(*RegistersForTemplate(*portable, {"", "+sve"}), VectorRegisters::Avx512());
  // The chosen template comes prepared for those registers.
  const TemplateChoice chosen = Choose("matmul:m=256,n=256,k=256:bf16", {kAmx, kAvx512Bf16});
  ASSERT_TRUE(chosen.instantiator.has_value());
  EXPECT_EQ(chosen.instantiator->space().registers, VectorRegisters::Avx512());
}

TEST(ChooseTemplate, ShapesATemplateCannotTileFallThrough) {
  // n = 40: no cache tile of n is a multiple of 16 columns, which AMX's tiles need;
  // AVX512-BF16's template pads n to 48.
  const TemplateChoice n40 = Choose("matmul:m=37,n=40,k=34:bf16", {kAmx});
  EXPECT_EQ(n40.tpl.name, "matmul_bf16_vnni");
  EXPECT_THAT(n40.reason, HasSubstr("matmul_bf16_amx has no valid candidate for this shape"));
  // k = 2: neither tiles it (AMX and AVX512-BF16 cache tiles hold at least two pairs).
  const TemplateChoice k2 = Choose("matmul:m=37,n=40,k=2:bf16", {kAmx});
  EXPECT_EQ(k2.tpl.name, "matmul_packed");
  EXPECT_THAT(k2.reason, HasSubstr("matmul_bf16_amx has no valid candidate for this shape"));
  EXPECT_THAT(k2.reason, HasSubstr("matmul_bf16_vnni has no valid candidate for this shape"));
  // An odd k: AMX's pairs need an even one; AVX512-BF16's cache tiles pad it.
  const TemplateChoice odd_k = Choose("matmul:m=37,n=96,k=67:bf16", {kAmx});
  EXPECT_EQ(odd_k.tpl.name, "matmul_bf16_vnni");
  EXPECT_THAT(odd_k.reason, HasSubstr("matmul_bf16_amx has no valid candidate"));
  EXPECT_THAT(odd_k.reason, Not(HasSubstr("which no target has")));
  // Where they tile it, they are chosen.
  EXPECT_EQ(Choose("matmul:m=37,n=96,k=34:bf16", {kAmx}).tpl.name, "matmul_bf16_amx");
  EXPECT_EQ(Choose("matmul:m=37,n=96,k=34:bf16", {kAvx512Bf16}).tpl.name, "matmul_bf16_vnni");
}

}  // namespace
}  // namespace mtune::strategies
