#include "proto/transport_security.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "grpcpp/support/client_interceptor.h"

namespace mtune::transport {
namespace {

// Adds `authorization: Bearer TOKEN` to the initial metadata of every call.
// An interceptor rather than call credentials: gRPC sends call credentials only
// over TLS, and a development coordinator on loopback may check tokens too.
class BearerInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA))
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(std::string token) : header_("Bearer " + std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*)
      override {
    return new BearerInterceptor(&header_);
  }

 private:
  const std::string header_;
};

}  // namespace

bool IsLoopbackAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:")) return true;
  absl::string_view host = address;
  if (const size_t colon = host.rfind(':'); colon != absl::string_view::npos && !host.empty() &&
                                            host.back() != ']')
    host = host.substr(0, colon);
  absl::ConsumePrefix(&host, "ipv4:");
  absl::ConsumePrefix(&host, "ipv6:");
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::StatusOr<std::string> ReadSecurityFile(const std::string& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", what, " ", path));
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().empty()) return absl::InvalidArgumentError(absl::StrCat(what, " ", path, " is empty"));
  return text.str();
}

static absl::StatusOr<std::string> ReadPem(const std::string& path, absl::string_view what) {
  auto text = ReadSecurityFile(path, what);
  if (!text.ok()) return text.status();
  if (!absl::StrContains(*text, "-----BEGIN "))
    return absl::InvalidArgumentError(absl::StrCat(what, " ", path, " is not a PEM file"));
  return text;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTls& tls) {
  if (tls.cert_file.empty()) {
    if (!tls.key_file.empty() || !tls.client_ca_file.empty())
      return absl::InvalidArgumentError("--tls-key and --tls-client-ca need --tls-cert");
    return grpc::InsecureServerCredentials();
  }
  if (tls.key_file.empty()) return absl::InvalidArgumentError("--tls-cert needs --tls-key");
  auto cert = ReadPem(tls.cert_file, "TLS certificate");
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(tls.key_file, "TLS private key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!tls.client_ca_file.empty()) {
    auto ca = ReadPem(tls.client_ca_file, "client CA");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    // Certificates are verified when presented but not required of every client:
    // the coordinator requires them of workers only (the CLI uses tokens).
    options.client_certificate_request = GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ClientSecurity& security) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (security.ca_file.empty()) {
    if (!security.cert_file.empty() || !security.key_file.empty())
      return absl::InvalidArgumentError("--tls-cert and --tls-key need --tls-ca");
    if (!security.token.empty() && !security.insecure && !IsLoopbackAddress(address))
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to send a token in plaintext to ", address,
          ": pass --tls-ca CA.pem (or --insecure on a network you trust)"));
    credentials = grpc::InsecureChannelCredentials();
  } else {
    if (security.cert_file.empty() != security.key_file.empty())
      return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
    grpc::SslCredentialsOptions options;
    auto ca = ReadPem(security.ca_file, "CA certificate");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    if (!security.cert_file.empty()) {
      auto cert = ReadPem(security.cert_file, "client certificate");
      if (!cert.ok()) return cert.status();
      auto key = ReadPem(security.key_file, "client private key");
      if (!key.ok()) return key.status();
      options.pem_cert_chain = *cert;
      options.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(options);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxResponseBytes);
  args.SetMaxSendMessageSize(kMaxRequestBytes);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (!security.token.empty())
    interceptors.push_back(std::make_unique<BearerInterceptorFactory>(security.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, args,
                                                                 std::move(interceptors));
}

absl::StatusOr<std::string> LoadClientToken(const std::string& token_file) {
  if (token_file.empty()) {
    const char* env = std::getenv(kTokenEnv);
    return std::string(env == nullptr ? "" : absl::StripAsciiWhitespace(env));
  }
  struct stat st;
  if (stat(token_file.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
    return absl::PermissionDeniedError(absl::StrCat(
        "token file ", token_file, " is accessible by group or others (chmod 600 it)"));
  auto text = ReadSecurityFile(token_file, "token file");
  if (!text.ok()) return text.status();
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty() || absl::StrContains(token, "\n"))
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", token_file, " must hold one token on one line"));
  return token;
}

std::string ConnectionHint(const ClientSecurity& security) {
  if (security.ca_file.empty())
    return "is mtune-coordinator running there? if it serves TLS, pass --tls-ca CA.pem";
  return absl::StrCat("is mtune-coordinator running there with TLS, its certificate signed by ",
                      security.ca_file,
                      " and valid for this address? a plaintext coordinator needs no --tls-ca");
}

}  // namespace mtune::transport
