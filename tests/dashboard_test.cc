// The dashboard's JSON API and page served by a real coordinator (--http on a
// free port) holding real results: one worker tunes a small matmul once for
// the whole suite, then every endpoint is compared with the gRPC answers.
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <set>
#include <thread>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "proto/mtune.grpc.pb.h"
#include "tests/subprocess.h"

namespace mtune {
namespace {

using nlohmann::json;
using testing::MakeTempDir;
using testing::ReadFile;
using testing::SleepS;
using testing::Subprocess;
using testing::WaitForPort;

constexpr char kProblem[] = "matmul:m=64,n=64,k=64:f32";
constexpr uint32_t kTrials = 8;

class Dashboard : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = MakeTempDir("mtune-dashboard-");
    coordinator_ = new Subprocess(
        {MTUNE_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--port-file", dir_ + "/port", "--http",
         "127.0.0.1:0", "--http-port-file", dir_ + "/http-port", "--db", dir_ + "/mtune.sqlite",
         "--min-measure", "0.02"},
        dir_ + "/coordinator.log");
    const std::string grpc_port = WaitForPort(dir_ + "/port", 10);
    const std::string http_port = WaitForPort(dir_ + "/http-port", 10);
    ASSERT_FALSE(grpc_port.empty() || http_port.empty()) << coordinator_->Log();
    http_port_ = std::stoi(http_port);
    const std::string address = "127.0.0.1:" + grpc_port;
    tuner_ = mtune::v1::Tuner::NewStub(
                 grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))
                 .release();
    worker_ = new Subprocess({MTUNE_WORKER_BIN, "--coordinator", address, "--cpu", "0", "--name",
                              "w0", "--give-up-after", "60"},
                             dir_ + "/w0.log");

    // The dashboard sees the worker once it has calibrated and registered. 120 s, as
    // tests/integration_test.cc: a Zen 5 VM that reports a 508 MiB L3 calibrated for 35 s
    // (its L3 and DRAM passes copy hundreds of MiB), past the 30 s this waited before.
    for (int i = 0; i < 2400 && Get("/api/workers")["workers"].empty(); ++i) SleepS(0.05);
    ASSERT_FALSE(Get("/api/workers")["workers"].empty()) << worker_->Log();

    grpc::ClientContext context;
    mtune::v1::SubmitJobRequest request;
    request.mutable_spec()->add_problems(kProblem);
    request.mutable_spec()->set_search("random");
    request.mutable_spec()->set_trials(kTrials);
    request.mutable_spec()->set_seed(11);
    mtune::v1::SubmitJobResponse response;
    grpc::Status status = tuner_->SubmitJob(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    job_id_ = response.job().id();
    for (int i = 0; i < 2400; ++i) {
      if (GrpcJob().state() != mtune::v1::JOB_STATE_RUNNING) break;
      SleepS(0.05);
    }
    ASSERT_EQ(GrpcJob().state(), mtune::v1::JOB_STATE_SUCCEEDED) << coordinator_->Log();
    ready_ = true;
  }

  static void TearDownTestSuite() {
    delete worker_;
    delete coordinator_;
    delete tuner_;
  }

  void SetUp() override {
    if (!ready_) GTEST_FAIL() << "the tuning run did not complete; see the suite set-up";
  }

  // GET `path` from the dashboard; the HTTP status goes to `status`.
  static json Get(const std::string& path, int* status = nullptr) {
    httplib::Client client("127.0.0.1", http_port_);
    client.set_read_timeout(30, 0);
    auto res = client.Get(path.c_str());
    if (!res) {
      ADD_FAILURE() << "GET " << path << ": " << httplib::to_string(res.error());
      return json();
    }
    if (status) *status = res->status;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json") << path;
    return json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  }

  static mtune::v1::Job GrpcJob() {
    grpc::ClientContext context;
    mtune::v1::GetJobRequest request;
    request.set_job_id(job_id_);
    mtune::v1::Job job;
    EXPECT_TRUE(tuner_->GetJob(&context, request, &job).ok());
    return job;
  }

