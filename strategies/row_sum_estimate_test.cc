#include "strategies/row_sum_estimate.h"

#include <cmath>

#include "gtest/gtest.h"
#include "strategies/kernel_estimate.h"

namespace mtune::strategies {
namespace {

// A bad key aborts the test binary with its status (StatusOr::value).
Problem RowSumProblem(const char* key) { return ParseProblemKey(key).value(); }

const Problem kRows = RowSumProblem("reduce_rows_2d:m=256,n=512:f32");  // rows 2 KiB apart

double Estimate(const char* bands, const char* tile_m, const char* split, const char* lowering,
                const Problem& problem = kRows, const char* tile_n = "32", int64_t l2_bytes = 0) {
  return RowSumEstimate(problem,
                        {{"bands", bands},
                         {"tile_m", tile_m},
                         {"tile_n", tile_n},
                         {"split_reduction", split},
                         {"reduction_lowering", lowering},
                         {"prefetch_ahead", "0"}},
                        VectorRegisters::Avx512(), l2_bytes)
      .value_or(-1);
}

// One row of 512 floats split by 32: a step reads 128 bytes, 4 cycles at 32 bytes a
// cycle and no shorter than an add's latency; 16 steps (64 cycles, the stream rate),
// then the row's two vectors are added and merged by a 4-level shuffle tree: 9
// operations, 2 a cycle.
TEST(RowSumEstimate, SplitRowsStreamAtTheRateTheirStepsCarry) {
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "32", "innerreduction"), 64.0 / (64 + 9 / 2.0));
  // The merge transposed instead: 32 / 2 + 32 operations.
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "32", "innerparallel"), 64.0 / (64 + 48 / 2.0));
  // Split by 16, one row: a step of 64 bytes still waits 4 cycles for its add.
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "16", "innerreduction"), 64.0 / (32 * 4 + 8 / 2.0));
  // Two rows (two bands) carry 128 bytes a step again; the second row costs 2%.
  EXPECT_DOUBLE_EQ(Estimate("2", "1", "16", "innerreduction"), 128.0 / ((32 * 4 + 16 / 2.0) * 1.02));
}

// Split by 8, 4 rows carry 128 bytes a step in half-width loads: the stream rate all
// the same, less the tie-break of 3 more rows.
TEST(RowSumEstimate, NarrowSplitsCountOnlyTheBytesTheirStepsCarry) {
  EXPECT_DOUBLE_EQ(Estimate("1", "4", "8", "innerreduction"), 256.0 / ((64 * 4 + 4 * 6 / 2.0) * 1.06));
}

// 200 columns: split by 8 divides them; split by 16 leaves each row tile a masked
// remainder (30 cycles), once per band.
TEST(RowSumEstimate, AWidthThatDoesNotDivideTheRowEndsInAMaskedRemainder) {
  const Problem odd = RowSumProblem("reduce_rows_2d:m=1000,n=200:f32");
  // 4 rows split by 8: 25 steps of 4 cycles, merges of 4 rows by a 3-level tree.
  EXPECT_DOUBLE_EQ(Estimate("1", "4", "8", "innerreduction", odd), 100.0 / ((25 * 4 + 12) * 1.06));
  // 4 rows split by 16: 13 steps of 8 cycles, the merge, one remainder.
  EXPECT_DOUBLE_EQ(Estimate("1", "4", "16", "innerreduction", odd), 100.0 / ((13 * 8 + 16 + 30) * 1.06));
  // The same rows as 4 bands: four remainders.
  EXPECT_DOUBLE_EQ(Estimate("4", "1", "16", "innerreduction", odd), 100.0 / ((13 * 8 + 16 + 120) * 1.06));
  // Without a split every tile of 16 is masked: 13 tiles of 4 + 4 + 0.5 + 30 cycles.
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "none", "innerreduction", odd, "16"), 25.0 / (13 * (4 + 4 + 0.5 + 30)));
  EXPECT_GT(Estimate("1", "4", "8", "innerreduction", odd), Estimate("1", "4", "16", "innerreduction", odd));
}

