#include "strategies/transpose_estimate.h"

#include "gtest/gtest.h"
#include "strategies/kernel_estimate.h"

namespace mtune::strategies {
namespace {

// A bad key aborts the test binary with its status (StatusOr::value).
Problem TransposeProblem(const char* key) { return ParseProblemKey(key).value(); }

// Input rows 2 KiB apart: a band's sweep of 256 input rows puts 128 lines in each of
// two L1 sets, so input lines are fetched whole on every visit.
const Problem kConflicting = TransposeProblem("transpose_2d:m=256,n=512:f32");

double Estimate(const char* tile_r, const char* tile_c, const char* lowering, const Problem& problem = kConflicting,
                const char* unroll_c = "1", const VectorRegisters& registers = VectorRegisters::Avx512(),
                int64_t l2_bytes = 0) {
  return TransposeEstimate(problem,
                           {{"tile_r", tile_r},
                            {"tile_c", tile_c},
                            {"transpose_lowering", lowering},
                            {"unroll_c", unroll_c},
                            {"block_r", "0"},
                            {"block_c", "0"}},
                           registers, l2_bytes)
      .value_or(-1);
}

// 16 x 16 by its own network: 2 KiB moved (64 cycles at 32 bytes a cycle), 64
// shuffles, 16 stores: the stream rate.
TEST(TransposeEstimate, TheSixteenBySixteenNetworkKeepsUpWithTheStream) {
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "shuffle_16x16"), 1.0);
  // Any other lowering of it is a generic shuffle: 16 output registers, each from 16
  // input registers by 15 permutes; 32 live vectors fit the 32 registers.
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "shuffle_1d"), 64.0 / 240);
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "eltwise"), 64.0 / 240);
}

// The avx2 network is written for 8 x 8 only (24 shuffles); a generic 8 x 8 packs its
// 8 rows into 4 registers (4 inserts) and needs 4 output registers of 3 permutes. Both
// wait on the bytes: 8 input lines of 64 bytes fetched for 32 bytes each, and 256
// written, 24 cycles for 16 cycles' worth.
TEST(TransposeEstimate, ShapeSpecificNetworksOnlyForTheirShape) {
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "avx2"), 16.0 / 24);  // bytes bound both: 24 cycles
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "shuffle_1d"), 16.0 / 24);
  // Where input lines stay in the L1 (200 rows 1312 bytes apart), 512 bytes take 16
  // cycles: the avx2 network's 16 in-lane shuffles issue two a cycle beside its 8
  // lane-crossing ones (12 cycles), the generic shuffle's 16 permutes one a cycle.
  const Problem kept = TransposeProblem("transpose_2d:m=200,n=328:f32");
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "avx2", kept), 1.0);
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "shuffle_1d", kept), 1.0);
  // shuffle_16x16 on an 8 x 16 tile: generic. 16 input rows of 8 elements packed two
  // to a register (8 inserts), then 8 output registers from 8 input registers each
  // (56 permutes): 64 cycles, for 1536 bytes' 48.
  EXPECT_DOUBLE_EQ(Estimate("8", "16", "shuffle_16x16"), 32.0 / 64);
  // On AVX2 (32-byte registers) no 16 x 16 network: 32 output registers of 8 lanes, 8
  // input registers each, and 64 live vectors in 16 registers spill.
  const VectorRegisters avx2{16, 32};
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "shuffle_16x16", kConflicting, "1", avx2),
                   64.0 / (32 * 7 * (1 + 2 * 48.0 / 64)));
}

// Input rows 1312 bytes apart: 200 of them spread over the L1's sets, at most 4 lines
// in one, so a line waits in the L1 for the next band: narrow rows move only what they use.
TEST(TransposeEstimate, NarrowRowTilesFetchWholeLinesOnlyWhereTheSweepOverflowsASet) {
  const Problem kept = TransposeProblem("transpose_2d:m=200,n=328:f32");
  // 2 x 8: 8 rows of 8 bytes, fetched as 8 whole lines (512 bytes) plus 64 written:
  // 18 cycles for 4 cycles' worth of bytes.
  EXPECT_DOUBLE_EQ(Estimate("2", "8", "shuffle_1d"), 4.0 / 18);
  // Kept lines: 128 bytes moved, 4 cycles; 8 loads, 4 cycles; the 8 rows packed into
  // one register (7 inserts) and permuted (1): 8 cycles. 8 and 2 divide 200 and 328.
  EXPECT_DOUBLE_EQ(Estimate("2", "8", "shuffle_1d", kept), 4.0 / 8);
  // Blocks of 16 output columns sweep only 16 input rows, 8 in each of two sets: kept
  // even 2 KiB apart. Blocks of 32 put 16 in a set.
  auto blocked = [](const char* block_c) {
    return TransposeEstimate(
               kConflicting,
               {{"tile_r", "2"}, {"tile_c", "8"}, {"transpose_lowering", "shuffle_1d"}, {"block_c", block_c}},
               VectorRegisters::Avx512(), 0)
        .value_or(-1);
  };
  EXPECT_DOUBLE_EQ(blocked("16"), 4.0 / 8);
  EXPECT_DOUBLE_EQ(blocked("32"), 4.0 / 18);
}

