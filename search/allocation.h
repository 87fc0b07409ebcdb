// Sharing one trial budget among a job's problems: the next trial goes where it is
// expected to gain most (the coordinator's "gain" allocation, replayed on measured
// tables by mtune-bench-allocate).
#ifndef MTUNE_SEARCH_ALLOCATION_H_
#define MTUNE_SEARCH_ALLOCATION_H_

#include <cstdint>
#include <span>

namespace mtune::search {

// Trials each problem of a gain-allocated job gets before gains compare.
inline constexpr uint32_t kGainWarmupTrials = 4;

// Expected gain of one more trial on a problem whose results so far scored `scores`
// (figures in the order they came back, 0 for a failed trial) after `proposed`
// proposals, with `job_trials` proposed over the whole job: how much its best rose
// over its recent results (relative to that best), plus an exploration term that
// shrinks as the problem gets trials. Problems still warming up come first, fewest
// proposals first. Replayed on the 17 ground-truth tables as one job it did as well
// as equal shares, not better (bench/README.md, "mtune-bench-allocate"; two other
// estimates tried there did not either).
double ExpectedGain(std::span<const double> scores, uint32_t proposed, uint64_t job_trials);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_ALLOCATION_H_
