#include "strategies/row_sum_estimate.h"

#include "gtest/gtest.h"
#include "strategies/kernel_estimate.h"

namespace mtune::strategies {
namespace {

Problem RowSumProblem(const char* key) {
  auto p = ParseProblemKey(key);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

const Problem kRows = RowSumProblem("reduce_rows_2d:m=256,n=512:f32");

double Split(const char* bands, const char* tile_m, const char* split, const char* lowering,
             const Problem& problem = kRows) {
  return RowSumEstimate(problem,
                        {{"bands", bands},
                         {"tile_m", tile_m},
                         {"tile_n", "32"},
                         {"split_reduction", split},
                         {"reduction_lowering", lowering},
                         {"prefetch_ahead", "0"}},
                        VectorRegisters::Avx512())
      .value_or(-1);
}

// 4 rows split by 32: 8 partial sums of 16 lanes, a step of 8 loads takes 4 cycles
// (the load rate and the add latency alike), 16 steps: 64 cycles for 4 x 512 floats,
// 64 at the load rate; then 4 rows merge 2 vectors with a 4-level shuffle tree.
TEST(RowSumEstimate, SplitRowsCountLoadsLatencyAndTheMerge) {
  EXPECT_DOUBLE_EQ(Split("4", "1", "32", "innerreduction"), 64.0 / (64 + 4 * (1 + 8) / 2.0));
  // One row: 2 partial sums wait 4 cycles a step for 1 cycle of loads.
  EXPECT_DOUBLE_EQ(Split("1", "1", "32", "innerreduction"), 16.0 / (64 + 9 / 2.0));
  // The merge transposed: 2 shuffles and 31 adds of one row.
  EXPECT_DOUBLE_EQ(Split("1", "1", "32", "innerparallel"), 16.0 / (64 + 33 / 2.0));
  // Split by 8: half of each 16-lane vector idle.
  EXPECT_LT(Split("8", "1", "8", "innerreduction"), 0.5);
}

// 8 bands of 4 rows split by 32: 64 partial sums, 48 beyond the 16 registers left for
// them, each of those adding a store and a reload.
TEST(RowSumEstimate, PartialSumsBeyondHalfTheRegistersSpill) {
  // 32 rows: 512 cycles at the load rate; 16 steps of 32 cycles of loads, 2.5 times
  // that with the spills; the merge of 32 rows.
  EXPECT_DOUBLE_EQ(Split("8", "4", "32", "innerreduction"), 512.0 / (16 * 32 * 2.5 + 32 * 9 / 2.0));
  EXPECT_DOUBLE_EQ(Split("8", "1", "32", "innerreduction"), 128.0 / (16 * 8 + 8 * 9 / 2.0));  // 16 sums fit
}

// Without a split a row's tiles form a chain through the output.
TEST(RowSumEstimate, UnsplitTilesChainThroughTheOutput) {
  const double split = Split("1", "8", "32", "innerreduction");
  const double unsplit = Split("1", "8", "none", "innerreduction");
  EXPECT_LT(unsplit, split / 2);
}

// 12 rows in tiles of 8: the second tile sums 4 rows of padding.
TEST(RowSumEstimate, PartialRowTilesPad) {
  const Problem twelve = RowSumProblem("reduce_rows_2d:m=12,n=512:f32"), sixteen = RowSumProblem("reduce_rows_2d:m=16,n=512:f32");
  EXPECT_DOUBLE_EQ(Split("1", "8", "32", "innerreduction", twelve) / Split("1", "8", "32", "innerreduction", sixteen),
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
  EXPECT_TRUE(KernelEstimate("reduce_tiled", kRows,
                             {{"tile_m", "1"}, {"split_reduction", "32"}, {"reduction_lowering", "innerreduction"}},
                             VectorRegisters::Avx512()));
}

}  // namespace
}  // namespace mtune::strategies