// kConflicting's input and output (1 MiB together) overflow a 512 KiB L2: the 8 x 8
// tile's refetched lines come from the L2 behind the traffic from beyond it, so only
// the 256 bytes it reads count, and its 16 shuffles bound it at the stream rate. Within
// a 2 MiB L2, or with the L2 unknown, the refetches count as above. A 16 x 16 tile
// reads whole lines either way.
TEST(TransposeEstimate, BeyondTheL2RefetchesOverlapTheCompulsoryTraffic) {
  const VectorRegisters avx512 = VectorRegisters::Avx512();
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "shuffle_1d", kConflicting, "1", avx512, 512 << 10), 1.0);
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "shuffle_1d", kConflicting, "1", avx512, 2 << 20), 16.0 / 24);
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "shuffle_1d", kConflicting, "1", avx512, 0), 16.0 / 24);
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "shuffle_16x16", kConflicting, "1", avx512, 512 << 10), 1.0);
}

// 16 x 32: 32 input and 32 output registers; 64 live vectors in 32 registers.
TEST(TransposeEstimate, TilesHeldTwiceBeyondTheRegistersSpill) {
  EXPECT_DOUBLE_EQ(Estimate("16", "32", "shuffle_1d"), 128.0 / (32 * 15 * (1 + 2 * 32.0 / 64)));
}

// Unrolled column tiles measured best on some tables and worst on others: not rated.
TEST(TransposeEstimate, UnrollingIsNotRated) {
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "shuffle_16x16", kConflicting, "2"), 1.0);
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "shuffle_16x16", kConflicting, "4"), 1.0);
  EXPECT_DOUBLE_EQ(Estimate("8", "8", "shuffle_1d", kConflicting, "4"), Estimate("8", "8", "shuffle_1d"));
}

// 200 x 328 output columns by rows: 16 x 16 tiles cover 208 x 336.
TEST(TransposeEstimate, PartialTilesPad) {
  const Problem odd = TransposeProblem("transpose_2d:m=200,n=328:f32");
  EXPECT_DOUBLE_EQ(Estimate("16", "16", "shuffle_16x16", odd), 328.0 / 336 * 200.0 / 208);
}

TEST(TransposeEstimate, OnlyTransposesOfTheCopyTemplate) {
  const Problem copy = TransposeProblem("copy_2d:m=256,n=512:f32");
  EXPECT_TRUE(HasKernelEstimate("copy_tiled", kConflicting));
  EXPECT_FALSE(HasKernelEstimate("copy_tiled", copy));
  EXPECT_FALSE(HasKernelEstimate("reduce_tiled", kConflicting));
  const KnobValues tile = {{"tile_r", "16"}, {"tile_c", "16"}, {"transpose_lowering", "shuffle_16x16"}};
  EXPECT_FALSE(TransposeEstimate(copy, tile, VectorRegisters::Avx512(), 0));
  EXPECT_FALSE(TransposeEstimate(kConflicting, {{"tile_r", "16"}, {"tile_c", "16"}}, VectorRegisters::Avx512(), 0))
      << "no lowering";
  EXPECT_FALSE(TransposeEstimate(kConflicting, {{"tile_r", "0.5"}, {"tile_c", "16"}, {"transpose_lowering", "eltwise"}},
                                 VectorRegisters::Avx512(), 0))
      << "counts below one";
  EXPECT_TRUE(KernelEstimate("copy_tiled", kConflicting, tile, VectorRegisters::Avx512(), 0));
}

}  // namespace
}  // namespace mtune::strategies
