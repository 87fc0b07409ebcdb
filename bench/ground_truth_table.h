// Ground-truth tables: every candidate of one knob space, measured once, stored as a
// small CSV under bench/data/ so that search algorithms can be replayed against
// measured truth without compiling anything. MLIR-free (the replay needs no MLIR).
//
// Format: '#' header lines "# key: value" (problem, template and its hash, the
// knob space as "name=opt|opt;...", machine, date, timing), then a CSV header line,
// then one row per measured candidate:
//   index,candidate,status,median_s,gflops,compile_s
// (for a problem without arithmetic, a transpose or a copy, the gflops column holds
// GB/s, as the header's "# figure" line says), where index is the candidate's
// mixed-radix index in the space (last knob fastest)
// and candidate its canonical JSON (CSV-quoted). A candidate may have several rows:
// mtune-ground-truth's confirmation pass measures the best ones again, so that the
// table's optimum is not one lucky timing on a noisy machine. Reading merges them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "search/space.h"

namespace mtune::bench {

// One measured candidate.
struct GroundTruthRow {
  uint64_t index = 0;
  // Canonical JSON of the knob values, as strategies::CanonicalJson writes it.
  std::string candidate_json;
  // ResultStatus name without prefix: "OK", "COMPILE_ERROR", "TIMEOUT", ...
  std::string status;
  double median_s = 0;
  double gflops = 0;
  double compile_s = 0;
  // Rows merged into this one by ReadGroundTruth (1 unless the candidate was
  // measured again); median_s and gflops are then the medians over its OK rows.
  int measurements = 1;
};

struct GroundTruthTable {
  // "# key: value" header lines, in file order of first appearance.
  std::map<std::string, std::string> header;
  // The measured space (from the "knobs" header).
  search::Space space;
  std::vector<GroundTruthRow> rows;
};

// Header value for the space: "name=opt|opt;name=opt|...".
std::string FormatSpace(const search::Space& space);
absl::StatusOr<search::Space> ParseSpace(const std::string& text);

// The CSV line of a row (no newline) and the column line that precedes rows.
std::string FormatRow(const GroundTruthRow& row);
inline constexpr const char* kGroundTruthColumns = "index,candidate,status,median_s,gflops,compile_s";

// Reads a table, one row per candidate in order of first appearance (repeated
// measurements merged); InvalidArgument naming the line for malformed input.
absl::StatusOr<GroundTruthTable> ReadGroundTruth(const std::string& path);

}  // namespace mtune::bench
