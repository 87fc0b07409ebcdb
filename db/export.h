// The best-strategy database: a standalone SQLite file holding, for each
// (problem, target), the best measured candidate, its resolved transform script
// and its figures. Compilers read it without the store or a coordinator.
#ifndef MTUNE_DB_EXPORT_H_
#define MTUNE_DB_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/store.h"

namespace mtune::db {

// Provenance stamped on every exported row, so a compiler can tell which
// mtune and MLIR produced (and can still apply) a script.
struct ExportInfo {
  std::string mtune_version;
  std::string mlir_version;
};

// What to do when the export's output path already exists.
enum class ExistingFile {
  kFail,     // AlreadyExists; the file is left untouched
  kReplace,  // atomically replaced by the new export
};

// One row of the exported `best_strategies` table.
struct ExportedStrategy {
  std::string problem;
  std::string family;
  std::string target_id;
  std::string target_triple;
  std::string target_cpu;
  std::string template_name;
  // Candidate.canonical_json: knob name -> value.
  std::string knobs_json;
  std::string candidate_hash;
  // Transform script with every knob selected; runs in mlir-opt --transform-interpreter.
  std::string script;
  double gflops = 0;
  double gbps = 0;
  double fraction_of_roofline = 0;
  double roofline_gflops = 0;
  double median_s = 0;
  std::string mtune_version;
  std::string mlir_version;
  int64_t exported_unix_s = 0;
};

// A complete best-strategy database held in memory.
struct ExportedDb {
  // The SQLite file's bytes (what ExportResponse.sqlite_db carries).
  std::string sqlite_bytes;
  // Rows in best_strategies.
  uint32_t entries = 0;
};

// Builds the best-strategy database from store.AllBest() without touching disk,
// for the Export RPC.
absl::StatusOr<ExportedDb> BuildBestStrategyDb(Store& store, const ExportInfo& info);

// The rows BuildBestStrategyDb exports: store.AllBest() stamped with `info`.
absl::StatusOr<std::vector<ExportedStrategy>> BestStrategyRows(Store& store,
                                                               const ExportInfo& info);

// A best-strategy database holding exactly `rows` (primary key: problem,
// target_id), for tools that assemble or convert exports without a store.
absl::StatusOr<ExportedDb> BuildExportedDb(const std::vector<ExportedStrategy>& rows);

// Writes BuildExportedDb(rows) to `out_path` as ExportBestStrategyDb does.
absl::StatusOr<uint32_t> WriteExportedDb(const std::vector<ExportedStrategy>& rows,
                                         const std::string& out_path,
                                         ExistingFile existing = ExistingFile::kFail);

// Writes the best-strategy database to `out_path` and returns its entry count.
// Written to a temporary file beside `out_path`, synced, then moved into place,
// so readers never see a half-written file. AlreadyExists if `out_path` exists
// and `existing` is kFail.
absl::StatusOr<uint32_t> ExportBestStrategyDb(Store& store, const std::string& out_path,
                                              const ExportInfo& info,
                                              ExistingFile existing = ExistingFile::kFail);

// Reads every row of an exported database, opened read-only, ordered by problem
// then target id. NotFound if the file is missing; FailedPrecondition if it is
// not a best-strategy export of the schema version this build reads.
absl::StatusOr<std::vector<ExportedStrategy>> ReadExportedDb(const std::string& path);

}  // namespace mtune::db

#endif  // MTUNE_DB_EXPORT_H_
