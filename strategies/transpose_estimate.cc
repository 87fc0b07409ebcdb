#include "strategies/transpose_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "strategies/memory_geometry.h"

namespace mtune::strategies {
namespace {

constexpr double kLoadsPerCycle = 2;
constexpr double kStoresPerCycle = 1;
constexpr double kShufflesPerCycle = 1;

// Shuffles of 32-byte registers that stay within 128-bit lanes issue two a cycle
// (Intel since Ice Lake: ports 1 and 5; AMD Zen: two FP pipes); lane-crossing ones and
// every 64-byte permute, one a cycle.
constexpr double kInLaneShufflesPerCycle = 2;

// Cycles of one tile's shuffles: the known network of a lowering written for its shape,
// else the inserts that pack narrow input rows into registers and a generic shuffle's
// two-source permutes, one a cycle.
double ShuffleCycles(const std::string& lowering, int64_t r, int64_t c, int64_t element_bytes,
                     int64_t register_bytes) {
  const bool four_byte = element_bytes == 4;
  if (lowering == "shuffle_16x16" && r == 16 && c == 16 && four_byte && register_bytes == 64) {
    return 4 * 16 / kShufflesPerCycle;
  }
  // The avx2 network: 8 unpacks and 8 shuffles within lanes, then 8 lane-crossing
  // permutes, all on 32-byte registers. On the seven transpose tables its 8 x 8 tiles
  // measure 0.97-1.06 of the same tiles as a generic shuffle (16 permutes, one a cycle).
  if (lowering == "avx2" && r == 8 && c == 8 && four_byte && register_bytes >= 32) {
    return std::max(3 * 8 / kInLaneShufflesPerCycle, 8 / kShufflesPerCycle);
  }
  const int64_t lanes = register_bytes / element_bytes;
  const int64_t registers = (r * c + lanes - 1) / lanes;
  // Input rows of r elements narrower than a register are loaded one each and packed
  // into `registers` full ones, one insert per row beyond the first of each.
  const int64_t inserts = r < lanes ? c - registers : 0;
  // An output register holds lanes of one output row (c >= lanes) or lanes / c whole
  // rows: its elements come from min(c, lanes) input rows, packed lanes / r to a
  // register when narrower than one.
  const int64_t rows_read = std::min(c, lanes);
  const int64_t sources = r >= lanes ? rows_read : (rows_read * r + lanes - 1) / lanes;
  return static_cast<double>(inserts + registers * std::max<int64_t>(sources - 1, 1)) / kShufflesPerCycle;
}

// Whether an input line survives in the L1 until the next band of output rows reads
// the rest of it: the band sweeps one line of each of `rows` input rows first.
bool InputLinesKept(int64_t rows, int64_t row_bytes) {
  // More lines than the whole L1 holds never fit (and a long sweep is not listed).
  if (rows > kL1Ways * (kL1WayBytes / kL1LineBytes)) return false;
  std::vector<int64_t> addresses;
  for (int64_t row = 0; row < rows; ++row) addresses.push_back(row * row_bytes);
  return MostLinesInOneL1Set(addresses) <= kL1Ways;
}

// Whether a band's refetched input lines cost nothing of the stream: where input and
// output together overflow the L2, every first touch of a line comes from the L3 or
// memory at a fraction of the L2's rate, and the lines a band's sweep loses from the L1
// (one per input row it crosses) are still in the L2, which holds the sweep, so their
// refetches overlap that slower compulsory traffic. Unknown L2 (0): never.
bool RefetchesOverlapTrafficBeyondTheL2(int64_t input_bytes, int64_t swept_rows, int64_t l2_bytes) {
  return l2_bytes > 0 && 2 * input_bytes > l2_bytes && swept_rows * kL1LineBytes <= l2_bytes;
}

}  // namespace

std::optional<double> TransposeEstimate(const Problem& problem, const KnobValues& values,
                                        const VectorRegisters& registers, int64_t l2_bytes) {
  if (problem.family != "transpose_2d" || registers.bytes <= 0 || registers.count <= 0) return std::nullopt;
  const int64_t m = problem.Dim("m"), n = problem.Dim("n");  // out[n, m] = in[m, n]^T
  const std::optional<double> tile_r = PositiveKnob(values, "tile_r"), tile_c = PositiveKnob(values, "tile_c");
  auto lowering = values.find("transpose_lowering");
  if (m <= 0 || n <= 0 || !tile_r || !tile_c || lowering == values.end()) return std::nullopt;
  const double block_c = PositiveKnob(values, "block_c").value_or(0);  // 0: unblocked
  // Knob values are whole counts; anything else rates nothing.
  if (*tile_r < 1 || *tile_c < 1) return std::nullopt;
  const auto operands = problem.Operands();
  if (operands.empty()) return std::nullopt;
  const int64_t e = operands.front().ElementBytes();
  const int64_t r = static_cast<int64_t>(*tile_r), c = static_cast<int64_t>(*tile_c);
  const int64_t lanes = registers.bytes / e;
  if (lanes < 1) return std::nullopt;

  const int64_t swept_rows = block_c >= 1 ? std::min(m, static_cast<int64_t>(block_c)) : m;
  const double segment = static_cast<double>(r * e);
  const bool lines_used_whole =
      InputLinesKept(swept_rows, n * e) || RefetchesOverlapTrafficBeyondTheL2(m * n * e, swept_rows, l2_bytes);
  const double read = c * (lines_used_whole ? segment : std::ceil(segment / kL1LineBytes) * kL1LineBytes);
  const double written = static_cast<double>(r * c * e);
  const double loads = static_cast<double>(c * ((r + lanes - 1) / lanes));
  const double stores = static_cast<double>(r * ((c + lanes - 1) / lanes));
  double cycles = std::max({(read + written) / kStreamBytes, loads / kLoadsPerCycle, stores / kStoresPerCycle,
                            ShuffleCycles(lowering->second, r, c, e, registers.bytes)});
  const double live = 2.0 * static_cast<double>((r * c + lanes - 1) / lanes);
  const double room = static_cast<double>(registers.count);
  if (live > room) cycles *= 1 + 2 * (live - room) / live;  // each spilled vector: a store and a reload

  const double ideal = 2.0 * static_cast<double>(r * c * e) / kStreamBytes;
  const double out_rows = static_cast<double>(n), out_cols = static_cast<double>(m);
  const double padding = out_rows / (std::ceil(out_rows / r) * r) * out_cols / (std::ceil(out_cols / c) * c);
  return std::min(1.0, ideal / cycles) * padding;
}

}  // namespace mtune::strategies
