// What one run of mtune-bench-families gathers per problem (ProblemReport), filled
// by the driver (families_compare.cc: tuning, verification, interleaved timing), and
// what is made of it (families_report.cc): the printed table, the goals and the
// JSON file. Figures and ratios are computed here, from the per-round medians.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/side_by_side.h"
#include "proto/mtune.pb.h"
#include "strategies/problem.h"
#include "worker/roofline.h"

namespace mtune::bench::families {

// mtune-bench-families' command line (main, families_compare.cc).
struct Flags {
  std::string problems;
  std::string families;
  int trials = 2;
  uint64_t seed = 0;
  std::string search = "random";
  std::string db;
  int cpu = 1;
  double min_time_s = 0.15;
  double tune_min_time_s = 0.05;
  int rounds = 3;
  int operand_sets = 3;
  std::string json;
  bool onednn_plain_weights = false;
  bool quick_calibration = false;
  bool list = false;
  // NAME=VALUE overrides of the default candidate (--trials 0 only).
  std::vector<std::string> knobs;
  // "NAME=VALUE ..." per --variant: more candidates timed in the same rounds.
  std::vector<std::string> variants;
};

// The yardstick loops of bench/handwritten_kernels.h (three families; "n/a" elsewhere).
inline constexpr const char* kHandWritten = "handwritten";
inline constexpr const char* kImplementations[] = {"mtune", "onednn", "eigen", kHandWritten};

inline constexpr int kRepetitionsPerRound = 3;

// What happened to one implementation of one problem before timing.
struct ImplState {
  // "ok", "no template", "no db entry", "n/a", "WRONG", "compile error", ...
  std::string status;
  std::string detail;       // why, or how it computes
  double scaled_error = 0;  // of the verification run
  double median_s = 0;      // median over rounds; 0 = not timed
  std::map<int, double> by_round_s;  // each round's median, keyed by round
};

struct ProblemReport {
  strategies::Problem problem;
  std::optional<BestKernel> best;
  // One per --variant, in flag order (nullopt: it did not resolve; impls says why).
  // Timed as the implementations "variant1", "variant2", ...
  std::vector<std::optional<BestKernel>> variants;
  bool tuned = false;
  TuningStats tuning;
  std::map<std::string, ImplState> impls;
  // The roofline this problem is normalised against.
  worker::RooflinePoint roof;
  // Copy bandwidth at exactly this footprint, timed in its rounds (bandwidth-bound
  // families only): the level's calibrated figure comes from a working set of half
  // the level, which can be far from the problem's. Each round's is the fastest of
  // the copy loops (CopyLoopName); the median over rounds.
  double copy_gbps_at_footprint = 0;
  // And loops that only read the footprint, timed the same way: with the copy they
  // give the stream bandwidth of the row's own reads and writes (worker/roofline.h
  // StreamGbps), which a reduction (reads only, nearly) is held against.
  double read_gbps_at_footprint = 0;
  // How many rounds each copy and read loop was the fastest of its kind in.
  std::map<std::string, int> copy_loop_wins, read_loop_wins;
  // Compute-bound rows: the peak timed in this row's rounds, GFLOP/s (0: not timed),
  // of `peak_loop`: "fma_f32" (the FMA loop), or for bf16 rows the fastest bf16 loop
  // the CPU has, "amx_bf16" (AMX tiles) or "bf16_dot" (AVX512-BF16 dot products), as
  // worker/roofline.h PeakGflopsFor holds bf16 problems against.
  double peak_gflops = 0;
  std::string peak_loop = "fma_f32";
  // Per-round medians of the FMA loop (seconds), and each round's fastest copy and
  // read (GB/s), for ratios paired by round.
  std::map<int, double> peak_by_round_s, copy_gbps_by_round, read_gbps_by_round;
};

// The implementation name of the index-th --variant: "variant1", "variant2", ...
std::string VariantName(size_t index);
// mtune, the libraries and the --variant kernels of `r`.
std::vector<std::string> ImplementationNames(const ProblemReport& r);

// Prints the table, the per-operand-set figures, the variants, the hand-written
// loops, the goals and the verification list.
void PrintReport(const Flags& flags, const std::vector<ProblemReport>& reports,
                 const mtune::v1::Calibration& calibration, const std::string& cpu_name);
// Writes the same as JSON to flags.json.
absl::Status WriteJson(const Flags& flags, const std::vector<ProblemReport>& reports,
                       const mtune::v1::Calibration& calibration, const std::string& cpu_name);

}  // namespace mtune::bench::families
