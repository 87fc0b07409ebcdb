// Register tiles sized for the target's vector registers (vector_registers.h): the
// register constraints of matmul_packed and the conv templates read
// `vector_registers` / `vector_bytes`, so that AVX2's 16 ymm registers get tiles
// that fit them and AVX-512's 32 zmm keep the templates' own.
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/template_library.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {
namespace {

constexpr VectorRegisters kAvx2Registers{16, 32};

TEST(VectorRegisters, FollowTheWidestVectorExtensionATargetEnables) {
  EXPECT_EQ(*VectorRegistersOf("+avx,+avx2,+fma,+avx512f,+avx512bw"), VectorRegisters::Avx512());
  EXPECT_EQ(*VectorRegistersOf("+sse2,+avx,+avx2,+fma,-avx512f"), kAvx2Registers);  // disabled: not counted
  EXPECT_EQ(*VectorRegistersOf("+avx2,+fma"), kAvx2Registers);
  EXPECT_EQ(*VectorRegistersOf("+sse2,+sse4.2"), (VectorRegisters{16, 16}));
  EXPECT_EQ(*VectorRegistersOf("+neon,+fp-armv8"), (VectorRegisters{32, 16}));
  for (const char* unknown : {"", "+sve", "-avx512f,-avx2"}) {
    auto none = VectorRegistersOf(unknown);
    EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument) << unknown;
    EXPECT_THAT(std::string(none.status().message()), testing::HasSubstr("none of avx512f, avx, neon, sse2"));
  }
}

KnobSpace SpaceFor(const std::string& tpl_name, const std::string& key, const VectorRegisters& registers) {
  auto tpl = FindTemplate(tpl_name);
  EXPECT_TRUE(tpl.ok()) << tpl.status();
  auto problem = ParseProblemKey(key);
  EXPECT_TRUE(problem.ok()) << problem.status();
  if (!tpl.ok() || !problem.ok()) return {};
  auto space = ExtractKnobSpace(tpl->text, *problem, registers);
  EXPECT_TRUE(space.ok()) << space.status();
  return space.ok() ? *std::move(space) : KnobSpace{};
}

// The (a, b) pairs of two knobs' options that make a valid candidate with the rest
// of the default candidate (derived knobs solved).
std::set<std::pair<std::string, std::string>> ValidPairs(const KnobSpace& space, const std::string& a,
                                                         const std::string& b) {
  std::set<std::pair<std::string, std::string>> valid;
  std::optional<KnobValues> defaults = DefaultCandidate(space);
  EXPECT_TRUE(defaults.has_value());
  if (!defaults) return valid;
  const KnobSpec* ka = nullptr;
  const KnobSpec* kb = nullptr;
  for (const KnobSpec& k : space.knobs) {
    if (k.name == a) ka = &k;
    if (k.name == b) kb = &k;
  }
  EXPECT_TRUE(ka && kb);
  if (!ka || !kb) return valid;
  for (const std::string& va : ka->options)
    for (const std::string& vb : kb->options) {
      KnobValues values = *defaults;
      values[a] = va;
      values[b] = vb;
      if (auto solved = SolveDerivedKnobs(space, values, {a, b}); solved && space.SatisfiesConstraints(*solved))
        valid.insert({va, vb});
    }
  return valid;
}

using Pairs = std::set<std::pair<std::string, std::string>>;

// matmul_packed: (m2 + 1) x n2 accumulators fit all registers but one, and a row of
// the tile is at least 64 bytes. AVX2 leaves f32 two tiles and f64 two, and the
// written 8 x 32 default gives way to the nearest of them.
TEST(RegisterTiles, MatmulPackedTilesFitTheTargetsRegisters) {
  const std::string f32 = "matmul:m=512,n=512,k=512:f32";
  const KnobSpace avx2 = SpaceFor("matmul_packed", f32, kAvx2Registers);
  EXPECT_EQ(avx2.registers, kAvx2Registers);
  EXPECT_EQ(ValidPairs(avx2, "tile_m2", "tile_n2"), (Pairs{{"4", "16"}, {"6", "16"}}));
  std::optional<KnobValues> avx2_default = DefaultCandidate(avx2);
  ASSERT_TRUE(avx2_default.has_value());
  EXPECT_EQ(avx2_default->at("tile_m2"), "6");
  EXPECT_EQ(avx2_default->at("tile_n2"), "16");
  EXPECT_EQ(avx2_default->at("peel_m2"), "1");  // 6 does not divide the 128-row m tile
  EXPECT_EQ(avx2_default->at("tile_k1"), "512");

  const KnobSpace avx512 = SpaceFor("matmul_packed", f32, VectorRegisters::Avx512());
  const Pairs wide = ValidPairs(avx512, "tile_m2", "tile_n2");
  for (const auto& fits : Pairs{{"8", "32"}, {"12", "32"}, {"6", "64"}, {"16", "16"}, {"4", "16"}})
    EXPECT_TRUE(wide.contains(fits)) << fits.first << " x " << fits.second;
  for (const auto& spills : Pairs{{"16", "32"}, {"8", "64"}, {"8", "8"}})  // 8 x 8: 32-byte rows
    EXPECT_FALSE(wide.contains(spills)) << spills.first << " x " << spills.second;
  EXPECT_EQ(DefaultCandidate(avx512)->at("tile_n2"), "32");

  // f64: 8 columns are a cache line. On AVX2 only (4 or 6) x 8 fit.
  const std::string f64 = "matmul:m=512,n=512,k=512:f64";
  const KnobSpace avx2_f64 = SpaceFor("matmul_packed", f64, kAvx2Registers);
  EXPECT_EQ(ValidPairs(avx2_f64, "tile_m2", "tile_n2"), (Pairs{{"4", "8"}, {"6", "8"}}));
  EXPECT_EQ(DefaultCandidate(avx2_f64)->at("tile_m2"), "6");
  const KnobSpace avx512_f64 = SpaceFor("matmul_packed", f64, VectorRegisters::Avx512());
  EXPECT_EQ(DefaultCandidate(avx512_f64)->at("tile_m2"), "8");
  EXPECT_EQ(DefaultCandidate(avx512_f64)->at("tile_n2"), "16");
  EXPECT_TRUE(ValidPairs(avx512_f64, "tile_m2", "tile_n2").contains({"12", "8"}));
}

// conv_2d_decomposed: (tile_ow + 1) x tile_f accumulators fit all the registers on
// AVX-512, all but the broadcast's on AVX2; conv_1d_tiled all but one everywhere.
TEST(RegisterTiles, ConvTilesFitTheTargetsRegisters) {
  const std::string key = "conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32";
  const KnobSpace conv2d = SpaceFor("conv_2d_decomposed", key, kAvx2Registers);
  const Pairs tiles2d = ValidPairs(conv2d, "tile_ow", "tile_f");
  EXPECT_TRUE(tiles2d.contains({"6", "16"}));    // 7 x 16 x 4 = 448 bytes + the broadcast: 15 ymm
  EXPECT_TRUE(tiles2d.contains({"14", "8"}));    // 15 x 8 x 4 = 480 + 32: all 16
  EXPECT_FALSE(tiles2d.contains({"7", "16"}));   // 8 x 16 x 4 = 512 + 32
  EXPECT_FALSE(tiles2d.contains({"1", "64"}));   // 2 x 64 x 4 = 512 + 32
  EXPECT_FALSE(tiles2d.contains({"8", "16"}));   // 9 x 16 x 4 = 576
  EXPECT_FALSE(tiles2d.contains({"8", "32"}));
  // The written 8 x 32 does not fit: the fallback, 4 x 16 over 64-channel chunks.
  std::optional<KnobValues> fallback = DefaultCandidate(conv2d);
  ASSERT_TRUE(fallback.has_value());
  EXPECT_EQ(fallback->at("tile_f"), "16");
  EXPECT_EQ(fallback->at("tile_ow"), "4");
  EXPECT_EQ(fallback->at("tile_c1"), "64");
  // 14 output columns: 4 would pad the row by more than an eighth, so the nearest
  // repair of the written default (the filter tile narrowed to 8).
  const KnobSpace fourteen = SpaceFor(
      "conv_2d_decomposed", "conv_2d_nhwc_hwcf:n=1,h=16,w=16,c=256,kh=3,kw=3,f=256,sh=1,sw=1,dh=1,dw=1:f32",
      kAvx2Registers);
  std::optional<KnobValues> repaired = DefaultCandidate(fourteen);
  ASSERT_TRUE(repaired.has_value());
  EXPECT_EQ(repaired->at("tile_f"), "8");
  EXPECT_EQ(repaired->at("tile_ow"), "14");
  EXPECT_EQ(repaired->at("tile_c1"), "16");
  const KnobSpace wide = SpaceFor("conv_2d_decomposed", key, VectorRegisters::Avx512());
  EXPECT_EQ(DefaultCandidate(wide)->at("tile_f"), "32");
  const Pairs wide2d = ValidPairs(wide, "tile_ow", "tile_f");
  EXPECT_TRUE(wide2d.contains({"7", "64"}));  // 8 x 64 x 4 = 2048: AVX-512's FMAs broadcast from memory
  EXPECT_FALSE(wide2d.contains({"8", "64"}));

  // An output 7 wide (9x9 input, 3x3 filter): the whole row with 8 filter columns,
  // where 7 x 16 spilled two accumulators on every step of AVX2's loop.
  const KnobSpace narrow = SpaceFor(
      "conv_2d_decomposed", "conv_2d_nhwc_hwcf:n=1,h=9,w=9,c=512,kh=3,kw=3,f=512,sh=1,sw=1,dh=1,dw=1:f32",
      kAvx2Registers);
  std::optional<KnobValues> narrow_default = DefaultCandidate(narrow);
  ASSERT_TRUE(narrow_default.has_value());
  EXPECT_EQ(narrow_default->at("tile_ow"), "7");
  EXPECT_EQ(narrow_default->at("tile_f"), "8");

  const KnobSpace conv1d =
      SpaceFor("conv_1d_tiled", "conv_1d_nwc_wcf:n=1,w=1026,c=64,kw=3,f=64,sw=1,dw=1:f32", kAvx2Registers);
  const Pairs tiles1d = ValidPairs(conv1d, "tile_ow", "tile_f");
  EXPECT_TRUE(tiles1d.contains({"6", "16"}));   // 7 x 16 x 4 = 448 <= 15 x 32
  EXPECT_FALSE(tiles1d.contains({"8", "16"}));  // 9 x 16 x 4 = 576
  // The written 8 x 32 does not fit: the default is the fallback 6 x 16 (also the
  // start point, so proposed once), not the nearest repair (8 x 8).
  std::vector<KnobValues> starts = StartingCandidates(conv1d);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].at("tile_f"), "16");
  EXPECT_EQ(starts[0].at("tile_ow"), "6");
  // On AVX-512 the written default fits, and the start point follows it.
  const KnobSpace conv1d_wide = SpaceFor(
      "conv_1d_tiled", "conv_1d_nwc_wcf:n=1,w=1026,c=64,kw=3,f=64,sw=1,dw=1:f32", VectorRegisters::Avx512());
  std::vector<KnobValues> wide_starts = StartingCandidates(conv1d_wide);
  ASSERT_EQ(wide_starts.size(), 2u);
  EXPECT_EQ(wide_starts[0].at("tile_f"), "32");
  EXPECT_EQ(wide_starts[0].at("tile_ow"), "8");
  EXPECT_EQ(wide_starts[1].at("tile_f"), "16");
  // f64 on AVX-512: 8 x 32 does not fit either, and 16-wide filter tiles alone mend
  // it (the first fallback), as the nearest repair did before there were fallbacks.
  const KnobSpace conv1d_f64 = SpaceFor(
      "conv_1d_tiled", "conv_1d_nwc_wcf:n=1,w=1026,c=64,kw=3,f=64,sw=1,dw=1:f64", VectorRegisters::Avx512());
  std::optional<KnobValues> f64_default = DefaultCandidate(conv1d_f64);
  ASSERT_TRUE(f64_default.has_value());
  EXPECT_EQ(f64_default->at("tile_ow"), "8");
  EXPECT_EQ(f64_default->at("tile_f"), "16");
}

