#include "db/strategy_db.h"

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "db/mtune_strategy_db.h"
#include "db/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

extern "C" int mtune_c_smoke_lookup(const char* path, const char* problem, const char* target,
                                    int flags, char* out, int out_size);

namespace mtune::db {
namespace {

using ::mtune::db::testing::ScratchDir;
using ::testing::HasSubstr;

constexpr char kZen5[] = "cpu:x86_64-pc-linux-gnu:znver5";
constexpr char kSpr[] = "cpu:x86_64-pc-linux-gnu:sapphirerapids";

ExportedStrategy Row(const std::string& problem, const std::string& target, double gflops,
                     const std::string& mlir_version = "22.1.8") {
  ExportedStrategy row;
  row.problem = problem;
  row.family = problem.substr(0, problem.find(':'));
  row.target_id = target;
  row.target_triple = "x86_64-pc-linux-gnu";
  row.target_cpu = target.substr(target.rfind(':') + 1);
  row.template_name = "t";
  row.knobs_json = R"({"tile":8})";
  row.candidate_hash = "00000000000000aa";
  row.script = "script for " + problem;
  row.gflops = gflops;
  row.gbps = gflops / 10;
  row.fraction_of_roofline = 0.5;
  row.roofline_gflops = 2 * gflops;
  row.median_s = 1e-3;
  row.mtune_version = "0.1.0";
  row.mlir_version = mlir_version;
  row.exported_unix_s = 1'700'000'000;
  return row;
}

class StrategyDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = scratch_.Path("best.sqlite");
    std::vector<ExportedStrategy> rows = {
        Row("matmul:m=512,n=512,k=512:f32", kZen5, 200),
        Row("matmul:m=256,n=256,k=256:f32", kZen5, 150),
        Row("matmul:m=256,n=256,k=256:f32", kSpr, 140),
        Row("matmul:m=1024,n=1024,k=1024:f64", kZen5, 90),
        Row("conv_1d_nwc_wcf:n=1,w=64,c=8,kw=3,f=16,sw=1,dw=1:f32", kZen5, 50),
        Row("matmul:m=64,n=64,k=64:f32", kZen5, 60, "21.1.0"),
    };
    absl::StatusOr<uint32_t> written = WriteExportedDb(rows, path_);
    ASSERT_TRUE(written.ok()) << written.status();
    absl::StatusOr<std::unique_ptr<StrategyDb>> db = StrategyDb::Open(path_, {"22.1.8"});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }

  ScratchDir scratch_;
  std::string path_;
  std::unique_ptr<StrategyDb> db_;
};

TEST_F(StrategyDbTest, ExactLookupReturnsTheScriptAndFigures) {
  absl::StatusOr<StrategyAnswer> answer = db_->Lookup("matmul:m=256,n=256,k=256:f32", kSpr);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->match, MatchKind::kExact);
  EXPECT_FALSE(answer->stale);
  EXPECT_EQ(answer->note, "");
  EXPECT_EQ(answer->entry.problem, "matmul:m=256,n=256,k=256:f32");
  EXPECT_EQ(answer->entry.target_id, kSpr);
  EXPECT_EQ(answer->entry.script, "script for matmul:m=256,n=256,k=256:f32");
  EXPECT_EQ(answer->entry.gflops, 140);
  EXPECT_EQ(answer->entry.mlir_version, "22.1.8");
  EXPECT_EQ(answer->entry.mtune_version, "0.1.0");
}

