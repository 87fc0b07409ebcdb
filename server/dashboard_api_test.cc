// The dashboard's JSON endpoints over an in-memory DashboardSource: trial
// order, failures, ETA and error answers, which a short real run rarely covers
// (tests/dashboard_test.cc checks the same API against a real coordinator).
#include "server/dashboard_api.h"

#include <algorithm>
#include <map>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "proto/enum_words.h"

namespace mtune::server {
namespace {

using nlohmann::json;

constexpr char kProblem[] = "matmul:m=64,n=64,k=64:f32";

class FakeSource : public DashboardSource {
 public:
  absl::StatusOr<std::vector<int64_t>> JobIds() override {
    std::vector<int64_t> ids;
    for (const auto& [id, job] : jobs) ids.push_back(id);
    return ids;
  }
  absl::StatusOr<mtune::v1::Job> Job(int64_t job_id) override {
    auto it = jobs.find(job_id);
    if (it == jobs.end()) return absl::NotFoundError("job " + std::to_string(job_id) + " does not exist");
    return it->second;
  }
  absl::StatusOr<std::vector<mtune::v1::TrialResult>> Results(int64_t job_id,
                                                              const std::string& problem,
                                                              uint32_t limit) override {
    std::vector<mtune::v1::TrialResult> out;
    for (const auto& t : best_first)
      if ((job_id == 0 || t.job_id() == job_id) && (problem.empty() || t.problem() == problem))
        out.push_back(t);
    if (limit > 0 && out.size() > limit) out.resize(limit);
    return out;
  }
  absl::StatusOr<std::vector<std::string>> TrialOrder(int64_t job_id,
                                                      const std::string& problem) override {
    return order[{job_id, problem}];
  }
  std::vector<mtune::v1::WorkerInfo> Workers() override { return workers; }
  std::optional<mtune::v1::Task> LeasedTask(int64_t task_id) override {
    auto it = leased.find(task_id);
    if (it == leased.end()) return std::nullopt;
    return it->second;
  }
  absl::StatusOr<std::pair<mtune::v1::Target, mtune::v1::Calibration>> Target(
      const std::string& target_id) override {
    auto it = targets.find(target_id);
    if (it == targets.end()) return absl::NotFoundError("target '" + target_id + "' is not known");
    return it->second;
  }

  // Adds a trial: stored now (storage order), listed best first like the store.
  void AddTrial(int64_t job_id, const std::string& hash, mtune::v1::ResultStatus status,
                double gflops) {
    mtune::v1::TrialResult t;
    t.set_job_id(job_id);
    t.set_problem(kProblem);
    t.set_target_id("cpu:test");
    t.set_worker_name("w0");
    t.mutable_candidate()->set_hash(hash);
    t.mutable_candidate()->set_template_name("matmul_2level");
    auto* knob = t.mutable_candidate()->add_knobs();
    knob->set_name("tile_m1");
    knob->set_value("16");
    t.mutable_result()->set_status(status);
    t.mutable_result()->set_gflops(gflops);
    t.mutable_result()->set_gbps(gflops / 8);
    if (status != mtune::v1::RESULT_STATUS_OK) t.mutable_result()->set_error("failed: " + hash);
    order[{job_id, kProblem}].push_back(hash);
    best_first.push_back(t);
    std::stable_sort(best_first.begin(), best_first.end(), [](const auto& a, const auto& b) {
      const bool a_ok = a.result().status() == mtune::v1::RESULT_STATUS_OK;
      const bool b_ok = b.result().status() == mtune::v1::RESULT_STATUS_OK;
      if (a_ok != b_ok) return a_ok;
      return a_ok && a.result().gflops() > b.result().gflops();
    });
  }

