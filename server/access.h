// Who may do what: bearer tokens with roles, checked on every RPC and every
// dashboard API request.
//
// Roles and what they allow:
//   client     submit and cancel jobs, query (jobs, results, best, export,
//              workers), read the dashboard API
//   worker     register, lease tasks, heartbeat, report results
//   read-only  query and read the dashboard API
// Tokens file (--tokens-file; must not be accessible by group or others): one
// `ROLE TOKEN` per line, `#` comments; a role may have several tokens. A token is
// 16 to 512 printable ASCII characters without spaces (e.g. `openssl rand -hex 32`).
// No tokens file = open service (development): everyone may do everything.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtune::server {

enum class Role { kClient, kWorker, kReadOnly };

// What a request wants to do.
enum class Action {
  kChangeJobs,  // SubmitJob, CancelJob
  kQuery,       // the Tuner service's read RPCs
  kWork,        // the Coordinator (worker) service
  kDashboard,   // the dashboard's /api/ endpoints
};

// "client", "worker", "read-only".
std::string RoleName(Role role);

class AccessControl {
 public:
  // Open: no tokens, every request allowed.
  AccessControl() = default;
  // Parses a tokens file's text (see the file comment); InvalidArgument names the
  // line, never the token.
  static absl::StatusOr<AccessControl> FromText(absl::string_view text);
  // Reads and parses a tokens file; PermissionDenied when group or others may read it.
  static absl::StatusOr<AccessControl> LoadTokensFile(const std::string& path);

  // No tokens configured.
  bool open() const { return tokens_.empty(); }
  // Token counts per role, e.g. "1 client, 2 worker, 0 read-only tokens" (no secrets).
  std::string Summary() const;

  // OK when `authorization` (the header/metadata value, "Bearer TOKEN") carries a
  // token whose role allows `action`. Unauthenticated when it is missing,
  // malformed or unknown; PermissionDenied when its role does not allow `action`.
  // Messages never contain the presented token.
  absl::Status Authorize(absl::string_view authorization, Action action) const;

 private:
  struct Entry {
    Role role;
    std::string token;
  };
  std::vector<Entry> tokens_;
};

}  // namespace mtune::server
