// Budgets of one search run: trials, wall time, and patience (trials without an
// improvement). Kept apart from the algorithms so every algorithm stops alike.
#ifndef MTUNE_SEARCH_BUDGET_H_
#define MTUNE_SEARCH_BUDGET_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace mtune::search {

struct BudgetLimits {
  // Trials (results, any status); 0 = no limit.
  uint64_t trials = 0;
  // Seconds since the start; 0 = no limit.
  double time_s = 0;
  // Stop after this many results in a row without a new best; 0 = never.
  uint64_t patience = 0;
  // A new best must beat the old one by this fraction to count as an improvement:
  // measurement noise alone should not reset the patience.
  double min_improvement = 0.01;
};

// Counts results against the limits. Times are caller-supplied seconds on any
// monotonic clock, which keeps this testable.
class Budget {
 public:
  Budget(BudgetLimits limits, double start_s) : limits_(limits), start_s_(start_s) {}

  // One result; `ok` results with a finite score may improve the best.
  void Record(bool ok, double score);

  // Empty while proposing may go on, else why it must stop ("trial budget of 64
  // spent", "time budget of 600 s spent", "no improvement in 20 trials").
  std::string Exhausted(double now_s) const;

  // Trials the limits still allow (UINT64_MAX without a trial limit).
  uint64_t TrialsLeft() const;
  uint64_t trials() const { return trials_; }
  uint64_t since_improvement() const { return since_improvement_; }
  const BudgetLimits& limits() const { return limits_; }

 private:
  BudgetLimits limits_;
  double start_s_;
  uint64_t trials_ = 0;
  uint64_t since_improvement_ = 0;
  bool any_ok_ = false;
  double best_ = 0;
};

// Parses a duration such as "90", "90s", "10m", "1h30m", "1.5h" into seconds;
// InvalidArgument for anything else (negative, unknown unit, empty).
absl::StatusOr<double> ParseDuration(const std::string& text);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_BUDGET_H_
