#include "worker/measure.h"

#include <set>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/template_library.h"
#include "worker/calibration.h"
#include "worker/peak_figures.h"
#include "worker/roofline.h"
#include "worker/sandbox.h"
#include "worker/test_calibration.h"

namespace mtune::worker {
namespace {

mtune::v1::Task TaskFor(const std::string& key, strategies::KnobValues overrides = {},
                        const std::string& template_name = "matmul_2level") {
  auto problem = strategies::ParseProblemKey(key);
  EXPECT_TRUE(problem.ok()) << problem.status();
  auto tpl = strategies::FindTemplate(template_name);
  auto space = strategies::ExtractKnobSpace(tpl->text, *problem);
  EXPECT_TRUE(space.ok()) << space.status();
  // The valid default for this problem (the template's values may break a
  // constraint for a small shape), then the test's own choices.
  strategies::KnobValues values = strategies::DefaultCandidate(*space).value_or(strategies::NearestDefaults(*space));
  std::set<std::string> overridden;
  for (const auto& [name, value] : overrides) {
    values[name] = value;
    overridden.insert(name);
  }
  // Knobs the constraints fix (peel_m2, peel_n2, copy_back_c) follow the test's
  // choices, as `mtune measure --knob` solves them, unless the test sets them itself.
  values = strategies::SolveDerivedKnobs(*space, values, overridden).value_or(values);
  auto script = strategies::Instantiate(tpl->text, *problem, values);
  EXPECT_TRUE(script.ok()) << script.status();
  mtune::v1::Task task;
  task.set_problem(key);
  task.set_script(*script);
  task.set_min_measure_s(0.01);
  return task;
}

// A 16^3 matmul measured with `script` in place of a template's.
mtune::v1::Result MeasureWithScript(const std::string& script) {
  Measurer measurer;
  mtune::v1::Task task = TaskFor("matmul:m=16,n=16,k=16:f32");
  task.set_script(script);
  return measurer.Measure(task, FlatTestCalibration());
}

TEST(Measurer, OddShapeCompilesVerifiesAndTimes) {
  Measurer measurer;
  // Sizes that divide no tile: padding must handle the edges.
  auto result = measurer.Measure(
      TaskFor("matmul:m=37,n=45,k=67:f32", {{"tile_m1", "32"}, {"tile_n1", "32"},
                                            {"tile_k1", "32"}, {"tile_n2", "16"}}),
      FlatTestCalibration());
  ASSERT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK) << result.error();
  EXPECT_GT(result.gflops(), 0);
  EXPECT_GT(result.timing().repetitions(), 4u);
  // Timed on every copy of the operands in turn, each copy warmed up first.
  EXPECT_EQ(result.timing().warmup(), static_cast<uint32_t>(kOperandSets * TimingOptions().warmup));
  EXPECT_LE(result.timing().p25_s(), result.timing().median_s());
  EXPECT_LE(result.timing().median_s(), result.timing().p75_s());
  EXPECT_LE(result.timing().min_s(), result.timing().p25_s());
  EXPECT_GT(result.compile_s(), 0);
  EXPECT_LT(result.max_rel_error(), 1e-4);
  EXPECT_EQ(result.roofline_level(), "DRAM");
  EXPECT_NEAR(result.fraction_of_roofline(), result.gflops() / result.roofline_gflops(), 1e-9);
}

// Operands are copied only up to kMaxCopiedFootprintBytes: a 128 MiB copy is timed on
// its one set.
TEST(Measurer, LargeFootprintIsTimedOnOneOperandSet) {
  Measurer measurer;
  ASSERT_GT(uint64_t{2} * 4096 * 4096 * 4, kMaxCopiedFootprintBytes);
  auto result = measurer.Measure(TaskFor("copy_2d:m=4096,n=4096:f32", {}, "copy_tiled"), FlatTestCalibration());
  ASSERT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK) << result.error();
  EXPECT_EQ(result.timing().warmup(), static_cast<uint32_t>(TimingOptions().warmup));
}

// A transpose (no arithmetic, so bandwidth-bound) inside the caches is held against
// the copy bandwidth at its own footprint (it reads what it writes): measured when the
// calibration lacks it, else the calibration's.
// A calibration of one 1 GiB cache level whose copy figure (0.001 GB/s) no copy is as
// slow as, and no figures at any footprint.
mtune::v1::Calibration OneSlowLevel() {
  mtune::v1::Calibration calibration;
  calibration.set_peak_gflops_f32(100);
  auto* cache = calibration.add_bandwidth();
  cache->set_level("L2");
  cache->set_capacity_bytes(uint64_t{1} << 30);
  cache->set_working_set_bytes(uint64_t{1} << 29);
  cache->set_gbps(0.001);
  return calibration;
}

