#include "client/connection.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace mtune::client {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  // gRPC answers a method the server does not have with an empty message.
  if (status.error_message().empty() && code == absl::StatusCode::kUnimplemented)
    return absl::UnimplementedError(
        "the coordinator does not offer this call (it runs an older mtune than this client)");
  if (status.error_message().empty())
    return absl::Status(code, absl::StrCat("the coordinator answered ", absl::StatusCodeToString(code)));
  return absl::Status(code, status.error_message());
}

absl::StatusOr<std::unique_ptr<mtune::v1::Tuner::Stub>> ConnectToCoordinator(
    const std::string& address, const transport::ClientSecurity& security, double timeout_s) {
  auto channel = transport::MakeChannel(address, security);
  if (!channel.ok()) return channel.status();
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
  if ((*channel)->WaitForConnected(deadline)) return mtune::v1::Tuner::NewStub(*channel);
  // The channel does not say why; one short call does (refused connection, TLS
  // handshake failure, a plaintext peer closing a TLS connection, ...).
  auto stub = mtune::v1::Tuner::NewStub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  mtune::v1::ListWorkersResponse ignored;
  grpc::Status probe = stub->ListWorkers(&context, {}, &ignored);
  return absl::UnavailableError(absl::StrCat(
      "cannot reach the coordinator at ", address, " within ", timeout_s, " s",
      probe.ok() ? "" : absl::StrCat(" (", probe.error_message(), ")"), ": ",
      transport::ConnectionHint(security)));
}

}  // namespace mtune::client