// depthwise: the accumulators take at most half the registers. Where the written
// 8 x 32 tile breaks that (AVX2), the default is the template's fallback, 4 x 16,
// not the nearest repair (8 x 8).
TEST(RegisterTiles, DepthwiseTilesTakeHalfTheRegistersAndFallBackToFourBySixteen) {
  for (const auto& [tpl, key] : {std::pair<std::string, std::string>{
                                     "depthwise_2d_decomposed",
                                     "depthwise_conv_2d_nhwc_hwc:n=1,h=58,w=58,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32"},
                                 {"depthwise_1d_tiled", "depthwise_conv_1d_nwc_wc:n=1,w=2050,c=64,kw=3,sw=1,dw=1:f32"}}) {
    const KnobSpace avx2 = SpaceFor(tpl, key, kAvx2Registers);
    const Pairs tiles = ValidPairs(avx2, "tile_ow", "tile_c");
    for (const auto& fits : Pairs{{"8", "8"}, {"4", "16"}, {"2", "32"}, {"1", "64"}})
      EXPECT_TRUE(tiles.contains(fits)) << tpl << " " << fits.first << " x " << fits.second;
    for (const auto& spills : Pairs{{"6", "16"}, {"8", "16"}, {"4", "32"}, {"16", "8"}})
      EXPECT_FALSE(tiles.contains(spills)) << tpl << " " << spills.first << " x " << spills.second;
    std::optional<KnobValues> fallback = DefaultCandidate(avx2);
    ASSERT_TRUE(fallback.has_value()) << tpl;
    EXPECT_EQ(fallback->at("tile_ow"), "4") << tpl;
    EXPECT_EQ(fallback->at("tile_c"), "16") << tpl;

    const KnobSpace avx512 = SpaceFor(tpl, key, VectorRegisters::Avx512());
    const Pairs wide = ValidPairs(avx512, "tile_ow", "tile_c");
    EXPECT_TRUE(wide.contains({"8", "32"})) << tpl;  // 16 zmm: the written default
    EXPECT_TRUE(wide.contains({"16", "16"})) << tpl;
    EXPECT_FALSE(wide.contains({"16", "32"})) << tpl;
    EXPECT_FALSE(wide.contains({"32", "8"})) << tpl;  // 32 half-empty registers
    EXPECT_EQ(DefaultCandidate(avx512)->at("tile_c"), "32") << tpl;
  }
}