// Figures of 12345 GB/s (copy and read) at the footprint of a 64 x 96 f32 transpose.
void AddFiguresOfTranspose64x96(mtune::v1::Calibration& calibration) {
  auto* at = calibration.add_at_footprint();
  at->set_level("L2");
  at->set_working_set_bytes(2 * 64 * 96 * 4);
  at->set_capacity_bytes(2 * 64 * 96 * 4);
  at->set_gbps(12345);
  at->set_read_gbps(12345);
}

TEST(Measurer, ABandwidthBoundKernelIsHeldAgainstTheCopyBandwidthAtItsFootprint) {
  mtune::v1::Calibration calibration = OneSlowLevel();
  Measurer measurer;
  const mtune::v1::Task task = TaskFor("transpose_2d:m=64,n=96:f32", {}, "copy_tiled");
  auto measured = measurer.Measure(task, calibration);
  ASSERT_EQ(measured.status(), mtune::v1::RESULT_STATUS_OK) << measured.error();
  EXPECT_EQ(measured.roofline_level(), "L2");
  EXPECT_GT(measured.roofline_gbps(), 1.0) << "measured at the footprint, not the level's 0.001";
  EXPECT_NEAR(measured.fraction_of_roofline(), measured.gbps() / measured.roofline_gbps(), 1e-9);
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  EXPECT_NEAR(measured.footprint_bandwidth().measured_unix_s(), now, 60) << "figures measured now say so";

  AddFiguresOfTranspose64x96(calibration);
  calibration.mutable_at_footprint(0)->set_measured_unix_s(77);
  auto known = measurer.Measure(task, calibration);
  ASSERT_EQ(known.status(), mtune::v1::RESULT_STATUS_OK) << known.error();
  EXPECT_NEAR(known.roofline_gbps(), 12345, 1e-6);
  EXPECT_NEAR(known.fraction_of_roofline(), known.gbps() / 12345, 1e-9);
  EXPECT_EQ(known.footprint_bandwidth().measured_unix_s(), 77) << "held figures keep their age";
}

// The overlapped worker hands the measuring half the figures it holds then, which
// may differ from those it held when the candidate compiled (it drops stale ones).
TEST(Measurer, TheMeasuringHalfUsesTheNewerCalibrationItIsGiven) {
  const mtune::v1::Calibration calibration = OneSlowLevel();
  mtune::v1::Calibration newer = calibration;
  AddFiguresOfTranspose64x96(newer);
  Measurer measurer;
  const mtune::v1::Task task = TaskFor("transpose_2d:m=64,n=96:f32", {}, "copy_tiled");
  ASSERT_EQ(measurer.Prepare(task, calibration), std::nullopt);
  auto measured = measurer.MeasurePrepared("", &newer);
  ASSERT_EQ(measured.status(), mtune::v1::RESULT_STATUS_OK) << measured.error();
  EXPECT_NEAR(measured.roofline_gbps(), 12345, 1e-6);

  ASSERT_EQ(measurer.Prepare(task, newer), std::nullopt);
  auto without = measurer.MeasurePrepared();
  ASSERT_EQ(without.status(), mtune::v1::RESULT_STATUS_OK) << without.error();
  EXPECT_NEAR(without.roofline_gbps(), 12345, 1e-6) << "no newer calibration: Prepare()'s";
}

// A compute-bound kernel faster than the peak it would be held against proves that
// peak low: a measurer given a maximum age times the peaks again on its thread and
// holds the result against them; without one, the start-up peak holds.
// A calibration no kernel's bandwidth bounds (1e6 GB/s of DRAM), so that its FMA
// peak, `peak_gflops`, bounds every problem with arithmetic.
mtune::v1::Calibration ComputeBoundCalibration(double peak_gflops) {
  mtune::v1::Calibration calibration = FlatTestCalibration();
  calibration.set_peak_gflops_f32(peak_gflops);
  calibration.mutable_bandwidth(0)->set_gbps(1e6);
  return calibration;
}

