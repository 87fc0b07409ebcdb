// How much any allocation of a job's trials could get from its problems' searches,
// given how each search's best rises with its trials: the yardstick for the
// allocations mtune-bench-allocate compares (bench/allocation_replay.cc).
#ifndef MTUNE_BENCH_ALLOCATION_BOUND_H_
#define MTUNE_BENCH_ALLOCATION_BOUND_H_

#include <cstdint>
#include <vector>

namespace mtune::bench {

// curves[i][t]: problem i's best after t trials (t = 0 .. curves[i].size() - 1, as a
// fraction of its table's best). The trials per problem, at most its curve's last t,
// that maximize the sum of the problems' bests with at most `budget` trials in all
// (exact, by dynamic programming over problems and trials spent); of allocations
// with the same sum, one with the fewest trials in all.
std::vector<uint32_t> BestAllocation(const std::vector<std::vector<double>>& curves, uint64_t budget);

}  // namespace mtune::bench

#endif  // MTUNE_BENCH_ALLOCATION_BOUND_H_
