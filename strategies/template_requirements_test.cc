// Templates' element-type and CPU-feature requirements (template_requirements.h).
#include "strategies/template_requirements.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"

namespace mtune::strategies {
namespace {

// A template whose @__transform_main carries `attributes` ("" for none).
std::string Template(const std::string& attributes) {
  return "module attributes {transform.with_named_sequence} {\n"
         "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})" +
         (attributes.empty() ? "" : " attributes {" + attributes + "}") +
         " {\n    transform.yield\n  }\n}\n";
}

TEST(TemplateRequirements, ReadFromTheEntrySequence) {
  auto none = ReadTemplateRequirements(Template(""));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->element_types.empty());
  EXPECT_TRUE(none->cpu_features.empty());
  auto both = ReadTemplateRequirements(
      Template(R"(mtune.element_types = ["bf16", "f32"], mtune.cpu_features = ["avx512bf16"])"));
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->element_types, (std::vector<std::string>{"bf16", "f32"}));
  EXPECT_EQ(both->cpu_features, std::vector<std::string>{"avx512bf16"});
}

TEST(TemplateRequirements, AnythingButANonEmptyArrayOfNamesIsAnError) {
  for (const std::string attributes :
       {R"(mtune.cpu_features = "avx512bf16")", R"(mtune.cpu_features = [])",
        R"(mtune.element_types = [3])", R"(mtune.element_types = [""])"}) {
    auto read = ReadTemplateRequirements(Template(attributes));
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << attributes;
    EXPECT_TRUE(absl::StrContains(read.status().message(), "must be a non-empty array of strings"))
        << read.status();
    // The knob space, where jobs and the CLI meet a template, refuses it too.
    auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
    ASSERT_TRUE(problem.ok());
    EXPECT_EQ(ExtractKnobSpace(Template(attributes), *problem).status().code(),
              absl::StatusCode::kInvalidArgument)
        << attributes;
  }
}

TEST(TemplateRequirements, AProblemOfAnotherElementTypeHasNoSpace) {
  auto tpl = FindTemplate("matmul_bf16_vnni");
  ASSERT_TRUE(tpl.ok()) << tpl.status();
  auto f32 = ParseProblemKey("matmul:m=64,n=64,k=64:f32");
  ASSERT_TRUE(f32.ok());
  auto refused = ExtractKnobSpace(tpl->text, *f32);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "tunes bf16 problems only")) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "not f32")) << refused.status();
  auto bf16 = ParseProblemKey("matmul:m=64,n=64,k=64:bf16");
  ASSERT_TRUE(bf16.ok());
  auto space = ExtractKnobSpace(tpl->text, *bf16);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->cpu_features, std::vector<std::string>{"avx512bf16"});
}

TEST(TemplateRequirements, MissingFeaturesAreThoseNotEnabled) {
  TemplateRequirements needs{{}, {"avx512f", "avx512bf16", "amx-bf16"}};
  EXPECT_TRUE(MissingCpuFeatures(needs, "+amx-bf16,+avx512bf16,+avx512f,+fma").empty());
  // Disabled (-) and absent features are missing; a name is matched whole.
  EXPECT_EQ(MissingCpuFeatures(needs, "+avx512f,-avx512bf16,+amx-bf16x"),
            (std::vector<std::string>{"avx512bf16", "amx-bf16"}));
  EXPECT_TRUE(MissingCpuFeatures(TemplateRequirements{}, "").empty());
}

}  // namespace
}  // namespace mtune::strategies
