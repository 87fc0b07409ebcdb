#include "db/schema.h"

#include <sqlite3.h>

#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "db/store.h"
#include "db/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::db {
namespace {

using ::mtune::db::testing::ReadFile;
using ::mtune::db::testing::ScratchDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Runs SQL on `path` through the plain C API, bypassing Store (to fake other
// versions or other applications' files).
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

std::unique_ptr<Connection> OpenRaw(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      Connection::Open(path, Connection::Mode::kReadWriteCreate);
  EXPECT_TRUE(connection.ok()) << connection.status();
  return connection.ok() ? std::move(*connection) : nullptr;
}

std::set<std::string> TableNames(Connection& connection) {
  std::set<std::string> names;
  absl::StatusOr<StatementLease> select =
      connection.Prepare("SELECT name FROM sqlite_schema WHERE type = 'table'");
  EXPECT_TRUE(select.ok()) << select.status();
  while (select.ok()) {
    absl::StatusOr<bool> row = (*select)->Step();
    EXPECT_TRUE(row.ok()) << row.status();
    if (!row.ok() || !*row) break;
    names.insert((*select)->ColumnText(0));
  }
  return names;
}

std::string QueryText(Connection& connection, const char* sql) {
  absl::StatusOr<StatementLease> select = connection.Prepare(sql);
  EXPECT_TRUE(select.ok()) << select.status();
  if (!select.ok()) return "";
  absl::StatusOr<bool> row = (*select)->Step();
  EXPECT_TRUE(row.ok() && *row);
  return row.ok() && *row ? (*select)->ColumnText(0) : "";
}

TEST(SchemaTest, NewStoreHasLatestSchemaWalAndApplicationId) {
  ScratchDir scratch;
  const std::string path = scratch.Path("store.db");
  ASSERT_TRUE(Store::Open(path).ok());

  std::unique_ptr<Connection> raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  absl::StatusOr<int> version = CurrentVersion(*raw);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, LatestVersion(StoreSchema()));
  EXPECT_GE(*version, 1);
  const std::set<std::string> expected = {"schema_version", "jobs",       "job_problems",
                                          "problems",       "targets",    "candidates",
                                          "results"};
  EXPECT_EQ(TableNames(*raw), expected);
  EXPECT_EQ(QueryText(*raw, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryText(*raw, "PRAGMA application_id"),
            std::to_string(StoreSchema().application_id));
  EXPECT_TRUE(CheckCurrent(*raw, StoreSchema()).ok());
  EXPECT_FALSE(CheckCurrent(*raw, ExportSchema()).ok());
}

TEST(SchemaTest, AVersionOneStoreIsUpgradedAndItsJobsReadBackWithTheOldDefaults) {
  ScratchDir scratch;
  const std::string path = scratch.Path("store.db");
  {
    std::unique_ptr<Connection> raw = OpenRaw(path);
    ASSERT_NE(raw, nullptr);
    const Schema v1{StoreSchema().name, StoreSchema().application_id, StoreSchema().migrations.first(1)};
    ASSERT_TRUE(Migrate(*raw, v1).ok());
    ASSERT_TRUE(raw->Exec("INSERT INTO jobs (template_name, search, trials, seed, state, created_unix_s) "
                          "VALUES ('', 'random', 5, 1, 2, 1700000000)")
                    .ok());
    ASSERT_TRUE(raw->Exec("INSERT INTO problems (key, family) VALUES ('matmul:m=8,n=8,k=8:f32', 'matmul');"
                          "INSERT INTO job_problems (job_id, problem, position, trials_total) "
                          "VALUES (1, 'matmul:m=8,n=8,k=8:f32', 0, 5)")
                    .ok());
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<mtune::v1::Job> job = (*store)->GetJob(1);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec().search(), "random");
  EXPECT_EQ(job->spec().trials(), 5u);
  EXPECT_EQ(job->spec().time_budget_s(), 0);
  EXPECT_EQ(job->spec().patience(), 0u);
  EXPECT_FALSE(job->spec().warm_start());
  EXPECT_EQ(job->spec().allocation(), "");
  EXPECT_EQ(job->spec().confirm_top(), 0u);
  EXPECT_EQ(job->spec().estimate_l2_bytes(), 0u);  // the estimates do without an L2
  EXPECT_THAT(job->spec().problems(), ::testing::ElementsAre("matmul:m=8,n=8,k=8:f32"));
  // No template stored per problem: planned from template_name or the family's default.
  EXPECT_THAT(job->spec().problem_templates(), ::testing::IsEmpty());
  std::unique_ptr<Connection> raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(*CurrentVersion(*raw), LatestVersion(StoreSchema()));
}

TEST(SchemaTest, ReopenKeepsDataAndDoesNotReapplyMigrations) {
  ScratchDir scratch;
  const std::string path = scratch.Path("store.db");
  int64_t job_id = 0;
  {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::StatusOr<int64_t> created =
        (*store)->CreateJob(mtune::v1::JobSpec(), {{testing::kMatmul512, 10}});
    ASSERT_TRUE(created.ok()) << created.status();
    job_id = *created;
  }
  absl::StatusOr<std::unique_ptr<Store>> reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  absl::StatusOr<mtune::v1::Job> job = (*reopened)->GetJob(job_id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->trials_total(), 10u);

  std::unique_ptr<Connection> raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(QueryText(*raw, "SELECT count(*) FROM schema_version"),
            std::to_string(LatestVersion(StoreSchema())));
}

TEST(SchemaTest, NewerSchemaVersionIsRejectedNamingBothVersions) {
  ScratchDir scratch;
  const std::string path = scratch.Path("store.db");
  ASSERT_TRUE(Store::Open(path).ok());
  RawExec(path,
          "INSERT INTO schema_version (version, description, applied_unix_s) "
          "VALUES (99, 'from the future', 0)");

  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(path), HasSubstr("version 99"),
                    HasSubstr(absl::StrCat("version ", LatestVersion(StoreSchema()))),
                    HasSubstr("newer")));
}