  static std::vector<mtune::v1::TrialResult> GrpcResults() {
    grpc::ClientContext context;
    mtune::v1::ListResultsRequest request;
    request.set_job_id(job_id_);
    mtune::v1::ListResultsResponse response;
    EXPECT_TRUE(tuner_->ListResults(&context, request, &response).ok());
    return {response.results().begin(), response.results().end()};
  }

  static inline std::string dir_;
  static inline int http_port_ = 0;
  static inline int64_t job_id_ = 0;
  static inline bool ready_ = false;
  static inline Subprocess* coordinator_ = nullptr;
  static inline Subprocess* worker_ = nullptr;
  static inline mtune::v1::Tuner::Stub* tuner_ = nullptr;
};

TEST_F(Dashboard, JobsMatchTheCoordinator) {
  const mtune::v1::Job job = GrpcJob();
  int status = 0;
  const json jobs = Get("/api/jobs", &status);
  ASSERT_EQ(status, 200) << jobs.dump();
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  const json& j = jobs["jobs"][0];
  EXPECT_EQ(j["id"], job_id_);
  EXPECT_EQ(j["state"], "succeeded");
  EXPECT_EQ(j["problems"], json::array({kProblem}));
  EXPECT_EQ(j["search"], "random");
  EXPECT_EQ(j["trials_done"], job.trials_done());
  EXPECT_EQ(j["trials_total"], kTrials);
  EXPECT_EQ(j["trials_failed"], job.trials_failed());
  EXPECT_TRUE(j["eta_s"].is_null()) << "an ended job has no ETA";
  EXPECT_GE(j["elapsed_s"].get<double>(), 0);
  ASSERT_EQ(j["best"].size(), 1u);
  ASSERT_EQ(job.best_size(), 1);
  // JSON doubles round-trip exactly: the API shows the stored figures.
  EXPECT_EQ(j["best"][0]["gflops"].get<double>(), job.best(0).result().gflops());
  EXPECT_EQ(j["best"][0]["gbps"].get<double>(), job.best(0).result().gbps());
  EXPECT_EQ(j["best"][0]["fraction_of_roofline"].get<double>(),
            job.best(0).result().fraction_of_roofline());
  EXPECT_EQ(j["best"][0]["candidate_hash"], job.best(0).candidate().hash());
  EXPECT_EQ(j["best"][0]["target_id"], job.best(0).target().id());
}

TEST_F(Dashboard, JobDetailHasConvergenceFailuresAndCeilings) {
  const mtune::v1::Job job = GrpcJob();
  int status = 0;
  const json detail = Get("/api/jobs/" + std::to_string(job_id_), &status);
  ASSERT_EQ(status, 200) << detail.dump();
  ASSERT_EQ(detail["problem_details"].size(), 1u);
  const json& problem = detail["problem_details"][0];
  EXPECT_EQ(problem["problem"], kProblem);
  EXPECT_EQ(problem["trials"], job.trials_done());
  EXPECT_DOUBLE_EQ(problem["figures"]["arithmetic_intensity"].get<double>(),
                   2.0 * 64 * 64 * 64 / (4.0 * 4 * 64 * 64));

  // Convergence: one point per trial, never decreasing, ending at the best.
  const json& convergence = problem["convergence"];
  ASSERT_EQ(convergence.size(), job.trials_done());
  double previous = 0;
  for (const json& point : convergence) {
    if (point["best_so_far"].is_null()) continue;
    EXPECT_GE(point["best_so_far"].get<double>(), previous);
    previous = point["best_so_far"].get<double>();
  }
  EXPECT_EQ(previous, job.best(0).result().gflops());

  uint32_t failed = 0;
  for (const auto& [word, count] : detail["failed_by_status"].items()) failed += count.get<int>();
  EXPECT_EQ(failed, job.trials_failed());
  EXPECT_EQ(problem["ok"].get<uint32_t>() + failed, job.trials_done());

  // The ceilings drawn on the roofline are the measuring worker's calibration.
  const std::string target_id = job.best(0).target().id();
  ASSERT_TRUE(detail["targets"].contains(target_id)) << detail["targets"].dump();
  const json workers = Get("/api/workers");
  ASSERT_EQ(workers["workers"].size(), 1u);
  EXPECT_EQ(detail["targets"][target_id]["calibration"], workers["workers"][0]["calibration"]);
  EXPECT_EQ(Get("/api/targets/" + target_id)["calibration"], workers["workers"][0]["calibration"]);
}

