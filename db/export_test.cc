#include "db/export.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "db/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::db {
namespace {

namespace v1 = ::mtune::v1;
using ::mtune::db::testing::kConv;
using ::mtune::db::testing::kMatmul512;
using ::mtune::db::testing::kSapphireRapids;
using ::mtune::db::testing::kZen4;
using ::mtune::db::testing::MakeCalibration;
using ::mtune::db::testing::MakeCandidate;
using ::mtune::db::testing::MakeTarget;
using ::mtune::db::testing::MakeTrial;
using ::mtune::db::testing::ReadFile;
using ::mtune::db::testing::ScratchDir;
using ::mtune::db::testing::ScriptFor;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

int FilesStartingWith(const std::string& dir, const std::string& prefix) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ++files;
  }
  return files;
}

// A store with results for two problems on two targets; the best rows are
// (conv, SPR, tile 4), (matmul, SPR, tile 16), (matmul, Zen 4, tile 2).
class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(scratch_.Path("store.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    ASSERT_TRUE(store_->UpsertTarget(MakeTarget(kSapphireRapids), MakeCalibration(150)).ok());
    ASSERT_TRUE(store_->UpsertTarget(MakeTarget(kZen4), MakeCalibration(120)).ok());
    absl::StatusOr<int64_t> job_id =
        store_->CreateJob(v1::JobSpec(), {{kMatmul512, 10}, {kConv, 10}});
    ASSERT_TRUE(job_id.ok()) << job_id.status();
    Insert(MakeTrial(*job_id, kMatmul512, kSapphireRapids, 8, v1::RESULT_STATUS_OK, 50));
    Insert(MakeTrial(*job_id, kMatmul512, kSapphireRapids, 16, v1::RESULT_STATUS_OK, 60));
    Insert(MakeTrial(*job_id, kMatmul512, kSapphireRapids, 32, v1::RESULT_STATUS_TIMEOUT, 90));
    Insert(MakeTrial(*job_id, kMatmul512, kZen4, 2, v1::RESULT_STATUS_OK, 40));
    Insert(MakeTrial(*job_id, kConv, kSapphireRapids, 4, v1::RESULT_STATUS_OK, 25));
    Insert(MakeTrial(*job_id, kConv, kZen4, 4, v1::RESULT_STATUS_CRASH, 25));
  }

  void Insert(const v1::TrialResult& trial) {
    const int tile_m = std::stoi(trial.candidate().knobs(1).value());
    absl::StatusOr<bool> inserted = store_->InsertResult(trial, ScriptFor(tile_m));
    ASSERT_TRUE(inserted.ok()) << inserted.status();
  }

  const ExportInfo info_{"0.1.0", "22.0.0git"};
  ScratchDir scratch_;
  std::unique_ptr<Store> store_;
};

