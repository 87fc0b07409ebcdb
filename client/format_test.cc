#include "client/format.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::client {
namespace {

// Columns after the problem key start at the same place on every row, however long
// the keys (a 2-D convolution's key runs past 80 characters).
TEST(FormatProgress, AlignsColumnsPastTheLongestProblemKey) {
  mtune::v1::Job job;
  const std::vector<std::string> keys = {
      "matmul:m=64,n=64,k=64:f32",
      "conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32"};
  for (const std::string& key : keys) {
    auto* p = job.add_progress();
    p->set_problem(key);
    p->set_trials_done(3);
    p->set_trials_planned(16);
    p->set_best_gflops(12.5);
    p->set_best_trial(2);
  }
  std::vector<std::string> lines =
      absl::StrSplit(FormatProgress(job), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  const size_t column = lines[0].find("trials");
  ASSERT_NE(column, std::string::npos);
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_NE(lines[i].find(keys[i - 1]), std::string::npos) << lines[i];
    // "trials" is right-aligned in 13 characters, as is "3/16".
    EXPECT_EQ(lines[i].find("3/16") + 4, column + 6) << lines[i];
  }
}

TEST(FormatTemplates, OneLinePerProblemWithWhyWhereTheJobNamedNone) {
  mtune::v1::Job job;
  EXPECT_EQ(FormatTemplates(job), "");  // a coordinator that sends no templates
  job.mutable_spec()->add_problems("matmul:m=64,n=64,k=64:bf16");
  job.mutable_spec()->add_problems("matmul:m=64,n=64,k=64:f32");
  job.mutable_spec()->add_problem_templates("matmul_bf16_amx");
  job.mutable_spec()->add_problem_templates("matmul_packed");
  auto* bf16 = job.add_progress();
  bf16->set_problem("matmul:m=64,n=64,k=64:bf16");
  bf16->set_template_reason("preferred for this problem on the targets that can run it");
  job.add_progress()->set_problem("matmul:m=64,n=64,k=64:f32");
  std::vector<std::string> lines = absl::StrSplit(FormatTemplates(job), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], ::testing::EndsWith(
                            "template matmul_bf16_amx (preferred for this problem on the targets that can run it)"));
  EXPECT_THAT(lines[1], ::testing::EndsWith("template matmul_packed"));
  // With the register files the coordinator sized each problem's tiles for.
  for (auto [count, bytes] : {std::pair{32u, 64u}, std::pair{16u, 32u}}) {
    auto* registers = job.mutable_spec()->add_problem_registers();
    registers->set_count(count);
    registers->set_bytes(bytes);
  }
  lines = absl::StrSplit(FormatTemplates(job), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], ::testing::EndsWith("can run it); register tiles for 32 vector registers of 64 bytes"));
  EXPECT_THAT(lines[1],
              ::testing::EndsWith("template matmul_packed; register tiles for 16 vector registers of 32 bytes"));
}

TEST(FormatProgress, SaysWhatAProblemWaitsFor) {
  mtune::v1::Job job;
  auto* p = job.add_progress();
  p->set_problem("matmul:m=64,n=64,k=64:bf16");
  p->set_waiting_for("a worker with amx-tile, amx-bf16");
  EXPECT_THAT(FormatProgress(job), ::testing::HasSubstr("waiting for a worker with amx-tile, amx-bf16"));
}

TEST(FormatJobLine, SaysWhenTheJobIsAConfirmation) {
  mtune::v1::Job job;
  job.set_id(7);
  job.set_state(mtune::v1::JOB_STATE_RUNNING);
  job.set_trials_done(1);
  job.set_trials_total(3);
  EXPECT_EQ(FormatJobLine(job), "job 7 running: 1/3 trials, 0 failed");
  job.mutable_spec()->set_confirm_top(3);
  EXPECT_EQ(FormatJobLine(job), "job 7 (confirmation) running: 1/3 trials, 0 failed");
}

