// Online backup of a live store: a consistent copy of the SQLite file taken with
// SQLite's online backup API while a coordinator keeps writing to it (WAL lets the
// copy read one snapshot without blocking the writer).
#ifndef MTUNE_DB_BACKUP_H_
#define MTUNE_DB_BACKUP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace mtune::db {

// What a backup copied.
struct BackupReport {
  int64_t pages = 0;
  int64_t bytes = 0;
};

// Copies the database at `source_path` (which must exist) to `dest_path`: written
// under a temporary name, checked (PRAGMA quick_check), switched to a single
// self-contained file (rollback journal, no -wal beside it), then renamed into
// place, so `dest_path` is either the old file or a complete copy. The copy is one
// transaction-consistent snapshot: every result committed before the backup
// started is in it. FailedPrecondition when the source is missing or not SQLite.
absl::StatusOr<BackupReport> BackupDatabase(const std::string& source_path,
                                            const std::string& dest_path);

}  // namespace mtune::db

#endif  // MTUNE_DB_BACKUP_H_
