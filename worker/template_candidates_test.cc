// Every family's default template, compiled and checked against the reference on
// shapes that divide no tile (and strides, dilations, f64 where the family has
// them): its default candidate, a few seeded random candidates and the default with
// each option of each alternative must verify.
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/template_library.h"
#include "worker/jit_kernel.h"
#include "worker/measure.h"
#include "worker/test_calibration.h"

namespace mtune::worker {
namespace {

struct Case {
  std::string key;
  // Random candidates to check besides the default one.
  int random_candidates;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.key; }

class DefaultTemplate : public testing::TestWithParam<Case> {};

// Measures one candidate; returns the failure text, or empty when it verified.
std::string MeasureCandidate(const strategies::StrategyTemplate& tpl,
                             const strategies::Problem& problem,
                             const strategies::KnobValues& values,
                             const strategies::VectorRegisters& registers = strategies::VectorRegisters::Avx512()) {
  auto script = strategies::Instantiate(tpl.text, problem, values, registers);
  if (!script.ok()) return std::string(script.status().message());
  mtune::v1::Task task;
  task.set_problem(problem.Key());
  task.set_script(*script);
  task.set_min_measure_s(0.001);
  Measurer measurer;
  auto result = measurer.Measure(task, FlatTestCalibration());
  if (result.status() == mtune::v1::RESULT_STATUS_OK) return "";
  return absl::StrCat(mtune::v1::ResultStatus_Name(result.status()), ": ", result.error());
}

std::string Describe(const strategies::KnobValues& values) {
  std::string text;
  for (const auto& [name, value] : values) absl::StrAppend(&text, " ", name, "=", value);
  return text;
}

// A problem's default template, its knob space and its default candidate (as the
// coordinator and `mtune measure` take it: the template's selected values, or the
// valid candidate nearest to them).
struct TemplateUnderTest {
  strategies::Problem problem;
  strategies::StrategyTemplate tpl;
  strategies::KnobSpace space;
  strategies::KnobValues defaults;
};

// `template_name` empty: the family's default template. Register tiles sized for
// `registers`.
absl::StatusOr<TemplateUnderTest> LoadTemplate(
    const std::string& key, const std::string& template_name = "",
    const strategies::VectorRegisters& registers = strategies::VectorRegisters::Avx512()) {
  auto problem = strategies::ParseProblemKey(key);
  if (!problem.ok()) return problem.status();
  auto tpl = template_name.empty() ? strategies::DefaultTemplateFor(problem->family)
                                   : strategies::FindTemplate(template_name);
  if (!tpl.ok()) return tpl.status();
  auto space = strategies::ExtractKnobSpace(tpl->text, *problem, registers);
  if (!space.ok()) return space.status();
  std::optional<strategies::KnobValues> defaults = strategies::DefaultCandidate(*space);
  if (!defaults.has_value())
    return absl::NotFoundError(absl::StrCat(tpl->name, " has no valid candidate for ", key));
  return TemplateUnderTest{*std::move(problem), *std::move(tpl), *std::move(space),
                           *std::move(defaults)};
}

// The default candidate, the template's start points for the problem (a job proposes
// them right after the default) and `random_candidates` valid random ones, drawn with
// a generator seeded by `key` (so that a failure reproduces), must verify.
void ExpectStartingAndRandomCandidatesVerify(const TemplateUnderTest& loaded, const std::string& key,
                                             int random_candidates) {
  const auto& [problem, tpl, space, defaults] = loaded;
  std::string failure = MeasureCandidate(tpl, problem, defaults);
  EXPECT_EQ(failure, "") << tpl.name << " default:" << Describe(defaults);
  const std::vector<strategies::KnobValues> starts = strategies::StartingCandidates(space);
  for (size_t i = 1; i < starts.size(); ++i) {
    failure = MeasureCandidate(tpl, problem, starts[i]);
    EXPECT_EQ(failure, "") << tpl.name << " start point " << i << ":" << Describe(starts[i]);
  }

  // The free knobs are drawn, the derived ones solved from them (as a search point is
  // completed), and the draw kept when valid.
  std::mt19937 rng(std::hash<std::string>()(key) & 0xffffffff);
  int checked = 0;
  for (int attempt = 0; checked < random_candidates && attempt < 1000; ++attempt) {
    strategies::KnobValues drawn;
    for (const auto& k : space.knobs)
      if (!k.derived)
        drawn[k.name] = k.options[std::uniform_int_distribution<size_t>(0, k.options.size() - 1)(rng)];
    std::optional<strategies::KnobValues> solved = strategies::SolveDerivedKnobs(space, drawn);
    if (!solved.has_value()) continue;
    const strategies::KnobValues& values = *solved;
    ++checked;
    failure = MeasureCandidate(tpl, problem, values);
    EXPECT_EQ(failure, "") << tpl.name << ":" << Describe(values);
  }
  EXPECT_EQ(checked, random_candidates);
}

TEST_P(DefaultTemplate, StartingAndRandomCandidatesVerify) {
  auto loaded = LoadTemplate(GetParam().key);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectStartingAndRandomCandidatesVerify(*loaded, GetParam().key, GetParam().random_candidates);
}

// The same problems sized for AVX2's 16 registers of 32 bytes, as a job for an AVX2
// worker is: where the written tiles do not fit, the default candidate is another
// one (repaired, or a template's fallback), and it and the start points must verify
// too (they are plain vector code: any x86-64 CPU with AVX2 or AVX-512 runs them).
TEST_P(DefaultTemplate, StartingCandidatesSizedForAvx2Verify) {
  const strategies::VectorRegisters avx2{16, 32};
  auto loaded = LoadTemplate(GetParam().key, "", avx2);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->space.registers, avx2);
  const std::vector<strategies::KnobValues> starts = strategies::StartingCandidates(loaded->space);
  for (size_t i = 0; i < starts.size(); ++i)
    EXPECT_EQ(MeasureCandidate(loaded->tpl, loaded->problem, starts[i], avx2), "")
        << loaded->tpl.name << (i == 0 ? " default:" : " start point:") << Describe(starts[i]);
}

INSTANTIATE_TEST_SUITE_P(
    EveryFamily, DefaultTemplate,
    testing::Values(
        Case{"matmul:m=37,n=45,k=67:f32", 0},
        // m padded while one n tile covers n: failed bufferization before the level-1
        // pad copied C back explicitly.
        Case{"matmul:m=100,n=128,k=512:f32", 0}, Case{"matmul_transpose_a:m=7,n=9,k=13:f32", 0},
        Case{"matmul_transpose_b:m=7,n=9,k=13:f32", 0},
        // k = 6: one register tile covers k, so no loop is around the contraction.
        Case{"matmul_transpose_a:m=9,n=16,k=6:f32", 0},
        Case{"batch_matmul:b=3,m=37,n=45,k=67:f32", 2}, Case{"batch_matmul:b=2,m=5,n=6,k=7:f64", 1},
        Case{"conv_1d_nwc_wcf:n=2,w=37,c=5,kw=3,f=37,sw=2,dw=2:f32", 2},
        Case{"conv_1d_nwc_wcf:n=1,w=19,c=33,kw=2,f=9,sw=1,dw=1:f64", 1},
        // Output width 19: split into 16 and a padded rest of 3 by the default tile
        // (channels in whole tiles; with a partial one, w=19 above, nothing is split).
        Case{"conv_1d_nwc_wcf:n=1,w=21,c=16,kw=3,f=17,sw=1,dw=1:f32", 1},
        Case{"conv_2d_nhwc_hwcf:n=1,h=9,w=11,c=3,kh=3,kw=2,f=37,sh=2,sw=1,dh=1,dw=3:f32", 2},
        Case{"conv_2d_nhwc_hwcf:n=2,h=7,w=13,c=33,kh=2,kw=3,f=5,sh=1,sw=2,dh=2,dw=1:f64", 1},
        // Output width 10: the default tile of 8 splits it into 8 and a padded rest of
        // 2 (output width 6 above: the tile is wider than it, nothing is split off).
        Case{"conv_2d_nhwc_hwcf:n=1,h=5,w=12,c=7,kh=2,kw=3,f=19,sh=1,sw=1,dh=1,dw=1:f32", 1},
        Case{"depthwise_conv_1d_nwc_wc:n=2,w=37,c=37,kw=3,sw=2,dw=2:f32", 2},
        Case{"depthwise_conv_2d_nhwc_hwc:n=1,h=10,w=19,c=37,kh=3,kw=3,sh=1,sw=2,dh=2,dw=1:f32", 2},
        Case{"transpose_2d:m=37,n=45:f32", 0},
        // 4 MiB with its output: the default and the start point block, stream their
        // stores and prefetch their reads (mtune-prefetch-reads); random candidates
        // too, where they choose to.
        Case{"transpose_2d:m=512,n=1024:f32", 2}, Case{"reduce_rows_2d:m=37,n=45:f32", 0},
        // 40 rows: the default sums 4 bands of 10 rows side by side (jammed loops with
        // a partial last column tile, n = 45); random candidates take 2 or 8 bands.
        Case{"reduce_rows_2d:m=40,n=45:f32", 3},
        Case{"reduce_cols_2d:m=37,n=45:f32", 0},
        // 4 MiB: the start point prefetches (mtune-prefetch-reads), and so may random
        // candidates.
        Case{"reduce_cols_2d:m=1024,n=1024:f32", 2}, Case{"copy_2d:m=37,n=45:f32", 0}),
    [](const testing::TestParamInfo<Case>& info) {
      std::string name = info.param.key.substr(0, info.param.key.find(':'));
      return absl::StrCat(name, "_", info.index);
    });

// Built-in templates that are no family's default, on problems they tune; skipped
// where this CPU lacks a feature the template needs (mtune.cpu_features).
struct NamedCase {
  std::string template_name;
  std::string key;
  int random_candidates;
};

void PrintTo(const NamedCase& c, std::ostream* os) { *os << c.template_name << " " << c.key; }

class NamedTemplate : public testing::TestWithParam<NamedCase> {};

TEST_P(NamedTemplate, StartingAndRandomCandidatesVerify) {
  auto loaded = LoadTemplate(GetParam().key, GetParam().template_name);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string host = JitKernel::HostFeatures();
  for (const std::string& feature : loaded->space.cpu_features)
    if (!absl::StrContains(absl::StrCat(host, ","), absl::StrCat("+", feature, ",")))
      GTEST_SKIP() << "this CPU lacks " << feature;
  ExpectStartingAndRandomCandidatesVerify(*loaded, GetParam().key, GetParam().random_candidates);
}

INSTANTIATE_TEST_SUITE_P(
    NoFamilysDefault, NamedTemplate,
    testing::Values(
        // Several register tiles in m and n and k pairs beyond one cache line of A;
        // n = 96 has the cache tiles 32 and 96, k = 34 the even ones 2 and 34.
        // m = 37: whole register tiles and a peeled rest of 37 % m2 rows.
        NamedCase{"matmul_bf16_vnni", "matmul:m=37,n=96,k=34:bf16", 4},
        // n = 48: 16-column cache tiles and packing steps.
        NamedCase{"matmul_bf16_vnni", "matmul:m=24,n=48,k=20:bf16", 3},
        NamedCase{"matmul_bf16_vnni", "matmul:m=64,n=64,k=256:bf16", 2},
        // The transposed layouts: A [k][m]'s copy split into an interleave and a
        // transpose of pairs (37 rows: a masked last 16 x 16 tile of pairs), B
        // [n][k]'s a transpose of pairs (64 pairs of k: whole tiles).
        NamedCase{"matmul_bf16_vnni", "matmul_transpose_a:m=37,n=96,k=34:bf16", 3},
        NamedCase{"matmul_bf16_vnni", "matmul_transpose_b:m=37,n=96,k=128:bf16", 3},
        // An odd k: one odd cache tile (67), each padded by a zero pair element.
        NamedCase{"matmul_bf16_vnni", "matmul:m=37,n=96,k=67:bf16", 2},
        NamedCase{"matmul_bf16_vnni", "matmul_transpose_a:m=20,n=32,k=255:bf16", 3},
        // An n that is not a multiple of 16: padded with zero columns to one (40 ->
        // 48, 255 -> 256), C copied back; with an odd k too, in every layout.
        NamedCase{"matmul_bf16_vnni", "matmul:m=37,n=40,k=34:bf16", 3},
        NamedCase{"matmul_bf16_vnni", "matmul_transpose_a:m=20,n=255,k=67:bf16", 2},
        NamedCase{"matmul_bf16_vnni", "matmul_transpose_b:m=37,n=25,k=34:bf16", 3},
        // AMX tiles: 37 rows are whole blocks and rest rows, 17 pairs a whole k step
        // of 16 and a last one of 1 (tiles of every smaller shape; 8 valid
        // candidates, whose random draws are rare: 2); 127 rows leave
        // rests of every size; 9 rows are fewer than one tile.
        NamedCase{"matmul_bf16_amx", "matmul:m=37,n=96,k=34:bf16", 2},
        NamedCase{"matmul_bf16_amx", "matmul:m=127,n=256,k=128:bf16", 4},
        NamedCase{"matmul_bf16_amx", "matmul:m=9,n=48,k=64:bf16", 2},
        NamedCase{"matmul_bf16_amx", "matmul:m=64,n=64,k=256:bf16", 2},
        // The transposed layouts: A [k][m] and B [n][k] packs swapped into the VNNI
        // layouts; 17 pairs leave a partial tile in A's copy (masked).
        NamedCase{"matmul_bf16_amx", "matmul_transpose_a:m=37,n=96,k=34:bf16", 2},
        NamedCase{"matmul_bf16_amx", "matmul_transpose_b:m=127,n=256,k=128:bf16", 3}),
    [](const testing::TestParamInfo<NamedCase>& info) {
      return absl::StrCat(info.param.template_name, "_", info.index);
    });

// The default candidate with each option of each alternative (loop orders,
// lowerings, packing, ...) in turn, so that no region of a template goes untested.
class EveryAlternative : public testing::TestWithParam<std::string> {};

TEST_P(EveryAlternative, OfTheDefaultVerifies) {
  auto loaded = LoadTemplate(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const auto& [problem, tpl, space, defaults] = *loaded;
  EXPECT_EQ(MeasureCandidate(tpl, problem, defaults), "") << tpl.name << " default";
  int checked = 0;
  for (const auto& knob : space.knobs) {
    if (!knob.is_alternatives) continue;
    for (const std::string& option : knob.options) {
      if (option == defaults.at(knob.name)) continue;
      strategies::KnobValues values = defaults;
      values[knob.name] = option;
      if (!space.SatisfiesConstraints(values)) continue;
      ++checked;
      EXPECT_EQ(MeasureCandidate(tpl, problem, values), "") << tpl.name << ":" << Describe(values);
    }
  }
  EXPECT_GT(checked, 0) << tpl.name << " has no alternative to check";
}

INSTANTIATE_TEST_SUITE_P(
    Families, EveryAlternative,
    testing::Values(
        "matmul:m=37,n=45,k=67:f32",
        // bf16 inputs, f32 accumulation: only the contraction lowering that handles
        // mixed types is an option (mtune.label_types).
        "matmul:m=37,n=45,k=67:bf16",
        // One output row of one padded tile (oh = 1, ow = 8, f = 17): every output loop
        // folds and only the channel loop (16 tiles of 16) is left, which failed
        // bufferization before the padded tile was copied back explicitly.
        "conv_2d_nhwc_hwcf:n=1,h=3,w=10,c=256,kh=3,kw=3,f=17,sh=1,sw=1,dh=1,dw=1:f32",
        "conv_1d_nwc_wcf:n=1,w=23,c=256,kw=3,f=17,sw=1,dw=1:f32",
        "depthwise_conv_2d_nhwc_hwc:n=1,h=10,w=19,c=37,kh=3,kw=3,sh=1,sw=2,dh=2,dw=1:f32",
        "batch_matmul:b=3,m=37,n=45,k=67:f32",
        "depthwise_conv_1d_nwc_wc:n=2,w=37,c=37,kw=3,sw=2,dw=2:f32",
        // Not reduce_cols_2d: each alternative of reduce_tiled has one option for
        // column sums (split `none`, innerparallel), which its default already is. Nor
        // copy_2d: its default's 1-row tiles hold copy_tiled's edge_tiles and unroll_c
        // at their defaults, and its transpose lowering has no other option; the
        // transpose runs copy_tiled's regions.
        "transpose_2d:m=37,n=45:f32", "reduce_rows_2d:m=37,n=45:f32"),
    [](const testing::TestParamInfo<std::string>& info) {
      return absl::StrCat(info.param.substr(0, info.param.find(':')), "_", info.index);
    });

// matmul_packed with every cache tile the whole of its odd dimension: nothing is
// padded, and both register-tile loops end in a peeled one-row / one-column tile
// (peel_m2, peel_n2), in both loop orders, with and without A packed. A one-row tile
// once made the final lowering patterns run until the sandbox killed them.
class ExactCacheTiles : public testing::TestWithParam<std::string> {};

TEST_P(ExactCacheTiles, PeelBothRegisterTileLoops) {
  auto loaded = LoadTemplate(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const auto& [problem, tpl, space, defaults] = *loaded;
  ASSERT_EQ(tpl.name, "matmul_packed");
  for (const char* order : {"mnk", "nmk"}) {
    for (const char* pack_a : {"yes", "no"}) {
      strategies::KnobValues values = defaults;
      values["tile_m1"] = "17";
      values["tile_n1"] = "33";
      values["tile_k1"] = "13";
      values["tile_m2"] = "8";
      values["tile_n2"] = "32";
      values["tile_k2"] = "1";
      values["loop_order"] = order;
      values["pack_a"] = pack_a;
      auto solved = strategies::SolveDerivedKnobs(space, values);
      ASSERT_TRUE(solved.has_value()) << "constraints reject" << Describe(values);
      EXPECT_EQ(solved->at("peel_m2"), "1");
      EXPECT_EQ(solved->at("peel_n2"), "1");
      EXPECT_EQ(solved->at("copy_back_c"), "0");
      EXPECT_EQ(MeasureCandidate(tpl, problem, *solved), "") << Describe(*solved);
    }
  }
  // A peeled n tile must be a power of two wide: with 64-wide register tiles, the
  // whole 33-column cache tile would be one 33-wide peeled tile.
  strategies::KnobValues odd = defaults;
  odd["tile_m1"] = "17";
  odd["tile_n1"] = "33";
  odd["tile_m2"] = "4";
  odd["tile_n2"] = "64";
  EXPECT_FALSE(strategies::SolveDerivedKnobs(space, odd).has_value()) << Describe(odd);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ExactCacheTiles,
                         testing::Values("matmul:m=17,n=33,k=13:f32",
                                         "matmul_transpose_a:m=17,n=33,k=13:f32",
                                         "matmul_transpose_b:m=17,n=33,k=13:f32"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param.substr(0, info.param.find(':'));
                         });

}  // namespace
}  // namespace mtune::worker
