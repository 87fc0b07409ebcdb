// Thin RAII layer over the sqlite3 C API, returning absl::Status instead of codes.
// Everything SQLite-specific in db/ goes through here so that error mapping
// (which sqlite3 code becomes which absl code) lives in one place.
#ifndef MTUNE_DB_SQLITE_H_
#define MTUNE_DB_SQLITE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mtune::db {

// One prepared statement. Bind errors are remembered and reported by the next
// Step() so that call sites can bind a row of values without checking each one.
class Statement {
 public:
  // Takes ownership of `stmt`; `db` and `path` are used for error messages only.
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string_view path);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binders for 1-based parameter `index`.
  void BindInt64(int index, int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, std::string_view value);
  void BindBlob(int index, std::string_view value);

  // Binds `values` to parameters 1..N in order; ints, doubles and strings only.
  template <typename... Values>
  void BindAll(const Values&... values) {
    int index = 0;
    (BindOne(++index, values), ...);
  }

  // Advances: true when a row is available, false when the statement is done.
  absl::StatusOr<bool> Step();
  // Steps to completion, for statements that return no rows.
  absl::Status Run();

  // Readers for 0-based result column `col` of the current row.
  int64_t ColumnInt64(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  std::string ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

  // Makes the statement reusable: rewinds it and clears bindings and bind errors.
  void Reset();

 private:
  void BindOne(int index, int64_t value) { BindInt64(index, value); }
  void BindOne(int index, int value) { BindInt64(index, value); }
  void BindOne(int index, uint32_t value) { BindInt64(index, value); }
  void BindOne(int index, double value) { BindDouble(index, value); }
  void BindOne(int index, std::string_view value) { BindText(index, value); }
  void BindOne(int index, const std::string& value) { BindText(index, value); }
  void BindOne(int index, const char* value) { BindText(index, value); }
  void RecordBindError(int rc, int index);

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string path_;
  absl::Status bind_status_;
};

// A cached statement on loan; resets it on destruction so the next user gets a
// clean statement and SQLite releases the read snapshot a half-stepped SELECT holds.
class StatementLease {
 public:
  explicit StatementLease(Statement* statement) : statement_(statement) {}
  ~StatementLease() {
    if (statement_ != nullptr) statement_->Reset();
  }
  StatementLease(StatementLease&& other) noexcept : statement_(other.statement_) {
    other.statement_ = nullptr;
  }
  StatementLease(const StatementLease&) = delete;
  StatementLease& operator=(const StatementLease&) = delete;
  StatementLease& operator=(StatementLease&&) = delete;

  // Access to the leased statement.
  Statement* operator->() const { return statement_; }
  Statement& operator*() const { return *statement_; }

 private:
  Statement* statement_;
};

// One sqlite3 connection plus its prepared-statement cache. Not thread-safe:
// callers serialize access (Store holds a mutex around every use).
class Connection {
 public:
  // How to open the file.
  enum class Mode {
    kReadWriteCreate,  // creates the file if missing
    kReadOnly,         // fails if missing; never writes (exported databases)
  };

  // Opens `path` (":memory:" for a private in-memory database). Fails with
  // FailedPrecondition naming the file when it exists but is not a SQLite database.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path, Mode mode);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements without parameters (DDL, PRAGMA, BEGIN/COMMIT).
  absl::Status Exec(std::string_view sql);
  // Returns the cached prepared statement for `sql`, preparing it on first use.
  absl::StatusOr<StatementLease> Prepare(std::string_view sql);
  // Runs one parameterless statement through the statement cache (for statements
  // run very often, such as SAVEPOINT/RELEASE, so they are parsed once).
  absl::Status Run(std::string_view sql);
  // Whether a transaction is open (false after an error rolled it back).
  bool InTransaction() const;
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const;
  // Rowid of the last successful INSERT.
  int64_t LastInsertRowId() const;
  // The file this connection opened, for messages.
  const std::string& path() const { return path_; }
  // The raw handle, for APIs this wrapper does not cover (serialize, backup).
  sqlite3* raw() const { return db_; }

  // Converts a sqlite3 result code into an absl::Status naming the file and `what`.
  absl::Status Error(int rc, absl::string_view what) const;

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  // Keyed by SQL text, not by pointer: a pointer key would silently return a stale
  // statement if a temporary string were ever reused at the same address.
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

// A transaction that rolls back unless committed, so an early `return status`
// can never leave half a write behind.
class Transaction {
 public:
  // Deferred takes locks on first use (reads); immediate takes the write lock
  // at BEGIN, so a writer waits on busy_timeout up front instead of failing
  // with SQLITE_BUSY half-way when it upgrades from a read.
  enum class Kind { kDeferred, kImmediate };

  // Starts a transaction on `connection`.
  static absl::StatusOr<Transaction> Begin(Connection& connection, Kind kind);
  ~Transaction();
  Transaction(Transaction&& other) noexcept : connection_(other.connection_) {
    other.connection_ = nullptr;
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction& operator=(Transaction&&) = delete;

  // Commits; after this the destructor does nothing.
  absl::Status Commit();

 private:
  explicit Transaction(Connection* connection) : connection_(connection) {}
  Connection* connection_;
};

}  // namespace mtune::db

#endif  // MTUNE_DB_SQLITE_H_
