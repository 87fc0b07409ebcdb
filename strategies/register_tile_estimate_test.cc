#include "strategies/register_tile_estimate.h"

#include <cmath>

#include "gtest/gtest.h"
#include "strategies/problem.h"

namespace mtune::strategies {
namespace {

Problem ParseKey(const char* key) {
  auto p = ParseProblemKey(key);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

constexpr VectorRegisters kYmm16{16, 32};

// The issue slots of a matmul step of f FMAs and l loads: a smooth maximum of both
// and the 8 FMAs in flight.
double MatmulStepSlots(double f, double l) { return std::pow(f * f * f * f + l * l * l * l + 4096.0, 0.25); }

// conv 3x3 on a 58-wide input: the output is 56 wide, 64 filters over 64 channels.
double Conv58(const char* tile_ow, const char* tile_f, const VectorRegisters& registers,
              const char* tile_c1 = "64") {
  const Problem conv = ParseKey("conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32");
  return RegisterTileEstimate("conv_2d_decomposed", conv,
                              {{"tile_ow", tile_ow}, {"tile_f", tile_f}, {"tile_c1", tile_c1}, {"loop_order", "f_n_oh_ow"}},
                              registers)
      .value_or(-1);
}

// Eight accumulators hide the FMA latency; fewer leave FMA slots idle.
TEST(RegisterTileEstimate, TooFewAccumulatorsWaitOnTheFmaLatency) {
  EXPECT_DOUBLE_EQ(Conv58("4", "16", kYmm16), 1.0);  // 4 x 2 ymm accumulators
  EXPECT_DOUBLE_EQ(Conv58("2", "16", kYmm16), 0.5);  // 2 x 2
  EXPECT_DOUBLE_EQ(Conv58("1", "8", kYmm16), 1.0 / 8);
  // The same 4 x 16 tile is 4 x 1 zmm on AVX-512.
  EXPECT_DOUBLE_EQ(Conv58("4", "16", VectorRegisters::Avx512()), 0.5);
}

// One row of one vector loads as much as it multiplies: the loads bound it.
TEST(RegisterTileEstimate, LoadsBoundThinTiles) {
  // 1 x 64 in ymm (32 of them, AVX-512VL): 8 accumulators, 1 broadcast + 8 vector
  // loads per step.
  EXPECT_DOUBLE_EQ(Conv58("1", "64", VectorRegisters{32, 32}), 8.0 / 9.0);
}

// Work on the padding of a partial last tile is wasted: 6 columns cover 56 in 60.
TEST(RegisterTileEstimate, PaddingOfPartialTilesIsWasted) {
  EXPECT_DOUBLE_EQ(Conv58("6", "16", kYmm16), 56.0 / 60.0);
  EXPECT_DOUBLE_EQ(Conv58("7", "8", kYmm16), 7.0 / 8.0);     // 7 accumulators; 7 divides 56
  EXPECT_DOUBLE_EQ(Conv58("4", "16", kYmm16, "48"), 64.0 / 96.0);  // channels 64 in chunks of 48
}

TEST(RegisterTileEstimate, MatmulTilesAndAccumulatorType) {
  const Problem mm = ParseKey("matmul:m=512,n=512,k=512:f32");
  const KnobValues tile = {{"tile_m1", "256"}, {"tile_n1", "256"}, {"tile_k1", "512"},
                           {"tile_m2", "6"},   {"tile_n2", "64"},  {"tile_k2", "8"}};
  // 6 x 4 zmm: 24 FMAs against 10 loads per step, a little over 12 cycles; 512 of
  // them, then one trip of the 24 accumulators through memory (1.5 cycles each).
  // Padding: 512 rows in tiles of 6 within tiles of 256 (each level against the whole
  // dimension).
  const double slots = MatmulStepSlots(24, 10), cycles = 512 * slots / 2;
  EXPECT_DOUBLE_EQ(RegisterTileEstimate("matmul_packed", mm, tile, VectorRegisters::Avx512()).value(),
                   512.0 / 516.0 * (24 / slots) * cycles / (cycles + 36));
  // f64 accumulators: 8 lanes to a zmm.
  const Problem mm64 = ParseKey("matmul:m=512,n=512,k=512:f64");
  KnobValues tile64 = tile;
  tile64["tile_m2"] = "4";
  tile64["tile_n2"] = "4";  // 4 x half a zmm: 4 accumulators, half their lanes idle
  // A little over 4 cycles a step (the latency), 512 steps; one trip of 4
  // accumulators.
  const double slots64 = MatmulStepSlots(4, 5), cycles64 = 512 * slots64 / 2;
  EXPECT_DOUBLE_EQ(RegisterTileEstimate("matmul_packed", mm64, tile64, VectorRegisters::Avx512()).value(),
                   (4 / slots64) * 0.5 * cycles64 / (cycles64 + 6));
}

// Reduction tiles of k1 steps each end in a trip of the accumulators through memory:
// a 4 x 4 zmm tile (16 FMAs, about 8 cycles a step) over k = 513 in tiles of 3 makes
// 171 trips of 16 x 1.5 cycles, against 513 steps; in one tile of 513, one.
TEST(RegisterTileEstimate, ReductionTilesTakeTheAccumulatorsThroughMemory) {
  const Problem bf16 = ParseKey("matmul:m=127,n=255,k=513:bf16");
  auto estimate = [&](const char* k1) {
    return RegisterTileEstimate("matmul_bf16_vnni", bf16,
                                {{"n_padded", "256"}, {"tile_n1", "256"}, {"tile_k1", k1}, {"tile_m2", "4"}, {"tile_n2", "64"}},
                                VectorRegisters::Avx512())
        .value();
  };
  // Rows in 4s; n1 = 256 and n2 = 64 each against n = 255.
  const double padding = 127.0 / 128 * (255.0 / 256) * (255.0 / 256);
  const double slots = MatmulStepSlots(16, 8), cycles = 513 * slots / 2, rate = 16 / slots;
  EXPECT_DOUBLE_EQ(estimate("513"), padding * rate * cycles / (cycles + 24));
  EXPECT_DOUBLE_EQ(estimate("3"), padding * rate * cycles / (cycles + 171 * 24));
  EXPECT_LT(estimate("171"), estimate("513"));
  // Templates without a reduction tile outside the register tile's loops have no trips.
  EXPECT_DOUBLE_EQ(Conv58("4", "64", VectorRegisters::Avx512()), 1.0);
}

// matmul_packed's pack_a = yes (or only) copies A once per cache tile of n: 512 x 512
// elements 4 times with tile_n1 = 128, one store each with tile_k2 = 1 (2 a cycle),
// against (512 / 6) x (512 / 64) tiles of 512 steps of about 12 cycles: an eighth
// more.
// Rows of 8 elements (tile_k2 = 8) store as one. Where k is padded to tile_k1, the
// level-1 pad copies A whatever pack_a says: nothing is charged.
TEST(RegisterTileEstimate, PackingACostsItsCopyUnlessKIsPadded) {
  auto estimate = [](const char* key, const char* k1, const char* k2, const char* pack_a) {
    return RegisterTileEstimate("matmul_packed", ParseKey(key),
                                {{"tile_m1", "128"}, {"tile_n1", "128"}, {"tile_k1", k1}, {"tile_m2", "6"},
                                 {"tile_n2", "64"}, {"tile_k2", k2}, {"pack_a", pack_a}},
                                VectorRegisters::Avx512())
        .value();
  };
  const char* cube = "matmul:m=512,n=512,k=512:f32";
  const double step_cycles = MatmulStepSlots(24, 10) / 2;
  EXPECT_DOUBLE_EQ(estimate(cube, "512", "1", "yes"),
                   estimate(cube, "512", "1", "no") / (1 + 0.5 * 4 * 6 * 64 / (512 * step_cycles)));
  EXPECT_DOUBLE_EQ(estimate(cube, "512", "1", "only"), estimate(cube, "512", "1", "yes"));
  EXPECT_DOUBLE_EQ(estimate(cube, "512", "8", "yes"),
                   estimate(cube, "512", "8", "no") / (1 + 0.5 / 8 * 4 * 6 * 64 / (512 * step_cycles)));
  const char* odd = "matmul:m=127,n=255,k=513:f32";
  EXPECT_DOUBLE_EQ(estimate(odd, "128", "1", "yes"), estimate(odd, "128", "1", "no"));
  EXPECT_LT(estimate(odd, "513", "1", "yes"), estimate(odd, "513", "1", "no"));
}

// A matmul step near two bounds rates below one clear of them: 4 x 2 zmm (8 FMAs, 6
// loads, the 8 in flight), 6 x 2, 8 x 2 and 6 x 4 measured 0.82, 0.90, 0.94 and 0.97
// of the best on bench/data/matmul_256x384x512_f32.csv. A conv tile keeps the
// largest bound: its 4 x 2 zmm rate 1.
TEST(RegisterTileEstimate, MatmulStepsNearTwoBoundsRateBelowOnesClearOfThem) {
  const Problem mm = ParseKey("matmul:m=384,n=384,k=384:f32");
  auto estimate = [&](const char* m2, const char* n2) {
    return RegisterTileEstimate("matmul_packed", mm,
                                {{"tile_m1", "384"}, {"tile_n1", "384"}, {"tile_k1", "384"}, {"tile_m2", m2},
                                 {"tile_n2", n2}, {"tile_k2", "8"}, {"pack_a", "no"}},
                                VectorRegisters::Avx512())
        .value();
  };
  // 384 steps of one k1 tile (2 FMA ports), then one trip of the 8 accumulators.
  const double cycles = 384.0 * MatmulStepSlots(8, 6) / 2;
  EXPECT_DOUBLE_EQ(estimate("4", "32"), 8 / MatmulStepSlots(8, 6) * cycles / (cycles + 8 * 1.5));
  EXPECT_NEAR(estimate("4", "32"), 0.81, 0.01);
  EXPECT_LT(estimate("4", "32"), estimate("6", "32"));
  EXPECT_LT(estimate("6", "32"), estimate("8", "32"));
  EXPECT_LT(estimate("8", "32"), estimate("6", "64"));
  EXPECT_NEAR(estimate("6", "64"), 0.99, 0.01);
  EXPECT_DOUBLE_EQ(Conv58("4", "32", VectorRegisters::Avx512()), 1.0);
}

// A depthwise_2d_decomposed tile on AVX-512 (16 lanes).
double Depthwise(const char* key, const char* tile_ow, const char* tile_c) {
  return RegisterTileEstimate("depthwise_2d_decomposed", ParseKey(key),
                              {{"tile_ow", tile_ow}, {"tile_c", tile_c}, {"strip_ow", "0"}, {"loop_order", "n_c_oh_ow"}},
                              VectorRegisters::Avx512())
      .value_or(-1);
}
// 3x3 on a 58-wide input (56 outputs), 128 channels.
constexpr const char* kDepthwise58 =
    "depthwise_conv_2d_nhwc_hwc:n=1,h=58,w=58,c=128,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32";

// The three taps of a filter row share one sliding input row: 8 x 1 zmm loads 10
// inputs and 3 taps for 24 FMAs, so the latency bounds it, not the loads.
TEST(RegisterTileEstimate, DepthwiseTilesAreBoundByTheFmaLatency) {
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "8", "16"), 1.0);
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "4", "32"), 1.0);   // 4 x 2 zmm
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "4", "16"), 0.5);   // 4 accumulators
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "1", "64"), 0.5);   // 1 x 4 zmm: 8 loads a step
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "12", "16"), 56.0 / 60.0);  // padding of the last tile
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "8", "8"), 0.5);    // half the lanes idle
  // Stride 2: 4 outputs read 9 inputs a filter row; with 3 taps, 2 zmm wide, 8 loads
  // a step for 8 FMAs.
  EXPECT_DOUBLE_EQ(Depthwise("depthwise_conv_2d_nhwc_hwc:n=1,h=57,w=57,c=128,kh=3,kw=3,sh=2,sw=2,dh=1,dw=1:f32", "4",
                             "32"),
                   1.0);
  // A 1-wide filter shares nothing: 8 inputs and a tap for 8 FMAs.
  const Problem pointwise = ParseKey("depthwise_conv_1d_nwc_wc:n=1,w=64,c=64,kw=1:f32");
  EXPECT_DOUBLE_EQ(
      RegisterTileEstimate("depthwise_1d_tiled", pointwise, {{"tile_ow", "8"}, {"tile_c", "16"}}, VectorRegisters::Avx512())
          .value(),
      8.0 / 9.0);
}

