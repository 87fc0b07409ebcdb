#include "server/access.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace mtune::server {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 512;

bool Allows(Role role, Action action) {
  switch (role) {
    case Role::kClient: return action != Action::kWork;
    case Role::kWorker: return action == Action::kWork;
    case Role::kReadOnly: return action == Action::kQuery || action == Action::kDashboard;
  }
  return false;
}

std::string ActionName(Action action) {
  switch (action) {
    case Action::kChangeJobs: return "submit or cancel jobs";
    case Action::kQuery: return "query jobs and results";
    case Action::kWork: return "act as a worker";
    case Action::kDashboard: return "read the dashboard";
  }
  return "?";
}

std::string RolesAllowing(Action action) {
  std::vector<std::string> names;
  for (Role r : {Role::kClient, Role::kWorker, Role::kReadOnly})
    if (Allows(r, action)) names.push_back(RoleName(r));
  return absl::StrJoin(names, " or ");
}

// Equal-time comparison: the time taken depends only on the length of the
// presented token (which its sender knows), never on where it first differs
// from a configured one, nor on a configured token's length.
bool ConstantTimeEquals(absl::string_view presented, absl::string_view secret) {
  unsigned char diff = presented.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < presented.size(); ++i)
    diff |= static_cast<unsigned char>(presented[i]) ^
            static_cast<unsigned char>(secret[i % secret.size()]);
  return diff == 0;
}

bool ValidTokenText(absl::string_view token) {
  if (token.size() < kMinTokenLength || token.size() > kMaxTokenLength) return false;
  for (char c : token)
    if (c <= ' ' || c > '~') return false;
  return true;
}

}  // namespace

std::string RoleName(Role role) {
  switch (role) {
    case Role::kClient: return "client";
    case Role::kWorker: return "worker";
    case Role::kReadOnly: return "read-only";
  }
  return "?";
}

absl::StatusOr<AccessControl> AccessControl::FromText(absl::string_view text) {
  AccessControl access;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("tokens line ", line_number, ": ", why));
    };
    if (fields.size() != 2) return bad("expected ROLE TOKEN (roles: client, worker, read-only)");
    Role role;
    if (fields[0] == "client") {
      role = Role::kClient;
    } else if (fields[0] == "worker") {
      role = Role::kWorker;
    } else if (fields[0] == "read-only") {
      role = Role::kReadOnly;
    } else {
      return bad(absl::StrCat("unknown role '", fields[0], "' (roles: client, worker, read-only)"));
    }
    if (!ValidTokenText(fields[1]))
      return bad(absl::StrCat("a token must be ", kMinTokenLength, " to ", kMaxTokenLength,
                              " printable characters without spaces (e.g. openssl rand -hex 32)"));
    for (const Entry& e : access.tokens_)
      if (e.token == fields[1]) return bad("the same token is listed twice");
    access.tokens_.push_back({role, std::string(fields[1])});
  }
  if (access.tokens_.empty())
    return absl::InvalidArgumentError("the tokens file lists no token (omit it for an open service)");
  return access;
}

absl::StatusOr<AccessControl> AccessControl::LoadTokensFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return absl::InvalidArgumentError(absl::StrCat("cannot read tokens file ", path));
  if ((st.st_mode & 077) != 0)
    return absl::PermissionDeniedError(absl::StrCat(
        "tokens file ", path, " is accessible by group or others (chmod 600 it)"));
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read tokens file ", path));
  std::stringstream text;
  text << in.rdbuf();
  auto access = FromText(text.str());
  if (!access.ok())
    return absl::Status(access.status().code(),
                        absl::StrCat(path, ": ", access.status().message()));
  return access;
}

std::string AccessControl::Summary() const {
  int counts[3] = {0, 0, 0};
  for (const Entry& e : tokens_) ++counts[static_cast<int>(e.role)];
  return absl::StrCat(counts[0], " client, ", counts[1], " worker, ", counts[2],
                      " read-only tokens");
}

absl::Status AccessControl::Authorize(absl::string_view authorization, Action action) const {
  if (open()) return absl::OkStatus();
  if (authorization.empty())
    return absl::UnauthenticatedError(absl::StrCat(
        "missing token: send 'authorization: Bearer TOKEN' (mtune and mtune-worker read it "
        "from $MTUNE_TOKEN or --token-file) to ", ActionName(action)));
  absl::string_view token = authorization;
  if (!absl::ConsumePrefix(&token, "Bearer ") && !absl::ConsumePrefix(&token, "bearer "))
    return absl::UnauthenticatedError("malformed authorization: expected 'Bearer TOKEN'");
  token = absl::StripAsciiWhitespace(token);
  // Every configured token is compared, so the time taken says nothing about
  // which one (if any) matched.
  const Entry* match = nullptr;
  for (const Entry& e : tokens_)
    if (ConstantTimeEquals(token, e.token)) match = &e;
  if (match == nullptr) return absl::UnauthenticatedError("unknown token");
  if (!Allows(match->role, action))
    return absl::PermissionDeniedError(absl::StrCat("a ", RoleName(match->role),
                                                    " token may not ", ActionName(action),
                                                    " (needs a ", RolesAllowing(action),
                                                    " token)"));
  return absl::OkStatus();
}

}  // namespace mtune::server
