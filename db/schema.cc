#include "db/schema.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace mtune::db {
namespace {

// File-type stamps ("mtDB", "mtBS" in ASCII). SQLite reserves the header field
// for exactly this: `file` and other tools can tell the files apart.
constexpr int32_t kStoreApplicationId = 0x6D744442;
constexpr int32_t kExportApplicationId = 0x6D744253;

// --- mtune store -----------------------------------------------------------
//
// Result status 1 is mtune.v1.RESULT_STATUS_OK and job state values are
// mtune.v1.JobState; store.cc static_asserts both. The "best" index is partial
// on `status = 1` because only OK results compete, and the best-lookups spell
// the same literal so the planner can use it.
constexpr char kStoreV1[] = R"sql(
CREATE TABLE problems (
  key TEXT PRIMARY KEY NOT NULL,
  family TEXT NOT NULL
);

CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  template_name TEXT NOT NULL,
  search TEXT NOT NULL,
  trials INTEGER NOT NULL,
  -- uint64 seed stored as the int64 with the same bits.
  seed INTEGER NOT NULL,
  state INTEGER NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  created_unix_s INTEGER NOT NULL,
  -- 0 while running, as in mtune.v1.Job.
  finished_unix_s INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_by_state ON jobs (state);

CREATE TABLE job_problems (
  job_id INTEGER NOT NULL REFERENCES jobs (id),
  problem TEXT NOT NULL REFERENCES problems (key),
  -- Index in JobSpec.problems, so the spec reads back in the submitted order.
  position INTEGER NOT NULL,
  trials_total INTEGER NOT NULL,
  PRIMARY KEY (job_id, problem)
);

CREATE TABLE targets (
  id TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL,
  triple TEXT NOT NULL,
  cpu TEXT NOT NULL,
  features TEXT NOT NULL,
  -- Serialized mtune.v1.Calibration of the worker that last registered it.
  calibration BLOB NOT NULL,
  updated_unix_s INTEGER NOT NULL
);

CREATE TABLE candidates (
  hash TEXT PRIMARY KEY NOT NULL,
  template_name TEXT NOT NULL,
  canonical_json TEXT NOT NULL,
  -- The template with every knob selected.
  script TEXT NOT NULL
);

CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL,
  problem TEXT NOT NULL,
  target_id TEXT NOT NULL REFERENCES targets (id),
  candidate_hash TEXT NOT NULL REFERENCES candidates (hash),
  worker_name TEXT NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  median_s REAL NOT NULL,
  p25_s REAL NOT NULL,
  p75_s REAL NOT NULL,
  min_s REAL NOT NULL,
  cv REAL NOT NULL,
  repetitions INTEGER NOT NULL,
  warmup INTEGER NOT NULL,
  gflops REAL NOT NULL,
  gbps REAL NOT NULL,
  roofline_gflops REAL NOT NULL,
  roofline_level TEXT NOT NULL,
  fraction_of_roofline REAL NOT NULL,
  compile_s REAL NOT NULL,
  verify_s REAL NOT NULL,
  max_rel_error REAL NOT NULL,
  total_s REAL NOT NULL,
  created_unix_s INTEGER NOT NULL,
  -- A result belongs to a problem of its job, not just to some job.
  FOREIGN KEY (job_id, problem) REFERENCES job_problems (job_id, problem),
  -- One measurement per candidate per job problem: re-reported results are dropped.
  UNIQUE (job_id, problem, candidate_hash)
);
CREATE INDEX results_best ON results (problem, target_id, gflops DESC) WHERE status = 1;
)sql";

// The rest of JobSpec, so that a job resumed after a restart keeps its limits, warm
// start and allocation, and a confirmation job stays one. Jobs stored before read
// these back as their defaults, as they always did.
constexpr char kStoreV2[] = R"sql(
ALTER TABLE jobs ADD COLUMN time_budget_s REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN patience INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN warm_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN allocation TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN confirm_top INTEGER NOT NULL DEFAULT 0;
)sql";

// The template each problem of a job is tuned with (JobSpec.problem_templates):
// chosen per problem and target when the job names none, so that a resumed job keeps
// it. Problems of jobs stored before read back '' (their job's template_name, or the
// family's default, as they always did).
constexpr char kStoreV3[] = R"sql(
ALTER TABLE job_problems ADD COLUMN template_name TEXT NOT NULL DEFAULT '';
)sql";

// Calls per timing sample (Timing.calls_per_sample): a short kernel is timed in
// batches, and its cv and quartiles are over batch means. Results stored before were
// timed one call per sample.
constexpr char kStoreV4[] = R"sql(
ALTER TABLE results ADD COLUMN calls_per_sample INTEGER NOT NULL DEFAULT 1;
)sql";