// mtune.fallback_defaults: only where the default breaks a constraint, the first
// point that holds; a point naming no knob of the template is an error.
TEST(FallbackDefaults, TheFirstThatHoldsReplacesAnInvalidDefault) {
  auto space_with = [](const std::string& limit, const std::string& fallbacks) {
    const std::string tpl = R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly})
      attributes {mtune.fallback_defaults = [)mlir" + fallbacks + R"mlir(]} {
    %a = transform.tune.knob<"a"> = 8 from options = [1, 2, 4, 8] -> !transform.param<i64>
    %b = transform.tune.knob<"b"> = 8 from options = [1, 2, 4, 8] -> !transform.param<i64>
    transform.smt.constrain_params(%a, %b) : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%x: !smt.int, %y: !smt.int):
      %p = smt.int.mul %x, %y
      %l = smt.int.constant )mlir" + limit + R"mlir(
      %ok = smt.int.cmp le %p, %l
      smt.assert %ok
    }
    transform.yield
  }
})mlir";
    auto problem = ParseProblemKey("matmul:m=64,n=64,k=64:f32");
    EXPECT_TRUE(problem.ok());
    return ExtractKnobSpace(tpl, *problem);
  };
  const std::string points = "{a = 4 : i64, b = 4 : i64}, {a = 1 : i64}, {b = 2 : i64}";
  auto valid_default = space_with("64", points);
  ASSERT_TRUE(valid_default.ok()) << valid_default.status();
  EXPECT_EQ(DefaultCandidate(*valid_default), (KnobValues{{"a", "8"}, {"b", "8"}}));
  // 4 x 4 = 16 breaks a limit of 8; a = 1 (with b = 8) is the first that holds.
  auto second = space_with("8", points);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(DefaultCandidate(*second), (KnobValues{{"a", "1"}, {"b", "8"}}));
  // None holds (8 x 2 = 16 > 4 too): the nearest repair, b changed (declared last).
  auto repaired = space_with("4", "{a = 4 : i64, b = 4 : i64}, {b = 2 : i64}");
  ASSERT_TRUE(repaired.ok()) << repaired.status();
  EXPECT_EQ(DefaultCandidate(*repaired), (KnobValues{{"a", "4"}, {"b", "1"}}));
  auto unknown = space_with("8", "{c = 1 : i64}");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.status().message()),
              testing::HasSubstr("mtune.fallback_defaults names knob 'c', which the template does not declare"));
}

