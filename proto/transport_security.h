// Security of mtune's gRPC wire, shared by every end of it (coordinator, worker,
// CLI): TLS credentials from PEM files, the bearer token clients send as
// `authorization: Bearer TOKEN` metadata, and the message size limits.
//
// Plaintext is the default only for loopback development: a coordinator refuses
// to listen in plaintext on another address, and a client refuses to send a token
// in plaintext to another address, unless told `--insecure`.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"

namespace mtune::transport {

// Largest request the coordinator accepts (every mtune request is small: a job
// spec, a worker's calibration, one result).
inline constexpr int kMaxRequestBytes = 4 << 20;
// Largest response the coordinator sends and a client accepts (an export holds
// a whole best-strategy database).
inline constexpr int kMaxResponseBytes = 256 << 20;

// Environment variables read by clients and workers (never a flag: command lines
// are visible to every user of the machine).
inline constexpr char kTokenEnv[] = "MTUNE_TOKEN";

// TLS of a server, PEM file paths. Empty cert_file = plaintext.
struct ServerTls {
  std::string cert_file;
  std::string key_file;
  // CA whose client certificates are verified (mutual TLS); empty = none requested.
  std::string client_ca_file;
};

// TLS and token of a client, PEM file paths. Empty ca_file = plaintext.
struct ClientSecurity {
  // CA that signed the coordinator's certificate.
  std::string ca_file;
  // Optional client certificate and key (workers, with mutual TLS).
  std::string cert_file;
  std::string key_file;
  // Bearer token sent with every call; empty = none.
  std::string token;
  // Allow plaintext with a token to a non-loopback address.
  bool insecure = false;
};

// True for 127.0.0.0/8, ::1, "localhost" and unix: addresses (host:port form).
bool IsLoopbackAddress(absl::string_view address);

// TLS (or, with no cert_file, plaintext) server credentials; InvalidArgument
// naming the file that is missing, unreadable or not PEM.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTls& tls);

// A channel to `address` with TLS when security.ca_file is set, the token
// attached to every call, and kMaxResponseBytes as receive limit.
// FailedPrecondition when a token would travel in plaintext off loopback.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ClientSecurity& security);

// The token from `token_file` (whitespace trimmed) when given, else from
// $MTUNE_TOKEN, else "". The file must not be readable by group or others.
absl::StatusOr<std::string> LoadClientToken(const std::string& token_file);

// Reads a whole file that holds a secret or a certificate; InvalidArgument naming
// `what` and the path when it cannot be read or is empty.
absl::StatusOr<std::string> ReadSecurityFile(const std::string& path, absl::string_view what);

// A hint for a failed connection: what to check given the security in use.
std::string ConnectionHint(const ClientSecurity& security);

}  // namespace mtune::transport