TEST_F(StrategyDbTest, MissingKeyIsNotFoundAndSaysWhatExists) {
  absl::StatusOr<StrategyAnswer> answer = db_->Lookup("matmul:m=300,n=256,k=256:f32", kSpr);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(answer.status().message(), HasSubstr("no entry for matmul:m=300,n=256,k=256:f32"));
  EXPECT_THAT(answer.status().message(), HasSubstr("nearest-shape fallback"));

  absl::StatusOr<StrategyAnswer> other_target =
      db_->Lookup("matmul:m=512,n=512,k=512:f32", "cpu:riscv64:none");
  EXPECT_EQ(other_target.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StrategyDbTest, MalformedKeyIsInvalidArgument) {
  for (const char* key : {"matmul", "matmul:m=0,n=1,k=1:f32", "matmul:m=x:f32", ":m=1:f32"}) {
    absl::StatusOr<StrategyAnswer> answer = db_->Lookup(key, kZen5);
    EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument) << key;
  }
  EXPECT_EQ(db_->Lookup("matmul:m=1,n=1,k=1:f32", "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StrategyDbTest, NearestShapeFallbackIsFlagged) {
  absl::StatusOr<StrategyAnswer> answer =
      db_->Lookup("matmul:m=500,n=520,k=480:f32", kZen5, Fallback::kNearestShape);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->match, MatchKind::kNearestShape);
  EXPECT_EQ(answer->requested_problem, "matmul:m=500,n=520,k=480:f32");
  EXPECT_EQ(answer->entry.problem, "matmul:m=512,n=512,k=512:f32");
  EXPECT_GT(answer->shape_distance, 0);
  EXPECT_THAT(answer->note, HasSubstr("nearest tuned shape matmul:m=512,n=512,k=512:f32"));

  // Closer to 256 than to 512 in log space; the f64 and stale 64^3 entries
  // stay comparable only where the type matches.
  answer = db_->Lookup("matmul:m=300,n=300,k=300:f32", kZen5, Fallback::kNearestShape);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->entry.problem, "matmul:m=256,n=256,k=256:f32");

  answer = db_->Lookup("matmul:m=8,n=8,k=8:f64", kZen5, Fallback::kNearestShape);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->entry.problem, "matmul:m=1024,n=1024,k=1024:f64");
}

