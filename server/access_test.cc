#include "server/access.h"

#include <string>

#include "gtest/gtest.h"

namespace mtune::server {
namespace {

constexpr char kClient[] = "client-token-0123456789abcdef";
constexpr char kWorker[] = "worker-token-0123456789abcdef";
constexpr char kReader[] = "reader-token-0123456789abcdef";

AccessControl ThreeRoles() {
  auto access = AccessControl::FromText(std::string("# role token\nclient ") + kClient +
                                        "\nworker\t" + kWorker + "\n\nread-only " + kReader +
                                        "\n");
  EXPECT_TRUE(access.ok()) << access.status();
  return *access;
}

TEST(AccessControl, EachRoleMayDoExactlyItsActions) {
  const AccessControl access = ThreeRoles();
  EXPECT_FALSE(access.open());
  EXPECT_EQ(access.Summary(), "1 client, 1 worker, 1 read-only tokens");
  struct Case {
    const char* token;
    Action action;
    bool allowed;
  };
  const Case cases[] = {
      {kClient, Action::kChangeJobs, true}, {kClient, Action::kQuery, true},
      {kClient, Action::kDashboard, true},  {kClient, Action::kWork, false},
      {kWorker, Action::kWork, true},       {kWorker, Action::kChangeJobs, false},
      {kWorker, Action::kQuery, false},     {kWorker, Action::kDashboard, false},
      {kReader, Action::kQuery, true},      {kReader, Action::kDashboard, true},
      {kReader, Action::kChangeJobs, false}, {kReader, Action::kWork, false},
  };
  for (const Case& c : cases) {
    absl::Status s = access.Authorize(std::string("Bearer ") + c.token, c.action);
    EXPECT_EQ(s.code(), c.allowed ? absl::StatusCode::kOk : absl::StatusCode::kPermissionDenied)
        << c.token << " " << static_cast<int>(c.action) << ": " << s;
    EXPECT_EQ(std::string(s.message()).find(c.token), std::string::npos) << "token leaked: " << s;
  }
}

TEST(AccessControl, MissingMalformedAndUnknownTokensAreUnauthenticated) {
  const AccessControl access = ThreeRoles();
  for (const std::string& header :
       {std::string(""), std::string(kClient), std::string("Basic ") + kClient,
        std::string("Bearer ") + kClient + "x", std::string("Bearer client-token"),
        std::string("Bearer ")}) {
    absl::Status s = access.Authorize(header, Action::kQuery);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << header;
    EXPECT_EQ(std::string(s.message()).find("token-0123"), std::string::npos) << s;
  }
}

TEST(AccessControl, AnOpenServiceAllowsEverything) {
  AccessControl open;
  EXPECT_TRUE(open.open());
  EXPECT_TRUE(open.Authorize("", Action::kWork).ok());
  EXPECT_TRUE(open.Authorize("Bearer whatever", Action::kChangeJobs).ok());
}

TEST(AccessControl, BadTokensFilesSayWhichLineAndNeverEchoTheSecret) {
  struct Case {
    std::string text, message;
  };
  const Case cases[] = {
      {"admin 0123456789abcdef0123", "unknown role 'admin'"},
      {"client", "expected ROLE TOKEN"},
      {"client short", "16 to 512 printable characters"},
      {"client 0123456789abcdef0123 extra", "expected ROLE TOKEN"},
      {std::string("client ") + kClient + "\nworker " + kClient, "line 2: the same token"},
      {"# only comments\n", "lists no token"},
  };
  for (const Case& c : cases) {
    auto access = AccessControl::FromText(c.text);
    ASSERT_FALSE(access.ok()) << c.text;
    EXPECT_NE(access.status().message().find(c.message), std::string::npos) << access.status();
    EXPECT_EQ(access.status().message().find("0123456789abcdef"), std::string::npos)
        << access.status();
  }
}

}  // namespace
}  // namespace mtune::server
