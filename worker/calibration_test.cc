// Tests of calibration, roofline and affinity: the MLIR-free measurement helpers.
#include "worker/calibration.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <tuple>
#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/affinity.h"
#include "worker/amx.h"
#include "worker/bf16_dot.h"
#include "worker/roofline.h"

namespace mtune::worker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;

// Peak 100 GFLOP/s; L1 400 GB/s (48 KiB), L2 200 (2 MiB), L3 100 (32 MiB), DRAM 20.
mtune::v1::Calibration HandMade() {
  mtune::v1::Calibration calibration;
  calibration.set_peak_gflops_f32(100.0);
  auto add = [&](const char* level, uint64_t capacity, double gbps) {
    mtune::v1::BandwidthLevel* out = calibration.add_bandwidth();
    out->set_level(level);
    out->set_capacity_bytes(capacity);
    out->set_working_set_bytes(capacity / 2);
    out->set_gbps(gbps);
  };
  add("L1", 48 * kKiB, 400.0);
  add("L2", 2 * kMiB, 200.0);
  add("L3", 32 * kMiB, 100.0);
  add("DRAM", 0, 20.0);
  return calibration;
}

TEST(Roofline, ComputeBoundWhenIntensityIsHigh) {
  // 512^3 matmul: 2.7e8 flop over 3 MiB of compulsory traffic, footprint 3 MiB -> L3.
  const double flops = 2.0 * 512 * 512 * 512;
  const double bytes = 3.0 * 512 * 512 * 4;
  const RooflinePoint point = ComputeRoofline(HandMade(), flops, bytes, 3 * 512 * 512 * 4);
  EXPECT_EQ(point.level, "L3");
  EXPECT_DOUBLE_EQ(point.level_gbps, 100.0);
  EXPECT_DOUBLE_EQ(point.bound_gflops, 100.0);
}

TEST(Roofline, BandwidthBoundWhenIntensityIsLow) {
  // Intensity 0.25 flop/byte in L1: 0.25 * 400 = 100 -> exactly the peak; 0.125 -> 50.
  const RooflinePoint point = ComputeRoofline(HandMade(), 1000.0, 8000.0, 16 * kKiB);
  EXPECT_EQ(point.level, "L1");
  EXPECT_DOUBLE_EQ(point.bound_gflops, 50.0);
  EXPECT_DOUBLE_EQ(FractionOfRoofline(25.0, point), 0.5);
}

TEST(Roofline, PicksTheInnermostLevelThatHoldsTheFootprint) {
  EXPECT_EQ(ComputeRoofline(HandMade(), 1, 1, 48 * kKiB).level, "L1") << "capacity is inclusive";
  EXPECT_EQ(ComputeRoofline(HandMade(), 1, 1, 48 * kKiB + 1).level, "L2");
  EXPECT_EQ(ComputeRoofline(HandMade(), 1, 1, 32 * kMiB).level, "L3");
  const RooflinePoint dram = ComputeRoofline(HandMade(), 1.0, 1.0, 32 * kMiB + 1);
  EXPECT_EQ(dram.level, "DRAM");
  EXPECT_DOUBLE_EQ(dram.level_gbps, 20.0);
  EXPECT_DOUBLE_EQ(dram.bound_gflops, 20.0);
}

