// Schema versioning for mtune's SQLite files: forward-only migrations recorded
// in a `schema_version` table, plus the file-type stamp (PRAGMA application_id)
// that keeps a store and an exported best-strategy file from being mistaken
// for each other.
#ifndef MTUNE_DB_SCHEMA_H_
#define MTUNE_DB_SCHEMA_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/sqlite.h"

namespace mtune::db {

// One forward step: running `sql` on a database at version `version - 1`
// brings it to `version`.
struct Migration {
  int version;
  // Recorded in schema_version, for people reading the file.
  std::string_view description;
  // One or more statements.
  std::string_view sql;
};

// A kind of mtune database file and the steps that build its current schema.
struct Schema {
  // Human name used in errors, e.g. "mtune store".
  const char* name;
  // Stamped into the file header; identifies the file type without reading tables.
  int32_t application_id;
  // Steps with versions 1, 2, ..., N in order; N is the version this code writes.
  std::span<const Migration> migrations;
};

// The coordinator's database: jobs, targets, candidates, results.
const Schema& StoreSchema();
// The exported best-strategy database compilers read.
const Schema& ExportSchema();

// Latest version `schema` knows.
int LatestVersion(const Schema& schema);

// Brings the database on `connection` to the latest version of `schema`, all
// pending steps in one transaction (a failed step leaves the file untouched).
// Errors: FailedPrecondition naming both versions when the file is newer than
// this code, or naming the file when it belongs to another application or
// another kind of mtune file.
absl::Status Migrate(Connection& connection, const Schema& schema);

// Checks, without writing, that `connection` holds `schema` at exactly its
// latest version (for read-only consumers, which cannot migrate).
absl::Status CheckCurrent(Connection& connection, const Schema& schema);

// Version recorded in schema_version; 0 for a database without that table.
absl::StatusOr<int> CurrentVersion(Connection& connection);

}  // namespace mtune::db

#endif  // MTUNE_DB_SCHEMA_H_