TEST_F(StrategyDbTest, FallbackNeverCrossesStridesTypesOrTargets) {
  absl::StatusOr<StrategyAnswer> stride2 = db_->Lookup(
      "conv_1d_nwc_wcf:n=1,w=64,c=8,kw=3,f=16,sw=2,dw=1:f32", kZen5, Fallback::kNearestShape);
  EXPECT_EQ(stride2.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(stride2.status().message(), HasSubstr("no comparable shape"));

  absl::StatusOr<StrategyAnswer> bf16 =
      db_->Lookup("matmul:m=512,n=512,k=512:bf16", kZen5, Fallback::kNearestShape);
  EXPECT_EQ(bf16.status().code(), absl::StatusCode::kNotFound);

  absl::StatusOr<StrategyAnswer> other_target =
      db_->Lookup("matmul:m=500,n=500,k=500:f32", "cpu:other", Fallback::kNearestShape);
  EXPECT_EQ(other_target.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StrategyDbTest, EntryFromAnotherMlirMajorIsStale) {
  absl::StatusOr<StrategyAnswer> answer = db_->Lookup("matmul:m=64,n=64,k=64:f32", kZen5);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->stale);
  EXPECT_THAT(answer->note, HasSubstr("stale: measured with MLIR 21.1.0"));

  // A reader that does not say its version gets no staleness verdict.
  absl::StatusOr<std::unique_ptr<StrategyDb>> unversioned = StrategyDb::Open(path_);
  ASSERT_TRUE(unversioned.ok());
  answer = (*unversioned)->Lookup("matmul:m=64,n=64,k=64:f32", kZen5);
  ASSERT_TRUE(answer.ok());
  EXPECT_FALSE(answer->stale);
}

TEST_F(StrategyDbTest, TargetsAndEntries) {
  absl::StatusOr<std::vector<std::string>> targets = db_->Targets();
  ASSERT_TRUE(targets.ok());
  EXPECT_THAT(*targets, ::testing::ElementsAre(kSpr, kZen5));
  absl::StatusOr<std::vector<ExportedStrategy>> zen5 = db_->Entries(kZen5);
  ASSERT_TRUE(zen5.ok());
  EXPECT_EQ(zen5->size(), 5u);
  absl::StatusOr<std::vector<ExportedStrategy>> all = db_->Entries("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 6u);
}

TEST_F(StrategyDbTest, ConcurrentLookupsAgree) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto answer = db_->Lookup(i % 2 ? "matmul:m=512,n=512,k=512:f32" : "matmul:m=500,n=500,k=500:f32",
                                  kZen5, Fallback::kNearestShape);
        if (!answer.ok() || answer->entry.problem != "matmul:m=512,n=512,k=512:f32") ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(StrategyDbOpenTest, MissingCorruptAndForeignFilesFailClearly) {
  ScratchDir scratch;
  absl::StatusOr<std::unique_ptr<StrategyDb>> missing = StrategyDb::Open(scratch.Path("no.sqlite"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));

  const std::string garbage = scratch.Path("garbage.sqlite");
  std::ofstream(garbage) << std::string(4096, 'x');
  absl::StatusOr<std::unique_ptr<StrategyDb>> corrupt = StrategyDb::Open(garbage);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(corrupt.status().message(), HasSubstr(garbage));

  // A valid export cut in half: SQLite notices when the lookup reads the page.
  const std::string good = scratch.Path("good.sqlite");
  std::vector<ExportedStrategy> rows;
  for (int m = 1; m <= 400; ++m)
    rows.push_back(Row("matmul:m=" + std::to_string(m) + ",n=8,k=8:f32", kZen5, m));
  ASSERT_TRUE(WriteExportedDb(rows, good).ok());
  const std::string truncated = scratch.Path("truncated.sqlite");
  std::filesystem::copy_file(good, truncated);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(good) / 2);
  absl::StatusOr<std::unique_ptr<StrategyDb>> half = StrategyDb::Open(truncated);
  if (half.ok()) {
    bool any_error = false;
    for (int m = 1; m <= 400 && !any_error; m += 7) {
      auto answer = (*half)->Lookup("matmul:m=" + std::to_string(m) + ",n=8,k=8:f32", kZen5);
      any_error = !answer.ok() && answer.status().code() != absl::StatusCode::kNotFound;
    }
    EXPECT_TRUE(any_error) << "a truncated file answered every lookup";
  }

  // Newer schema: what a future mtune would write.
  const std::string newer = scratch.Path("newer.sqlite");
  std::filesystem::copy_file(good, newer);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(newer.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "INSERT INTO schema_version (version, description, applied_unix_s) "
                         "VALUES (2, 'future', 0)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  absl::StatusOr<std::unique_ptr<StrategyDb>> future = StrategyDb::Open(newer);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(future.status().message(), HasSubstr("schema version 2, newer than version 1"));
}

TEST_F(StrategyDbTest, CInterface) {
  char out[512];
  ASSERT_EQ(mtune_c_smoke_lookup(path_.c_str(), "matmul:m=512,n=512,k=512:f32", kZen5,
                                 MTUNE_LOOKUP_EXACT, out, sizeof out),
            0)
      << out;
  EXPECT_STREQ(out,
               "matmul:m=512,n=512,k=512:f32|script for matmul:m=512,n=512,k=512:f32|exact=1|"
               "stale=0|200.0|");

  ASSERT_EQ(mtune_c_smoke_lookup(path_.c_str(), "matmul:m=500,n=512,k=512:f32", kZen5,
                                 MTUNE_LOOKUP_NEAREST_SHAPE, out, sizeof out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("exact=0"));
  EXPECT_THAT(out, HasSubstr("nearest tuned shape"));

  EXPECT_EQ(mtune_c_smoke_lookup(path_.c_str(), "matmul:m=500,n=512,k=512:f32", kZen5,
                                 MTUNE_LOOKUP_EXACT, out, sizeof out),
            MTUNE_NOT_FOUND);
  EXPECT_THAT(out, HasSubstr("lookup 1 "));
  EXPECT_EQ(mtune_c_smoke_lookup(path_.c_str(), "nonsense", kZen5, MTUNE_LOOKUP_EXACT, out,
                                 sizeof out),
            MTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(mtune_c_smoke_lookup(scratch_.Path("missing").c_str(), "matmul:m=1,n=1,k=1:f32", kZen5,
                                 MTUNE_LOOKUP_EXACT, out, sizeof out),
            MTUNE_NOT_FOUND);
  const std::string garbage = scratch_.Path("garbage");
  std::ofstream(garbage) << std::string(4096, 'x');
  EXPECT_EQ(mtune_c_smoke_lookup(garbage.c_str(), "matmul:m=1,n=1,k=1:f32", kZen5,
                                 MTUNE_LOOKUP_EXACT, out, sizeof out),
            MTUNE_BAD_DATABASE);
}

}  // namespace
}  // namespace mtune::db