TEST(FormatJobs, OneRowPerJobNewestFirstAsListed) {
  mtune::v1::ListJobsResponse jobs;
  EXPECT_EQ(FormatJobs(jobs), "no jobs\n");
  mtune::v1::Job* confirmation = jobs.add_jobs();
  confirmation->set_id(12);
  confirmation->set_state(mtune::v1::JOB_STATE_RUNNING);
  confirmation->set_trials_done(3);
  confirmation->set_trials_total(8);
  confirmation->set_created_unix_s(1795500000);  // 2026-11-24 06:00 UTC
  confirmation->mutable_spec()->add_problems("matmul:m=512,n=512,k=512:f32");
  confirmation->mutable_spec()->set_search("random");
  confirmation->mutable_spec()->set_confirm_top(3);
  mtune::v1::Job* search = jobs.add_jobs();
  search->set_id(11);
  search->set_state(mtune::v1::JOB_STATE_SUCCEEDED);
  search->set_trials_done(40);
  search->set_trials_total(40);
  search->set_trials_failed(2);
  search->mutable_spec()->set_search("model");
  search->mutable_spec()->add_problems("copy_2d:m=64,n=64:f32");
  search->mutable_spec()->add_problems("transpose_2d:m=64,n=64:f32");
  search->mutable_spec()->add_problems("reduce_rows_2d:m=64,n=64:f32");
  const std::string text = FormatJobs(jobs);
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_THAT(lines[0], ::testing::StartsWith("job    state      trials      failed  search"));
  EXPECT_THAT(lines[1], ::testing::StartsWith("12     running    3/8         0       random     2026-11-24 06:00"));
  EXPECT_THAT(lines[1], ::testing::EndsWith("matmul:m=512,n=512,k=512:f32 (confirmation)"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("11     succeeded  40/40       2       model"));
  EXPECT_THAT(lines[2], ::testing::EndsWith("copy_2d:m=64,n=64:f32 and 2 more"));
}

TEST(ProgressLines, FitTheTerminalAndComeOncePerTenthInALog) {
  EXPECT_EQ(FitToWidth("short", 10), "short");
  EXPECT_EQ(FitToWidth("0123456789abc", 10), "0123456...");
  EXPECT_EQ(FitToWidth("0123456789abc", 2), "01");
  // 200 trials: a report at 19 -> 20 starts the second tenth, 20 -> 21 does not.
  EXPECT_TRUE(NewProgressStep(19, 20, 200));
  EXPECT_FALSE(NewProgressStep(20, 21, 200));
  EXPECT_TRUE(NewProgressStep(199, 200, 200));
  int lines = 0;
  for (uint32_t done = 1; done <= 200; ++done) lines += NewProgressStep(done - 1, done, 200);
  EXPECT_EQ(lines, 10);
  // Fewer trials than steps: every trial is a step of its own.
  EXPECT_TRUE(NewProgressStep(1, 2, 3));
  EXPECT_TRUE(NewProgressStep(0, 1, 0)) << "no total: every change";
}

TEST(FormatWorkers, ShowsEachLevelsCopyAndReadBandwidth) {
  mtune::v1::ListWorkersResponse workers;
  auto* w = workers.add_workers();
  w->set_name("w0");
  w->mutable_calibration()->set_peak_gflops_f32(230);
  auto* l2 = w->mutable_calibration()->add_bandwidth();
  l2->set_level("L2");
  l2->set_gbps(103.4);
  l2->set_read_gbps(188.1);
  auto* dram = w->mutable_calibration()->add_bandwidth();
  dram->set_level("DRAM");
  dram->set_gbps(14.5);  // an older worker: no read figure
  EXPECT_THAT(FormatWorkers(workers), ::testing::HasSubstr("    GB/s copy / read:  L2 103.4 / 188.1  DRAM 14.5\n"));
  EXPECT_THAT(FormatWorkers(workers), ::testing::Not(::testing::HasSubstr("streaming")));
  EXPECT_THAT(FormatWorkers(workers), ::testing::Not(::testing::HasSubstr("streams")));

  dram->set_streaming_stores(true);
  EXPECT_THAT(FormatWorkers(workers),
              ::testing::HasSubstr("  DRAM 14.5*\n    (* copied faster with streaming stores than with "
                                   "ordinary ones)\n"));

  l2->set_copy_streams(1);
  l2->set_read_streams(4);
  dram->set_copy_streams(8);
  EXPECT_THAT(FormatWorkers(workers),
              ::testing::HasSubstr("  L2 103.4 / 188.1x4  DRAM 14.5*x8\n"
                                   "    (* copied faster with streaming stores than with ordinary ones)\n"
                                   "    (xN: faster over N streams side by side than over one)\n"));
}

TEST(WorkersToJson, GivesEachWorkersTargetAndCalibration) {
  mtune::v1::ListWorkersResponse workers;
  auto* w = workers.add_workers();
  w->set_name("node1/cpu3");
  w->set_cpu(3);
  w->set_state("busy");
  w->set_current_task_id(42);
  w->set_tasks_done(7);
  w->mutable_target()->set_id("cpu:x86_64-pc-linux-gnu:znver4");
  w->mutable_target()->set_cpu("znver4");
  w->mutable_calibration()->set_peak_gflops_f32(116.2);
  w->mutable_calibration()->set_peaks_measured_unix_s(1800000000.5);
  auto* dram = w->mutable_calibration()->add_bandwidth();
  dram->set_level("DRAM");
  dram->set_gbps(34.3);
  dram->set_read_gbps(22.1);
  dram->set_streaming_stores(true);
  dram->set_copy_streams(8);
  dram->set_read_streams(4);
  const nlohmann::json json = WorkersToJson(workers);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["name"], "node1/cpu3");
  EXPECT_EQ(json[0]["cpu"], 3);
  EXPECT_EQ(json[0]["state"], "busy");
  EXPECT_EQ(json[0]["current_task_id"], 42);
  EXPECT_EQ(json[0]["tasks_done"], 7);
  EXPECT_EQ(json[0]["target"]["id"], "cpu:x86_64-pc-linux-gnu:znver4");
  EXPECT_EQ(json[0]["target"]["cpu"], "znver4");
  EXPECT_DOUBLE_EQ(json[0]["calibration"]["peak_gflops_f32"], 116.2);
  EXPECT_DOUBLE_EQ(json[0]["calibration"]["peaks_measured_unix_s"], 1800000000.5);
  ASSERT_EQ(json[0]["calibration"]["bandwidth"].size(), 1u);
  EXPECT_EQ(json[0]["calibration"]["bandwidth"][0]["level"], "DRAM");
  EXPECT_DOUBLE_EQ(json[0]["calibration"]["bandwidth"][0]["gbps"], 34.3);
  EXPECT_DOUBLE_EQ(json[0]["calibration"]["bandwidth"][0]["read_gbps"], 22.1);
  EXPECT_EQ(json[0]["calibration"]["bandwidth"][0]["streaming_stores"], true);
  EXPECT_EQ(json[0]["calibration"]["bandwidth"][0]["copy_streams"], 8);
  EXPECT_EQ(json[0]["calibration"]["bandwidth"][0]["read_streams"], 4);
  EXPECT_TRUE(WorkersToJson({}).is_array());
  EXPECT_TRUE(WorkersToJson({}).empty());
}