// Rows beyond those a step needs: 2 rows split by 32 stream no faster than one, and
// rank below it.
TEST(RowSumEstimate, AtTheStreamRateFewerRowsRankFirst) {
  EXPECT_DOUBLE_EQ(Estimate("2", "1", "32", "innerreduction"), 128.0 / ((16 * 8 + 18 / 2.0) * 1.02));
  EXPECT_LT(Estimate("2", "1", "32", "innerreduction"), Estimate("1", "1", "32", "innerreduction"));
}

// 384 x 640 floats are 0.9375 of a 1 MiB L2: 0.875 of their lines are taken to come
// from beyond it, which fewer than 4 rows side by side draw at (rows / 4)^(1/4) of
// the stream rate.
TEST(RowSumEstimate, BeyondTheL2FewerThanFourRowsSideBySideStreamSlower) {
  const Problem near_l2 = RowSumProblem("reduce_rows_2d:m=384,n=640:f32");
  constexpr int64_t kL2 = 1 << 20;
  const double one_row = 1 - 0.875 * (1 - std::pow(0.25, 0.25));
  // One row split by 32: 20 steps of 128 bytes at that share of 32 bytes a cycle.
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "32", "innerreduction", near_l2, "32", kL2),
                   80.0 / (20 * 4 / one_row + 9 / 2.0));
  const double two_rows = 1 - 0.875 * (1 - std::pow(0.5, 0.25));
  EXPECT_DOUBLE_EQ(Estimate("2", "1", "16", "innerreduction", near_l2, "32", kL2),
                   160.0 / ((40 * 4 / two_rows + 16 / 2.0) * 1.02));
  // Four rows keep the full rate, and now rank above one.
  EXPECT_DOUBLE_EQ(Estimate("4", "1", "8", "innerreduction", near_l2, "32", kL2),
                   Estimate("4", "1", "8", "innerreduction", near_l2));
  EXPECT_GT(Estimate("4", "1", "8", "innerreduction", near_l2, "32", kL2),
            Estimate("1", "1", "32", "innerreduction", near_l2, "32", kL2));
  // Within half the L2 (512 KiB), or with the L2 unknown, one row keeps the rate.
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "32", "innerreduction", kRows, "32", kL2),
                   Estimate("1", "1", "32", "innerreduction"));
  EXPECT_LT(Estimate("1", "1", "32", "innerreduction", near_l2, "32", kL2),
            Estimate("1", "1", "32", "innerreduction", near_l2));
  // At twice the L2 and beyond, every line: one row reaches 0.25^(1/4) of the rate.
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "32", "innerreduction", near_l2, "32", kL2 / 4),
                   80.0 / (20 * 4 / std::pow(0.25, 0.25) + 9 / 2.0));
}

// 16 rows 4 KiB apart all fall in one L1 set of 8 ways; 2 KiB apart they share two.
TEST(RowSumEstimate, RowsBeyondTheL1WaysOfOneSetEvictEachOther) {
  const Problem four_kib = RowSumProblem("reduce_rows_2d:m=128,n=1024:f32");
  const Problem two_kib = RowSumProblem("reduce_rows_2d:m=256,n=512:f32");
  const double conflicting = Estimate("1", "16", "32", "innerreduction", four_kib);
  const double fitting = Estimate("1", "16", "32", "innerreduction", two_kib);
  // 16 rows: 32 partial sums, 16 beyond half the registers (x2); 15 rows beyond one (x1.3).
  EXPECT_DOUBLE_EQ(fitting, 1024.0 / ((16 * 64 + 16 * 9 / 2.0) * 2 * 1.3));
  EXPECT_DOUBLE_EQ(conflicting, 2048.0 / ((32 * 64 + 16 * 9 / 2.0) * 2 * 2 * 1.3));
  // 16 bands of 8 rows: their rows, 32 KiB apart, fall in one set too.
  EXPECT_DOUBLE_EQ(Estimate("16", "1", "32", "innerreduction", four_kib), conflicting);
}

