#include "bench/baselines.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::bench {
namespace {

using ::testing::HasSubstr;

class EveryLibrary : public ::testing::TestWithParam<GemmLibrary> {};

std::vector<float> Pattern(size_t count, int salt) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>(static_cast<int>((i * 37 + salt * 11) % 23) - 11) / 8.0f;
  }
  return values;
}

TEST_P(EveryLibrary, MatchesNaiveReferenceOnOddSizes) {
  const int m = 67, n = 45, k = 33;
  const std::vector<float> a = Pattern(m * k, 1);
  const std::vector<float> b = Pattern(k * n, 2);
  // C is accumulated into, as linalg.matmul does (beta = 1).
  std::vector<float> c(m * n);
  for (int i = 0; i < m * n; ++i) c[i] = static_cast<float>(i % 5) - 2.0f;
  const std::vector<float> c_before = c;
  ASSERT_TRUE(RunSgemm(GetParam(), m, n, k, a.data(), b.data(), c.data()).ok());
  int mismatches = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = c_before[i * n + j];
      double magnitude = std::abs(want);
      for (int p = 0; p < k; ++p) {
        want += double{a[i * k + p]} * b[p * n + j];
        magnitude += std::abs(double{a[i * k + p]} * b[p * n + j]);
      }
      const double got = c[i * n + j];
      // f32 accumulation error grows with k and the terms' magnitude, not the result's.
      if (std::abs(got - want) > 1e-5 * (magnitude + 1.0) && ++mismatches <= 5) {
        ADD_FAILURE() << GemmLibraryName(GetParam()) << " C[" << i << "][" << j
                      << "] = " << got << ", want " << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_P(EveryLibrary, TimingIsPositive) {
  absl::StatusOr<GemmTiming> timing = TimeSgemm(GetParam(), 64, 48, 32, 0.005);
  ASSERT_TRUE(timing.ok()) << timing.status();
  EXPECT_GT(timing->median_s, 0.0);
  EXPECT_GT(timing->gflops, 0.0);
  EXPECT_TRUE(std::isfinite(timing->gflops));
  EXPECT_GE(timing->repetitions, 3);
}

TEST_P(EveryLibrary, RejectsEmptyShapes) {
  const absl::Status status = RunSgemm(GetParam(), 0, 4, 4, nullptr, nullptr, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("m=0"));
  EXPECT_FALSE(TimeSgemm(GetParam(), 4, 4, 4, -1.0).ok());
}

INSTANTIATE_TEST_SUITE_P(Baselines, EveryLibrary, ::testing::ValuesIn(kAllGemmLibraries),
                         [](const auto& info) {
                           return std::string(GemmLibraryName(info.param));
                         });

TEST(Baselines, NamedWrappersTimeTheirLibrary) {
  for (auto time : {&TimeOneDnnSgemm, &TimeEigenSgemm, &TimeOpenBlasSgemm}) {
    absl::StatusOr<GemmTiming> timing = time(32, 32, 32, 0.001);
    ASSERT_TRUE(timing.ok()) << timing.status();
    EXPECT_GT(timing->gflops, 0.0);
  }
}

}  // namespace
}  // namespace mtune::bench
