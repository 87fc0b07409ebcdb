#include "db/export.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "db/clock.h"
#include "db/schema.h"
#include "db/exported_row.h"
#include "db/sqlite.h"

namespace mtune::db {
namespace {

constexpr char kInsertBestSql[] = R"sql(
INSERT INTO best_strategies (
  problem, family, target_id, target_triple, target_cpu, template_name, knobs_json,
  candidate_hash, script, gflops, gbps, fraction_of_roofline, roofline_gflops, median_s,
  mtune_version, mlir_version, exported_unix_s)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql";

constexpr char kSelectBestSql[] = "SELECT " MTUNE_EXPORTED_ROW_COLUMNS R"sql(
FROM best_strategies
ORDER BY problem, target_id)sql";

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  const int error = errno;
  std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EEXIST) return absl::AlreadyExistsError(message);
  return absl::FailedPreconditionError(message);
}

absl::Status AlreadyExists(const std::string& path) {
  return absl::AlreadyExistsError(
      absl::StrCat(path, " already exists; refusing to overwrite it without being asked"));
}

// Closes a POSIX file descriptor on scope exit.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  // Closes now, reporting the error close() can return after delayed writes.
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

// Removes the temporary file unless it was moved into place.
class TempFileCleanup {
 public:
  explicit TempFileCleanup(std::string path) : path_(std::move(path)) {}
  ~TempFileCleanup() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFileCleanup(const TempFileCleanup&) = delete;
  TempFileCleanup& operator=(const TempFileCleanup&) = delete;
  void Release() { path_.clear(); }

 private:
  std::string path_;
};

// Writes `bytes` to a new temporary file beside `out_path` (so the
// final rename stays on one file system) and fsyncs it; returns its path.
absl::StatusOr<std::string> WriteTempFile(const std::string& out_path, std::string_view bytes) {
  std::string temp_path = out_path + ".tmp.XXXXXX";
  FileDescriptor fd(::mkstemp(temp_path.data()));
  if (fd.get() < 0) return ErrnoError("cannot create a temporary file for", out_path);
  TempFileCleanup cleanup(temp_path);
  // mkstemp creates 0600; the export is meant to be shared with compilers.
  if (::fchmod(fd.get(), 0644) != 0) return ErrnoError("cannot chmod", temp_path);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", temp_path);
    }
    written += static_cast<size_t>(n);
  }
  // Sync before the rename: otherwise a power loss can leave the new name
  // pointing at an empty file.
  if (::fsync(fd.get()) != 0) return ErrnoError("cannot sync", temp_path);
  if (fd.Close() != 0) return ErrnoError("cannot close", temp_path);
  cleanup.Release();
  return temp_path;
}

// Makes the rename itself durable.
void SyncDirectoryOf(const std::string& path) {
  std::string directory = std::filesystem::path(path).parent_path().string();
  if (directory.empty()) directory = ".";
  FileDescriptor fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY));
  if (fd.get() >= 0) ::fsync(fd.get());  // best effort: the data itself is already synced
}

}  // namespace

absl::StatusOr<ExportedDb> BuildExportedDb(const std::vector<ExportedStrategy>& rows) {
  // Built in memory and serialized: the same bytes serve the Export RPC and the
  // file export, and the file is never visible half-built.
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      Connection::Open(":memory:", Connection::Mode::kReadWriteCreate);
  if (!connection.ok()) return connection.status();
  Connection& db = **connection;
  if (absl::Status status = Migrate(db, ExportSchema()); !status.ok()) return status;
  {
    absl::StatusOr<Transaction> transaction =
        Transaction::Begin(db, Transaction::Kind::kImmediate);
    if (!transaction.ok()) return transaction.status();
    for (const ExportedStrategy& row : rows) {
      absl::StatusOr<StatementLease> insert = db.Prepare(kInsertBestSql);
      if (!insert.ok()) return insert.status();
      (*insert)->BindAll(row.problem, row.family, row.target_id, row.target_triple,
                         row.target_cpu, row.template_name, row.knobs_json, row.candidate_hash,
                         row.script, row.gflops, row.gbps, row.fraction_of_roofline,
                         row.roofline_gflops, row.median_s, row.mtune_version, row.mlir_version,
                         row.exported_unix_s);
      if (absl::Status status = (*insert)->Run(); !status.ok()) return status;
    }
    if (absl::Status status = transaction->Commit(); !status.ok()) return status;
  }

  sqlite3_int64 size = 0;
  std::unique_ptr<unsigned char, decltype(&sqlite3_free)> bytes(
      sqlite3_serialize(db.raw(), "main", &size, 0), &sqlite3_free);
  if (bytes == nullptr) return absl::ResourceExhaustedError("cannot serialize the export database");
  ExportedDb exported;
  exported.sqlite_bytes.assign(reinterpret_cast<const char*>(bytes.get()),
                               static_cast<size_t>(size));
  exported.entries = static_cast<uint32_t>(rows.size());
  return exported;
}

