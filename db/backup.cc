#include "db/backup.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "db/sqlite.h"

namespace mtune::db {

absl::StatusOr<BackupReport> BackupDatabase(const std::string& source_path,
                                            const std::string& dest_path) {
  if (access(source_path.c_str(), F_OK) != 0)
    return absl::FailedPreconditionError(absl::StrCat("no database at ", source_path));
  if (dest_path.empty()) return absl::InvalidArgumentError("the backup needs a destination file");
  // Read-write (its existence was checked above): a WAL database may need its
  // -shm set up to be read. Nothing is written to the source.
  auto source = Connection::Open(source_path, Connection::Mode::kReadWriteCreate);
  if (!source.ok()) return source.status();
  const std::string tmp = absl::StrCat(dest_path, ".tmp-", getpid());
  std::remove(tmp.c_str());
  BackupReport report;
  {
    auto dest = Connection::Open(tmp, Connection::Mode::kReadWriteCreate);
    if (!dest.ok()) return dest.status();
    sqlite3_backup* backup = sqlite3_backup_init((*dest)->raw(), "main", (*source)->raw(), "main");
    if (backup == nullptr) {
      absl::Status status = (*dest)->Error(sqlite3_errcode((*dest)->raw()), "starting the backup");
      std::remove(tmp.c_str());
      return status;
    }
    // All pages in one step: one read transaction on the source, so the copy is a
    // single snapshot. In WAL mode the coordinator's commits go on meanwhile (a
    // step-by-step copy would restart whenever another connection writes).
    int rc = sqlite3_backup_step(backup, -1);
    report.pages = sqlite3_backup_pagecount(backup);
    const int finish = sqlite3_backup_finish(backup);
    if (rc == SQLITE_DONE) rc = finish;
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
      absl::Status status = (*dest)->Error(rc, absl::StrCat("backing up ", source_path));
      std::remove(tmp.c_str());
      return status;
    }
    // One self-contained file; Store::Open switches a restored copy back to WAL.
    if (absl::Status s = (*dest)->Exec("PRAGMA journal_mode = DELETE"); !s.ok()) return s;
    absl::StatusOr<StatementLease> check = (*dest)->Prepare("PRAGMA quick_check");
    if (!check.ok()) return check.status();
    absl::StatusOr<bool> row = (*check)->Step();
    if (!row.ok()) return row.status();
    const std::string verdict = *row ? (*check)->ColumnText(0) : "";
    if (verdict != "ok") {
      std::remove(tmp.c_str());
      return absl::DataLossError(absl::StrCat("the backup of ", source_path,
                                              " failed its check: ", verdict));
    }
  }
  if (std::rename(tmp.c_str(), dest_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::FailedPreconditionError(
        absl::StrCat("cannot move the backup into place at ", dest_path));
  }
  if (FILE* f = std::fopen(dest_path.c_str(), "rb")) {
    std::fseek(f, 0, SEEK_END);
    report.bytes = std::ftell(f);
    std::fclose(f);
  }
  return report;
}

}  // namespace mtune::db
