// mtune-bench-families: the suite and goal logic, and one run of the binary on tiny
// problems (template defaults, one short round) checking the table's structure and
// that every baseline agreed with mtune's reference. No timing assertions.
#include <sys/wait.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/family_suite.h"
#include "worker/amx.h"
#include "worker/bf16_dot.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/subprocess.h"

namespace mtune::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// One run of mtune-bench-families with `args`, logged to `log_path`: its exit code
// (-1 when it did not exit within `timeout_s`, or was killed) and its log.
struct BenchRun {
  int exit_code;
  std::string log;
};
BenchRun RunBenchFamilies(std::vector<std::string> args, const std::string& log_path,
                          double timeout_s) {
  args.insert(args.begin(), MTUNE_BENCH_FAMILIES_BIN);
  testing::Subprocess run(std::move(args), log_path);
  const int status = run.Wait(timeout_s);
  return {status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, run.Log()};
}

// A malformed `flag value` stops a run before any timing, with an error naming it.
void ExpectRefused(const std::string& dir, const std::string& flag, const std::string& value,
                   const std::string& message) {
  const BenchRun bad = RunBenchFamilies({"--problems", "copy_2d:m=24,n=40:f32", "--trials", "0",
                                         "--quick-calibration", "--cpu", "-1", flag, value},
                                        dir + "/bad.txt", 120);
  EXPECT_GT(bad.exit_code, 0) << bad.log;
  EXPECT_THAT(bad.log, HasSubstr(message));
}

TEST(FamilySuite, DefaultSuiteCoversTheIssuesFamilies) {
  auto problems = SelectProblems("", "");
  ASSERT_TRUE(problems.ok()) << problems.status();
  int matmuls = 0;
  std::set<std::string> families;
  for (const strategies::Problem& p : *problems) {
    families.insert(p.family);
    matmuls += p.family.rfind("matmul", 0) == 0;
    if (p.family.rfind("conv_", 0) == 0) {
      EXPECT_GE(p.Dim("c"), 32) << p.Key();
    }
  }
  EXPECT_GE(matmuls, 12);
  for (const char* f : {"matmul", "matmul_transpose_a", "matmul_transpose_b", "conv_1d_nwc_wcf",
                        "conv_2d_nhwc_hwcf", "depthwise_conv_1d_nwc_wc",
                        "depthwise_conv_2d_nhwc_hwc", "reduce_rows_2d", "reduce_cols_2d",
                        "copy_2d", "transpose_2d"})
    EXPECT_TRUE(families.contains(f)) << f;
}

TEST(FamilySuite, ParsesKeysWithCommasAndFiltersFamilies) {
  auto problems = SelectProblems(
      "matmul:m=4,n=5,k=6:f32,copy_2d:m=3,n=2:f32, transpose_2d:m=7,n=9:f32", "copy_2d,matmul");
  ASSERT_TRUE(problems.ok()) << problems.status();
  ASSERT_EQ(problems->size(), 2u);
  EXPECT_EQ((*problems)[0].Key(), "matmul:m=4,n=5,k=6:f32");
  EXPECT_EQ((*problems)[1].Key(), "copy_2d:m=3,n=2:f32");
  EXPECT_EQ(ShortShape((*problems)[0]), "4x5x6");
}

TEST(FamilySuite, RejectsBadInput) {
  EXPECT_THAT(SelectProblems("matmul:m=0,n=5,k=6:f32", "").status().message(), HasSubstr("m=0"));
  EXPECT_THAT(SelectProblems("", "no_such").status().message(), HasSubstr("unknown family"));
  EXPECT_THAT(SelectProblems("matmul:m=4,n=5,k=6:f64", "").status().message(), HasSubstr("f32"));
}

