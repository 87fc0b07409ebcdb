#include "bench/replay_table.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "strategies/features.h"
#include "strategies/kernel_estimate.h"

namespace mtune::bench {

absl::Status LoadReplayTable(const std::string& path, ReplayTable& out) {
  out.path = path;
  auto table = ReadGroundTruth(path);
  if (!table.ok()) return table.status();
  out.table = *std::move(table);
  auto problem = strategies::ParseProblemKey(out.table.header["problem"]);
  if (!problem.ok()) return absl::Status(problem.status().code(), absl::StrCat(path, ": ", problem.status().message()));
  out.problem = *problem;
  out.template_name = std::vector<std::string>(absl::StrSplit(out.table.header["template"], ' ')).front();
  out.registers.reset();
  if (auto it = out.table.header.find("vector_registers"); it != out.table.header.end()) {
    std::vector<std::string> parts = absl::StrSplit(it->second, 'x');
    strategies::VectorRegisters registers;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &registers.count) ||
        !absl::SimpleAtoi(parts[1], &registers.bytes) || registers.count <= 0 || registers.bytes <= 0)
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": header vector_registers '", it->second, "' is not COUNTxBYTES (e.g. 32x64)"));
    out.registers = registers;
  }
  out.l2_bytes = 0;
  if (auto it = out.table.header.find("l2_bytes"); it != out.table.header.end()) {
    if (!absl::SimpleAtoi(it->second, &out.l2_bytes) || out.l2_bytes <= 0)
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": header l2_bytes '", it->second, "' is not a positive byte count"));
  }
  out.by_index.clear();
  out.optimum = 0;
  for (const auto& row : out.table.rows) {
    out.by_index[row.index] = &row;
    if (row.status == "OK") out.optimum = std::max(out.optimum, row.gflops);
  }
  return absl::OkStatus();
}

search::SearchOptions ReplayOptions(const ReplayTable& table, const search::SearchOptions& base, bool knob_features) {
  search::SearchOptions options = base;
  options.is_valid = [&table](const search::Point& p) {
    return table.by_index.contains(search::IndexOfPoint(table.table.space, p));
  };
  if (!knob_features) {
    options.features = [&table](const search::Point& p) {
      auto values = search::ValuesFromPoint(table.table.space, p);
      return strategies::CandidateFeatures(table.problem, *values);
    };
    if (table.registers && strategies::HasKernelEstimate(table.template_name, table.problem)) {
      options.estimate = [&table](const search::Point& p) {
        auto values = search::ValuesFromPoint(table.table.space, p);
        std::optional<double> e =
            strategies::KernelEstimate(table.template_name, table.problem, *values, *table.registers, table.l2_bytes);
        return e ? *e : std::nan("");
      };
    }
  }
  return options;
}

}  // namespace mtune::bench