TEST(Measurer, AKernelFasterThanALowPeakHasThePeakTimedAgain) {
  mtune::v1::Calibration low = ComputeBoundCalibration(0.01);
  low.set_peaks_measured_unix_s(UnixNowS() - 1);
  const mtune::v1::Task task = TaskFor("matmul:m=64,n=64,k=64:f32");

  Measurer never;
  auto held = never.Measure(task, low);
  ASSERT_EQ(held.status(), mtune::v1::RESULT_STATUS_OK) << held.error();
  EXPECT_FALSE(held.has_retimed_peaks());
  EXPECT_NEAR(held.roofline_gflops(), 0.01, 1e-12);
  EXPECT_GT(held.fraction_of_roofline(), 1);

  Measurer retiming;
  retiming.set_peaks_max_age_s(kDefaultPeaksMaxAgeS);
  auto retimed = retiming.Measure(task, low);
  ASSERT_EQ(retimed.status(), mtune::v1::RESULT_STATUS_OK) << retimed.error();
  ASSERT_TRUE(retimed.has_retimed_peaks());
  EXPECT_TRUE(retimed.retimed_peaks().beaten());
  EXPECT_GT(retimed.retimed_peaks().peak_gflops_f32(), retimed.gflops() / 2)
      << "the FMA loop is at least half as fast as a 64^3 matmul";
  EXPECT_NEAR(retimed.roofline_gflops(), retimed.retimed_peaks().peak_gflops_f32(), 1e-9)
      << "a compute-bound result is held against the peak timed again";
  EXPECT_NEAR(retimed.fraction_of_roofline(), retimed.gflops() / retimed.roofline_gflops(), 1e-9);
}

// Peaks older than the maximum age are timed again whatever the kernel did; younger
// ones a kernel did not beat are kept.
TEST(Measurer, StalePeaksAreTimedAgainAndFreshOnesKept) {
  mtune::v1::Calibration calibration = ComputeBoundCalibration(1e6);
  const mtune::v1::Task task = TaskFor("matmul:m=64,n=64,k=64:f32");
  Measurer measurer;
  measurer.set_peaks_max_age_s(60);

  calibration.set_peaks_measured_unix_s(UnixNowS() - 30);
  auto fresh = measurer.Measure(task, calibration);
  ASSERT_EQ(fresh.status(), mtune::v1::RESULT_STATUS_OK) << fresh.error();
  EXPECT_FALSE(fresh.has_retimed_peaks());
  EXPECT_NEAR(fresh.roofline_gflops(), 1e6, 1e-6);

  calibration.set_peaks_measured_unix_s(UnixNowS() - 61);
  auto stale = measurer.Measure(task, calibration);
  ASSERT_EQ(stale.status(), mtune::v1::RESULT_STATUS_OK) << stale.error();
  ASSERT_TRUE(stale.has_retimed_peaks());
  EXPECT_FALSE(stale.retimed_peaks().beaten());
  EXPECT_LT(stale.roofline_gflops(), 1e5) << "held against the peak timed now, not 1e6";
  EXPECT_NEAR(stale.roofline_gflops(), stale.retimed_peaks().peak_gflops_f32(), 1e-9);
}

// A problem that bandwidth bounds below the peak does not have it timed again: a row
// sum does a flop per 4-byte element read, and 10 GB/s bound it at 2.5 GFLOP/s.
TEST(Measurer, ABandwidthBoundProblemLeavesStalePeaksAlone) {
  mtune::v1::Calibration calibration = FlatTestCalibration();
  calibration.set_peaks_measured_unix_s(UnixNowS() - 3600);
  Measurer measurer;
  measurer.set_peaks_max_age_s(60);
  auto result = measurer.Measure(TaskFor("reduce_rows_2d:m=256,n=256:f32", {}, "reduce_tiled"), calibration);
  ASSERT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK) << result.error();
  EXPECT_LT(result.roofline_gflops(), 10);
  EXPECT_FALSE(result.has_retimed_peaks());
}

