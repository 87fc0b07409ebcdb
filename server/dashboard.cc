#include "server/dashboard.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "httplib.h"

namespace mtune::server {
namespace {

constexpr char kJson[] = "application/json";

void Send(const ApiResponse& answer, httplib::Response& res) {
  res.status = answer.status;
  // Live figures: a browser or proxy must never show a stale copy.
  res.set_header("Cache-Control", "no-store");
  res.set_content(answer.body.dump(), kJson);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexDigit(text[i + 1]) >= 0 &&
        HexDigit(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexDigit(text[i + 1]) * 16 + HexDigit(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i] == '+' ? ' ' : text[i]);
    }
  }
  return out;
}

// Query parameters from the raw request target, split at the first '=' only:
// problem keys ("matmul:m=64,n=64,k=64:f32") contain '=' and must work
// unencoded in a curl command line, which httplib's own parser (last '=' wins)
// does not allow. The first value of a repeated name wins.
QueryParams ParseQuery(const std::string& target) {
  QueryParams out;
  const size_t question = target.find('?');
  if (question == std::string::npos) return out;
  for (absl::string_view pair :
       absl::StrSplit(absl::string_view(target).substr(question + 1), '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    std::string name = PercentDecode(pair.substr(0, eq));
    std::string value = eq == absl::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    out.emplace(std::move(name), std::move(value));
  }
  return out;
}

int HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    default: return 500;
  }
}

}  // namespace

std::string DefaultWebRoot() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "dashboard-web";
  path[n] = '\0';
  return (std::filesystem::path(path).parent_path() / "dashboard-web").string();
}

absl::StatusOr<std::pair<std::string, int>> ParseHostPort(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535)
    return absl::InvalidArgumentError(absl::StrCat(
        "expected HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one), got '", address, "'"));
  return std::make_pair(address.substr(0, colon), port);
}

Dashboard::Dashboard(DashboardSource* source, DashboardOptions options)
    : api_(source), options_(std::move(options)), http_(std::make_unique<httplib::Server>()) {}

Dashboard::~Dashboard() { Stop(); }

void Dashboard::Stop() {
  if (http_) http_->stop();
  if (thread_ && thread_->joinable()) thread_->join();
}

absl::StatusOr<std::unique_ptr<Dashboard>> Dashboard::Start(DashboardSource* source,
                                                            DashboardOptions options) {
  const std::filesystem::path index = std::filesystem::path(options.web_root) / "index.html";
  if (!std::filesystem::is_regular_file(index))
    return absl::FailedPreconditionError(absl::StrCat(
        "no dashboard page at ", index.string(),
        ": build the web assets (ninja mtune-dashboard-web) or pass --web-root"));
  std::unique_ptr<Dashboard> dashboard(new Dashboard(source, std::move(options)));
  dashboard->Route();
  httplib::Server& http = *dashboard->http_;
  const DashboardOptions& o = dashboard->options_;
  dashboard->port_ = o.port == 0 ? http.bind_to_any_port(o.host)
                                 : (http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (dashboard->port_ <= 0)
    return absl::UnavailableError(
        absl::StrCat("cannot bind the dashboard to ", o.host, ":", o.port));
  dashboard->thread_ = std::make_unique<std::thread>([&http] { http.listen_after_bind(); });
  // httplib's stop() does nothing before the accept loop runs: wait for it, so
  // that a Stop() right after Start() cannot leave the thread serving forever.
  for (int i = 0; i < 5000 && !http.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!http.is_running()) return absl::InternalError("the dashboard's HTTP server did not start");
  return dashboard;
}

void Dashboard::Route() {
  httplib::Server& http = *http_;
  // httplib's default is SO_REUSEPORT, which lets a second coordinator bind the
  // same port and silently share its requests. SO_REUSEADDR only: a restart
  // still rebinds over TIME_WAIT, a port in use is an error.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // The one gate every request passes (see HttpAuthorizer).
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!options_.authorizer) return httplib::Server::HandlerResponse::Unhandled;
    absl::Status allowed = options_.authorizer(
        {req.method, req.path, req.get_header_value("Authorization")});
    if (allowed.ok()) return httplib::Server::HandlerResponse::Unhandled;
    const int status = HttpStatusOf(allowed);
    if (status == 401) res.set_header("WWW-Authenticate", "Bearer");
    Send(DashboardApi::Error(status, std::string(allowed.message())), res);
    return httplib::Server::HandlerResponse::Handled;
  });

  http.Get("/api/jobs", [this](const httplib::Request&, httplib::Response& res) {
    Send(api_.Jobs(), res);
  });
  http.Get(R"(/api/jobs/([^/]*))", [this](const httplib::Request& req, httplib::Response& res) {
    Send(api_.Job(req.matches[1]), res);
  });
  http.Get("/api/results", [this](const httplib::Request& req, httplib::Response& res) {
    Send(api_.Results(ParseQuery(req.target)), res);
  });
  http.Get("/api/workers", [this](const httplib::Request&, httplib::Response& res) {
    Send(api_.Workers(), res);
  });
  http.Get(R"(/api/targets/(.*))", [this](const httplib::Request& req, httplib::Response& res) {
    Send(api_.Target(req.matches[1]), res);
  });
  http.Get("/api/convergence", [this](const httplib::Request& req, httplib::Response& res) {
    Send(api_.Convergence(ParseQuery(req.target)), res);
  });
  http.Get(R"(/api(/.*)?)", [](const httplib::Request& req, httplib::Response& res) {
    Send(DashboardApi::Error(404, absl::StrCat(
                                      "no such endpoint: ", req.path,
                                      " (known: /api/jobs, /api/jobs/{id}, /api/results?job=ID, "
                                      "/api/workers, /api/targets/{id}, "
                                      "/api/convergence?problem=KEY)")),
         res);
  });
  // Read-only: other methods are refused by name rather than by a bare 404.
  auto read_only = [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Allow", "GET, HEAD");
    Send(DashboardApi::Error(405, absl::StrCat(req.method, " ", req.path,
                                               ": the dashboard API is read-only (GET only)")),
         res);
  };
  http.Post(R"(/api(/.*)?)", read_only);
  http.Put(R"(/api(/.*)?)", read_only);
  http.Patch(R"(/api(/.*)?)", read_only);
  http.Delete(R"(/api(/.*)?)", read_only);
  // Anything that fell through (other methods, missing files) gets a body
  // saying why; the API answers in JSON.
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string why =
        res.status == 404 ? absl::StrCat("not found: ", req.path)
                          : absl::StrCat("HTTP ", res.status, " for ", req.method, " ", req.path);
    if (req.path.rfind("/api", 0) == 0)
      Send(DashboardApi::Error(res.status, why), res);
    else
      res.set_content(why + "\n", "text/plain");
  });
  // Static page and bundled assets.
  http.set_mount_point("/", options_.web_root);
  http.set_file_request_handler([](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-cache");
  });
}

}  // namespace mtune::server
