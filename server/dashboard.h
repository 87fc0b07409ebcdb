// The dashboard's HTTP server (cpp-httplib): the read-only JSON API of
// server/dashboard_api.h under /api/, and the bundled web page (server/web/)
// from a directory at /.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "server/dashboard_api.h"

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace mtune::server {

// What a request carries that access control may look at.
struct HttpRequestInfo {
  std::string method;
  std::string path;
  // The Authorization header, "" when absent.
  std::string authorization;
};

// Decides whether a request may read the dashboard: OK, or the status to answer
// with (PermissionDenied -> 403, Unauthenticated -> 401). Every request, API
// and static files alike, passes through it before routing, so a read-only
// token check of the service's access control plugs in here and nowhere else.
using HttpAuthorizer = std::function<absl::Status(const HttpRequestInfo&)>;

struct DashboardOptions {
  // Address to bind, e.g. "127.0.0.1".
  std::string host = "127.0.0.1";
  // 0 picks a free port (see Dashboard::port()).
  int port = 0;
  // Directory holding index.html and the bundled assets.
  std::string web_root;
  // Null = every request is allowed (no access control configured).
  HttpAuthorizer authorizer;
};

// A running dashboard server. Stops (and joins its thread) on destruction.
class Dashboard {
 public:
  // Binds, then serves on a background thread. FailedPrecondition when
  // web_root has no index.html (the web assets were not built); Unavailable
  // when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<Dashboard>> Start(DashboardSource* source,
                                                          DashboardOptions options);
  ~Dashboard();
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  // The bound port.
  int port() const { return port_; }
  // Stops accepting and waits for the serving thread.
  void Stop();

 private:
  Dashboard(DashboardSource* source, DashboardOptions options);
  void Route();

  DashboardApi api_;
  DashboardOptions options_;
  std::unique_ptr<httplib::Server> http_;
  std::unique_ptr<std::thread> thread_;
  int port_ = 0;
};

// Default web root: "dashboard-web" next to the running executable, where the
// build puts the bundled page.
std::string DefaultWebRoot();

// Parses "host:port" (port 0 = any free one); InvalidArgument when malformed.
absl::StatusOr<std::pair<std::string, int>> ParseHostPort(const std::string& address);

}  // namespace mtune::server