// A reduction inside the caches reads far more than it writes: its roofline is the
// stream bandwidth of those reads and writes at its footprint (worker/roofline.h), not
// the copy's, and the figures it came from travel with the result for the worker to keep.
TEST(Measurer, AReductionIsHeldAgainstItsReadsAndWritesAtItsFootprint) {
  const std::string key = "reduce_rows_2d:m=64,n=96:f32";
  auto problem = strategies::ParseProblemKey(key);
  ASSERT_TRUE(problem.ok());
  mtune::v1::Calibration calibration;
  calibration.set_peak_gflops_f32(1e6);  // no compute bound
  auto* cache = calibration.add_bandwidth();
  cache->set_level("L2");
  cache->set_capacity_bytes(uint64_t{1} << 30);
  cache->set_working_set_bytes(uint64_t{1} << 29);
  cache->set_gbps(50);
  auto* at = calibration.add_at_footprint();
  at->set_level("L2");
  at->set_working_set_bytes(problem->FootprintBytes());
  at->set_capacity_bytes(problem->FootprintBytes());
  at->set_gbps(100);
  at->set_read_gbps(180);
  Measurer measurer;
  auto measured = measurer.Measure(TaskFor(key, {}, "reduce_tiled"), calibration);
  ASSERT_EQ(measured.status(), mtune::v1::RESULT_STATUS_OK) << measured.error();
  const double stream = StreamGbps(100, 180, *problem);
  EXPECT_GT(stream, 170) << "64 x 96 floats read, 64 written";
  EXPECT_DOUBLE_EQ(measured.roofline_gbps(), stream);
  EXPECT_NEAR(measured.roofline_gflops(), problem->Flops() / problem->CompulsoryBytes() * stream, 1e-9);
  EXPECT_EQ(measured.footprint_bandwidth().gbps(), 100);
  EXPECT_EQ(measured.footprint_bandwidth().read_gbps(), 180);
  EXPECT_EQ(measured.footprint_bandwidth().working_set_bytes(), problem->FootprintBytes());

  // Beyond the caches (a calibration whose only level is DRAM), with a footprint at
  // least the working set DRAM's figures were measured at: the same stream model with
  // DRAM's copy and read figures, nothing measured at the footprint.
  mtune::v1::Calibration dram_only;
  dram_only.set_peak_gflops_f32(1e6);
  auto* dram = dram_only.add_bandwidth();
  dram->set_level("DRAM");
  dram->set_working_set_bytes(problem->FootprintBytes());
  dram->set_gbps(14);
  dram->set_read_gbps(16);
  auto beyond = measurer.Measure(TaskFor(key, {}, "reduce_tiled"), dram_only);
  ASSERT_EQ(beyond.status(), mtune::v1::RESULT_STATUS_OK) << beyond.error();
  EXPECT_EQ(beyond.roofline_level(), "DRAM");
  EXPECT_DOUBLE_EQ(beyond.roofline_gbps(), StreamGbps(14, 16, *problem));
  EXPECT_FALSE(beyond.has_footprint_bandwidth());

  // Beyond the caches but smaller than DRAM's working set (it may still be partly
  // cached, as a 32 MiB column sum is on a 32 MiB L3): held against the copy and read
  // at its own footprint, as inside the caches.
  dram->set_working_set_bytes(2 * problem->FootprintBytes());
  *dram_only.add_at_footprint() = *at;
  auto between = measurer.Measure(TaskFor(key, {}, "reduce_tiled"), dram_only);
  ASSERT_EQ(between.status(), mtune::v1::RESULT_STATUS_OK) << between.error();
  EXPECT_EQ(between.roofline_level(), "DRAM");
  EXPECT_DOUBLE_EQ(between.roofline_gbps(), stream);
  EXPECT_EQ(between.footprint_bandwidth().read_gbps(), 180);
}

// Every structural alternative of matmul_packed (packing A or not, m- or n-outer
// register loops) on shapes that divide no tile, checked against the reference.
TEST(Measurer, PackedTemplateAlternativesAreCorrectOnOddShapes) {
  Measurer measurer;
  for (const std::string key : {"matmul:m=37,n=45,k=67:f32", "matmul:m=1,n=33,k=5:f32"}) {
    for (const std::string pack_a : {"no", "yes"}) {
      for (const std::string order : {"mnk", "nmk"}) {
        auto result = measurer.Measure(
            TaskFor(key, {{"pack_a", pack_a}, {"loop_order", order}, {"tile_n2", "16"},
                          {"tile_k2", "1"}},
                    "matmul_packed"),
            FlatTestCalibration());
        EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK)
            << key << " pack_a=" << pack_a << " loop_order=" << order << ": " << result.error();
      }
    }
  }
}

