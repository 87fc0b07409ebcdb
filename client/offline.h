// `mtune` commands that work on a best-strategy database file, with no
// coordinator: record a local measurement, export in a chosen format, look up,
// and apply the tuned strategies to an MLIR file.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/measure_command.h"

namespace mtune::client {

// Target id of this machine, as workers register it: "cpu:<triple>:<cpu>".
std::string HostTargetId();

// Adds a measured OK candidate to the best-strategy database at `path`
// (created if missing) for this machine's target, replacing the problem's
// entry only when the new one is faster. Returns whether it was stored.
absl::StatusOr<bool> RecordInExport(const std::string& path, const std::string& problem,
                                    const MeasureOutcome& outcome);

// Output formats of `mtune export`.
enum class ExportFormat { kSqlite, kMlir, kJson };
absl::StatusOr<ExportFormat> ParseExportFormat(const std::string& name);

// Writes the database at `db_path` to `out_path` in `format`: a copy (sqlite),
// the dispatching transform library for `target` (mlir; "" = the database's
// only target), or every entry as a JSON array (json). Refuses to overwrite
// unless `force`. Returns a one-line summary.
absl::StatusOr<std::string> ExportLocal(const std::string& db_path, ExportFormat format,
                                        const std::string& target, const std::string& out_path,
                                        bool force);

// The entry for `problem` on `target` ("" = this machine) as JSON, with the
// nearest-shape fallback when `nearest`.
absl::StatusOr<std::string> LookupLocal(const std::string& db_path, const std::string& problem,
                                        const std::string& target, bool nearest);

// Applies the tuned strategies of `target` ("" = this machine) from `db_path`
// to the MLIR file `input` and writes `output` ("-" = stdout); one line per
// linalg op on `report` (stderr).
absl::Status ApplyLocal(const std::string& db_path, const std::string& target,
                        const std::string& input, const std::string& output, FILE* report);

// Writes `bytes` to `path` atomically; AlreadyExists unless `force`.
absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes, bool force);

}  // namespace mtune::client
