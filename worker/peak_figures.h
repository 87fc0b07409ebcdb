// When a worker times its compute peaks again, and how it takes the new ones in.
//
// A compute-bound result is held against the core's FMA (or bf16) peak. Timed once, at
// the worker's start, a peak taken while the host was busy held every later result
// against it: on the znver4 host (session 55) one start-up timed 99.2 GFLOP/s where
// the core does 117, and that worker's kernels read as 1.09 of their roofline. So the
// sandbox times the peaks again, on the measuring core, once they are older than a
// maximum age, and at once when a kernel runs faster than them: that kernel is the
// proof that they came out low.
#pragma once

#include "proto/mtune.pb.h"

namespace mtune::worker {

// How long a worker trusts its peaks by default, seconds: timing them again (0.3 s
// each for the f32 FMA, AMX and AVX512-BF16 peaks the CPU has, worker/calibration.h)
// once a minute costs at most 1.5% of the measuring core.
inline constexpr double kDefaultPeaksMaxAgeS = 60;

// How old peaks that were themselves timed for a faster kernel must be before another
// faster kernel has them timed again, seconds. Peaks from the start or timed for age
// are timed again for the first kernel faster than them (a disturbed start-up held
// the results of its first 10 s against half the peak while this waited for them to
// age, session 56); but where kernels truly beat the FMA loop, timing it again for
// each would cost every compute-bound task 0.6 s more.
inline constexpr double kBeatenPeaksMinAgeS = 10;

enum class PeaksRetiming {
  kNone,
  kStale,   // older than the maximum age
  kBeaten,  // a kernel ran faster than the peak it is held against
};

// Whether the peaks of `held` are to be timed again before a compute-bound result of
// `achieved_gflops` is held against `peak_gflops` (the one of them that bounds its
// problem) at `now_unix_s`. `max_age_s` <= 0: never. Peaks without a time
// (peaks_measured_unix_s 0) count as stale.
PeaksRetiming PeaksDueForRetiming(const mtune::v1::Calibration& held, double achieved_gflops,
                                  double peak_gflops, double max_age_s, double now_unix_s);

// Times again, on the calling thread, the peaks `held` has: the f32 FMA peak, and the
// AMX and AVX512-BF16 ones where it has them (> 0). mtune::v1::TakeNewerPeaks
// (proto/compute_peaks.h) takes them in.
mtune::v1::ComputePeaks TimePeaksAgain(const mtune::v1::Calibration& held);

}  // namespace mtune::worker
