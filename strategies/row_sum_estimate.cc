#include "strategies/row_sum_estimate.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/numbers.h"

namespace mtune::strategies {
namespace {

constexpr double kLoadsPerCycle = 2;  // vector loads
constexpr double kOpsPerCycle = 2;    // vector adds and shuffles
constexpr double kAddLatency = 4;     // cycles
constexpr double kStoreToLoad = 4;    // cycles from storing an output to reading it back

std::optional<double> PositiveKnob(const KnobValues& values, const char* name) {
  auto it = values.find(name);
  double v = 0;
  if (it == values.end() || !absl::SimpleAtod(it->second, &v) || v <= 0) return std::nullopt;
  return v;
}

// Cycles added by partial sums beyond half the registers (the rest hold loaded
// vectors): each spilled sum's add also stores and reloads it.
double SpillFactor(double live_vectors, const VectorRegisters& registers) {
  const double room = static_cast<double>(registers.count) / 2;
  if (live_vectors <= room) return 1;
  return 1 + 2 * (live_vectors - room) / live_vectors;
}

// Cycles to merge `width` columns of each of `rows` rows into one sum per row.
double MergeCycles(bool shuffle_tree, double rows, double width, double lanes) {
  const double vectors = std::ceil(width / lanes);
  if (shuffle_tree) return rows * (vectors - 1 + 2 * std::log2(std::min(width, lanes))) / kOpsPerCycle;
  return (rows * vectors + (width - 1) * std::ceil(rows / lanes)) / kOpsPerCycle;
}

// Latency of one row's merge of `width` columns, for the chain through the output.
double MergeLatency(bool shuffle_tree, double width, double lanes) {
  if (shuffle_tree)
    return (std::ceil(std::log2(std::ceil(width / lanes))) + 2 * std::log2(std::min(width, lanes))) * kAddLatency;
  return (width - 1) * kAddLatency;
}

}  // namespace

std::optional<double> RowSumEstimate(const Problem& problem, const KnobValues& values,
                                     const VectorRegisters& registers) {
  if (problem.family != "reduce_rows_2d" || registers.bytes <= 0) return std::nullopt;
  const double m = static_cast<double>(problem.Dim("m")), n = static_cast<double>(problem.Dim("n"));
  const std::optional<double> tile_m = PositiveKnob(values, "tile_m");
  auto split = values.find("split_reduction"), lowering = values.find("reduction_lowering");
  if (m <= 0 || n <= 0 || !tile_m || split == values.end() || lowering == values.end()) return std::nullopt;
  const double bands = PositiveKnob(values, "bands").value_or(1);
  const auto operands = problem.Operands();
  if (operands.empty()) return std::nullopt;
  const double lanes = static_cast<double>(registers.bytes) / operands.front().ElementBytes();
  const bool shuffle_tree = lowering->second == "innerreduction";
  const double rows = bands * *tile_m;  // summed side by side
  const double ideal = rows * n / lanes / kLoadsPerCycle;

  double cycles = 0;
  if (split->second == "none") {
    const std::optional<double> tile_n = PositiveKnob(values, "tile_n");
    if (!tile_n) return std::nullopt;
    const double vectors = std::ceil(*tile_n / lanes);
    const double loads = rows * vectors / kLoadsPerCycle;
    // The merge into the output and the add of the output's previous value.
    const double ops = MergeCycles(shuffle_tree, rows, *tile_n, lanes) + rows / kOpsPerCycle;
    const double chain = MergeLatency(shuffle_tree, *tile_n, lanes) + kAddLatency + kStoreToLoad;
    const double tile = std::max({loads, ops, chain}) * SpillFactor(rows * vectors, registers);
    cycles = std::ceil(n / *tile_n) * tile;
  } else {
    double s = 0;
    if (!absl::SimpleAtod(split->second, &s) || s <= 0) return std::nullopt;
    const double vectors = std::ceil(s / lanes), sums = rows * vectors;
    const double step = std::max(sums / kLoadsPerCycle, kAddLatency);
    cycles = std::ceil(n / s) * step * SpillFactor(sums, registers) + MergeCycles(shuffle_tree, rows, s, lanes);
  }
  const double band_rows = m / bands;
  const double padding = band_rows / (std::ceil(band_rows / *tile_m) * *tile_m);
  return std::min(1.0, ideal / cycles) * padding;
}

}  // namespace mtune::strategies
