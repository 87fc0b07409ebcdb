#include "strategies/problem.h"

#include "gtest/gtest.h"
#include "strategies/candidate.h"
#include "strategies/payload.h"

namespace mtune::strategies {
namespace {

TEST(ProblemKey, ParsesAndPrintsCanonically) {
  auto p = ParseProblemKey("matmul:k=513,m=127,n=255:f32");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Key(), "matmul:m=127,n=255,k=513:f32");
  EXPECT_EQ(p->Dim("m"), 127);
  EXPECT_EQ(p->Dim("k"), 513);
  EXPECT_DOUBLE_EQ(p->Flops(), 2.0 * 127 * 255 * 513);
  EXPECT_DOUBLE_EQ(p->CompulsoryBytes(), 4.0 * (127 * 513 + 513 * 255 + 2 * 127 * 255));
}

struct BadKey {
  const char* key;
  const char* message_part;
};

class BadProblemKey : public testing::TestWithParam<BadKey> {};

TEST_P(BadProblemKey, IsRejectedWithAClearMessage) {
  auto p = ParseProblemKey(GetParam().key);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find(GetParam().message_part), std::string::npos)
      << p.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Keys, BadProblemKey,
    testing::Values(BadKey{"matmul", "expected FAMILY"},
                    BadKey{"conv9d:m=1,n=1,k=1:f32", "unknown op family 'conv9d'"},
                    BadKey{"matmul:m=0,n=1,k=1:f32", "must be positive"},
                    BadKey{"matmul:m=-4,n=1,k=1:f32", "must be positive"},
                    BadKey{"matmul:m=4,n=1:f32", "missing dimension 'k'"},
                    BadKey{"matmul:m=4,n=1,k=2,q=3:f32", "unknown dimension 'q'"},
                    BadKey{"matmul:m=4,m=4,n=1,k=2:f32", "given twice"},
                    BadKey{"matmul:m=4x,n=1,k=2:f32", "not an integer"},
                    BadKey{"matmul:m=99999999999999999999,n=1,k=2:f32", "exceeds the limit"},
                    BadKey{"matmul:m=4,n=1,k=2:f16", "element type 'f16' is not supported"},
                    BadKey{"matmul:m=65536,n=65536,k=65536:f32", "exceeds"},
                    BadKey{"matmul:m=65537,n=1,k=1:f32", "exceeds the limit 65536"},
                    BadKey{"matmul:m=,n=1,k=1:f32", "not an integer"},
                    BadKey{"matmul:m=+4,n=1,k=1:f32", "not an integer"},
                    // Each operand fits, all three together do not (24 GiB of f64).
                    BadKey{"matmul:m=32768,n=32768,k=32768:f64", "GiB together"},
                    BadKey{"copy_2d:m=65536,n=65536:f32", "exceeds"}));

TEST(Candidate, CanonicalJsonIsSortedAndTyped) {
  const std::string v1 = TemplateDigest("module {}"), v2 = TemplateDigest("module { }");
  auto c = MakeCandidate("t", v1, {{"b", "8"}, {"a", "outerproduct"}});
  EXPECT_EQ(c.canonical_json(), R"({"a":"outerproduct","b":8})");
  EXPECT_EQ(c.hash().size(), 16u);
  EXPECT_EQ(c.hash(), MakeCandidate("t", v1, {{"a", "outerproduct"}, {"b", "8"}}).hash());
  EXPECT_NE(c.hash(), MakeCandidate("t", v1, {{"a", "dot"}, {"b", "8"}}).hash());
  EXPECT_NE(c.hash(), MakeCandidate("u", v1, {{"a", "outerproduct"}, {"b", "8"}}).hash());
  // Another text of the template: the same knobs are another candidate.
  EXPECT_NE(c.hash(), MakeCandidate("t", v2, {{"a", "outerproduct"}, {"b", "8"}}).hash());
  EXPECT_TRUE(HasTemplateDigest(c, v1));
  EXPECT_FALSE(HasTemplateDigest(c, v2));
  // Comments, trailing blanks and blank lines are not code; "//" inside a string is.
  EXPECT_EQ(TemplateDigest("// why\nmodule {} // note\n\n"), v1);
  EXPECT_NE(TemplateDigest("module {\"//\"}"), TemplateDigest("module {\""));
  EXPECT_EQ(TemplateDigest("%a = \"x\\\"//y\" // c"), TemplateDigest("%a = \"x\\\"//y\""));
  EXPECT_EQ(v1.size(), 16u);
}

TEST(Payload, MatmulHasTheProblemShapes) {
  auto p = ParseProblemKey("matmul:m=3,n=5,k=7:f32");
  ASSERT_TRUE(p.ok());
  auto text = MakePayload(*p);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("memref<3x7xf32>"), std::string::npos);
  EXPECT_NE(text->find("memref<7x5xf32>"), std::string::npos);
  EXPECT_NE(text->find("linalg.matmul"), std::string::npos);
}

}  // namespace
}  // namespace mtune::strategies