// A bandwidth-bound problem can be held against the copy bandwidth measured at its
// own footprint (Calibration.at_footprint) instead of its level's.
TEST(Roofline, ABandwidthBoundProblemTakesTheBandwidthAtItsFootprint) {
  mtune::v1::Calibration calibration = HandMade();
  const RooflinePoint level = ComputeRoofline(calibration, 1000.0, 8000.0, 4 * kMiB);  // L3, 100 GB/s
  EXPECT_TRUE(BandwidthBound(level, 1000.0, 100.0));
  EXPECT_TRUE(BandwidthBound(level, 0.0, 100.0)) << "no arithmetic: bandwidth-bound";
  EXPECT_FALSE(BandwidthBound(ComputeRoofline(calibration, 1e12, 8000.0, 4 * kMiB), 1e12, 100.0));

  EXPECT_EQ(FiguresAtFootprint(calibration, 4 * kMiB), nullptr);
  mtune::v1::BandwidthLevel* at = calibration.add_at_footprint();
  at->set_level("L3");
  at->set_working_set_bytes(4 * kMiB);
  at->set_capacity_bytes(4 * kMiB);
  at->set_gbps(160.0);
  ASSERT_NE(FiguresAtFootprint(calibration, 4 * kMiB), nullptr);
  EXPECT_EQ(FiguresAtFootprint(calibration, 4 * kMiB)->gbps(), 160.0);
  EXPECT_EQ(FiguresAtFootprint(calibration, 4 * kMiB + 1), nullptr) << "exactly that footprint";

  const RooflinePoint at_footprint = WithBandwidth(level, 160.0, 100.0, 1000.0, 8000.0);
  EXPECT_EQ(at_footprint.level, "L3");
  EXPECT_DOUBLE_EQ(at_footprint.level_gbps, 160.0);
  EXPECT_DOUBLE_EQ(at_footprint.bound_gflops, 20.0);  // 0.125 flop/byte * 160 GB/s
  EXPECT_DOUBLE_EQ(WithBandwidth(level, 1e6, 100.0, 1000.0, 8000.0).bound_gflops, 100.0) << "capped at the peak";
}

TEST(Roofline, OnlyAFootprintAtLeastDramsWorkingSetIsHeldAgainstDramsFigures) {
  mtune::v1::Calibration calibration;
  auto* l3 = calibration.add_bandwidth();
  l3->set_level("L3");
  l3->set_capacity_bytes(uint64_t{32} << 20);
  l3->set_working_set_bytes(uint64_t{16} << 20);
  auto* dram = calibration.add_bandwidth();
  dram->set_level("DRAM");
  dram->set_working_set_bytes(uint64_t{256} << 20);
  EXPECT_FALSE(HeldAgainstLevelFigures(calibration, "L3", uint64_t{8} << 20));
  EXPECT_FALSE(HeldAgainstLevelFigures(calibration, "DRAM", uint64_t{32} << 20));
  EXPECT_FALSE(HeldAgainstLevelFigures(calibration, "DRAM", (uint64_t{256} << 20) - 1));
  EXPECT_TRUE(HeldAgainstLevelFigures(calibration, "DRAM", uint64_t{256} << 20));
  EXPECT_TRUE(HeldAgainstLevelFigures(calibration, "DRAM", uint64_t{1} << 33));
  // A calibration without DRAM's working set (an older store's): DRAM's figures.
  mtune::v1::Calibration unknown_working_set;
  unknown_working_set.add_bandwidth()->set_level("DRAM");
  EXPECT_TRUE(HeldAgainstLevelFigures(unknown_working_set, "DRAM", 4096));
}

TEST(Roofline, LevelOrderInTheCalibrationDoesNotMatter) {
  mtune::v1::Calibration reversed = HandMade();
  std::reverse(reversed.mutable_bandwidth()->begin(), reversed.mutable_bandwidth()->end());
  EXPECT_EQ(ComputeRoofline(reversed, 1, 1, 1 * kMiB).level, "L2");
}

TEST(Roofline, NoTrafficOrNoBandwidthMeansThePeak) {
  EXPECT_DOUBLE_EQ(ComputeRoofline(HandMade(), 1e9, 0.0, 1 * kMiB).bound_gflops, 100.0);
  mtune::v1::Calibration peak_only;
  peak_only.set_peak_gflops_f32(80.0);
  const RooflinePoint point = ComputeRoofline(peak_only, 1.0, 1e9, 1 * kMiB);
  EXPECT_DOUBLE_EQ(point.bound_gflops, 80.0);
  EXPECT_EQ(point.level, "");
  EXPECT_DOUBLE_EQ(FractionOfRoofline(10.0, RooflinePoint{}), 0.0);
}