TEST(RooflineText, ABandwidthBoundResultNamesTheBandwidthThatBoundsIt) {
  mtune::v1::Result r;
  r.set_fraction_of_roofline(0.96);
  r.set_roofline_gflops(47.7);
  r.set_roofline_level("L2");
  EXPECT_EQ(RooflineText("reduce_rows_2d:m=300,n=512:f32", r), "0.96 of 47.7 GFLOP/s (footprint fits L2)")
      << "a stored result";
  r.set_roofline_gbps(190.5);
  r.mutable_footprint_bandwidth()->set_gbps(104.2);
  r.mutable_footprint_bandwidth()->set_read_gbps(186.9);
  EXPECT_EQ(RooflineText("reduce_rows_2d:m=300,n=512:f32", r),
            "0.96 of 47.7 GFLOP/s: 190.5 GB/s of its reads and writes at its footprint (copy 104.2, "
            "read 186.9 GB/s there; fits L2)");
}

TEST(FormatBest, SaysHowOftenTheCandidateWasMeasured) {
  mtune::v1::BestStrategy best;
  best.set_problem("matmul:m=64,n=64,k=64:f32");
  best.set_measurements(1);
  EXPECT_THAT(FormatBest(best),
              ::testing::HasSubstr("measured  once (`mtune confirm --problem matmul:m=64,n=64,k=64:f32`"));
  best.set_measurements(3);
  EXPECT_THAT(FormatBest(best), ::testing::HasSubstr("measured  3 times; the figures above are their median"));
  best.set_measurements(0);  // not counted (older coordinators)
  EXPECT_THAT(FormatBest(best), ::testing::Not(::testing::HasSubstr("measured")));
}

