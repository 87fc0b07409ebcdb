#include "db/sqlite.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace mtune::db {
namespace {

// Waits this long for another connection's write lock before giving up with
// UNAVAILABLE: long enough to ride out a checkpoint or an offline `mtune` query,
// short enough that a wedged process shows up as an error rather than a hang.
constexpr int kBusyTimeoutMs = 5000;

// Picks the absl code a caller can act on: retry (busy), fix the input
// (constraints), or give up (corruption, not a database).
absl::Status MapError(int rc, std::string message) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      return absl::FailedPreconditionError(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(std::move(message));
    case SQLITE_CONSTRAINT:
      switch (rc) {
        case SQLITE_CONSTRAINT_PRIMARYKEY:
        case SQLITE_CONSTRAINT_UNIQUE:
          return absl::AlreadyExistsError(std::move(message));
        case SQLITE_CONSTRAINT_FOREIGNKEY:
          return absl::FailedPreconditionError(std::move(message));
        default:
          return absl::InvalidArgumentError(std::move(message));
      }
    case SQLITE_CORRUPT:
      return absl::DataLossError(std::move(message));
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(std::move(message));
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return absl::FailedPreconditionError(std::move(message));
    default:
      return absl::InternalError(std::move(message));
  }
}

// absl::string_view, not std::string_view: this abseil build keeps its own
// string_view type, which StrCat takes and std::string_view does not convert to.
absl::Status ErrorFor(sqlite3* db, int rc, absl::string_view path, absl::string_view what) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_NOTADB) {
    return MapError(rc, absl::StrCat(path, " is not a SQLite database (", detail, ")"));
  }
  return MapError(rc, absl::StrCat(what, " on ", path, ": ", detail, " (sqlite code ", rc, ")"));
}

}  // namespace

// ---------------------------------------------------------------------------
// Statement
// ---------------------------------------------------------------------------

Statement::Statement(sqlite3* db, sqlite3_stmt* stmt, std::string_view path)
    : db_(db), stmt_(stmt), path_(path) {}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::RecordBindError(int rc, int index) {
  if (rc == SQLITE_OK || !bind_status_.ok()) return;
  bind_status_ = ErrorFor(db_, rc, path_,
                          absl::StrCat("binding parameter ", index, " of `", sqlite3_sql(stmt_), "`"));
}

void Statement::BindInt64(int index, int64_t value) {
  RecordBindError(sqlite3_bind_int64(stmt_, index, value), index);
}

void Statement::BindDouble(int index, double value) {
  RecordBindError(sqlite3_bind_double(stmt_, index, value), index);
}

void Statement::BindText(int index, std::string_view value) {
  // SQLITE_TRANSIENT copies: callers often bind temporaries.
  RecordBindError(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                      SQLITE_UTF8),
                  index);
}

void Statement::BindBlob(int index, std::string_view value) {
  RecordBindError(sqlite3_bind_blob64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT),
                  index);
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_status_.ok()) return bind_status_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return ErrorFor(db_, rc, path_, absl::StrCat("executing `", sqlite3_sql(stmt_), "`"));
}

absl::Status Statement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

int64_t Statement::ColumnInt64(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, col));
}

std::string Statement::ColumnBlob(int col) const {
  const void* blob = sqlite3_column_blob(stmt_, col);
  if (blob == nullptr) return "";
  return std::string(static_cast<const char*>(blob), sqlite3_column_bytes(stmt_, col));
}

bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_status_ = absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Connection
// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& path, Mode mode) {
  // NOMUTEX: callers already serialize access to a connection, so SQLite's own
  // per-connection mutex would only add cost.
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  flags |= mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY
                                   : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = ErrorFor(raw, rc, path, "opening");
    sqlite3_close_v2(raw);  // sqlite3_open_v2 allocates a handle even on failure
    return status;
  }
  std::unique_ptr<Connection> connection(new Connection(raw, path));
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // SQLite opens lazily: without touching a page, a text file "opens" fine and
  // fails later in some unrelated statement. Read the schema now so that a
  // non-database file is reported here, naming the file.
  if (absl::Status probe = connection->Exec("SELECT count(*) FROM sqlite_schema"); !probe.ok()) {
    return probe;
  }
  return connection;
}

Connection::~Connection() {
  cache_.clear();  // finalize statements first; close refuses while any are live
  sqlite3_close_v2(db_);
}

absl::Status Connection::Error(int rc, absl::string_view what) const {
  return ErrorFor(db_, rc, path_, what);
}

absl::Status Connection::Exec(std::string_view sql) {
  const std::string owned(sql);  // sqlite3_exec needs a NUL-terminated string
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string detail = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  if ((rc & 0xff) == SQLITE_NOTADB) return ErrorFor(db_, rc, path_, "");
  return MapError(rc, absl::StrCat("executing `", owned, "` on ", path_, ": ", detail,
                                   " (sqlite code ", rc, ")"));
}

absl::StatusOr<StatementLease> Connection::Prepare(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    // PREPARE_PERSISTENT: these statements live as long as the connection.
    const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      return Error(rc, absl::StrCat("preparing `", absl::string_view(sql.data(), sql.size()), "`"));
    }
    it = cache_.emplace(std::string(sql), std::make_unique<Statement>(db_, stmt, path_)).first;
  }
  return StatementLease(it->second.get());
}

absl::Status Connection::Run(std::string_view sql) {
  absl::StatusOr<StatementLease> statement = Prepare(sql);
  if (!statement.ok()) return statement.status();
  return (*statement)->Run();
}

bool Connection::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

int64_t Connection::Changes() const { return sqlite3_changes64(db_); }

int64_t Connection::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

// ---------------------------------------------------------------------------
// Transaction
// ---------------------------------------------------------------------------

absl::StatusOr<Transaction> Transaction::Begin(Connection& connection, Kind kind) {
  // Cached statements: a busy coordinator begins and commits thousands of these.
  absl::Status status =
      connection.Run(kind == Kind::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  if (!status.ok()) return status;
  return Transaction(&connection);
}

Transaction::~Transaction() {
  if (connection_ == nullptr) return;
  // Some errors (SQLITE_FULL, SQLITE_IOERR) already rolled back; a second
  // ROLLBACK would only fail, so check first.
  if (sqlite3_get_autocommit(connection_->raw()) == 0) {
    connection_->Exec("ROLLBACK").IgnoreError();
  }
}

absl::Status Transaction::Commit() {
  absl::Status status = connection_->Run("COMMIT");
  // On failure (e.g. busy) the transaction is still open: leave connection_
  // set so the destructor rolls it back.
  if (status.ok()) connection_ = nullptr;
  return status;
}

}  // namespace mtune::db