TEST(Roofline, WithoutDramEntryTheOutermostLevelBounds) {
  mtune::v1::Calibration calibration = HandMade();
  calibration.mutable_bandwidth()->RemoveLast();
  EXPECT_EQ(ComputeRoofline(calibration, 1, 1, 1024 * kMiB).level, "L3");
}

// Writes a fake sysfs cache directory in the test's temp dir.
std::filesystem::path FakeSysfs(
    const std::vector<std::tuple<int, std::string, std::string>>& entries) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::filesystem::path index = dir / ("index" + std::to_string(i));
    std::filesystem::create_directories(index);
    std::ofstream(index / "level") << std::get<0>(entries[i]) << "\n";
    std::ofstream(index / "type") << std::get<1>(entries[i]) << "\n";
    std::ofstream(index / "size") << std::get<2>(entries[i]) << "\n";
  }
  return dir;
}

TEST(DetectDataCaches, ReadsDataAndUnifiedLevelsInOrder) {
  const auto dir = FakeSysfs({{3, "Unified", "491520K"},
                              {1, "Instruction", "64K"},
                              {1, "Data", "48K"},
                              {2, "Unified", "2M"}});
  const std::vector<CacheLevel> levels = DetectDataCaches(dir.string());
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels[0].level, 1);
  EXPECT_EQ(levels[0].size_bytes, 48 * kKiB) << "the instruction cache is skipped";
  EXPECT_EQ(levels[1].size_bytes, 2 * kMiB);
  EXPECT_EQ(levels[2].level, 3);
  EXPECT_EQ(levels[2].size_bytes, 480 * kMiB);
}

TEST(DetectDataCaches, MissingSysfsFallsBackWithoutFailing) {
  // Whatever sysconf knows; at least the call must not throw and sizes must be sane.
  for (const CacheLevel& level : DetectDataCaches("/nonexistent/cache")) {
    EXPECT_GT(level.size_bytes, 0u);
  }
}

bool FinitePositive(double x) { return std::isfinite(x) && x > 0; }

// A calibration of a fraction of a second over the fake cache levels `caches`.
CalibrationOptions ShortOptions(const std::vector<std::tuple<int, std::string, std::string>>& caches,
                                uint64_t max_working_set_bytes) {
  CalibrationOptions options;
  options.fma_time_s = 0.05;
  options.fma_repetitions = 2;
  options.copy_time_s = 0.01;
  options.max_working_set_bytes = max_working_set_bytes;
  options.cache_sysfs_dir = FakeSysfs(caches).string();
  return options;
}

TEST(Calibration, ShortRunGivesPositiveFiniteFigures) {
  const CalibrationOptions options = ShortOptions(
      {{1, "Data", "48K"}, {2, "Unified", "2048K"}, {3, "Unified", "32M"}}, 64 * kMiB);
  std::vector<std::string> notes;
  const mtune::v1::Calibration calibration = Calibrate(options, &notes);
  EXPECT_TRUE(FinitePositive(calibration.peak_gflops_f32()));
  EXPECT_GT(calibration.peak_gflops_f32(), 1.0);
  EXPECT_LT(calibration.peak_gflops_f32(), 1e5) << "one core cannot do 100 TFLOP/s";
  ASSERT_EQ(calibration.bandwidth_size(), 4);
  const char* names[] = {"L1", "L2", "L3", "DRAM"};
  const uint64_t capacities[] = {48 * kKiB, 2 * kMiB, 32 * kMiB, 0};
  for (int i = 0; i < 4; ++i) {
    const auto& level = calibration.bandwidth(i);
    EXPECT_EQ(level.level(), names[i]);
    EXPECT_EQ(level.capacity_bytes(), capacities[i]);
    EXPECT_TRUE(FinitePositive(level.gbps())) << level.level() << ": " << level.gbps();
    EXPECT_TRUE(FinitePositive(level.read_gbps())) << level.level() << ": " << level.read_gbps();
    // Which loop won is recorded: one of those timed.
    EXPECT_THAT(level.copy_streams(), testing::AnyOf(1u, 4u, 8u)) << level.level();
    EXPECT_THAT(level.read_streams(), testing::AnyOf(1u, 4u)) << level.level();
    EXPECT_GT(level.working_set_bytes(), 0u);
    EXPECT_LE(level.working_set_bytes(), 64 * kMiB);
  }
  EXPECT_EQ(calibration.bandwidth(0).working_set_bytes(), 24 * kKiB) << "half of L1";
  // 4 x 32 MiB wanted for DRAM, 64 MiB allowed: the cap must be reported.
  EXPECT_EQ(calibration.bandwidth(3).working_set_bytes(), 64 * kMiB);
  bool cap_noted = false;
  for (const std::string& note : notes) cap_noted |= note.find("DRAM working set capped") == 0;
  EXPECT_TRUE(cap_noted);
  EXPECT_TRUE(FinitePositive(calibration.duration_s()));
  EXPECT_LT(calibration.duration_s(), 10.0);
}