TEST(Measurer, DotLoweringIsAlsoCorrect) {
  Measurer measurer;
  auto result = measurer.Measure(
      TaskFor("matmul:m=64,n=64,k=64:f32", {{"tile_m1", "32"}, {"tile_n1", "64"},
                                            {"tile_k1", "64"}, {"contraction_lowering", "dot"}}),
      FlatTestCalibration());
  ASSERT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK) << result.error();
}

TEST(Measurer, StrategyThatDoesNotApplyIsAnInvalidCandidate) {
  // Tiling a handle to no op at all makes the interpreter fail definitely.
  auto result = MeasureWithScript(R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
      %f = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
      %k = transform.tune.knob<"t"> options = [1, 2] -> !transform.param<i64>
      transform.yield
    } })mlir");
  EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_INVALID_CANDIDATE);
  EXPECT_NE(result.error().find("failed to apply"), std::string::npos) << result.error();
}

// A script can go on after an error: here mtune-rotate-tiles fails (the marked loop's
// induction variable is used outside its inner tile loop) inside a sequence that
// suppresses the failure, and the interpreter succeeds. The kernel left behind is
// not the candidate's, so the error must fail the candidate, not be measured.
TEST(Measurer, ErrorReportedWhileApplyingFailsTheCandidateEvenWhenSuppressed) {
  auto result = MeasureWithScript(R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
      %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
      %rows, %outer = transform.structured.tile_using_for %mm tile_sizes [8, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %cols, %inner = transform.structured.tile_using_for %rows tile_sizes [0, 8, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %outer "mtune.rotatable_tiles" : !transform.any_op
      %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
      transform.sequence %f : !transform.any_op failures(suppress) {
      ^bb0(%g: !transform.any_op):
        %r = transform.apply_registered_pass "mtune-rotate-tiles" to %g : (!transform.any_op) -> !transform.any_op
      }
      transform.yield
    } })mlir");
  EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_INVALID_CANDIDATE) << result.error();
  EXPECT_NE(result.error().find("reported an error while applying"), std::string::npos) << result.error();
  EXPECT_NE(result.error().find("mtune-rotate-tiles: uses the rotated loop's induction variable"),
            std::string::npos)
      << result.error();
}

TEST(Measurer, ScriptThatDoesNotParseIsAnInvalidCandidateWithDiagnostics) {
  auto result = MeasureWithScript("module { this is not mlir }");
  EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_INVALID_CANDIDATE);
  EXPECT_NE(result.error().find("custom op 'this' is unknown"), std::string::npos) << result.error();
}

TEST(Sandbox, ChildKilledBySignalBecomesACrashResultAndTheNextCallWorksAgain) {
  Sandbox sandbox({"/bin/sh", "-c", "kill -SEGV $$"});
  mtune::v1::SandboxRequest request;
  *request.mutable_measure() = mtune::v1::Task();
  auto response = sandbox.Call(request, 10);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->result().status(), mtune::v1::RESULT_STATUS_CRASH);
  EXPECT_NE(response->result().error().find("signal 11"), std::string::npos)
      << response->result().error();
  EXPECT_EQ(sandbox.child_pid(), -1);
  auto again = sandbox.Call(request, 10);  // a fresh child is started
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->result().status(), mtune::v1::RESULT_STATUS_CRASH);
}

TEST(Sandbox, ChildThatNeverAnswersBecomesATimeout) {
  Sandbox sandbox({"/bin/sleep", "60"});
  mtune::v1::SandboxRequest request;
  *request.mutable_measure() = mtune::v1::Task();
  auto response = sandbox.Call(request, 0.3);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->result().status(), mtune::v1::RESULT_STATUS_TIMEOUT);
  EXPECT_GE(response->result().total_s(), 0.3);
  EXPECT_LT(response->result().total_s(), 5);
}

TEST(Sandbox, MissingExecutableIsAnError) {
  Sandbox sandbox({"/nonexistent/mtune-sandbox"});
  auto response = sandbox.Call(mtune::v1::SandboxRequest(), 1);
  // posix_spawn reports exec failure as a child exiting 127 on glibc.
  if (response.ok()) {
    EXPECT_EQ(response->result().status(), mtune::v1::RESULT_STATUS_CRASH);
    EXPECT_NE(response->result().error().find("code 127"), std::string::npos);
  } else {
    EXPECT_NE(response.status().message().find("cannot start sandbox"), std::string::npos);
  }
}

}  // namespace
}  // namespace mtune::worker
