// The dashboard's HTTP layer on a free loopback port: the access-control hook,
// query parsing of problem keys, start/stop and bind errors. No coordinator:
// the source is empty (tests/dashboard_test.cc serves a real one).
#include "server/dashboard.h"

#include <fstream>

#include "gtest/gtest.h"
#include "httplib.h"

namespace mtune::server {
namespace {

using nlohmann::json;

class EmptySource : public DashboardSource {
 public:
  absl::StatusOr<std::vector<int64_t>> JobIds() override { return std::vector<int64_t>{}; }
  absl::StatusOr<mtune::v1::Job> Job(int64_t) override { return absl::NotFoundError("no job"); }
  absl::StatusOr<std::vector<mtune::v1::TrialResult>> Results(int64_t, const std::string&,
                                                              uint32_t) override {
    return std::vector<mtune::v1::TrialResult>{};
  }
  absl::StatusOr<std::vector<std::string>> TrialOrder(int64_t, const std::string&) override {
    return std::vector<std::string>{};
  }
  std::vector<mtune::v1::WorkerInfo> Workers() override { return {}; }
  std::optional<mtune::v1::Task> LeasedTask(int64_t) override { return std::nullopt; }
  absl::StatusOr<std::pair<mtune::v1::Target, mtune::v1::Calibration>> Target(
      const std::string&) override {
    return absl::NotFoundError("no target");
  }
};

std::string MakeWebRoot() {
  std::string dir = ::testing::TempDir() + "/mtune-web-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/index.html") << "<!doctype html><title>mtune</title>\n";
  return dir;
}

TEST(DashboardHttp, AuthorizerGuardsEveryRequestBeforeRouting) {
  EmptySource source;
  DashboardOptions options;
  options.web_root = MakeWebRoot();
  // A read-only token on the API; the page itself carries no data.
  options.authorizer = [](const HttpRequestInfo& request) -> absl::Status {
    if (request.path.rfind("/api/", 0) != 0) return absl::OkStatus();
    if (request.authorization.empty()) return absl::UnauthenticatedError("a token is required");
    if (request.authorization != "Bearer secret") return absl::PermissionDeniedError("bad token");
    return absl::OkStatus();
  };
  auto dashboard = Dashboard::Start(&source, options);
  ASSERT_TRUE(dashboard.ok()) << dashboard.status();
  httplib::Client client("127.0.0.1", (*dashboard)->port());

  auto anonymous = client.Get("/api/jobs");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(json::parse(anonymous->body)["error"], "a token is required");

  auto wrong = client.Get("/api/jobs/1", {{"Authorization", "Bearer guess"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 403);

  auto allowed = client.Get("/api/jobs", {{"Authorization", "Bearer secret"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  EXPECT_EQ(json::parse(allowed->body)["jobs"], json::array());

  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<title>mtune</title>"), std::string::npos);
}

TEST(DashboardHttp, ProblemKeysNeedNoEncoding) {
  EmptySource source;
  auto dashboard = Dashboard::Start(&source, {.web_root = MakeWebRoot()});
  ASSERT_TRUE(dashboard.ok()) << dashboard.status();
  httplib::Client client("127.0.0.1", (*dashboard)->port());
  for (const std::string query : {"problem=matmul:m=64,n=64,k=64:f32",
                                  "problem=matmul%3Am%3D64%2Cn%3D64%2Ck%3D64%3Af32&x=1"}) {
    auto res = client.Get(("/api/convergence?" + query).c_str());
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(json::parse(res->body)["problem"], "matmul:m=64,n=64,k=64:f32") << query;
  }
}

TEST(DashboardHttp, StopsRightAfterStartAndRefusesABusyPort) {
  EmptySource source;
  const std::string web_root = MakeWebRoot();
  auto first = Dashboard::Start(&source, {.web_root = web_root});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Dashboard::Start(&source, {.port = (*first)->port(), .web_root = web_root});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
  (*first)->Stop();  // returns: the test would hang otherwise

  auto missing = Dashboard::Start(&source, {.web_root = web_root + "/none"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(DashboardHttp, ParsesHostPort) {
  auto ok = ParseHostPort("127.0.0.1:8080");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->first, "127.0.0.1");
  EXPECT_EQ(ok->second, 8080);
  for (const char* bad : {"8080", ":8080", "localhost:", "localhost:http", "h:70000", "h:-1"})
    EXPECT_FALSE(ParseHostPort(bad).ok()) << bad;
}

}  // namespace
}  // namespace mtune::server
