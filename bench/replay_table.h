// A ground-truth table ready to replay searches on: its rows by candidate index,
// its problem and its best figure, and the search options that make a search look
// candidates up in it (mtune-bench-search, mtune-bench-allocate).
#ifndef MTUNE_BENCH_REPLAY_TABLE_H_
#define MTUNE_BENCH_REPLAY_TABLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "bench/ground_truth_table.h"
#include "search/search.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::bench {

struct ReplayTable {
  std::string path;
  GroundTruthTable table;
  // Points into `table.rows`: a ReplayTable is not copied once loaded.
  std::map<uint64_t, const GroundTruthRow*> by_index;
  strategies::Problem problem;
  // The template measured (the header's first word) and the register file of the
  // machine it was measured on (header "vector_registers: COUNTxBYTES"; nullopt in a
  // table without one): what the kernel estimate needs.
  std::string template_name;
  std::optional<strategies::VectorRegisters> registers;
  // The L2 data cache per core of that machine (header "l2_bytes", from the
  // calibration; 0 in a table without one, measured before session 61).
  int64_t l2_bytes = 0;
  // The best OK figure (GFLOP/s, or GB/s for a transpose or copy); 0 when none is OK.
  double optimum = 0;

  ReplayTable() = default;
  ReplayTable(const ReplayTable&) = delete;
  ReplayTable& operator=(const ReplayTable&) = delete;
};

// Reads the table at `path` into `out` (in place: by_index points into it).
absl::Status LoadReplayTable(const std::string& path, ReplayTable& out);

// `base` with the table's validity (candidates outside it are what constraints pruned
// when it was measured) and, unless `knob_features`, the problem-aware features and
// the kernel estimate (strategies/kernel_estimate.h) where the table
// records its register file, as the coordinator gives a job its workers'.
// `table` must outlive the options.
search::SearchOptions ReplayOptions(const ReplayTable& table, const search::SearchOptions& base,
                                    bool knob_features = false);

}  // namespace mtune::bench

#endif  // MTUNE_BENCH_REPLAY_TABLE_H_