TEST(FamilySuite, GoalsSayMetNotMetAndMissing) {
  auto matmul = strategies::ParseProblemKey("matmul:m=512,n=512,k=512:f32");
  auto copy = strategies::ParseProblemKey("copy_2d:m=8,n=8:f32");
  ASSERT_TRUE(matmul.ok() && copy.ok());
  // The goals read the ratios paired by round (mtune_over_onednn, ...), not the
  // ratio of the two medians (mtune / onednn).
  std::vector<GoalRow> rows = {{.problem = *matmul, .mtune = 90, .onednn = 100,
                                .fraction_of_roofline = 0.9, .fraction_of_peak = 0.9,
                                .mtune_over_onednn = 0.9},
                               {.problem = *copy, .onednn = 10}};
  std::vector<GoalLine> goals = EvaluateGoals(rows);
  ASSERT_EQ(goals.size(), 6u);
  EXPECT_EQ(goals[0].verdict, "NOT met");  // 0.9x oneDNN
  EXPECT_THAT(goals[0].detail, HasSubstr("0.90"));
  EXPECT_EQ(goals[1].verdict, "met");      // 0.9 of peak >= 0.85
  EXPECT_EQ(goals[2].verdict, "n/a");      // no conv in the suite
  EXPECT_EQ(goals[4].verdict, "NOT met");  // copy has no mtune figure
  EXPECT_THAT(goals[4].detail, HasSubstr("no mtune figure"));
  EXPECT_EQ(goals[5].verdict, "n/a");  // no transpose

  // A figure just under its threshold does not print as the threshold.
  rows[0].mtune_over_onednn = 0.996;
  EXPECT_THAT(EvaluateGoals(rows)[0].detail, HasSubstr("geomean 0.996 over 1 rows"));
  rows[0].fraction_of_peak = 0.849;
  EXPECT_THAT(EvaluateGoals(rows)[1].detail, HasSubstr("worst 0.849"));
  EXPECT_THAT(EvaluateGoals(rows)[1].detail, Not(HasSubstr("oneDNN")));  // none measured
  // A peak goal also says how far oneDNN got on the same rows.
  rows[0].onednn_fraction_of_peak = 0.82;
  EXPECT_THAT(EvaluateGoals(rows)[1].detail,
              HasSubstr("oneDNN on the same rows: worst 0.82 (matmul 512x512x512)"));

  // A geomean names its range, so a row that carries it shows (here a baseline 40x
  // slower than usual on one shape).
  auto conv_a = strategies::ParseProblemKey("conv_1d_nwc_wcf:n=1,w=34,c=8,kw=3,f=16,sw=1,dw=1:f32");
  auto conv_b = strategies::ParseProblemKey("conv_1d_nwc_wcf:n=1,w=35,c=8,kw=3,f=16,sw=2,dw=1:f32");
  ASSERT_TRUE(conv_a.ok() && conv_b.ok());
  const GoalLine conv = EvaluateGoals({{.problem = *conv_a, .mtune_over_onednn = 40},
                                       {.problem = *conv_b, .mtune_over_onednn = 0.86}})[2];
  EXPECT_EQ(conv.verdict, "met");
  EXPECT_THAT(conv.detail, HasSubstr("from 0.86 (conv_1d_nwc_wcf w=35 c=8 kw=3 f=16 sw=2) to 40.00"));

  auto transpose = strategies::ParseProblemKey("transpose_2d:m=8,n=8:f32");
  ASSERT_TRUE(transpose.ok());
  GoalRow fast{.problem = *transpose, .mtune = 7, .onednn = 5, .fraction_of_roofline = 0.1};
  fast.mtune_over_copy = 0.7;  // >= 0.6 whatever the level's roofline says
  EXPECT_EQ(EvaluateGoals({fast})[5].verdict, "met");
  fast.mtune_over_copy = 0.5;
  EXPECT_EQ(EvaluateGoals({fast})[5].verdict, "NOT met");
}

// A depthwise row is held against the lower of its stream bandwidth and the bytes its
// FLOPs allow at the FMA loop's speed; reductions and copies against the stream alone.
TEST(FamilySuite, DepthwiseRooflineIsTheLowerOfStreamAndFmaPeak) {
  absl::StatusOr<strategies::Problem> depthwise =
      strategies::ParseProblemKey("depthwise_conv_2d_nhwc_hwc:n=1,h=58,w=58,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32");
  ASSERT_TRUE(depthwise.ok());
  const double bytes = depthwise->CompulsoryBytes();
  const double flops = depthwise->Flops();
  // An FMA loop at 117 GFLOP/s: 18 FLOPs per 12 bytes (the output is accumulated
  // into) allow about 80 GB/s, below an 86 GB/s stream; at 246 GFLOP/s (the Intel host)
  // the stream binds.
  EXPECT_NEAR(RoofGbps(*depthwise, 86, flops / 117e9), bytes / flops * 117, 1e-9);
  EXPECT_LT(RoofGbps(*depthwise, 86, flops / 117e9), 81);
  EXPECT_DOUBLE_EQ(RoofGbps(*depthwise, 86, flops / 246e9), 86);
  EXPECT_DOUBLE_EQ(RoofGbps(*depthwise, 86, 0), 86);  // no FMA loop timed
  absl::StatusOr<strategies::Problem> reduce = strategies::ParseProblemKey("reduce_rows_2d:m=256,n=512:f32");
  ASSERT_TRUE(reduce.ok());
  EXPECT_DOUBLE_EQ(RoofGbps(*reduce, 100, 1.0), 100);  // adds only: no FMA roof
  EXPECT_TRUE(HasFmaComputeRoof("depthwise_conv_1d_nwc_wc"));
  EXPECT_FALSE(HasFmaComputeRoof("copy_2d"));
}

