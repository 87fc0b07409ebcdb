// A checked connection from the CLI to a coordinator's Tuner service.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "proto/mtune.grpc.pb.h"
#include "proto/transport_security.h"

namespace mtune::client {

// Connects within `timeout_s` (TLS and token per `security`); Unavailable with the
// transport's reason and a hint when the connection cannot be made.
absl::StatusOr<std::unique_ptr<mtune::v1::Tuner::Stub>> ConnectToCoordinator(
    const std::string& address, const transport::ClientSecurity& security = {},
    double timeout_s = 5);

// grpc::Status -> absl::Status, keeping code and message.
absl::Status FromGrpc(const grpc::Status& status);

}  // namespace mtune::client