  std::map<int64_t, mtune::v1::Job> jobs;
  std::vector<mtune::v1::TrialResult> best_first;
  std::map<std::pair<int64_t, std::string>, std::vector<std::string>> order;
  std::vector<mtune::v1::WorkerInfo> workers;
  std::map<int64_t, mtune::v1::Task> leased;
  std::map<std::string, std::pair<mtune::v1::Target, mtune::v1::Calibration>> targets;
};

mtune::v1::Job MakeJob(int64_t id, const std::string& search, mtune::v1::JobState state) {
  mtune::v1::Job job;
  job.set_id(id);
  job.set_state(state);
  job.mutable_spec()->add_problems(kProblem);
  job.mutable_spec()->add_problem_templates("matmul_packed");
  job.mutable_spec()->set_search(search);
  job.mutable_spec()->set_trials(10);
  job.set_trials_total(10);
  return job;
}

class DashboardApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_.jobs[1] = MakeJob(1, "random", mtune::v1::JOB_STATE_RUNNING);
    // Storage order: 10, fail, 30, 20, crash. Best first: 30, 20, 10, fail, crash.
    source_.AddTrial(1, "a", mtune::v1::RESULT_STATUS_OK, 10);
    source_.AddTrial(1, "b", mtune::v1::RESULT_STATUS_COMPILE_ERROR, 0);
    source_.AddTrial(1, "c", mtune::v1::RESULT_STATUS_OK, 30);
    source_.AddTrial(1, "d", mtune::v1::RESULT_STATUS_OK, 20);
    source_.AddTrial(1, "e", mtune::v1::RESULT_STATUS_CRASH, 0);
    source_.jobs[1].set_trials_done(5);
    source_.jobs[1].set_trials_failed(2);
    mtune::v1::Calibration calibration;
    calibration.set_peak_gflops_f32(100);
    calibration.set_peaks_measured_unix_s(1800000000);
    auto* l1 = calibration.add_bandwidth();
    l1->set_level("L1");
    l1->set_gbps(200);
    mtune::v1::Target target;
    target.set_id("cpu:test");
    source_.targets["cpu:test"] = {target, calibration};
  }

  FakeSource source_;
  DashboardApi api_{&source_};
};

TEST_F(DashboardApiTest, JobDetailCountsFailuresAndConvergesInStorageOrder) {
  ApiResponse r = api_.Job("1");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const json& problem = r.body["problem_details"][0];
  EXPECT_EQ(problem["trials"], 5);
  EXPECT_EQ(problem["ok"], 3);
  EXPECT_EQ(problem["failed_by_status"], (json{{"compile_error", 1}, {"crash", 1}}));
  EXPECT_EQ(r.body["failed_by_status"], (json{{"compile_error", 1}, {"crash", 1}}));
  EXPECT_EQ(problem["template"], "matmul_packed") << "the template stored for the problem";
  // 64^3 f32 matmul: 2*64^3 FLOP over 4 * 4 * 64^2 compulsory bytes.
  EXPECT_DOUBLE_EQ(problem["figures"]["arithmetic_intensity"].get<double>(), 8.0);
  std::vector<json> best_so_far;
  for (const json& p : problem["convergence"]) best_so_far.push_back(p["best_so_far"]);
  EXPECT_EQ(best_so_far, (std::vector<json>{10.0, 10.0, 30.0, 30.0, 30.0}));
  EXPECT_TRUE(problem["convergence"][1]["gflops"].is_null()) << "a failure has no GFLOP/s";
  EXPECT_EQ(problem["convergence"][4]["status"], "crash");
  EXPECT_DOUBLE_EQ(r.body["targets"]["cpu:test"]["calibration"]["peak_gflops_f32"].get<double>(),
                   100);
  EXPECT_DOUBLE_EQ(r.body["targets"]["cpu:test"]["calibration"]["peaks_measured_unix_s"].get<double>(),
                   1800000000);
}