TEST(FormatBest, SaysWhenAnotherTextOfTheTemplateMeasuredIt) {
  mtune::v1::BestStrategy best;
  best.set_problem("matmul:m=64,n=64,k=64:f32");
  best.mutable_candidate()->set_template_name("matmul_packed");
  best.set_measurements(1);
  best.set_other_template_text(true);
  const std::string text = FormatBest(best);
  EXPECT_THAT(text, ::testing::HasSubstr("measured with another text of template matmul_packed"));
  EXPECT_THAT(text, ::testing::HasSubstr("`mtune submit --problem matmul:m=64,n=64,k=64:f32`"));
  // A confirmation would refuse such a candidate: not offered.
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("mtune confirm")));
  best.set_other_template_text(false);
  EXPECT_THAT(FormatBest(best), ::testing::Not(::testing::HasSubstr("another text")));
}

TEST(FormatResults, AlignsColumnsPastTheLongestProblemKey) {
  mtune::v1::ListResultsResponse results;
  for (const char* key : {"copy_2d:m=8,n=8:f32",
                          "conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32"}) {
    auto* t = results.add_results();
    t->set_job_id(1);
    t->set_problem(key);
    t->mutable_result()->set_status(mtune::v1::RESULT_STATUS_OK);
  }
  std::vector<std::string> lines =
      absl::StrSplit(FormatResults(results), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  const size_t column = lines[0].find("status");
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i].find(" ok ") + 1, column) << lines[i];
}

// A transpose has no arithmetic: its figures are GB/s wherever the CLI shows a best.
TEST(FormatFigures, AProblemWithoutArithmeticIsShownInGbps) {
  const std::string transpose = "transpose_2d:m=100,n=130:f32";
  mtune::v1::BestStrategy best;
  best.set_problem(transpose);
  best.mutable_result()->set_gbps(61.3);
  best.mutable_result()->set_fraction_of_roofline(0.5);
  best.mutable_result()->set_roofline_level("L2");
  EXPECT_THAT(FormatBest(best),
              ::testing::HasSubstr("roofline  0.50 of the copy bandwidth at its footprint, 122.6 GB/s (fits L2)"));
  best.mutable_result()->set_roofline_gbps(120);
  EXPECT_THAT(FormatBest(best), ::testing::HasSubstr("0.50 of the copy bandwidth at its footprint, 120.0 GB/s"));

  mtune::v1::Job job;
  job.set_id(3);
  job.set_state(mtune::v1::JOB_STATE_SUCCEEDED);
  *job.add_best() = best;
  EXPECT_THAT(FormatJobLine(job), ::testing::HasSubstr(transpose + " best 61.3 GB/s (0.50 of roofline)"));

  auto* progress = job.add_progress();
  progress->set_problem(transpose);
  progress->set_trials_done(4);
  progress->set_unit("GB/s");
  progress->set_best_figure(61.3);
  progress->set_best_trial(3);
  const std::string table = FormatProgress(job);
  EXPECT_THAT(table, ::testing::HasSubstr("61.3 GB/s (#3)"));
  EXPECT_THAT(table, ::testing::Not(::testing::HasSubstr(" - "))) << table;

  mtune::v1::ConvergenceResponse convergence;
  auto* problem = convergence.add_problems();
  problem->set_problem(transpose);
  problem->set_unit("GB/s");
  for (double gbps : {20.0, 0.0, 61.3}) {
    problem->add_figures(gbps);
    problem->add_gflops(0);
  }
  const std::string chart = FormatConvergence(convergence);
  EXPECT_THAT(chart, ::testing::Not(::testing::HasSubstr("no successful trial"))) << chart;
  EXPECT_THAT(chart, ::testing::HasSubstr("95% of the best at trial 3, 99% at trial 3, best 61.3 GB/s"));
}

}  // namespace
}  // namespace mtune::client