// The vector register file each problem's knob space was sized for
// (JobSpec.problem_registers), so that a resumed job searches the same space. Problems
// of jobs stored before read back 0 and resume sized for AVX-512, as they were planned.
constexpr char kStoreV5[] = R"sql(
ALTER TABLE job_problems ADD COLUMN vector_registers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_problems ADD COLUMN vector_bytes INTEGER NOT NULL DEFAULT 0;
)sql";

// The L2 the kernel estimates sized working sets against (JobSpec.estimate_l2_bytes),
// so that a resumed job starts its search as it was planned. Jobs stored before read
// back 0 and resume without it, as they were planned.
constexpr char kStoreV6[] = R"sql(
ALTER TABLE jobs ADD COLUMN estimate_l2_bytes INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr Migration kStoreMigrations[] = {
    {1, "jobs, job_problems, problems, targets, candidates, results", kStoreV1},
    {2, "jobs: time budget, patience, warm start, allocation, confirm_top", kStoreV2},
    {3, "job_problems: the template each problem is tuned with", kStoreV3},
    {4, "results: calls per timing sample", kStoreV4},
    {5, "job_problems: the vector registers each problem's tiles are sized for", kStoreV5},
    {6, "jobs: the L2 the kernel estimates size working sets against", kStoreV6},
};

// --- exported best-strategy database ---------------------------------------
//
// Self-contained on purpose: a compiler reads it without the store, so each row
// repeats the target and version strings instead of referencing other tables.
constexpr char kExportV1[] = R"sql(
CREATE TABLE best_strategies (
  problem TEXT NOT NULL,
  family TEXT NOT NULL,
  target_id TEXT NOT NULL,
  target_triple TEXT NOT NULL,
  target_cpu TEXT NOT NULL,
  template_name TEXT NOT NULL,
  knobs_json TEXT NOT NULL,
  candidate_hash TEXT NOT NULL,
  script TEXT NOT NULL,
  gflops REAL NOT NULL,
  gbps REAL NOT NULL,
  fraction_of_roofline REAL NOT NULL,
  roofline_gflops REAL NOT NULL,
  median_s REAL NOT NULL,
  mtune_version TEXT NOT NULL,
  mlir_version TEXT NOT NULL,
  exported_unix_s INTEGER NOT NULL,
  PRIMARY KEY (problem, target_id)
);
CREATE INDEX best_strategies_by_family ON best_strategies (family);
)sql";

constexpr Migration kExportMigrations[] = {
    {1, "best_strategies", kExportV1},
};

constexpr char kCountSchemaObjectsSql[] = "SELECT count(*) FROM sqlite_schema";
constexpr char kHasVersionTableSql[] =
    "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'";
constexpr char kMaxVersionSql[] = "SELECT COALESCE(MAX(version), 0) FROM schema_version";
constexpr char kCreateVersionTableSql[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER PRIMARY KEY NOT NULL,
  description TEXT NOT NULL,
  applied_unix_s INTEGER NOT NULL
))sql";
constexpr char kInsertVersionSql[] =
    "INSERT INTO schema_version (version, description, applied_unix_s) VALUES (?, ?, unixepoch())";
constexpr char kApplicationIdSql[] = "PRAGMA application_id";

// Runs a query returning one integer.
absl::StatusOr<int64_t> QueryInt(Connection& connection, const char* sql) {
  absl::StatusOr<StatementLease> statement = connection.Prepare(sql);
  if (!statement.ok()) return statement.status();
  absl::StatusOr<bool> row = (*statement)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError(absl::StrCat("`", sql, "` returned no row"));
  return (*statement)->ColumnInt64(0);
}

std::string DescribeApplicationId(int64_t id) {
  if (id == kStoreApplicationId) return "an mtune store";
  if (id == kExportApplicationId) return "an mtune best-strategy export";
  return absl::StrCat("a database of another application (application_id 0x",
                      absl::Hex(static_cast<uint32_t>(id)), ")");
}

// Checks the file-type stamp. Returns true when the database is empty (a new
// file, to be stamped by the caller).
absl::StatusOr<bool> CheckApplication(Connection& connection, const Schema& schema) {
  absl::StatusOr<int64_t> id = QueryInt(connection, kApplicationIdSql);
  if (!id.ok()) return id.status();
  absl::StatusOr<int64_t> objects = QueryInt(connection, kCountSchemaObjectsSql);
  if (!objects.ok()) return objects.status();
  if (*id == 0) {
    if (*objects == 0) return true;
    return absl::FailedPreconditionError(
        absl::StrCat(connection.path(), " is a SQLite database but not ", "an ", schema.name,
                     " (it has tables but no mtune application_id)"));
  }
  if (*id != schema.application_id) {
    return absl::FailedPreconditionError(absl::StrCat(
        connection.path(), " is ", DescribeApplicationId(*id), ", not an ", schema.name));
  }
  return false;
}

