#include "db/backup.h"

#include <memory>
#include <string>

#include "db/store.h"
#include "db/test_util.h"
#include "gtest/gtest.h"

namespace mtune::db {
namespace {

namespace v1 = ::mtune::v1;
using ::mtune::db::testing::kMatmul512;
using ::mtune::db::testing::kZen4;
using ::mtune::db::testing::MakeCalibration;
using ::mtune::db::testing::MakeTarget;
using ::mtune::db::testing::MakeTrial;
using ::mtune::db::testing::ScratchDir;
using ::mtune::db::testing::ScriptFor;

// A backup taken while the source store is open (and written to before and
// after) holds exactly what was committed before it, and opens as a store.
TEST(Backup, CopiesACommittedSnapshotOfAnOpenStore) {
  ScratchDir scratch;
  auto store = Store::Open(scratch.Path("live.db"));
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->UpsertTarget(MakeTarget(kZen4), MakeCalibration(120)).ok());
  auto job = (*store)->CreateJob(v1::JobSpec(), {{kMatmul512, 20}});
  ASSERT_TRUE(job.ok());
  for (int tile = 1; tile <= 3; ++tile)
    ASSERT_TRUE((*store)
                    ->InsertResult(MakeTrial(*job, kMatmul512, kZen4, tile,
                                             v1::RESULT_STATUS_OK, 10.0 * tile),
                                   ScriptFor(tile))
                    .ok());

  auto report = BackupDatabase(scratch.Path("live.db"), scratch.Path("copy.db"));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->pages, 0);
  EXPECT_GT(report->bytes, 0);
  // Written after the backup: not in it.
  ASSERT_TRUE((*store)
                  ->InsertResult(MakeTrial(*job, kMatmul512, kZen4, 4, v1::RESULT_STATUS_OK, 40),
                                 ScriptFor(4))
                  .ok());

  auto copy = Store::Open(scratch.Path("copy.db"));
  ASSERT_TRUE(copy.ok()) << copy.status();
  auto results = (*copy)->ListResults(*job, "", 0);
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->size(), 3u);
  auto best = (*copy)->GetBest(kMatmul512, kZen4);
  ASSERT_TRUE(best.ok());
  EXPECT_DOUBLE_EQ(best->result().gflops(), 30.0);
}

TEST(Backup, ClearErrors) {
  ScratchDir scratch;
  auto missing = BackupDatabase(scratch.Path("missing.db"), scratch.Path("copy.db"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("no database at"), std::string::npos);
  auto store = Store::Open(scratch.Path("live.db"));
  ASSERT_TRUE(store.ok());
  auto nowhere = BackupDatabase(scratch.Path("live.db"), scratch.Path("no/such/dir/copy.db"));
  EXPECT_FALSE(nowhere.ok());
}

}  // namespace
}  // namespace mtune::db
