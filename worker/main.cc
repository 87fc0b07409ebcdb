// mtune-worker: a measuring node pinned to one core.
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "worker/affinity.h"
#include "worker/daemon.h"
#include "worker/sandbox.h"

namespace {
mtune::worker::WorkerDaemon* g_daemon = nullptr;
void OnStopSignal(int) {
  if (g_daemon) g_daemon->Stop();
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune-worker: compiles, verifies and times strategy candidates on a pinned core"};
  mtune::worker::DaemonOptions options;
  bool sandbox_mode = false;
  app.add_option("--coordinator", options.coordinator, "coordinator address host:port");
  app.add_option("--cpu", options.cpu, "core to pin compilation and measurement to (-1: none)")
      ->capture_default_str();
  app.add_option("--name", options.name, "unique worker name (default HOST/cpuN)");
  app.add_option("--give-up-after", options.give_up_after_s,
                 "exit after this many seconds without reaching the coordinator (0: never)")
      ->capture_default_str();
  app.add_flag("--sandbox", sandbox_mode, "internal: serve measurements on fds 3/4")->group("");
  std::string token_file;
  app.add_option("--tls-ca", options.security.ca_file,
                 "PEM CA that signed the coordinator's certificate: connect with TLS (default: "
                 "plaintext, for a loopback coordinator in development)")
      ->group("Security");
  app.add_option("--tls-cert", options.security.cert_file,
                 "PEM client certificate, for a coordinator with --tls-client-ca (mutual TLS)")
      ->group("Security");
  app.add_option("--tls-key", options.security.key_file, "PEM private key of --tls-cert")
      ->group("Security");
  app.add_option("--token-file", token_file,
                 "file holding the worker token (chmod 600); default: $MTUNE_TOKEN, else none")
      ->group("Security");
  app.add_flag("--insecure", options.security.insecure,
               "allow sending the token in plaintext to a non-loopback coordinator")
      ->group("Security");
  CLI11_PARSE(app, argc, argv);

  if (sandbox_mode)
    return mtune::worker::RunSandboxServer(mtune::worker::kSandboxRequestFd,
                                           mtune::worker::kSandboxResponseFd, options.cpu);
  if (options.coordinator.empty()) {
    fprintf(stderr, "mtune-worker: --coordinator host:port is required (see --help)\n");
    return 2;
  }
  if (options.cpu >= 0) {
    auto allowed = mtune::worker::AllowedCpus();
    if (allowed.ok() && std::find(allowed->begin(), allowed->end(), options.cpu) == allowed->end()) {
      fprintf(stderr, "mtune-worker: cannot pin to cpu %d: not among this process's cpus\n",
              options.cpu);
      return 2;
    }
  }
  auto token = mtune::transport::LoadClientToken(token_file);
  if (!token.ok()) {
    fprintf(stderr, "mtune-worker: %s\n", std::string(token.status().message()).c_str());
    return 2;
  }
  options.security.token = *token;
  // The sandbox runs generated code: it inherits no secret.
  unsetenv(mtune::transport::kTokenEnv);
  options.sandbox_argv = {"/proc/self/exe", "--sandbox", "--cpu", std::to_string(options.cpu)};
  mtune::worker::WorkerDaemon daemon(options);
  g_daemon = &daemon;
  signal(SIGINT, OnStopSignal);
  signal(SIGTERM, OnStopSignal);
  absl::Status status = daemon.Run();
  if (!status.ok()) {
    fprintf(stderr, "mtune-worker: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
