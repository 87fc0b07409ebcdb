// The memory system the kernel estimates of streaming kernels count against: the rate
// a core's L2 feeds it, and which lines of a loop's working set share one set of the
// L1 data cache (whether lines survive until they are used again). Neither is
// recorded in a target, so these are what every current x86 core shares: 32 bytes a
// cycle, ways of 4 KiB (a virtually indexed L1D with 4 KiB pages has them), 64-byte
// lines, and 8 ways, the fewest of current cores. No MLIR.
#pragma once

#include <cstdint>
#include <span>

namespace mtune::strategies {

inline constexpr double kStreamBytes = 32;  // a cycle, between the L2 and the core
inline constexpr int64_t kL1WayBytes = 4096;
inline constexpr int64_t kL1LineBytes = 64;
inline constexpr int64_t kL1Ways = 8;

// The most of these addresses whose lines fall in one L1 set (one line per address).
int64_t MostLinesInOneL1Set(std::span<const int64_t> addresses);

}  // namespace mtune::strategies