TEST_F(ExportTest, ExportedFileReadsBackWithTheBestRows) {
  const std::string out = scratch_.Path("best.db");
  absl::StatusOr<uint32_t> entries = ExportBestStrategyDb(*store_, out, info_);
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ(*entries, 3u);

  absl::StatusOr<std::vector<ExportedStrategy>> rows = ReadExportedDb(out);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);

  const ExportedStrategy& conv = (*rows)[0];
  EXPECT_EQ(conv.problem, kConv);
  EXPECT_EQ(conv.family, "conv2d_nhwc_hwcf");
  EXPECT_EQ(conv.target_id, kSapphireRapids);
  EXPECT_EQ(conv.candidate_hash, MakeCandidate(4).hash());

  const ExportedStrategy& matmul = (*rows)[1];
  EXPECT_EQ(matmul.problem, kMatmul512);
  EXPECT_EQ(matmul.family, "matmul");
  EXPECT_EQ(matmul.target_id, kSapphireRapids);
  EXPECT_EQ(matmul.target_triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(matmul.target_cpu, "sapphirerapids");
  EXPECT_EQ(matmul.template_name, "matmul_pad_hoist");
  EXPECT_EQ(matmul.candidate_hash, MakeCandidate(16).hash());
  EXPECT_EQ(matmul.knobs_json, MakeCandidate(16).canonical_json());
  EXPECT_EQ(matmul.script, ScriptFor(16));
  EXPECT_EQ(matmul.gflops, 60);
  EXPECT_EQ(matmul.gbps, 15);
  EXPECT_EQ(matmul.roofline_gflops, 200);
  EXPECT_DOUBLE_EQ(matmul.fraction_of_roofline, 0.3);
  EXPECT_DOUBLE_EQ(matmul.median_s, 1.0 / 61);
  EXPECT_EQ(matmul.mtune_version, "0.1.0");
  EXPECT_EQ(matmul.mlir_version, "22.0.0git");
  EXPECT_GT(matmul.exported_unix_s, 1'600'000'000);

  EXPECT_EQ((*rows)[2].problem, kMatmul512);
  EXPECT_EQ((*rows)[2].target_id, kZen4);
  EXPECT_EQ((*rows)[2].candidate_hash, MakeCandidate(2).hash());
  EXPECT_EQ((*rows)[2].target_cpu, "znver4");

  // Only the final file is left behind: no temporaries, no WAL sidecars.
  EXPECT_EQ(FilesStartingWith(scratch_.dir(), "best.db"), 1);
}

TEST_F(ExportTest, RefusesToOverwriteUnlessAskedToReplace) {
  const std::string out = scratch_.Path("best.db");
  std::ofstream(out) << "precious";

  absl::StatusOr<uint32_t> refused = ExportBestStrategyDb(*store_, out, info_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(refused.status().message(), HasSubstr(out));
  EXPECT_EQ(ReadFile(out), "precious");

  absl::StatusOr<uint32_t> replaced =
      ExportBestStrategyDb(*store_, out, info_, ExistingFile::kReplace);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  absl::StatusOr<std::vector<ExportedStrategy>> rows = ReadExportedDb(out);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), 3u);

  EXPECT_EQ(FilesStartingWith(scratch_.dir(), "best.db"), 1) << "temporary file left behind";
}

TEST_F(ExportTest, BuiltBytesAreACompleteSqliteFile) {
  absl::StatusOr<ExportedDb> exported = BuildBestStrategyDb(*store_, info_);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->entries, 3u);
  ASSERT_GT(exported->sqlite_bytes.size(), 100u);
  EXPECT_EQ(exported->sqlite_bytes.substr(0, 16), std::string("SQLite format 3\0", 16));

  // What a client does with ExportResponse.sqlite_db: write it and read it.
  const std::string out = scratch_.Path("received.db");
  std::ofstream(out, std::ios::binary) << exported->sqlite_bytes;
  absl::StatusOr<std::vector<ExportedStrategy>> rows = ReadExportedDb(out);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), 3u);
}

TEST_F(ExportTest, EmptyStoreExportsAnEmptyTable) {
  absl::StatusOr<std::unique_ptr<Store>> empty = Store::Open(scratch_.Path("empty.db"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  const std::string out = scratch_.Path("best.db");
  absl::StatusOr<uint32_t> entries = ExportBestStrategyDb(**empty, out, info_);
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ(*entries, 0u);
  absl::StatusOr<std::vector<ExportedStrategy>> rows = ReadExportedDb(out);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, IsEmpty());
}

TEST_F(ExportTest, ReadingSomethingElseFailsClearly) {
  absl::StatusOr<std::vector<ExportedStrategy>> missing =
      ReadExportedDb(scratch_.Path("missing.db"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);

  absl::StatusOr<std::vector<ExportedStrategy>> store_file =
      ReadExportedDb(scratch_.Path("store.db"));
  ASSERT_FALSE(store_file.ok());
  EXPECT_EQ(store_file.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store_file.status().message(), HasSubstr("is an mtune store"));

  // And the other way round: an export is not a store.
  const std::string out = scratch_.Path("best.db");
  ASSERT_TRUE(ExportBestStrategyDb(*store_, out, info_).ok());
  absl::StatusOr<std::unique_ptr<Store>> as_store = Store::Open(out);
  ASSERT_FALSE(as_store.ok());
  EXPECT_THAT(as_store.status().message(), HasSubstr("best-strategy export"));
}

}  // namespace
}  // namespace mtune::db