TEST(BenchFamilies, TinyRunVerifiesEveryBaselineAndPrintsTheTable) {
  const std::string dir = testing::MakeTempDir("bench_families");
  const std::string json_path = dir + "/out.json";
  const std::string problems =
      "matmul_transpose_b:m=17,n=9,k=13:f32,copy_2d:m=24,n=40:f32,reduce_cols_2d:m=33,n=17:f32,"
      "conv_1d_nwc_wcf:n=1,w=19,c=8,kw=3,f=4,sw=2,dw=1:f32,"
      "depthwise_conv_2d_nhwc_hwc:n=1,h=9,w=10,c=16,kh=3,kw=2,sh=2,sw=1,dh=1,dw=2:f32,"
      "batch_matmul:b=3,m=5,n=7,k=6:f32,"
      // The hand-written kernels' two families: a 3-tap depthwise row takes their
      // unit-stride path (strided and dilated in h), the conv has a 7-wide tile, a
      // partial one and a partial channel tile.
      "depthwise_conv_2d_nhwc_hwc:n=2,h=7,w=11,c=32,kh=3,kw=3,sh=2,sw=1,dh=2,dw=1:f32,"
      "conv_2d_nhwc_hwcf:n=1,h=6,w=20,c=8,kh=3,kw=3,f=64,sh=1,sw=2,dh=2,dw=1:f32";
  const BenchRun run = RunBenchFamilies({"--problems", problems, "--trials", "0", "--rounds", "1",
                                         "--min-time", "0.003", "--quick-calibration", "--cpu",
                                         "-1", "--json", json_path},
                                        dir + "/log.txt", 240);
  const std::string& log = run.log;
  ASSERT_EQ(run.exit_code, 0) << log;
  for (const char* header : {"family", "shape", "mtune", "oneDNN", "Eigen", "mt/dnn", "mt/eig",
                             "%roof", "geomean of 1", "goals", "verification"})
    EXPECT_THAT(log, HasSubstr(header));

  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_THAT(log, HasSubstr("hand-written AVX-512 loops"));
  }

  const nlohmann::json root = nlohmann::json::parse(testing::ReadFile(json_path));
  ASSERT_EQ(root["problems"].size(), 8u);
  EXPECT_EQ(root["goals"].size(), 6u);
  for (const nlohmann::json& row : root["problems"]) {
    SCOPED_TRACE(row["problem"].get<std::string>());
    for (const char* library : {"onednn", "eigen"}) {
      const nlohmann::json& impl = row["implementations"][library];
      EXPECT_TRUE(impl["verified"].get<bool>()) << impl.dump();
      EXPECT_GT(impl.value("figure", 0.0), 0.0);
    }
    // The hand-written yardsticks: verified and timed where they exist (three families,
    // an AVX-512 CPU), "n/a" elsewhere. The column sum (33 x 17) takes its 8-row steps,
    // single rows, a 16-column step and a single column.
    const nlohmann::json& hand = row["implementations"]["handwritten"];
    const bool has_hand = (row["family"] == "depthwise_conv_2d_nhwc_hwc" ||
                           row["family"] == "conv_2d_nhwc_hwcf" || row["family"] == "reduce_cols_2d") &&
                          __builtin_cpu_supports("avx512f");
    if (has_hand) {
      EXPECT_TRUE(hand["verified"].get<bool>()) << hand.dump();
      EXPECT_GT(hand.value("figure", 0.0), 0.0);
      EXPECT_GT(row.value("mtune_over_handwritten", 0.0), 0.0);
    } else {
      EXPECT_EQ(hand["status"], "n/a") << hand.dump();
    }
    if (BandwidthBound(row["family"])) {
      EXPECT_GT(row.value("copy_gbps_at_footprint", 0.0), 0.0);
      EXPECT_GT(row.value("read_gbps_at_footprint", 0.0), 0.0);
      // Each round's yardstick is the fastest of the worker's copy and read loops, and
      // which one that was is counted: once per round.
      int copy_rounds = 0, read_rounds = 0;
      for (const auto& [name, wins] : row["copy_loop_wins"].items()) {
        EXPECT_THAT(name, ::testing::AnyOf("copy", "copy_x4", "copy_streaming", "copy_streaming_x8"));
        copy_rounds += wins.get<int>();
      }
      for (const auto& [name, wins] : row["read_loop_wins"].items()) {
        EXPECT_THAT(name, ::testing::AnyOf("read", "read_x4"));
        read_rounds += wins.get<int>();
      }
      EXPECT_EQ(copy_rounds, root["rounds"].get<int>()) << row.dump();
      EXPECT_EQ(read_rounds, root["rounds"].get<int>()) << row.dump();
    }
    // Compute-bound rows are set against the peak timed in their own rounds: the FMA
    // loop's, or for bf16 rows the fastest bf16 loop of the CPU (AMX, AVX512-BF16);
    // depthwise rows against the lower of their stream and that peak.
    EXPECT_EQ(row.contains("peak_gflops"),
              !BandwidthBound(row["family"]) || HasFmaComputeRoof(row["family"]))
        << row.dump();
    if (BandwidthBound(row["family"])) {
      const double roof = row["roofline_gbps"].get<double>();
      EXPECT_GT(roof, 0.0);
      EXPECT_EQ(row["compute_bound"].get<bool>(), roof < row["roofline_level_gbps"].get<double>());
    }
    if (row.contains("peak_gflops")) {
      EXPECT_GT(row["peak_gflops"].get<double>(), 0.0);
      const bool bf16 = std::string(row["problem"]).ends_with(":bf16");
      EXPECT_EQ(row["peak_loop"], !bf16                        ? "fma_f32"
                                  : worker::CpuHasAmxBf16()    ? "amx_bf16"
                                  : worker::CpuHasAvx512Bf16() ? "bf16_dot"
                                                               : "fma_f32")
          << row.dump();
    }
    const nlohmann::json& mt = row["implementations"]["mtune"];
    const std::string family = row["family"];
    bool has_template = false;
    for (const strategies::FamilyInfo& info : strategies::Families())
      if (info.name == family) has_template = !info.default_template.empty();
    if (has_template) {
      EXPECT_EQ(mt["status"], "ok") << mt.dump();
      EXPECT_GT(mt.value("figure", 0.0), 0.0);
      EXPECT_GT(row.value("mtune_over_onednn", 0.0), 0.0);
      // The table's %roof (paired by round) is the row's mtune_fraction_of_roofline.
      const double fraction = row.value("mtune_fraction_of_roofline", 0.0);
      EXPECT_GT(fraction, 0.0);
      EXPECT_THAT(log, HasSubstr(absl::StrFormat(" %.1f%% ", 100 * fraction)));
    } else {
      EXPECT_EQ(mt["status"], "no template") << mt.dump();
    }
  }
}