absl::StatusOr<std::vector<ExportedStrategy>> BestStrategyRows(Store& store,
                                                               const ExportInfo& info) {
  absl::StatusOr<std::vector<mtune::v1::BestStrategy>> best = store.AllBest();
  if (!best.ok()) return best.status();
  const int64_t exported_unix_s = NowUnixSeconds();
  std::vector<ExportedStrategy> rows;
  rows.reserve(best->size());
  for (const mtune::v1::BestStrategy& entry : *best) {
    const mtune::v1::Result& result = entry.result();
    ExportedStrategy& row = rows.emplace_back();
    row.problem = entry.problem();
    row.family = std::string(ProblemFamily(entry.problem()));
    row.target_id = entry.target().id();
    row.target_triple = entry.target().triple();
    row.target_cpu = entry.target().cpu();
    row.template_name = entry.candidate().template_name();
    row.knobs_json = entry.candidate().canonical_json();
    row.candidate_hash = entry.candidate().hash();
    row.script = entry.script();
    row.gflops = result.gflops();
    row.gbps = result.gbps();
    row.fraction_of_roofline = result.fraction_of_roofline();
    row.roofline_gflops = result.roofline_gflops();
    row.median_s = result.timing().median_s();
    row.mtune_version = info.mtune_version;
    row.mlir_version = info.mlir_version;
    row.exported_unix_s = exported_unix_s;
  }
  return rows;
}

absl::StatusOr<ExportedDb> BuildBestStrategyDb(Store& store, const ExportInfo& info) {
  absl::StatusOr<std::vector<ExportedStrategy>> rows = BestStrategyRows(store, info);
  if (!rows.ok()) return rows.status();
  return BuildExportedDb(*rows);
}

absl::StatusOr<uint32_t> WriteExportedDb(const std::vector<ExportedStrategy>& rows,
                                         const std::string& out_path, ExistingFile existing) {
  // Early check saves building an export we cannot write; the link() below is
  // what actually guarantees nothing is overwritten.
  std::error_code error;
  if (existing == ExistingFile::kFail && std::filesystem::exists(out_path, error)) {
    return AlreadyExists(out_path);
  }
  absl::StatusOr<ExportedDb> exported = BuildExportedDb(rows);
  if (!exported.ok()) return exported.status();
  absl::StatusOr<std::string> temp_path = WriteTempFile(out_path, exported->sqlite_bytes);
  if (!temp_path.ok()) return temp_path.status();
  TempFileCleanup cleanup(*temp_path);

  if (existing == ExistingFile::kReplace) {
    if (::rename(temp_path->c_str(), out_path.c_str()) != 0) {
      return ErrnoError("cannot move the export into place at", out_path);
    }
    cleanup.Release();
  } else {
    // link() fails with EEXIST instead of replacing: no window in which another
    // writer's file could be clobbered. The temp name is removed by `cleanup`.
    if (::link(temp_path->c_str(), out_path.c_str()) != 0) {
      if (errno == EEXIST) return AlreadyExists(out_path);
      return ErrnoError("cannot move the export into place at", out_path);
    }
  }
  SyncDirectoryOf(out_path);
  return exported->entries;
}

absl::StatusOr<uint32_t> ExportBestStrategyDb(Store& store, const std::string& out_path,
                                              const ExportInfo& info, ExistingFile existing) {
  std::error_code error;
  if (existing == ExistingFile::kFail && std::filesystem::exists(out_path, error)) {
    return AlreadyExists(out_path);
  }
  absl::StatusOr<std::vector<ExportedStrategy>> rows = BestStrategyRows(store, info);
  if (!rows.ok()) return rows.status();
  return WriteExportedDb(*rows, out_path, existing);
}

absl::StatusOr<std::unique_ptr<Connection>> OpenExportedDb(const std::string& path) {
  // SQLite's read-only open reports a missing file only as "unable to open".
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return absl::NotFoundError(absl::StrCat("best-strategy database ", path, " does not exist"));
  }
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      Connection::Open(path, Connection::Mode::kReadOnly);
  if (!connection.ok()) return connection.status();
  if (absl::Status status = CheckCurrent(**connection, ExportSchema()); !status.ok()) return status;
  return connection;
}

absl::StatusOr<std::vector<ExportedStrategy>> ReadExportedDb(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Connection>> connection = OpenExportedDb(path);
  if (!connection.ok()) return connection.status();
  Connection& db = **connection;

  absl::StatusOr<StatementLease> select = db.Prepare(kSelectBestSql);
  if (!select.ok()) return select.status();
  std::vector<ExportedStrategy> rows;
  while (true) {
    absl::StatusOr<bool> has_row = (*select)->Step();
    if (!has_row.ok()) return has_row.status();
    if (!*has_row) return rows;
    const Statement& r = **select;
    ReadExportedRow(r, rows.emplace_back());
  }
}

void ReadExportedRow(const Statement& r, ExportedStrategy& row) {
  row.problem = r.ColumnText(0);
  row.family = r.ColumnText(1);
  row.target_id = r.ColumnText(2);
  row.target_triple = r.ColumnText(3);
  row.target_cpu = r.ColumnText(4);
  row.template_name = r.ColumnText(5);
  row.knobs_json = r.ColumnText(6);
  row.candidate_hash = r.ColumnText(7);
  row.script = r.ColumnText(8);
  row.gflops = r.ColumnDouble(9);
  row.gbps = r.ColumnDouble(10);
  row.fraction_of_roofline = r.ColumnDouble(11);
  row.roofline_gflops = r.ColumnDouble(12);
  row.median_s = r.ColumnDouble(13);
  row.mtune_version = r.ColumnText(14);
  row.mlir_version = r.ColumnText(15);
  row.exported_unix_s = r.ColumnInt64(16);
}

}  // namespace mtune::db
