// Reading ground-truth tables: the format round-trips, malformed input names its
// line, and a candidate measured again (the confirmation pass) becomes one row
// whose figures are the medians of its OK measurements.
#include "bench/ground_truth_table.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::bench {
namespace {

class GroundTruthTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/mtune-gt-XXXXXX";
    const int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = name;
  }
  void TearDown() override { std::remove(path_.c_str()); }

  void Write(const std::vector<GroundTruthRow>& rows, const std::string& extra = "") {
    std::ofstream out(path_);
    out << "# mtune ground-truth table v1\n# knobs: a=1|2;b=x|y\n" << kGroundTruthColumns << "\n";
    for (const GroundTruthRow& row : rows) out << FormatRow(row) << "\n";
    out << extra;
  }

  std::string path_;
};

GroundTruthRow Row(uint64_t index, const std::string& status, double median_s, double gflops) {
  return {.index = index, .candidate_json = "{\"a\":1,\"b\":\"x\"}", .status = status,
          .median_s = median_s, .gflops = gflops, .compile_s = 0.5};
}

TEST_F(GroundTruthTableTest, RowsRoundTrip) {
  Write({Row(0, "OK", 0.002, 10), Row(3, "TIMEOUT", 0, 0)});
  auto table = ReadGroundTruth(path_);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0].candidate_json, "{\"a\":1,\"b\":\"x\"}");
  EXPECT_DOUBLE_EQ(table->rows[0].gflops, 10);
  EXPECT_EQ(table->rows[0].measurements, 1);
  EXPECT_EQ(table->rows[1].status, "TIMEOUT");
  EXPECT_EQ(table->space.knobs.size(), 2u);
}

TEST_F(GroundTruthTableTest, RepeatedMeasurementsMergeIntoMedians) {
  // Candidate 1: swept at 30 GFLOP/s (a lucky timing), confirmed at 10 and 12;
  // one confirmation of candidate 2 timed out and does not count.
  Write({Row(1, "OK", 0.001, 30), Row(2, "OK", 0.004, 8)},
        "# confirm: ...\n" + FormatRow(Row(1, "OK", 0.003, 10)) + "\n" + FormatRow(Row(2, "TIMEOUT", 0, 0)) +
            "\n" + FormatRow(Row(1, "OK", 0.0025, 12)) + "\n");
  auto table = ReadGroundTruth(path_);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0].index, 1u);
  EXPECT_EQ(table->rows[0].measurements, 3);
  EXPECT_DOUBLE_EQ(table->rows[0].gflops, 12);
  EXPECT_DOUBLE_EQ(table->rows[0].median_s, 0.0025);
  EXPECT_EQ(table->rows[1].measurements, 2);
  EXPECT_EQ(table->rows[1].status, "OK");
  EXPECT_DOUBLE_EQ(table->rows[1].gflops, 8);
}

TEST_F(GroundTruthTableTest, MalformedInputNamesTheLine) {
  Write({Row(0, "OK", 0.002, 10)}, "7,\"{}\",OK,not-a-number,1,1\n");
  auto table = ReadGroundTruth(path_);
  ASSERT_FALSE(table.ok());
  EXPECT_THAT(table.status().message(), ::testing::HasSubstr(":5: malformed number"));
  Write({Row(9, "OK", 0.002, 10)});
  EXPECT_THAT(ReadGroundTruth(path_).status().message(), ::testing::HasSubstr("outside the space"));
}

}  // namespace
}  // namespace mtune::bench