TEST_F(Dashboard, ResultsMatchTheStoredTrials) {
  const auto stored = GrpcResults();
  int status = 0;
  const json results = Get("/api/results?job=" + std::to_string(job_id_), &status);
  ASSERT_EQ(status, 200) << results.dump();
  ASSERT_EQ(results["results"].size(), stored.size());
  std::set<int> trial_numbers;
  for (size_t i = 0; i < stored.size(); ++i) {
    const json& r = results["results"][i];
    const auto& s = stored[i];
    SCOPED_TRACE(s.candidate().hash());
    EXPECT_EQ(r["candidate_hash"], s.candidate().hash());  // same order: best first
    trial_numbers.insert(r["trial"].get<int>());
    if (s.result().status() == mtune::v1::RESULT_STATUS_OK) {
      EXPECT_EQ(r["status"], "ok");
      EXPECT_EQ(r["gflops"].get<double>(), s.result().gflops());
      EXPECT_EQ(r["gbps"].get<double>(), s.result().gbps());
      EXPECT_EQ(r["median_s"].get<double>(), s.result().timing().median_s());
    } else {
      EXPECT_TRUE(r["gflops"].is_null());
      EXPECT_EQ(r["error"], s.result().error());
    }
    EXPECT_EQ(r["knobs"].size(), static_cast<size_t>(s.candidate().knobs_size()));
    EXPECT_EQ(r["worker"], "w0");
  }
  // Trial numbers are the storage order: 1..n, each once.
  EXPECT_EQ(trial_numbers.size(), stored.size());
  EXPECT_EQ(*trial_numbers.begin(), 1);
  EXPECT_EQ(*trial_numbers.rbegin(), static_cast<int>(stored.size()));

  const json limited = Get("/api/results?job=" + std::to_string(job_id_) + "&limit=3");
  EXPECT_EQ(limited["results"].size(), 3u);
  // Problem keys contain '=' and ',': accepted unencoded and percent-encoded.
  EXPECT_EQ(Get("/api/results?job=" + std::to_string(job_id_) + "&problem=" + kProblem)["results"]
                .size(),
            stored.size());
  EXPECT_EQ(Get("/api/results?job=" + std::to_string(job_id_) +
                "&problem=matmul%3Am%3D64%2Cn%3D64%2Ck%3D64%3Af32")["results"]
                .size(),
            stored.size());
}

TEST_F(Dashboard, WorkersShowTargetCalibrationAndCore) {
  grpc::ClientContext context;
  mtune::v1::ListWorkersResponse grpc_workers;
  ASSERT_TRUE(tuner_->ListWorkers(&context, {}, &grpc_workers).ok());
  const json workers = Get("/api/workers");
  ASSERT_EQ(workers["workers"].size(), 1u);
  const json& w = workers["workers"][0];
  const auto& g = grpc_workers.workers(0);
  EXPECT_EQ(w["name"], "w0");
  EXPECT_EQ(w["cpu"], 0);
  EXPECT_EQ(w["target"]["id"], g.target().id());
  EXPECT_EQ(w["calibration"]["peak_gflops_f32"].get<double>(), g.calibration().peak_gflops_f32());
  ASSERT_EQ(w["calibration"]["bandwidth"].size(),
            static_cast<size_t>(g.calibration().bandwidth_size()));
  for (int i = 0; i < g.calibration().bandwidth_size(); ++i) {
    EXPECT_EQ(w["calibration"]["bandwidth"][i]["level"], g.calibration().bandwidth(i).level());
    EXPECT_EQ(w["calibration"]["bandwidth"][i]["gbps"].get<double>(),
              g.calibration().bandwidth(i).gbps());
  }
  EXPECT_EQ(w["tasks_done"], kTrials);
}

