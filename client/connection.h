// A checked connection from the CLI to a coordinator's Tuner service.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "proto/mtune.grpc.pb.h"

namespace mtune::client {

// Connects within `timeout_s`; Unavailable with a hint when nobody answers.
absl::StatusOr<std::unique_ptr<mtune::v1::Tuner::Stub>> ConnectToCoordinator(
    const std::string& address, double timeout_s = 5);

// grpc::Status -> absl::Status, keeping code and message.
absl::Status FromGrpc(const grpc::Status& status);

}  // namespace mtune::client