// Accumulators beyond the template's register constraint spill, and each goes
// through memory (a load at 2 a cycle, a store at 1) on every step.
TEST(RegisterTileEstimate, SpillingTilesGoThroughMemoryEveryStep) {
  // conv_2d_decomposed on AVX2 keeps (rows + 1) x vectors plus the broadcast within
  // 16 ymm: 1 x 8 ymm has 8 accumulators and room for 7; its step of 9 load slots
  // gains 1.5 cycles (3 slots).
  EXPECT_DOUBLE_EQ(Conv58("1", "64", kYmm16), 8.0 / 12.0);
  // Within the constraint nothing changes: 4 x 2 ymm, (4 + 1) x 2 + 1 = 11 registers.
  EXPECT_DOUBLE_EQ(Conv58("4", "16", kYmm16), 1.0);
  // Depthwise tiles keep at most half the registers for accumulators: 8 x 4 zmm holds
  // 32, 16 of them spilled; 32 FMAs a step take 32 + 16 x 3 slots.
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "8", "64"), 32.0 / 80.0);
  EXPECT_DOUBLE_EQ(Depthwise(kDepthwise58, "8", "32"), 1.0);  // 16 accumulators fit
}

TEST(RegisterTileEstimate, NoneForOtherTemplatesOrMissingKnobs) {
  const Problem conv = ParseKey("conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32");
  EXPECT_TRUE(HasRegisterTileEstimate("conv_2d_decomposed"));
  EXPECT_TRUE(HasRegisterTileEstimate("depthwise_2d_decomposed"));
  EXPECT_FALSE(HasRegisterTileEstimate("reduce_tiled"));
  EXPECT_FALSE(HasRegisterTileEstimate("copy_tiled"));
  EXPECT_FALSE(RegisterTileEstimate("depthwise_2d_decomposed", conv, {{"tile_ow", "4"}, {"tile_f", "16"}}, kYmm16));
  EXPECT_FALSE(RegisterTileEstimate("conv_2d_decomposed", conv, {{"tile_ow", "4"}}, kYmm16));
  EXPECT_FALSE(RegisterTileEstimate("conv_2d_decomposed", conv, {{"tile_ow", "none"}, {"tile_f", "16"}}, kYmm16));
}

}  // namespace
}  // namespace mtune::strategies