// A CPU with AMX gets a bf16 matrix peak (a loop of tdpbf16ps), one without none;
// either way the calibration says which.
TEST(Calibration, MeasuresTheAmxBf16PeakWhereTheCpuHasAmx) {
  const CalibrationOptions options = ShortOptions({{1, "Data", "48K"}}, 8 * kMiB);
  std::vector<std::string> notes;
  const mtune::v1::Calibration calibration = Calibrate(options, &notes);
  const std::string all_notes = absl::StrJoin(notes, "\n");
  if (!CpuHasAmxBf16()) {
    EXPECT_EQ(calibration.peak_gflops_amx_bf16(), 0.0);
    EXPECT_THAT(all_notes, Not(HasSubstr("AMX")));
    GTEST_SKIP() << "this CPU has no AMX bf16";
  }
  ASSERT_TRUE(RequestAmxState().ok()) << "the CPU has AMX but Linux refuses its state";
  EXPECT_TRUE(FinitePositive(calibration.peak_gflops_amx_bf16()));
  EXPECT_LT(calibration.peak_gflops_amx_bf16(), 1e5) << "one core cannot do 100 TFLOP/s";
  EXPECT_THAT(all_notes, HasSubstr("bf16 matrix peak measured with AMX tdpbf16ps"));
}

TEST(Calibration, MeasuresTheBf16DotPeakWhereTheCpuHasAvx512Bf16) {
  const CalibrationOptions options = ShortOptions({{1, "Data", "48K"}}, 8 * kMiB);
  std::vector<std::string> notes;
  const mtune::v1::Calibration calibration = Calibrate(options, &notes);
  const std::string all_notes = absl::StrJoin(notes, "\n");
  if (!CpuHasAvx512Bf16()) {
    EXPECT_EQ(calibration.peak_gflops_bf16_dot(), 0.0);
    EXPECT_THAT(all_notes, Not(HasSubstr("AVX512-BF16")));
    GTEST_SKIP() << "this CPU has no AVX512-BF16";
  }
  EXPECT_TRUE(FinitePositive(calibration.peak_gflops_bf16_dot()));
  EXPECT_LT(calibration.peak_gflops_bf16_dot(), 1e4) << "one core cannot do 10 TFLOP/s of vdpbf16ps";
  EXPECT_THAT(all_notes, HasSubstr("bf16 dot-product peak measured with AVX512-BF16 vdpbf16ps"));
}

TEST(Bf16DotLoop, RunsWholeIterationsCoveringTheRequestedFlops) {
  if (!CpuHasAvx512Bf16()) GTEST_SKIP() << "no AVX512-BF16 here";
  Bf16DotLoop loop;
  const double one_iteration = loop.Run(1);
  EXPECT_EQ(one_iteration, 16 * 16 * 2 * 2) << "16 vdpbf16ps of 16 lanes, two multiply-adds each";
  EXPECT_EQ(loop.Run(2.5 * one_iteration), 3 * one_iteration) << "rounded up to whole iterations";
}

