// What every mtune subcommand shares: its error exit, the coordinator's flags and the
// connection they describe, and the coordinator's best strategy for a problem.
#include <cstdio>
#include <cstdlib>

#include "client/cli.h"
#include "client/connection.h"

namespace mtune::client::cli {
namespace {

constexpr char kDefaultCoordinator[] = "127.0.0.1:7070";

std::string CoordinatorHelp() {
  return std::string("coordinator address host:port (default: $MTUNE_COORDINATOR, else ") +
         kDefaultCoordinator + ")";
}

}  // namespace

int Fail(const absl::Status& status) {
  fprintf(stderr, "mtune: %s\n", std::string(status.message()).c_str());
  return kFailed;
}

void AddCoordinatorAddress(CLI::App& app, CoordinatorFlags& flags) {
  app.add_option("--coordinator", flags.address_before_subcommand, CoordinatorHelp());
}

void AddCoordinatorFlags(CLI::App* command, CoordinatorFlags& flags) {
  command->add_option("--coordinator", flags.address, CoordinatorHelp());
  // The token itself is never a flag (command lines are visible to every user).
  command->add_option("--tls-ca", flags.security.ca_file,
                      "PEM CA that signed the coordinator's certificate: connect with TLS "
                      "(default: plaintext, for a loopback coordinator in development)")
      ->envname("MTUNE_TLS_CA")
      ->group("Security");
  command->add_option("--token-file", flags.token_file,
                      "file holding your token (chmod 600); default: $MTUNE_TOKEN, else none")
      ->envname("MTUNE_TOKEN_FILE")
      ->group("Security");
  command->add_flag("--insecure", flags.security.insecure,
                    "allow sending the token in plaintext to a non-loopback coordinator")
      ->group("Security");
}

absl::StatusOr<std::unique_ptr<mtune::v1::Tuner::Stub>> Connect(CoordinatorFlags flags) {
  std::string address = flags.address;
  if (address.empty()) address = flags.address_before_subcommand;
  if (const char* env = std::getenv("MTUNE_COORDINATOR"); address.empty() && env && *env) address = env;
  if (address.empty()) address = kDefaultCoordinator;
  auto token = transport::LoadClientToken(flags.token_file);
  if (!token.ok()) return token.status();
  flags.security.token = *token;
  return ConnectToCoordinator(address, flags.security);
}

absl::StatusOr<mtune::v1::BestStrategy> FetchBest(mtune::v1::Tuner::Stub& stub, const std::string& problem,
                                                  const std::string& target) {
  grpc::ClientContext context;
  mtune::v1::GetBestRequest request;
  request.set_problem(problem);
  request.set_target_id(target);
  mtune::v1::BestStrategy best;
  if (auto s = FromGrpc(stub.GetBest(&context, request, &best)); !s.ok()) return s;
  return best;
}

}  // namespace mtune::client::cli
