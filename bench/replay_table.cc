#include "bench/replay_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "strategies/features.h"

namespace mtune::bench {

absl::Status LoadReplayTable(const std::string& path, ReplayTable& out) {
  out.path = path;
  auto table = ReadGroundTruth(path);
  if (!table.ok()) return table.status();
  out.table = *std::move(table);
  auto problem = strategies::ParseProblemKey(out.table.header["problem"]);
  if (!problem.ok()) return absl::Status(problem.status().code(), absl::StrCat(path, ": ", problem.status().message()));
  out.problem = *problem;
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
  }
  return options;
}

}  // namespace mtune::bench