TEST(AmxBf16Loop, RunsWholeIterationsCoveringTheRequestedFlops) {
  if (!CpuHasAmxBf16() || !RequestAmxState().ok()) GTEST_SKIP() << "no AMX bf16 here";
  AmxBf16Loop loop;
  const double one_iteration = loop.Run(1);
  EXPECT_EQ(one_iteration, 4 * 16 * 16 * 32 * 2) << "four 16 x 16 x 32 tile multiplies";
  EXPECT_EQ(loop.Run(2.5 * one_iteration), 3 * one_iteration) << "rounded up to whole iterations";
}

// bf16 problems are held against the fastest bf16 multiply the calibration measured
// (what the machine can do for them), other types never.
TEST(Roofline, Bf16ProblemsTakeTheFastestBf16PeakThereIs) {
  mtune::v1::Calibration calibration = HandMade();
  auto bf16 = strategies::ParseProblemKey("matmul:m=64,n=64,k=64:bf16");
  auto f32 = strategies::ParseProblemKey("matmul:m=64,n=64,k=64:f32");
  auto f64 = strategies::ParseProblemKey("matmul:m=64,n=64,k=64:f64");
  ASSERT_TRUE(bf16.ok() && f32.ok() && f64.ok());
  EXPECT_EQ(PeakGflopsFor(calibration, *bf16), 100.0) << "no bf16 unit: bf16 is widened to f32";
  EXPECT_EQ(Bf16PeakText(calibration), "");
  calibration.set_peak_gflops_bf16_dot(200.0);
  EXPECT_EQ(PeakGflopsFor(calibration, *bf16), 200.0) << "AVX512-BF16 dot products";
  EXPECT_EQ(Bf16PeakText(calibration), "AVX512-BF16 dot-product peak 200.0 GFLOP/s");
  calibration.set_peak_gflops_amx_bf16(1600.0);
  EXPECT_EQ(PeakGflopsFor(calibration, *bf16), 1600.0);
  EXPECT_EQ(Bf16PeakText(calibration), "AMX bf16 peak 1600.0 GFLOP/s");
  EXPECT_EQ(PeakGflopsFor(calibration, *f32), 100.0);
  EXPECT_EQ(PeakGflopsFor(calibration, *f64), 50.0);
}

TEST(FmaLoop, RunsWholeIterationsCoveringTheRequestedFlops) {
  FmaLoop loop;
  const double one_iteration = loop.Run(1);
  ASSERT_GT(one_iteration, 1) << "an iteration is several vector FMAs";
  EXPECT_EQ(loop.Run(one_iteration), one_iteration);
  const double asked = 10.5 * one_iteration;
  EXPECT_EQ(loop.Run(asked), 11 * one_iteration) << "rounded up to whole iterations";
  EXPECT_EQ(loop.Run(0), one_iteration) << "at least one iteration";
}

TEST(CopyLoop, EveryVariantMovesHalfTheWorkingSetEachWayRoundedToWholeBlocksPerStream) {
  for (const CopyVariant& variant : kCopyVariants) {
    const double step = 256.0 * static_cast<int>(variant.streams);  // a 256-byte block per stream
    SCOPED_TRACE(absl::StrCat(static_cast<int>(variant.streams), " streams, ",
                              variant.stores == CopyStores::kStreaming ? "streaming" : "cached"));
    EXPECT_EQ(CopyLoop(1 << 20, variant.stores, variant.streams).Run(), double{1 << 20})
        << "512 KiB read + 512 KiB written";
    EXPECT_EQ(CopyLoop(1, variant.stores, variant.streams).Run(), 2 * step) << "at least a block per stream";
    const uint64_t almost_four = static_cast<uint64_t>(2 * (4 * step - 1));
    EXPECT_EQ(CopyLoop(almost_four, variant.stores, variant.streams).Run(), 2 * 3 * step)
        << "each way rounded down to whole blocks per stream";
  }
}

TEST(CopyLoop, EveryVariantCopiesEveryByte) {
  for (const CopyVariant& variant : kCopyVariants) {
    CopyLoop loop((3 << 20) + 5000, variant.stores, variant.streams);
    EXPECT_FALSE(loop.DestinationMatchesSource()) << "the source starts at 1, the destination at 0";
    loop.Run();
    EXPECT_TRUE(loop.DestinationMatchesSource())
        << static_cast<int>(variant.streams) << " streams, "
        << (variant.stores == CopyStores::kStreaming ? "streaming" : "cached");
  }
}