TEST(SchemaTest, NonDatabaseFileIsRejectedNamingTheFileAndLeftAlone) {
  ScratchDir scratch;
  const std::string path = scratch.Path("notes.txt");
  const std::string contents = "these are my notes, not a database\n";
  std::ofstream(path) << contents;

  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(path), HasSubstr("not a SQLite database")));
  EXPECT_EQ(ReadFile(path), contents);
}

TEST(SchemaTest, OtherApplicationsDatabaseIsRejectedAndNotSwitchedToWal) {
  ScratchDir scratch;
  const std::string path = scratch.Path("other.db");
  RawExec(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");

  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), AllOf(HasSubstr(path), HasSubstr("not an mtune store")));

  std::unique_ptr<Connection> raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(QueryText(*raw, "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(TableNames(*raw), std::set<std::string>{"customers"});
}

// A two-step schema used to exercise the migration machinery itself.
constexpr Migration kToyMigrations[] = {
    {1, "widgets", "CREATE TABLE widgets (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"},
    {2, "widget colour", "ALTER TABLE widgets ADD COLUMN colour TEXT NOT NULL DEFAULT 'red'"},
    // Creates a table, then fails: the table must not survive.
    {3, "broken", "CREATE TABLE gadgets (id INTEGER); SELECT no_such_column FROM widgets"},
};
constexpr int32_t kToyApplicationId = 0x746F7921;

TEST(SchemaTest, MigrationsApplyForwardAndAFailedStepLeavesTheFileUntouched) {
  ScratchDir scratch;
  const std::string path = scratch.Path("toy.db");
  std::unique_ptr<Connection> raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);

  const Schema v1{"toy", kToyApplicationId, std::span(kToyMigrations).first(1)};
  ASSERT_TRUE(Migrate(*raw, v1).ok());
  ASSERT_TRUE(raw->Exec("INSERT INTO widgets (name) VALUES ('sprocket')").ok());

  const Schema v2{"toy", kToyApplicationId, std::span(kToyMigrations).first(2)};
  absl::Status migrated = Migrate(*raw, v2);
  ASSERT_TRUE(migrated.ok()) << migrated;
  EXPECT_EQ(*CurrentVersion(*raw), 2);
  // Existing rows survive the step and get the new column's default.
  EXPECT_EQ(QueryText(*raw, "SELECT name || ':' || colour FROM widgets"), "sprocket:red");
  EXPECT_EQ(QueryText(*raw, "SELECT group_concat(description, '|') FROM schema_version"),
            "widgets|widget colour");

  const Schema v3{"toy", kToyApplicationId, kToyMigrations};
  absl::Status broken = Migrate(*raw, v3);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.message(), AllOf(HasSubstr("version 3"), HasSubstr("no_such_column")));
  EXPECT_EQ(*CurrentVersion(*raw), 2);
  EXPECT_EQ(TableNames(*raw).count("gadgets"), 0u);

  // And the toy file is not a store.
  raw.reset();
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("another application"));
}

TEST(SchemaTest, MigrationListWithGapIsAnInternalError) {
  ScratchDir scratch;
  std::unique_ptr<Connection> raw = OpenRaw(scratch.Path("gap.db"));
  ASSERT_NE(raw, nullptr);
  static constexpr Migration kGap[] = {{1, "a", "CREATE TABLE a (x)"},
                                       {3, "c", "CREATE TABLE c (x)"}};
  absl::Status status = Migrate(*raw, Schema{"gap", kToyApplicationId, kGap});
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(TableNames(*raw).empty());
}

}  // namespace
}  // namespace mtune::db