absl::Status CheckMigrationList(const Schema& schema) {
  for (size_t i = 0; i < schema.migrations.size(); ++i) {
    if (schema.migrations[i].version != static_cast<int>(i) + 1) {
      return absl::InternalError(absl::StrCat(schema.name, " migration #", i, " has version ",
                                              schema.migrations[i].version, ", expected ", i + 1));
    }
  }
  return absl::OkStatus();
}

absl::Status TooNew(const Connection& connection, const Schema& schema, int version) {
  return absl::FailedPreconditionError(absl::StrCat(
      connection.path(), " has ", schema.name, " schema version ", version,
      ", newer than version ", LatestVersion(schema),
      " known to this build of mtune; use a newer mtune to open it"));
}

}  // namespace

const Schema& StoreSchema() {
  static constexpr Schema kSchema{"mtune store", kStoreApplicationId, kStoreMigrations};
  return kSchema;
}

const Schema& ExportSchema() {
  static constexpr Schema kSchema{"mtune best-strategy export", kExportApplicationId,
                                  kExportMigrations};
  return kSchema;
}

int LatestVersion(const Schema& schema) { return static_cast<int>(schema.migrations.size()); }

absl::StatusOr<int> CurrentVersion(Connection& connection) {
  absl::StatusOr<int64_t> has_table = QueryInt(connection, kHasVersionTableSql);
  if (!has_table.ok()) return has_table.status();
  if (*has_table == 0) return 0;
  absl::StatusOr<int64_t> version = QueryInt(connection, kMaxVersionSql);
  if (!version.ok()) return version.status();
  return static_cast<int>(*version);
}

absl::Status Migrate(Connection& connection, const Schema& schema) {
  if (absl::Status status = CheckMigrationList(schema); !status.ok()) return status;
  // IMMEDIATE: two processes opening a fresh file at once must not both decide
  // to run migration 1; the second waits and then sees the new version.
  absl::StatusOr<Transaction> transaction =
      Transaction::Begin(connection, Transaction::Kind::kImmediate);
  if (!transaction.ok()) return transaction.status();

  absl::StatusOr<bool> is_new = CheckApplication(connection, schema);
  if (!is_new.ok()) return is_new.status();
  absl::StatusOr<int> version = CurrentVersion(connection);
  if (!version.ok()) return version.status();
  if (*version > LatestVersion(schema)) return TooNew(connection, schema, *version);
  if (*version == LatestVersion(schema)) return transaction->Commit();

  if (*is_new) {
    // PRAGMA takes no bound parameters; the value is our own constant.
    absl::Status status =
        connection.Exec(absl::StrCat("PRAGMA application_id = ", schema.application_id));
    if (!status.ok()) return status;
  }
  if (absl::Status status = connection.Exec(kCreateVersionTableSql); !status.ok()) return status;
  for (const Migration& step : schema.migrations.subspan(*version)) {
    if (absl::Status status = connection.Exec(step.sql); !status.ok()) {
      return absl::Status(status.code(), absl::StrCat("migrating ", connection.path(), " to ",
                                                      schema.name, " version ", step.version,
                                                      ": ", status.message()));
    }
    absl::StatusOr<StatementLease> insert = connection.Prepare(kInsertVersionSql);
    if (!insert.ok()) return insert.status();
    (*insert)->BindAll(step.version, step.description);
    if (absl::Status status = (*insert)->Run(); !status.ok()) return status;
  }
  return transaction->Commit();
}

absl::Status CheckCurrent(Connection& connection, const Schema& schema) {
  absl::StatusOr<bool> is_new = CheckApplication(connection, schema);
  if (!is_new.ok()) return is_new.status();
  if (*is_new) {
    return absl::FailedPreconditionError(
        absl::StrCat(connection.path(), " is empty, not an ", schema.name));
  }
  absl::StatusOr<int> version = CurrentVersion(connection);
  if (!version.ok()) return version.status();
  if (*version > LatestVersion(schema)) return TooNew(connection, schema, *version);
  if (*version < LatestVersion(schema)) {
    return absl::FailedPreconditionError(
        absl::StrCat(connection.path(), " has ", schema.name, " schema version ", *version,
                     ", older than version ", LatestVersion(schema),
                     " this build reads; migrate or re-create it with this build"));
  }
  return absl::OkStatus();
}

}  // namespace mtune::db
