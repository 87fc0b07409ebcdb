// The problems mtune-bench-families compares by default, how each family's figure is
// expressed (GFLOP/s or GB/s), and the performance goals evaluated on one
// run's figures. No MLIR, no timing: pure functions of problems and numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "strategies/problem.h"

namespace mtune::bench {

// Default suite: 12 f32 matmuls over the three layouts (odd shapes included), conv
// 1-D/2-D with C >= 32 (stride 1, strided, dilated), depthwise 1-D/2-D, and the
// reductions, copy and transpose at a footprint that fits L2 and one far beyond it.
std::vector<std::string> DefaultSuiteKeys();

// Parses comma-separated keys (--problems; empty: the default suite) and keeps those
// whose family is in `families` (comma-separated; empty: all). Keys use ',' inside
// too, so a new key starts at each item that contains ':'.
absl::StatusOr<std::vector<strategies::Problem>> SelectProblems(const std::string& problems,
                                                                const std::string& families);

// Whether the family's figure is bandwidth (GB/s of compulsory bytes, normalised by
// the copy bandwidth of the level its footprint fits) rather than GFLOP/s against the
// FMA peak: depthwise, reductions, copy, transpose.
bool BandwidthBound(const std::string& family);

// Whether a bandwidth-bound family's FLOPs are multiply-adds (depthwise), so that the
// FMA peak can bound it before the bandwidth does: a 3 x 3 depthwise conv does 18 FLOPs
// per 12 compulsory bytes (input read, output accumulated into), and where the FMA
// peak is low against the bandwidth of the level its footprint fits it is
// compute-bound (Zen 4 runs AVX-512 at half width: at 117 GFLOP/s the FMA loop allows
// 80 GB/s, while reads and write-backs at 58 x 58 x 64 stream at about 127). Reductions add
// only (1 FLOP per 4 bytes: never near their FMA-free add peak); copy and transpose
// have no FLOPs.
bool HasFmaComputeRoof(const std::string& family);

// The roofline of a bandwidth-bound row in GB/s of compulsory bytes: the stream
// bandwidth of its reads and writes at its footprint, or, for a family with a compute
// roof, the bytes over `fma_seconds` (how long the FMA loop took for the row's FLOPs,
// timed beside it) where that is lower. `fma_seconds` <= 0: not timed.
double RoofGbps(const strategies::Problem& problem, double stream_gbps, double fma_seconds);

// "512x512x512" for matmuls and 2-D kernels; "w=1026 c=64 kw=3 f=64 sw=2" (values of
// 1 for n, strides and dilations left out) for windowed families.
std::string ShortShape(const strategies::Problem& problem);

// One row's figures as the goals need them; 0 = absent.
struct GoalRow {
  strategies::Problem problem;
  double mtune = 0;          // GFLOP/s or GB/s
  double onednn = 0;         // same unit
  double fraction_of_roofline = 0;  // mtune's
  double fraction_of_peak = 0;      // mtune's GFLOP/s / FMA peak timed beside it (compute-bound rows)
  // oneDNN's, the same way: whether a peak goal is within reach on this host.
  double onednn_fraction_of_peak = 0;
  // Copy bandwidth measured in the same run at this problem's footprint (GB/s rows).
  double copy_gbps_at_footprint = 0;
  // The ratios the goals compare, each paired within the rounds that timed both
  // sides (the median over rounds of the ratio inside each round): mtune over
  // oneDNN, and mtune's GB/s over the copy loop's at this footprint (GB/s rows).
  // fraction_of_peak is paired the same way.
  double mtune_over_onednn = 0;
  double mtune_over_copy = 0;
};

// One line of the "Figures to reach".
struct GoalLine {
  std::string goal;
  // "met", "NOT met" or "n/a" (no row of the suite is about it).
  std::string verdict;
  // The figure(s) compared and what is missing.
  std::string detail;
};

// The goals over the rows of one run.
std::vector<GoalLine> EvaluateGoals(const std::vector<GoalRow>& rows);

}  // namespace mtune::bench