// --variant: each variant is compiled, verified and timed in the same rounds as
// mtune's kernel, with its ratios paired by round; a knob a row's template lacks is
// that row's error, and a malformed flag stops the run before any timing.
TEST(BenchFamilies, VariantsAreVerifiedAndTimedBesideTheKernel) {
  const std::string dir = testing::MakeTempDir("bench_families_variants");
  const std::string json_path = dir + "/out.json";
  const BenchRun run = RunBenchFamilies(
      {"--problems", "matmul:m=17,n=33,k=13:f32,copy_2d:m=24,n=40:f32", "--trials", "0",
       "--rounds", "2", "--min-time", "0.003", "--quick-calibration", "--cpu", "-1", "--json",
       json_path, "--variant", "tile_m1=17 tile_n1=33 tile_k1=13 tile_k2=1"},
      dir + "/log.txt", 240);
  const std::string& log = run.log;
  ASSERT_EQ(run.exit_code, 0) << log;
  EXPECT_THAT(log, HasSubstr("var/mt"));
  const nlohmann::json root = nlohmann::json::parse(testing::ReadFile(json_path));
  ASSERT_EQ(root["problems"].size(), 2u);
  const nlohmann::json& matmul = root["problems"][0];
  const nlohmann::json& variant = matmul["implementations"]["variant1"];
  EXPECT_TRUE(variant["verified"].get<bool>()) << variant.dump();
  EXPECT_GT(variant.value("figure", 0.0), 0.0);
  EXPECT_GT(matmul["variants"]["variant1"].value("over_mtune", 0.0), 0.0) << matmul.dump();
  EXPECT_EQ(matmul["variants"]["variant1"]["knobs"]["tile_n1"], "33");
  const nlohmann::json& copy = root["problems"][1]["implementations"]["variant1"];
  EXPECT_EQ(copy["status"], "error") << copy.dump();
  EXPECT_THAT(copy["detail"].get<std::string>(), HasSubstr("has no knob"));

  ExpectRefused(dir, "--variant", "tile_m1", "--variant 'tile_m1'");
}

