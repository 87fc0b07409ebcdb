// Internal to db/: opening an exported best-strategy database and reading one of its
// rows, shared by the export reader (export.cc) and the lookup API (strategy_db.cc).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "db/export.h"
#include "db/sqlite.h"

namespace mtune::db {

// Columns every best_strategies SELECT lists, in the order ReadExportedRow reads.
#define MTUNE_EXPORTED_ROW_COLUMNS                                                          \
  "problem, family, target_id, target_triple, target_cpu, template_name, knobs_json, "     \
  "candidate_hash, script, gflops, gbps, fraction_of_roofline, roofline_gflops, median_s, " \
  "mtune_version, mlir_version, exported_unix_s"

// Opens the exported database at `path` read-only: NotFound naming it when there is
// no such file, an error when its schema is not the one this build writes.
absl::StatusOr<std::unique_ptr<Connection>> OpenExportedDb(const std::string& path);

// Fills `row` from the current row of a statement selecting MTUNE_EXPORTED_ROW_COLUMNS.
void ReadExportedRow(const Statement& r, ExportedStrategy& row);

}  // namespace mtune::db
