// Pieces shared by the side-by-side benches (mtune-bench-matmul,
// mtune-bench-families): getting mtune's kernel for a problem (tuned in this run or
// loaded from a database), statistics, and a Google Benchmark reporter that keeps
// every repetition so that interleaved rounds can be reduced to medians.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "benchmark/benchmark.h"
#include "proto/mtune.pb.h"
#include "strategies/candidate.h"
#include "strategies/problem.h"

namespace mtune::worker {
class Measurer;
}

namespace mtune::bench {

// Median; 0 for no values.
double Median(std::vector<double> values);
// Nearest-rank percentile, q in (0, 1]; 0 for no values.
double Percentile(std::vector<double> values, double q);
// Geometric mean of the positive values; 0 when there are none.
double Geomean(const std::vector<double>& values);
// How many times faster `mine` ran than `other`, from their per-round times (seconds,
// keyed by round): the median over the rounds that timed both of other's time over
// mine; 0 when none did. The host's clock drifts between rounds, and within a round
// both see nearly the same machine, so a ratio paired by round is steadier than the
// ratio of two medians taken over different rounds.
double PairedSpeedup(const std::map<int, double>& mine, const std::map<int, double>& other);
// The per-round times in round order (for JSON output).
std::vector<double> InRoundOrder(const std::map<int, double>& by_round);

// "tile_m1=64 ... contraction_lowering=outerproduct" shortened for a table cell.
std::string CompactKnobs(const strategies::KnobValues& knobs);

// The mtune kernel a problem is compared with, and where it came from.
struct BestKernel {
  std::string script;
  strategies::KnobValues knobs;
  // GFLOP/s when it was tuned (this run, or as stored); the side-by-side re-measures.
  double tuned_gflops = 0;
  std::string origin;
};

// Cost and outcome of tuning one problem in this run.
struct TuningStats {
  int tried = 0;
  int ok = 0;
  std::map<std::string, int> failures;  // status name -> count
  std::vector<double> candidate_s;      // wall time of each candidate
};

struct TuneOptions {
  int trials = 24;
  uint64_t seed = 0;
  // A search::MakeSearch name ("random", "model", ...).
  std::string search = "random";
  double min_time_s = 0.1;
  // The fastest `confirm_top` candidates, and the template's default candidate, are
  // timed again `confirm_rounds` times, interleaved, and the best median wins (1: no
  // confirmation).
  int confirm_top = 3;
  int confirm_rounds = 3;
};

// Tunes `problem` with its family's default template in-process: `options.search`
// proposes candidates as the coordinator plans them (the template default first,
// constraint-breaking points never), each instantiated, compiled, verified and timed
// by `measurer`. The fastest OK candidates are timed again (options.confirm_*), and the
// best of those goes to `best`. A family without a template
// is NotFound. Progress lines go to stderr, prefixed with `label`. No sandbox: a
// crashing candidate ends the process.
absl::Status TuneProblem(const strategies::Problem& problem, const TuneOptions& options,
                         const mtune::v1::Calibration& calibration, worker::Measurer& measurer,
                         const std::string& label, std::optional<BestKernel>& best,
                         TuningStats& stats);

// The default template's default candidate for `problem` (knobs' defaults, else
// their first option), with `knobs` (name -> value) overriding those defaults,
// instantiated. NotFound when the family has no template; InvalidArgument for a knob
// the template does not have or a value outside its options.
absl::StatusOr<BestKernel> DefaultKernel(const strategies::Problem& problem,
                                         const std::map<std::string, std::string>& knobs = {});

// "NAME=VALUE NAME=VALUE ..." (spaces or commas between items) as name -> value, for
// --variant flags.
absl::StatusOr<std::map<std::string, std::string>> ParseKnobList(absl::string_view text);

// For each problem, the best OK result `path` holds (exported best-strategy database,
// a row tuned on this CPU model preferred; or a coordinator store, any target), or
// nullopt. The file kind is detected; the export is tried first because opening a
// store may migrate (write) the file.
absl::StatusOr<std::vector<std::optional<BestKernel>>> LoadBestKernels(
    const std::string& path, const std::vector<strategies::Problem>& problems);

// Keeps each repetition's real time per call, keyed by the registered name, and
// prints one progress line per benchmark to stderr.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override;
  const std::map<std::string, std::vector<double>>& samples() const { return samples_; }
  const std::map<std::string, std::string>& errors() const { return errors_; }

 private:
  std::map<std::string, std::vector<double>> samples_;
  std::map<std::string, std::string> errors_;
};

}  // namespace mtune::bench
