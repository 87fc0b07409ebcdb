#include "strategies/row_sum_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "strategies/memory_geometry.h"

namespace mtune::strategies {
namespace {

constexpr double kAddLatency = 4;        // cycles
constexpr double kOpsPerCycle = 2;       // vector adds and shuffles
constexpr double kExtraRowCost = 0.02;  // the tie-break of row_sum_estimate.h
// A row tile's masked remainder, whose partial sums live in a buffer in memory. Set
// from reduce_rows 1000x200 (znver4): one row split by 16 ran at 0.43 of one split
// by 8, which divides 200.
constexpr double kMaskedTileCycles = 30;

// Rows side by side a core needs to draw lines from beyond its L2 at the stream rate,
// and how the rate falls with fewer: (rows / 4)^(1/4) (see row_sum_estimate.h).
constexpr double kRowsInFlight = 4;
constexpr double kFewerRowsExponent = 0.25;

// The share of the stream rate `rows` side by side reach over an input of
// `input_bytes`: lines from beyond the L2 (none up to half of it, all at twice it and
// beyond, in proportion between) arrive at the full rate only for kRowsInFlight rows.
double StreamShare(double input_bytes, int64_t l2_bytes, double rows) {
  if (l2_bytes <= 0 || rows >= kRowsInFlight) return 1;
  const double beyond = std::clamp(2 * input_bytes / static_cast<double>(l2_bytes) - 1, 0.0, 1.0);
  return 1 - beyond * (1 - std::pow(rows / kRowsInFlight, kFewerRowsExponent));
}

// Cycles added by partial sums beyond half the registers (the rest hold loaded
// vectors): each spilled sum's add also stores and reloads it.
double SpillFactor(double live_vectors, const VectorRegisters& registers) {
  const double room = static_cast<double>(registers.count) / 2;
  if (live_vectors <= room) return 1;
  return 1 + 2 * (live_vectors - room) / live_vectors;
}

// Vector operations that merge `width` columns of each of `rows` rows into one sum
// per row: a shuffle tree per row (two operations per halving, after adding the row's
// vectors), or a transpose of the rows x width block and width - 1 adds.
double MergeOps(bool shuffle_tree, double rows, double width, double lanes) {
  if (shuffle_tree) return rows * (std::ceil(width / lanes) - 1 + 2 * std::log2(std::min(width, lanes)));
  return rows * width / 2 + width;
}

// The most of the group's rows whose first addresses fall in one L1 set: the rows of
// a tile are a row apart, the bands m / bands rows apart, and all move in step.
int64_t RowsPerL1Set(int64_t m, int64_t row_bytes, int64_t bands, int64_t tile_m) {
  std::vector<int64_t> first_addresses;
  for (int64_t band = 0; band < bands; ++band)
    for (int64_t row = 0; row < tile_m; ++row) first_addresses.push_back((band * (m / bands) + row) * row_bytes);
  return MostLinesInOneL1Set(first_addresses);
}

}  // namespace

std::optional<double> RowSumEstimate(const Problem& problem, const KnobValues& values,
                                     const VectorRegisters& registers, int64_t l2_bytes) {
  if (problem.family != "reduce_rows_2d" || registers.bytes <= 0) return std::nullopt;
  const int64_t m = problem.Dim("m"), n = problem.Dim("n");
  const std::optional<double> tile_m = PositiveKnob(values, "tile_m");
  auto split = values.find("split_reduction"), lowering = values.find("reduction_lowering");
  if (m <= 0 || n <= 0 || !tile_m || split == values.end() || lowering == values.end()) return std::nullopt;
  const double bands = PositiveKnob(values, "bands").value_or(1);
  const auto operands = problem.Operands();
  if (operands.empty()) return std::nullopt;
  const double element_bytes = operands.front().ElementBytes();
  const double lanes = registers.bytes / element_bytes;
  const bool shuffle_tree = lowering->second == "innerreduction";
  const double rows = bands * *tile_m;  // summed side by side

  const bool unsplit = split->second == "none";
  std::optional<double> width = unsplit ? PositiveKnob(values, "tile_n") : std::nullopt;
  if (!unsplit) {
    double s = 0;
    if (absl::SimpleAtod(split->second, &s) && s > 0) width = s;
  }
  // Knob values are whole counts; anything else (a hand-written "0.5") rates nothing
  // rather than divide by a zero count below.
  if (!width || *width < 1 || *tile_m < 1 || bands < 1) return std::nullopt;
  const double steps = std::ceil(static_cast<double>(n) / *width);
  const double stream_share = StreamShare(static_cast<double>(m) * n * element_bytes, l2_bytes, rows);
  const double step = std::max(kAddLatency, rows * *width * element_bytes / (kStreamBytes * stream_share));
  const double merge = MergeOps(shuffle_tree, rows, *width, lanes) / kOpsPerCycle;
  // Without a split every tile merges and adds its sums into the output.
  double cycles = unsplit ? steps * (step + merge + rows / kOpsPerCycle) : steps * step + merge;
  // A width that does not divide n: with a split each band's row tile ends in a masked
  // remainder; without one every tile is masked.
  if (n % static_cast<int64_t>(*width) != 0) cycles += (unsplit ? steps : 1) * bands * kMaskedTileCycles;
  cycles *= SpillFactor(rows * std::ceil(*width / lanes), registers);
  const int64_t in_one_set =
      RowsPerL1Set(m, n * static_cast<int64_t>(element_bytes), static_cast<int64_t>(bands),
                   static_cast<int64_t>(*tile_m));
  if (in_one_set > kL1Ways) cycles *= static_cast<double>(in_one_set) / kL1Ways;
  cycles *= 1 + kExtraRowCost * (rows - 1);

  const double ideal = rows * static_cast<double>(n) * element_bytes / kStreamBytes;
  const double band_rows = static_cast<double>(m) / bands;
  const double padding = band_rows / (std::ceil(band_rows / *tile_m) * *tile_m);
  return std::min(1.0, ideal / cycles) * padding;
}

}  // namespace mtune::strategies