TEST_F(Dashboard, ConvergenceOfTheProblem) {
  int status = 0;
  const json lines = Get(std::string("/api/convergence?problem=") + kProblem, &status);
  ASSERT_EQ(status, 200) << lines.dump();
  ASSERT_EQ(lines["jobs"].size(), 1u);
  EXPECT_EQ(lines["jobs"][0]["job_id"], job_id_);
  EXPECT_EQ(lines["jobs"][0]["search"], "random");
  EXPECT_EQ(lines["jobs"][0]["points"].size(), kTrials);
}

TEST_F(Dashboard, BadIdsAndParametersAreClearJsonErrors) {
  struct Case {
    std::string path;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/api/jobs/999", 404, "job 999 does not exist"},
      {"/api/jobs/abc", 400, "job id must be a positive integer, got 'abc'"},
      {"/api/results", 400, "missing parameter 'job'"},
      {"/api/results?job=two", 400, "parameter 'job' must be a positive integer"},
      {"/api/results?job=999", 404, "job 999 does not exist"},
      {"/api/results?job=1&limit=-1", 400, "parameter 'limit'"},
      {"/api/targets/cpu:nope", 404, "not known"},
      {"/api/convergence", 400, "missing parameter 'problem'"},
      {"/api/nothing", 404, "no such endpoint: /api/nothing"},
  };
  for (const Case& c : cases) {
    int status = 0;
    const json body = Get(c.path, &status);
    EXPECT_EQ(status, c.status) << c.path;
    ASSERT_TRUE(body.is_object()) << c.path;
    EXPECT_NE(body.value("error", "").find(c.message), std::string::npos)
        << c.path << ": " << body.dump();
  }
  httplib::Client client("127.0.0.1", http_port_);
  auto res = client.Post("/api/jobs", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_NE(res->body.find("read-only"), std::string::npos) << res->body;
}

TEST_F(Dashboard, ServesThePageAndItsBundle) {
  httplib::Client client("127.0.0.1", http_port_);
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html");
  EXPECT_NE(page->body.find("<script src=\"app.js\">"), std::string::npos);
  auto bundle = client.Get("/app.js");
  ASSERT_TRUE(bundle);
  EXPECT_EQ(bundle->status, 200);
  // Chart.js is bundled in: the page needs nothing from outside the coordinator.
  EXPECT_GT(bundle->body.size(), 50000u);
  auto missing = client.Get("/no-such-file.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

// Runs a command; returns its exit status and its output.
int RunToEnd(const std::vector<std::string>& argv, std::string* output) {
  const std::string dir = MakeTempDir("mtune-dashboard-cli-");
  Subprocess process(argv, dir + "/log");
  const int status = process.Wait(30);
  *output = process.Log();
  return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DashboardStartTest, MissingPageOrBadAddressIsAClearError) {
  std::string out;
  EXPECT_EQ(RunToEnd({MTUNE_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--db",
                 MakeTempDir("mtune-dashboard-db-") + "/m.sqlite", "--http", "127.0.0.1:0",
                 "--web-root", "/nonexistent/web"},
                &out),
            1);
  EXPECT_NE(out.find("no dashboard page at /nonexistent/web/index.html"), std::string::npos)
      << out;
  EXPECT_EQ(RunToEnd({MTUNE_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--db",
                 MakeTempDir("mtune-dashboard-db-") + "/m.sqlite", "--http", "localhost"},
                &out),
            1);
  EXPECT_NE(out.find("expected HOST:PORT"), std::string::npos) << out;
}

}  // namespace
}  // namespace mtune