TEST_F(DashboardApiTest, ResultsAreBestFirstWithTheirTrialNumbers) {
  ApiResponse r = api_.Results({{"job", "1"}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  std::vector<int> trials;
  for (const json& t : r.body["results"]) trials.push_back(t["trial"]);
  EXPECT_EQ(trials, (std::vector<int>{3, 4, 1, 2, 5}));
  EXPECT_EQ(r.body["results"][0]["gflops"], 30.0);
  EXPECT_TRUE(r.body["results"][3]["gflops"].is_null());
  EXPECT_EQ(r.body["results"][3]["status"], "compile_error");
  EXPECT_EQ(r.body["results"][3]["error"], "failed: b");
  EXPECT_EQ(r.body["results"][0]["knobs"], (json{{"tile_m1", "16"}}));

  ApiResponse limited = api_.Results({{"job", "1"}, {"limit", "2"}});
  ASSERT_EQ(limited.status, 200);
  EXPECT_EQ(limited.body["results"].size(), 2u);
}

TEST_F(DashboardApiTest, BadIdsAndParametersAreClearErrors) {
  struct Case {
    ApiResponse response;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {api_.Job("abc"), 400, "job id must be a positive integer, got 'abc'"},
      {api_.Job("-3"), 400, "positive integer"},
      {api_.Job("0"), 400, "positive integer"},
      {api_.Job("42"), 404, "job 42 does not exist"},
      {api_.Results({}), 400, "missing parameter 'job'"},
      {api_.Results({{"job", "x"}}), 400, "parameter 'job' must be a positive integer"},
      {api_.Results({{"job", "42"}}), 404, "job 42 does not exist"},
      {api_.Results({{"job", "1"}, {"limit", "many"}}), 400, "parameter 'limit'"},
      {api_.Results({{"job", "1"}, {"sort", "gflops"}}), 400, "unknown parameter 'sort'"},
      {api_.Results({{"job", "1"}, {"problem", "copy_2d:m=4,n=4:f32"}}), 404, "has no problem"},
      {api_.Target(""), 400, "missing target id"},
      {api_.Target("cpu:nope"), 404, "target 'cpu:nope' is not known"},
      {api_.Convergence({}), 400, "missing parameter 'problem'"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.response.status, c.status) << c.response.body.dump();
    EXPECT_EQ(c.response.body["status"], c.status);
    EXPECT_NE(c.response.body["error"].get<std::string>().find(c.message), std::string::npos)
        << c.response.body.dump();
  }
}

TEST(DashboardEta, ExtrapolatesTheRateOfARunningJobOnly) {
  mtune::v1::Job job = MakeJob(1, "random", mtune::v1::JOB_STATE_RUNNING);
  job.set_created_unix_s(1000);
  EXPECT_FALSE(EstimateEtaSeconds(job, 1100).has_value()) << "no trial done: no rate yet";
  job.set_trials_done(2);
  ASSERT_TRUE(EstimateEtaSeconds(job, 1100).has_value());
  EXPECT_DOUBLE_EQ(*EstimateEtaSeconds(job, 1100), 400.0);  // 50 s per trial, 8 to go
  job.set_state(mtune::v1::JOB_STATE_SUCCEEDED);
  EXPECT_FALSE(EstimateEtaSeconds(job, 1100).has_value());
  EXPECT_TRUE(JobSummaryJson(job, 1100)["eta_s"].is_null());
}

TEST_F(DashboardApiTest, JobsListsProgressAndBest) {
  auto* best = source_.jobs[1].add_best();
  best->set_problem(kProblem);
  best->mutable_result()->set_gflops(30);
  best->mutable_result()->set_fraction_of_roofline(0.3);
  source_.jobs[1].set_created_unix_s(
      static_cast<int64_t>(absl::ToUnixSeconds(absl::Now())) - 50);
  ApiResponse r = api_.Jobs();
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.body["jobs"].size(), 1u);
  const json& job = r.body["jobs"][0];
  EXPECT_EQ(job["state"], "running");
  EXPECT_EQ(job["trials_done"], 5);
  EXPECT_EQ(job["trials_failed"], 2);
  EXPECT_EQ(job["best"][0]["gflops"], 30.0);
  EXPECT_GT(job["eta_s"].get<double>(), 0);
  EXPECT_TRUE(job["finished_unix_s"].is_null());
}

TEST_F(DashboardApiTest, WorkersShowTheirCurrentTask) {
  mtune::v1::WorkerInfo w;
  w.set_name("w0");
  w.set_cpu(3);
  w.set_state("busy");
  w.set_current_task_id(7);
  w.mutable_calibration()->set_peak_gflops_f32(100);
  source_.workers.push_back(w);
  mtune::v1::Task task;
  task.set_task_id(7);
  task.set_job_id(1);
  task.set_problem(kProblem);
  task.mutable_candidate()->set_hash("f");
  source_.leased[7] = task;
  ApiResponse r = api_.Workers();
  ASSERT_EQ(r.status, 200);
  const json& worker = r.body["workers"][0];
  EXPECT_EQ(worker["cpu"], 3);
  EXPECT_EQ(worker["state"], "busy");
  EXPECT_EQ(worker["current_task"]["job_id"], 1);
  EXPECT_EQ(worker["current_task"]["problem"], kProblem);
  EXPECT_EQ(worker["calibration"]["peak_gflops_f32"], 100.0);
}

TEST_F(DashboardApiTest, ConvergenceHasOneLinePerJobOnTheProblem) {
  source_.jobs[2] = MakeJob(2, "exhaustive", mtune::v1::JOB_STATE_SUCCEEDED);
  source_.AddTrial(2, "x", mtune::v1::RESULT_STATUS_OK, 25);
  ApiResponse r = api_.Convergence({{"problem", kProblem}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  ASSERT_EQ(r.body["jobs"].size(), 2u);
  EXPECT_EQ(r.body["jobs"][0]["job_id"], 1);
  EXPECT_EQ(r.body["jobs"][0]["search"], "random");
  EXPECT_EQ(r.body["jobs"][0]["points"].size(), 5u);
  EXPECT_EQ(r.body["jobs"][1]["search"], "exhaustive");
  EXPECT_EQ(r.body["jobs"][1]["points"][0]["best_so_far"], 25.0);
  EXPECT_EQ(r.body["unit"], "GFLOP/s");
}

// A transpose has no arithmetic: its convergence goes by GB/s, not by the 0 GFLOP/s
// every one of its results has.
TEST(DashboardConvergence, AProblemWithoutArithmeticConvergesInGbps) {
  std::vector<mtune::v1::TrialResult> trials(3);
  const double gbps[] = {10, 30, 20};
  for (int i = 0; i < 3; ++i) {
    trials[i].mutable_result()->set_status(mtune::v1::RESULT_STATUS_OK);
    trials[i].mutable_result()->set_gbps(gbps[i]);
  }
  const json points = BestSoFar("transpose_2d:m=64,n=64:f32", {&trials[0], &trials[1], &trials[2]});
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[1]["figure"], 30.0);
  EXPECT_EQ(points[1]["gflops"], 0.0);
  EXPECT_EQ(points[2]["best_so_far"], 30.0);
  // A matmul goes by its GFLOP/s.
  trials[1].mutable_result()->set_gflops(50);
  const json matmul = BestSoFar(kProblem, {&trials[0], &trials[1], &trials[2]});
  EXPECT_EQ(matmul[1]["figure"], 50.0);
  EXPECT_EQ(matmul[2]["best_so_far"], 50.0);
}

TEST(DashboardWords, MatchDesignVocabulary) {
  EXPECT_EQ(StatusWord(mtune::v1::RESULT_STATUS_INVALID_CANDIDATE), "invalid_candidate");
  EXPECT_EQ(StatusWord(mtune::v1::RESULT_STATUS_WRONG_RESULT), "wrong_result");
  EXPECT_EQ(JobStateWord(mtune::v1::JOB_STATE_CANCELLED), "cancelled");
  // A value from a newer peer that this build's enum lacks still gets a word.
  EXPECT_EQ(StatusWord(static_cast<mtune::v1::ResultStatus>(99)), "status_99");
}

}  // namespace
}  // namespace mtune::server