TEST(TouchedMemory, HandsOutOneBlockUntilAskedForMore) {
  TouchedMemory memory;
  EXPECT_EQ(memory.bytes(), 0u);
  const std::shared_ptr<float[]> block = memory.Get(1 << 20);
  ASSERT_TRUE(block);
  EXPECT_EQ(memory.bytes(), uint64_t{1} << 20);
  EXPECT_EQ(block[(1 << 18) - 1], 1.0f) << "touched with ones";
  EXPECT_EQ(memory.Get(4096).get(), block.get()) << "a smaller request borrows the same block";
  const std::shared_ptr<float[]> bigger = memory.Get((1 << 20) + 1);
  ASSERT_TRUE(bigger);
  EXPECT_NE(bigger.get(), block.get());
  EXPECT_EQ(memory.bytes(), (uint64_t{1} << 20) + 64) << "rounded up to a cache line";
  EXPECT_EQ(block[0], 1.0f) << "the old block lives on with its holder";
}

// With a TouchedMemory a copy reads one half of the borrowed block and writes the other.
TEST(CopyLoop, EveryVariantCopiesEveryByteOfBorrowedMemory) {
  constexpr uint64_t kWorkingSet = 3 << 20;
  TouchedMemory memory;
  const std::shared_ptr<float[]> block = memory.Get(kWorkingSet);
  ASSERT_TRUE(block);
  for (const CopyVariant& variant : kCopyVariants) {
    SCOPED_TRACE(absl::StrCat(static_cast<int>(variant.streams), " streams, ",
                              variant.stores == CopyStores::kStreaming ? "streaming" : "cached"));
    constexpr uint64_t kHalf = kWorkingSet / 2 / sizeof(float);
    for (uint64_t i = 0; i < kHalf; ++i) {
      block[i] = static_cast<float>(i % 1000);
      block[kHalf + i] = -1.0f;
    }
    CopyLoop loop(kWorkingSet, variant.stores, variant.streams, &memory);
    EXPECT_FALSE(loop.DestinationMatchesSource());
    EXPECT_EQ(loop.Run(), double{kWorkingSet});
    EXPECT_TRUE(loop.DestinationMatchesSource());
    EXPECT_EQ(std::memcmp(block.get(), block.get() + kHalf, kHalf * sizeof(float)), 0)
        << "the loop copied within the block it borrowed";
  }
  ReadLoop read(kWorkingSet, Streams::k4, &memory);
  std::fill_n(block.get(), kWorkingSet / sizeof(float), 1.0f);
  EXPECT_EQ(read.Run(), double{kWorkingSet});
  EXPECT_EQ(read.SumOfLastPass(), kWorkingSet / sizeof(float)) << "it read the borrowed block";
}

