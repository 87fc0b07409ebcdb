// mtune-coordinator: serves the Tuner (clients) and Coordinator (workers) services.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "db/backup.h"
#include "db/store.h"
#include "grpcpp/grpcpp.h"
#include "proto/transport_security.h"
#include "server/access.h"
#include "server/coordinator.h"
#include "server/dashboard.h"
#include "server/services.h"

// Writes `port` to `path` so that readers never see a partial file.
static void WritePortFile(const std::string& path, int port) {
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::rename(tmp.c_str(), path.c_str());
}

// The dashboard's gate: the page and its assets hold no data and load without a
// token (the page then sends one with every API call); /api/ needs a read-only
// or client token when tokens are configured.
static mtune::server::HttpAuthorizer DashboardAuthorizer(const mtune::server::AccessControl* access) {
  if (access->open()) return nullptr;
  return [access](const mtune::server::HttpRequestInfo& request) {
    if (request.path != "/api" && request.path.rfind("/api/", 0) != 0) return absl::OkStatus();
    return access->Authorize(request.authorization, mtune::server::Action::kDashboard);
  };
}

int main(int argc, char** argv) {
  // Handle SIGINT/SIGTERM on one thread: block them before any other thread starts
  // (gRPC starts threads as soon as credentials are made; a thread started before
  // this would take SIGTERM's default action and kill the process mid-shutdown).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  CLI::App app{"mtune-coordinator: hands MLIR strategy candidates to workers and stores results"};
  std::string listen = "127.0.0.1:7070";
  std::string db_path = "mtune.sqlite";
  std::string port_file;
  mtune::server::CoordinatorOptions options;
  app.add_option("--listen", listen, "host:port to serve on (port 0 picks a free one)")
      ->capture_default_str();
  app.add_option("--db", db_path, "SQLite file holding jobs and results (created if missing)")
      ->capture_default_str();
  app.add_option("--port-file", port_file, "write the bound port to this file once serving");
  app.add_option("--task-timeout", options.task_time_limit_s,
                 "seconds a candidate may take at most (compile + verify + measure, counted "
                 "from the start of its run); also the limit before a problem has an OK result")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--task-timeout-multiple", options.task_time_multiple,
                 "once a problem has OK results, a task may take this many times the "
                 "shortest OK task so far (at least --task-timeout-floor, at most --task-timeout)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--task-timeout-floor", options.task_time_floor_s,
                 "the shortest time limit a task is given, seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string backup_path;
  app.add_option("--backup", backup_path,
                 "copy the --db file to this file with SQLite's online backup API (safe while "
                 "a coordinator is serving from it), then exit");
  app.add_option("--min-measure", options.min_measure_s, "minimum timed seconds per candidate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--heartbeat-timeout", options.heartbeat_timeout_s,
                 "seconds of worker silence before its task is re-queued")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string http_address, http_port_file, web_root = mtune::server::DefaultWebRoot();
  app.add_option("--http", http_address,
                 "also serve the read-only dashboard (web page and /api/ JSON) on host:port "
                 "(port 0 picks a free one), e.g. 127.0.0.1:8080");
  app.add_option("--http-port-file", http_port_file,
                 "write the dashboard's bound port to this file once serving");
  app.add_option("--web-root", web_root, "directory of the bundled dashboard page")
      ->capture_default_str();
  // Security (README "Security"). Without --tls-cert the service is plaintext,
  // which is allowed on loopback only unless --insecure says otherwise.
  mtune::transport::ServerTls tls;
  std::string tokens_file;
  bool insecure = false;
  app.add_option("--tls-cert", tls.cert_file,
                 "serve gRPC over TLS with this PEM certificate (chain); default: plaintext, "
                 "for loopback development only")
      ->group("Security");
  app.add_option("--tls-key", tls.key_file, "PEM private key of --tls-cert")->group("Security");
  app.add_option("--tls-client-ca", tls.client_ca_file,
                 "PEM CA that signs worker client certificates: worker calls then need one "
                 "(mutual TLS); the CLI still authenticates with tokens")
      ->group("Security");
  app.add_option("--tokens-file", tokens_file,
                 "file of 'ROLE TOKEN' lines (roles client, worker, read-only; chmod 600) "
                 "checked on every RPC and dashboard API call; default: none, every caller may "
                 "do everything (development only)")
      ->group("Security");
  app.add_flag("--insecure", insecure,
               "allow plaintext gRPC on a non-loopback --listen address (trusted networks only)")
      ->group("Security");
  CLI11_PARSE(app, argc, argv);
  if (!backup_path.empty()) {
    auto report = mtune::db::BackupDatabase(db_path, backup_path);
    if (!report.ok()) {
      fprintf(stderr, "mtune-coordinator: backup failed: %s\n",
              report.status().ToString().c_str());
      return 1;
    }
    fprintf(stderr, "mtune-coordinator: backed up %s to %s (%lld pages, %lld bytes)\n",
            db_path.c_str(), backup_path.c_str(), static_cast<long long>(report->pages),
            static_cast<long long>(report->bytes));
    return 0;
  }
  if (tls.cert_file.empty() && !insecure && !mtune::transport::IsLoopbackAddress(listen)) {
    fprintf(stderr,
            "mtune-coordinator: refusing to serve plaintext gRPC on %s, which is not loopback: "
            "pass --tls-cert/--tls-key (see deploy/make-dev-certs.sh), or --insecure on a "
            "network you trust\n",
            listen.c_str());
    return 2;
  }
  auto credentials = mtune::transport::MakeServerCredentials(tls);
  if (!credentials.ok()) {
    fprintf(stderr, "mtune-coordinator: %s\n", std::string(credentials.status().message()).c_str());
    return 2;
  }
  mtune::server::AccessControl access;
  if (!tokens_file.empty()) {
    auto loaded = mtune::server::AccessControl::LoadTokensFile(tokens_file);
    if (!loaded.ok()) {
      fprintf(stderr, "mtune-coordinator: %s\n", std::string(loaded.status().message()).c_str());
      return 2;
    }
    access = *std::move(loaded);
  }
  const mtune::server::ServiceSecurity security{
      .access = &access, .require_worker_certificate = !tls.client_ca_file.empty()};
  std::pair<std::string, int> http_host_port;
  if (!http_address.empty()) {
    auto parsed = mtune::server::ParseHostPort(http_address);
    if (!parsed.ok()) {
      fprintf(stderr, "mtune-coordinator: --http: %s\n", parsed.status().ToString().c_str());
      return 1;
    }
    http_host_port = *parsed;
  }

  auto store = mtune::db::Store::Open(db_path);
  if (!store.ok()) {
    fprintf(stderr, "mtune-coordinator: cannot open %s: %s\n", db_path.c_str(),
            store.status().ToString().c_str());
    return 1;
  }
  mtune::server::Coordinator coordinator(store->get(), options);
  if (absl::Status s = coordinator.ResumeRunningJobs(); !s.ok()) {
    fprintf(stderr, "mtune-coordinator: cannot resume jobs: %s\n", s.ToString().c_str());
    return 1;
  }
  std::atomic<bool> shutting_down{false};
  mtune::server::TunerService tuner(&coordinator, {MTUNE_VERSION, MTUNE_MLIR_VERSION},
                                    &shutting_down, security);
  mtune::server::CoordinatorService workers(&coordinator, &shutting_down, security);

  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, *credentials, &port);
  builder.RegisterService(&tuner);
  builder.RegisterService(&workers);
  // gRPC's default SO_REUSEPORT would let a second coordinator share this port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Requests are small; responses (an export) may be large.
  builder.SetMaxReceiveMessageSize(mtune::transport::kMaxRequestBytes);
  builder.SetMaxSendMessageSize(mtune::transport::kMaxResponseBytes);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    fprintf(stderr, "mtune-coordinator: cannot listen on %s\n", listen.c_str());
    return 1;
  }
  fprintf(stderr, "mtune-coordinator: serving on port %d (db %s)\n", port, db_path.c_str());
  // What protects the service, said once at start (never a secret).
  if (tls.cert_file.empty())
    fprintf(stderr, "mtune-coordinator: WARNING: plaintext gRPC (development only; use "
                    "--tls-cert/--tls-key on a network)\n");
  else
    fprintf(stderr, "mtune-coordinator: TLS with certificate %s%s\n", tls.cert_file.c_str(),
            tls.client_ca_file.empty() ? ""
                                       : "; workers need a client certificate (mutual TLS)");
  if (access.open())
    fprintf(stderr, "mtune-coordinator: WARNING: no --tokens-file: the service is open, anyone "
                    "who reaches it may submit, cancel, query and act as a worker "
                    "(development only)\n");
  else
    fprintf(stderr, "mtune-coordinator: access control: %s\n", access.Summary().c_str());
  if (!port_file.empty()) WritePortFile(port_file, port);

  std::unique_ptr<mtune::server::DashboardSource> dashboard_source;
  std::unique_ptr<mtune::server::Dashboard> dashboard;
  if (!http_address.empty()) {
    dashboard_source = mtune::server::MakeCoordinatorSource(&coordinator);
    auto started = mtune::server::Dashboard::Start(
        dashboard_source.get(), {.host = http_host_port.first, .port = http_host_port.second,
                                 .web_root = web_root,
                                 .authorizer = DashboardAuthorizer(&access)});
    if (!started.ok()) {
      fprintf(stderr, "mtune-coordinator: dashboard: %s\n", started.status().ToString().c_str());
      return 1;
    }
    dashboard = std::move(*started);
    fprintf(stderr, "mtune-coordinator: dashboard on http://%s:%d/\n",
            http_host_port.first.c_str(), dashboard->port());
    if (!http_port_file.empty()) WritePortFile(http_port_file, dashboard->port());
  }

  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr, "mtune-coordinator: signal %d, shutting down\n", sig);
    shutting_down = true;
    coordinator.Stop();  // ends the Work streams (callback reactors have no thread to notice)
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  server->Wait();
  stopper.join();
  if (dashboard) dashboard->Stop();
  // How well concurrent results shared transactions (group commit), for tuning.
  mtune::db::Store::GroupCommitStats commits = (*store)->group_commit_stats();
  const mtune::db::Store::GroupCommitStats pushed = coordinator.async_commit_stats();
  commits.transactions += pushed.transactions;
  commits.trials += pushed.trials;
  if (commits.transactions > 0)
    fprintf(stderr, "mtune-coordinator: stored %llu results in %llu transactions\n",
            static_cast<unsigned long long>(commits.trials),
            static_cast<unsigned long long>(commits.transactions));
  return 0;
}