// --operand-sets: every verified kernel runs on each copy of the operands (round r on
// copy r mod N), and each copy's own figure is reported; 0 copies is refused.
TEST(BenchFamilies, RoundsCycleThroughCopiesOfTheOperands) {
  const std::string dir = testing::MakeTempDir("bench_families_sets");
  const std::string json_path = dir + "/out.json";
  const BenchRun run = RunBenchFamilies(
      {"--problems", "matmul:m=17,n=33,k=13:f32,copy_2d:m=24,n=40:f32", "--trials", "0",
       "--rounds", "3", "--operand-sets", "3", "--min-time", "0.003", "--quick-calibration",
       "--cpu", "-1", "--json", json_path, "--variant", "tile_k2=1"},
      dir + "/log.txt", 240);
  const std::string& log = run.log;
  ASSERT_EQ(run.exit_code, 0) << log;
  EXPECT_THAT(log, HasSubstr("by operand set"));
  const nlohmann::json root = nlohmann::json::parse(testing::ReadFile(json_path));
  EXPECT_EQ(root["operand_sets"], 3);
  for (const nlohmann::json& row : root["problems"]) {
    SCOPED_TRACE(row["problem"].get<std::string>());
    for (const char* impl : {"mtune", "onednn", "eigen"}) {
      const nlohmann::json& figures = row["implementations"][impl]["figure_by_operand_set"];
      ASSERT_EQ(figures.size(), 3u) << row.dump();
      for (const nlohmann::json& figure : figures) EXPECT_GT(figure.get<double>(), 0.0) << impl;
    }
  }
  EXPECT_EQ(root["problems"][0]["implementations"]["variant1"]["figure_by_operand_set"].size(), 3u);

  ExpectRefused(dir, "--operand-sets", "0", "--operand-sets");
}

// bf16 matmuls are compared with oneDNN's bf16 matmul primitive (in both stored
// layouts of A here), verified like every baseline, and left out of the issue's goals,
// which are about f32.
TEST(BenchFamilies, Bf16MatmulsAreComparedWithOneDnnButNotCountedInTheGoals) {
  const std::string dir = testing::MakeTempDir("bench_families_bf16");
  const std::string json_path = dir + "/out.json";
  const BenchRun run = RunBenchFamilies(
      {"--problems", "matmul:m=17,n=32,k=10:bf16,matmul_transpose_a:m=9,n=16,k=6:bf16", "--trials", "0",
       "--rounds", "1", "--min-time", "0.003", "--quick-calibration", "--cpu", "-1", "--json", json_path},
      dir + "/log.txt", 240);
  ASSERT_EQ(run.exit_code, 0) << run.log;
  const nlohmann::json root = nlohmann::json::parse(testing::ReadFile(json_path));
  ASSERT_EQ(root["problems"].size(), 2u);
  for (const nlohmann::json& row : root["problems"]) {
    SCOPED_TRACE(row["problem"].get<std::string>());
    EXPECT_EQ(row["implementations"]["mtune"]["status"], "ok") << row.dump();
    EXPECT_EQ(row["implementations"]["eigen"]["status"], "n/a") << row.dump();
    // oneDNN computes bf16 on AVX-512 CPUs (with AMX or AVX512-BF16 where there are,
    // by conversion to f32 elsewhere).
    if (__builtin_cpu_supports("avx512f")) {
      const nlohmann::json& dnn = row["implementations"]["onednn"];
      EXPECT_TRUE(dnn["verified"].get<bool>()) << dnn.dump();
      EXPECT_THAT(dnn["detail"].get<std::string>(), HasSubstr("matmul bf16"));
    }
  }
  for (const nlohmann::json& goal : root["goals"]) EXPECT_EQ(goal["verdict"], "n/a") << goal.dump();
  EXPECT_THAT(run.log, HasSubstr("f32 rows only"));
}

}  // namespace
}  // namespace mtune::bench