// A template of one knob, `name` = `value` from `options`, and one constraint on it
// whose region (block argument %x) is `body` followed by `smt.assert %fits`.
std::string OneKnobTemplate(const std::string& name, const std::string& value, const std::string& options,
                            const std::string& body) {
  return absl::StrCat(R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %t = transform.tune.knob<")mlir", name, "\"> = ", value, " from options = [", options,
                      R"mlir(] -> !transform.param<i64>
    transform.smt.constrain_params(%t) : (!transform.param<i64>) -> () {
    ^bb0(%x: !smt.int):
)mlir", body, R"mlir(      smt.assert %fits
    }
    transform.yield
  }
})mlir");
}

// A template's own constraint may read the symbols; each space evaluates them for
// its registers, and Instantiate refuses a candidate that does not fit them.
TEST(RegisterTiles, ConstraintsReadTheRegisterSymbols) {
  const std::string tpl = OneKnobTemplate("tile", "16", "8, 16, 32", R"mlir(
      %r = smt.declare_fun "vector_registers" : !smt.int
      %b = smt.declare_fun "vector_bytes" : !smt.int
      %file = smt.int.mul %r, %b
      %four = smt.int.constant 4
      %bytes = smt.int.mul %x, %four, %r
      %fits = smt.int.cmp le %bytes, %file
)mlir");
  auto problem = ParseProblemKey("matmul:m=64,n=64,k=64:f32");
  ASSERT_TRUE(problem.ok());
  // tile * 4 <= register bytes: 8 on AVX2, up to 16 on AVX-512.
  auto avx2 = ExtractKnobSpace(tpl, *problem, kAvx2Registers);
  ASSERT_TRUE(avx2.ok()) << avx2.status();
  EXPECT_TRUE(avx2->SatisfiesConstraints({{"tile", "8"}}));
  EXPECT_FALSE(avx2->SatisfiesConstraints({{"tile", "16"}}));
  auto avx512 = ExtractKnobSpace(tpl, *problem, VectorRegisters::Avx512());
  ASSERT_TRUE(avx512.ok()) << avx512.status();
  EXPECT_TRUE(avx512->SatisfiesConstraints({{"tile", "16"}}));
  EXPECT_FALSE(avx512->SatisfiesConstraints({{"tile", "32"}}));
  EXPECT_TRUE(Instantiate(tpl, *problem, {{"tile", "16"}}, VectorRegisters::Avx512()).ok());
  EXPECT_EQ(Instantiate(tpl, *problem, {{"tile", "16"}}, kAvx2Registers).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// `broadcast_registers`: 0 where FMAs broadcast from memory (AVX-512), 1 elsewhere.
TEST(RegisterTiles, BroadcastRegistersAreTakenOnlyWithoutAvx512) {
  EXPECT_EQ(VectorRegisters::Avx512().BroadcastRegisters(), 0);
  EXPECT_EQ(kAvx2Registers.BroadcastRegisters(), 1);
  EXPECT_EQ(VectorRegistersOf("+neon")->BroadcastRegisters(), 1);
  EXPECT_EQ(VectorRegistersOf("+sse2")->BroadcastRegisters(), 1);
  const std::string tpl = OneKnobTemplate("accumulators", "15", "15, 16", R"mlir(
      %b = smt.declare_fun "broadcast_registers" : !smt.int
      %used = smt.int.add %x, %b
      %sixteen = smt.int.constant 16
      %fits = smt.int.cmp le %used, %sixteen
)mlir");
  auto problem = ParseProblemKey("matmul:m=64,n=64,k=64:f32");
  ASSERT_TRUE(problem.ok());
  auto avx2 = ExtractKnobSpace(tpl, *problem, kAvx2Registers);
  ASSERT_TRUE(avx2.ok()) << avx2.status();
  EXPECT_TRUE(avx2->SatisfiesConstraints({{"accumulators", "15"}}));
  EXPECT_FALSE(avx2->SatisfiesConstraints({{"accumulators", "16"}}));
  auto avx512 = ExtractKnobSpace(tpl, *problem, VectorRegisters::Avx512());
  ASSERT_TRUE(avx512.ok()) << avx512.status();
  EXPECT_TRUE(avx512->SatisfiesConstraints({{"accumulators", "16"}}));
}

}  // namespace
}  // namespace mtune::strategies
