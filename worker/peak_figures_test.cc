#include "worker/peak_figures.h"

#include "gtest/gtest.h"
#include "proto/compute_peaks.h"
#include "worker/bf16_dot.h"
#include "worker/calibration.h"

namespace mtune::worker {
namespace {

constexpr double kNow = 1'800'000'000;

mtune::v1::Calibration PeaksTimedAt(double unix_s, double f32 = 100) {
  mtune::v1::Calibration c;
  c.set_peak_gflops_f32(f32);
  c.set_peaks_measured_unix_s(unix_s);
  return c;
}

TEST(PeaksDueForRetiming, OnlyOnceOlderThanTheMaximumAge) {
  EXPECT_EQ(PeaksDueForRetiming(PeaksTimedAt(kNow - 59), 90, 100, 60, kNow), PeaksRetiming::kNone);
  EXPECT_EQ(PeaksDueForRetiming(PeaksTimedAt(kNow - 61), 90, 100, 60, kNow), PeaksRetiming::kStale);
}

TEST(PeaksDueForRetiming, PeaksWithoutATimeAreStale) {
  EXPECT_EQ(PeaksDueForRetiming(PeaksTimedAt(0), 90, 100, 60, kNow), PeaksRetiming::kStale);
}

TEST(PeaksDueForRetiming, NeverWithoutAMaximumAge) {
  EXPECT_EQ(PeaksDueForRetiming(PeaksTimedAt(0), 190, 100, 0, kNow), PeaksRetiming::kNone);
  EXPECT_EQ(PeaksDueForRetiming(PeaksTimedAt(kNow - 1e6), 190, 100, -1, kNow), PeaksRetiming::kNone);
}

// A kernel faster than the peak proves the peak low: it is timed again at once, before
// the maximum age.
TEST(PeaksDueForRetiming, AKernelFasterThanThePeakHasItTimedAgainAtOnce) {
  EXPECT_EQ(PeaksDueForRetiming(PeaksTimedAt(kNow - 1), 101, 100, 60, kNow), PeaksRetiming::kBeaten);
  EXPECT_EQ(PeaksDueForRetiming(PeaksTimedAt(kNow - 1), 100, 100, 60, kNow), PeaksRetiming::kNone);
}

// Peaks timed for a faster kernel are timed again for the next faster one only past
// the minimum age: a kernel that truly beats the FMA loop does not have it timed for
// every task.
TEST(PeaksDueForRetiming, PeaksTimedForAFasterKernelWaitForTheMinimumAge) {
  mtune::v1::Calibration young = PeaksTimedAt(kNow - kBeatenPeaksMinAgeS + 1);
  young.set_peaks_timed_for_faster_kernel(true);
  EXPECT_EQ(PeaksDueForRetiming(young, 101, 100, 60, kNow), PeaksRetiming::kNone);
  mtune::v1::Calibration old_enough = PeaksTimedAt(kNow - kBeatenPeaksMinAgeS - 1);
  old_enough.set_peaks_timed_for_faster_kernel(true);
  EXPECT_EQ(PeaksDueForRetiming(old_enough, 101, 100, 60, kNow), PeaksRetiming::kBeaten);
}

TEST(TakeNewerPeaks, KeepsOnlyPeaksTimedLaterAndOnlyThoseTimed) {
  mtune::v1::Calibration held = PeaksTimedAt(kNow - 100);
  held.set_peak_gflops_bf16_dot(200);
  mtune::v1::ComputePeaks older;
  older.set_peak_gflops_f32(50);
  older.set_measured_unix_s(kNow - 200);
  EXPECT_FALSE(mtune::v1::TakeNewerPeaks(older, held));
  EXPECT_EQ(held.peak_gflops_f32(), 100);

  mtune::v1::ComputePeaks newer;
  newer.set_peak_gflops_f32(117);
  newer.set_measured_unix_s(kNow);
  newer.set_beaten(true);
  EXPECT_TRUE(mtune::v1::TakeNewerPeaks(newer, held));
  EXPECT_TRUE(held.peaks_timed_for_faster_kernel());
  EXPECT_EQ(held.peak_gflops_f32(), 117);
  EXPECT_EQ(held.peak_gflops_bf16_dot(), 200) << "a peak not timed again is kept";
  EXPECT_EQ(held.peaks_measured_unix_s(), kNow);
}

// Timing again covers the peaks the calibration has, on this CPU.
TEST(TimePeaksAgain, TimesThePeaksTheCalibrationHas) {
  const double before = UnixNowS();
  mtune::v1::Calibration held = PeaksTimedAt(0, 1);
  const mtune::v1::ComputePeaks f32_only = TimePeaksAgain(held);
  EXPECT_GT(f32_only.peak_gflops_f32(), 1);
  EXPECT_EQ(f32_only.peak_gflops_bf16_dot(), 0);
  EXPECT_EQ(f32_only.peak_gflops_amx_bf16(), 0);
  EXPECT_GE(f32_only.measured_unix_s(), before);

  held.set_peak_gflops_bf16_dot(1);
  const mtune::v1::ComputePeaks with_bf16 = TimePeaksAgain(held);
  if (CpuHasAvx512Bf16())
    EXPECT_GT(with_bf16.peak_gflops_bf16_dot(), 1);
  else
    EXPECT_EQ(with_bf16.peak_gflops_bf16_dot(), 0) << "no AVX512-BF16 here: nothing to time it with";
}

}  // namespace
}  // namespace mtune::worker