TEST(Calibration, CopyBandwidthIsPositiveForTinyAndOddSizes) {
  EXPECT_TRUE(FinitePositive(MeasureCopyGbps(1, 0.001, 1).gbps));
  EXPECT_TRUE(FinitePositive(MeasureCopyGbps(100'001, 0.001, 2).gbps));
}

TEST(ReadLoop, ReadsTheWorkingSetRoundedToWholeBlocksPerStream) {
  for (const Streams streams : {Streams::k1, Streams::k4, Streams::k8}) {
    const double step = 512.0 * static_cast<int>(streams);  // a 512-byte block per stream
    SCOPED_TRACE(absl::StrCat(static_cast<int>(streams), " streams"));
    EXPECT_EQ(ReadLoop(1 << 20, streams).Run(), double{1 << 20});
    EXPECT_EQ(ReadLoop(1, streams).Run(), step) << "at least a block per stream";
    EXPECT_EQ(ReadLoop(static_cast<uint64_t>(4 * step - 1), streams).Run(), 3 * step) << "rounded down";
  }
  EXPECT_TRUE(FinitePositive(MeasureReadGbps(1, 0.001, 1).gbps));
  EXPECT_TRUE(FinitePositive(MeasureReadGbps(100'001, 0.001, 2).gbps));
}

// A loop that skipped part of its buffer, or read some of it twice, would report a
// bandwidth it did not reach.
TEST(ReadLoop, EveryStreamCountReadsEachFloatOnce) {
  for (const Streams streams : {Streams::k1, Streams::k4, Streams::k8}) {
    ReadLoop loop((3 << 20) + 5000, streams);
    const double bytes = loop.Run();
    // The buffer holds ones; the per-lane sums stay far below 2^24, so they are exact.
    EXPECT_EQ(loop.SumOfLastPass(), bytes / sizeof(float)) << static_cast<int>(streams) << " streams";
  }
}

// The stream bandwidth of a kernel's reads and writes is exact at the two loops it is
// measured with and lies between them otherwise; a write back to a line just read
// (an accumulated output) costs less than a fresh one.
TEST(Roofline, StreamBandwidthWeighsReadsAndWrites) {
  const double copy = 100, read = 180;
  EXPECT_DOUBLE_EQ(StreamGbps(copy, read, 1000, 1000, 0), copy) << "a copy reads and writes alike";
  EXPECT_DOUBLE_EQ(StreamGbps(copy, read, 1000, 0, 0), read) << "a pure read";
  const double fresh = StreamGbps(copy, read, 1000, 10, 0);  // a row sum into a fresh output
  EXPECT_GT(fresh, copy);
  EXPECT_LT(fresh, read);
  EXPECT_NEAR(fresh, 1010 / (1000 / read + 10 * (2 / copy - 1 / read)), 1e-9);
  // out += in: 2000 bytes read (in and out), 1000 written back to lines read.
  EXPECT_NEAR(StreamGbps(copy, read, 2000, 0, 1000), 3000 / (2000 / read + 1000 * (2 / copy - 2 / read)),
              1e-9);
  EXPECT_GT(StreamGbps(copy, read, 2000, 0, 1000), StreamGbps(copy, read, 2000, 1000, 0));
  EXPECT_DOUBLE_EQ(StreamGbps(copy, 0, 1000, 10, 0), copy) << "no read figure: the copy's";
  // A read stream slower than the copy would make write-backs free, never negative.
  EXPECT_DOUBLE_EQ(StreamGbps(100, 80, 1000, 0, 1000), 160.0);

  // Per problem: a copy is held against the copy; a reduction (out += sum of rows)
  // reads its input and updates its output.
  auto copy_2d = strategies::ParseProblemKey("copy_2d:m=64,n=96:f32");
  auto rows = strategies::ParseProblemKey("reduce_rows_2d:m=64,n=96:f32");
  ASSERT_TRUE(copy_2d.ok() && rows.ok());
  EXPECT_DOUBLE_EQ(StreamGbps(copy, read, *copy_2d), copy);
  EXPECT_DOUBLE_EQ(StreamGbps(copy, read, *rows),
                   StreamGbps(copy, read, 64 * 96 * 4 + 64 * 4, 0, 64 * 4));
}

TEST(Affinity, PinToCpuZeroThenRunThere) {
  // On a fresh thread so the test runner's own affinity is left alone.
  std::thread([] {
    const absl::Status status = PinCurrentThreadToCpu(0);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(CurrentCpu(), 0);
    absl::StatusOr<std::vector<int>> allowed = AllowedCpus();
    ASSERT_TRUE(allowed.ok()) << allowed.status();
    EXPECT_EQ(*allowed, std::vector<int>{0});
  }).join();
}

TEST(Affinity, OutOfRangeCpuFailsClearly) {
  for (int cpu : {100000, -1}) {
    const absl::Status status = PinCurrentThreadToCpu(cpu);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("cannot pin to cpu " + std::to_string(cpu)));
    EXPECT_THAT(status.message(), HasSubstr("allowed"));
  }
}

}  // namespace
}  // namespace mtune::worker
