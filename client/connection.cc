#include "client/connection.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace mtune::client {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

absl::StatusOr<std::unique_ptr<mtune::v1::Tuner::Stub>> ConnectToCoordinator(
    const std::string& address, double timeout_s) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
  if (!channel->WaitForConnected(deadline))
    return absl::UnavailableError(absl::StrCat("cannot reach the coordinator at ", address,
                                               " within ", timeout_s,
                                               " s (is mtune-coordinator running there?)"));
  return mtune::v1::Tuner::NewStub(channel);
}

}  // namespace mtune::client