// 8 rows split by 32 keep 16 partial sums, half the registers; 16 rows keep 32.
TEST(RowSumEstimate, PartialSumsBeyondHalfTheRegistersSpill) {
  const Problem rows = RowSumProblem("reduce_rows_2d:m=256,n=256:f32");  // 1 KiB apart: 4 sets
  EXPECT_DOUBLE_EQ(Estimate("1", "8", "32", "innerreduction", rows), 256.0 / ((8 * 32 + 72 / 2.0) * 1.14));
  EXPECT_DOUBLE_EQ(Estimate("1", "16", "32", "innerreduction", rows),
                   512.0 / ((8 * 64 + 144 / 2.0) * 2 * 1.3));
}

// Without a split every tile merges its rows and adds them into the output: one row
// in tiles of 32 takes 16 tiles of 4 + 9 / 2 + 1 / 2 cycles.
TEST(RowSumEstimate, UnsplitTilesMergeEveryTile) {
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "none", "innerreduction"), 64.0 / (16 * (4 + 4.5 + 0.5)));
  EXPECT_LT(Estimate("1", "1", "none", "innerreduction"), Estimate("1", "1", "32", "innerreduction") / 2);
  // tile_n is read only without a split.
  EXPECT_DOUBLE_EQ(Estimate("1", "1", "32", "innerreduction", kRows, "8"),
                   Estimate("1", "1", "32", "innerreduction", kRows, "128"));
}

// 12 rows in tiles of 8: the second tile sums 4 rows of padding.
TEST(RowSumEstimate, PartialRowTilesPad) {
  const Problem twelve = RowSumProblem("reduce_rows_2d:m=12,n=512:f32");
  const Problem sixteen = RowSumProblem("reduce_rows_2d:m=16,n=512:f32");
  EXPECT_DOUBLE_EQ(Estimate("1", "8", "32", "innerreduction", twelve) /
                       Estimate("1", "8", "32", "innerreduction", sixteen),
                   12.0 / 16);
}

TEST(RowSumEstimate, OnlyRowSumsOfTheReduceTemplate) {
  const Problem cols = RowSumProblem("reduce_cols_2d:m=256,n=512:f32");
  EXPECT_TRUE(HasKernelEstimate("reduce_tiled", kRows));
  EXPECT_FALSE(HasKernelEstimate("reduce_tiled", cols));
  EXPECT_FALSE(HasKernelEstimate("copy_tiled", kRows));
  EXPECT_FALSE(RowSumEstimate(cols, {{"tile_m", "1"}, {"split_reduction", "32"}, {"reduction_lowering", "innerreduction"}},
                              VectorRegisters::Avx512()));
  EXPECT_FALSE(RowSumEstimate(kRows, {{"tile_m", "1"}}, VectorRegisters::Avx512()));
  EXPECT_FALSE(RowSumEstimate(kRows, {{"tile_m", "1"}, {"split_reduction", "none"}, {"reduction_lowering", "innerreduction"}},
                              VectorRegisters::Avx512()))
      << "no tile_n without a split";
  EXPECT_FALSE(RowSumEstimate(kRows, {{"bands", "0.5"}, {"tile_m", "1"}, {"split_reduction", "32"}, {"reduction_lowering", "innerreduction"}},
                              VectorRegisters::Avx512()))
      << "counts below one";
  EXPECT_FALSE(RowSumEstimate(kRows, {{"tile_m", "1"}, {"split_reduction", "0.5"}, {"reduction_lowering", "innerreduction"}},
                              VectorRegisters::Avx512()));
  EXPECT_TRUE(KernelEstimate("reduce_tiled", kRows,
                             {{"tile_m", "1"}, {"split_reduction", "32"}, {"reduction_lowering", "innerreduction"}},
                             VectorRegisters::Avx512(), 0));
}

}  // namespace
}  // namespace mtune::strategies
