// mtune-worker: a measuring node pinned to one core.
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/affinity.h"
#include "worker/daemon.h"
#include "worker/fault_injection.h"
#include "worker/overlap_mode.h"
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
  app.add_option("--coordinator", options.coordinator, "coordinator address host:port")
      ->envname("MTUNE_COORDINATOR");
  app.add_option("--cpu", options.cpu, "core to pin compilation and measurement to (-1: none)")
      ->capture_default_str();
  app.add_option("--name", options.name, "unique worker name (default HOST/cpuN)");
  app.add_option("--give-up-after", options.give_up_after_s,
                 "exit after this many seconds without reaching the coordinator (0: never)")
      ->capture_default_str();
  options.sandbox_memory_limit_mib = mtune::worker::kDefaultSandboxMemoryLimitMib;
  app.add_option("--sandbox-memory-limit", options.sandbox_memory_limit_mib,
                 "address-space limit of the process running candidates, MiB (0: none); a "
                 "kernel exhausting it is recorded as a crash")
      ->capture_default_str();
  std::string inject_faults;
  app.add_option("--test-inject-fault", inject_faults,
                 "TEST ONLY: comma-separated faults raised where the kernel runs, one per task "
                 "received, in order: none, segv, sigill, sigbus, oom, hang, wrong");
  bool no_overlap = false;
  std::string compile_cpus_text;
  int prefetch = 1;
  app.add_flag("--no-overlap", no_overlap,
               "compile each candidate on the measuring core and time it before compiling the "
               "next (default: compile the next ones on --compile-cpus while one is timed)");
  app.add_option("--compile-cpus", compile_cpus_text,
                 "cores to compile on while --cpu times, e.g. 1 or 2-5 (default: every core "
                 "this process may use except --cpu; on a worker with no other core, compile "
                 "and time one after another). Keep them off other workers' --cpu")
      ->excludes("--no-overlap");
  app.add_option("--prefetch", prefetch, "candidates compiled ahead of the one being timed (1-7)")
      ->check(CLI::Range(1, 7))
      ->capture_default_str();
  app.add_option("--footprint-bandwidth-max-age", options.footprint_figures_max_age_s,
                 "seconds after which the copy and read bandwidth a bandwidth-bound problem is "
                 "held against, timed at its footprint, are timed again (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--peak-max-age", options.peaks_max_age_s,
                 absl::StrCat("seconds after which the FMA (and bf16) peaks compute-bound results "
                              "are held against are timed again on the measuring core; a kernel "
                              "faster than them has them timed again at once (peaks themselves "
                              "timed for a faster kernel: once they are ",
                              mtune::worker::kBeatenPeaksMinAgeS,
                              " s old). 0: never; the start-up peaks hold"))
      ->check(CLI::NonNegativeNumber)
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

  auto faults = mtune::worker::ParseInjectedFaults(inject_faults);
  if (!faults.ok()) {
    fprintf(stderr, "mtune-worker: --test-inject-fault: %s\n",
            std::string(faults.status().message()).c_str());
    return 2;
  }
  std::vector<int> compile_cpus;
  if (!compile_cpus_text.empty()) {
    auto parsed = mtune::worker::ParseCpuList(compile_cpus_text);
    if (!parsed.ok()) {
      fprintf(stderr, "mtune-worker: --compile-cpus: %s\n",
              std::string(parsed.status().message()).c_str());
      return 2;
    }
    compile_cpus = *parsed;
  }
  if (sandbox_mode)  // the daemon passes one fault to a sandbox it starts for one task
    return mtune::worker::RunSandboxServer(
        mtune::worker::kSandboxRequestFd, mtune::worker::kSandboxResponseFd, options.cpu,
        options.sandbox_memory_limit_mib, faults->empty() ? "" : faults->front(), compile_cpus);
  options.test_inject_faults = *faults;
  if (!options.test_inject_faults.empty())
    fprintf(stderr, "mtune-worker: TEST MODE: injecting faults into the first %zu tasks\n",
            options.test_inject_faults.size());
  if (options.coordinator.empty()) {
    fprintf(stderr, "mtune-worker: --coordinator host:port (or $MTUNE_COORDINATOR) is required (see "
                    "--help)\n");
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
  options.sandbox_argv = {"/proc/self/exe", "--sandbox", "--cpu", std::to_string(options.cpu),
                          "--sandbox-memory-limit",
                          std::to_string(options.sandbox_memory_limit_mib)};
  // Overlap compiling with timing when there is a core to compile on besides the
  // measuring one; say which mode and why, never silently.
  auto mode = mtune::worker::ChooseOverlap(options.cpu, no_overlap, compile_cpus);
  if (!mode.ok()) {
    fprintf(stderr, "mtune-worker: %s\n", std::string(mode.status().message()).c_str());
    return 2;
  }
  fprintf(stderr, "mtune-worker: %s\n", mode->description.c_str());
  if (!mode->compile_cpus.empty()) {
    options.prefetch = prefetch;
    options.sandbox_argv.insert(options.sandbox_argv.end(),
                                {"--compile-cpus", absl::StrJoin(mode->compile_cpus, ",")});
  }
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
