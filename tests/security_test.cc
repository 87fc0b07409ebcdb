// Who may do what, against a real coordinator serving TLS with worker client
// certificates (mutual TLS) and tokens, real workers and the real CLI, all on
// 127.0.0.1 with credentials made by deploy/make-dev-certs.sh.
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <thread>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "proto/mtune.grpc.pb.h"
#include "proto/transport_security.h"
#include "tests/subprocess.h"

namespace mtune {
namespace {

using testing::MakeTempDir;
using testing::ReadFile;
using testing::RunCommand;
using testing::SleepS;
using testing::Subprocess;
using testing::WaitForPort;

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// One coordinator with TLS, mutual TLS for workers, tokens and the dashboard,
// shared by the suite (starting one takes a moment).
class Secured : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = MakeTempDir("mtune-security-");
    certs_ = dir_ + "/certs";
    std::string out;
    ASSERT_EQ(RunCommand(std::string(MTUNE_SOURCE_DIR) + "/deploy/make-dev-certs.sh " + certs_, &out), 0)
        << out;
    // A second, unrelated CA: its certificates must not be trusted.
    ASSERT_EQ(RunCommand(std::string(MTUNE_SOURCE_DIR) + "/deploy/make-dev-certs.sh " + dir_ +
                             "/other",
                         &out),
              0)
        << out;
    for (const char* role : {"client", "worker", "read-only"})
      tokens_[role] = Trimmed(ReadFile(certs_ + "/" + role + ".token"));
    coordinator_ = new Subprocess(
        {MTUNE_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--port-file", dir_ + "/port", "--db",
         dir_ + "/mtune.sqlite", "--min-measure", "0.02", "--http", "127.0.0.1:0",
         "--http-port-file", dir_ + "/http-port", "--tls-cert", certs_ + "/server.pem",
         "--tls-key", certs_ + "/server.key", "--tls-client-ca", certs_ + "/ca.pem",
         "--tokens-file", certs_ + "/tokens"},
        dir_ + "/coordinator.log");
    const std::string port = WaitForPort(dir_ + "/port", 20);
    const std::string http_port = WaitForPort(dir_ + "/http-port", 20);
    ASSERT_FALSE(port.empty() || http_port.empty()) << coordinator_->Log();
    address_ = "127.0.0.1:" + port;
    http_port_ = std::stoi(http_port);
  }

  static void TearDownTestSuite() {
    delete coordinator_;
    coordinator_ = nullptr;
  }

  // A channel with TLS (trusting `ca`), an optional worker certificate and `token`.
  static std::shared_ptr<grpc::Channel> Channel(const std::string& token, bool worker_cert = true,
                                                const std::string& ca = "") {
    transport::ClientSecurity security;
    security.ca_file = ca.empty() ? certs_ + "/ca.pem" : ca;
    if (worker_cert) {
      security.cert_file = certs_ + "/worker.pem";
      security.key_file = certs_ + "/worker.key";
    }
    security.token = token;
    auto channel = transport::MakeChannel(address_, security);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return *channel;
  }

  static std::string Cli(const std::string& args) {
    return std::string(MTUNE_CLI_BIN) + " " + args + " --coordinator " + address_;
  }

  static inline std::string dir_, certs_, address_;
  static inline int http_port_ = 0;
  static inline std::map<std::string, std::string> tokens_;
  static inline Subprocess* coordinator_ = nullptr;
};

// Calls every RPC of both services with `token`; the status code of each.
std::map<std::string, grpc::StatusCode> CallEveryRpc(const std::shared_ptr<grpc::Channel>& channel) {
  auto tuner = mtune::v1::Tuner::NewStub(channel);
  auto coord = mtune::v1::Coordinator::NewStub(channel);
  std::map<std::string, grpc::StatusCode> codes;
  auto call = [&](const std::string& name, const std::function<grpc::Status(grpc::ClientContext*)>& f) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    codes[name] = f(&context).error_code();
  };
  // Requests that pass access control fail harmlessly afterwards (bad spec,
  // unknown job, unknown worker): this test changes nothing in the service.
  mtune::v1::Job job;
  call("SubmitJob", [&](auto* c) {
    mtune::v1::SubmitJobResponse r;
    return tuner->SubmitJob(c, {}, &r);
  });
  mtune::v1::GetJobRequest get;
  get.set_job_id(999);
  call("GetJob", [&](auto* c) { return tuner->GetJob(c, get, &job); });
  call("ListJobs", [&](auto* c) {
    mtune::v1::ListJobsResponse r;
    return tuner->ListJobs(c, {}, &r);
  });
  mtune::v1::WatchJobRequest watch;
  watch.set_job_id(999);
  call("WatchJob", [&](auto* c) {
    auto reader = tuner->WatchJob(c, watch);
    while (reader->Read(&job)) {
    }
    return reader->Finish();
  });
  mtune::v1::CancelJobRequest cancel;
  cancel.set_job_id(999);
  call("CancelJob", [&](auto* c) { return tuner->CancelJob(c, cancel, &job); });
  call("ListResults", [&](auto* c) {
    mtune::v1::ListResultsResponse r;
    return tuner->ListResults(c, {}, &r);
  });
  mtune::v1::GetBestRequest best;
  best.set_problem("matmul:m=8,n=8,k=8:f32");
  call("GetBest", [&](auto* c) {
    mtune::v1::BestStrategy r;
    return tuner->GetBest(c, best, &r);
  });
  call("Export", [&](auto* c) {
    mtune::v1::ExportResponse r;
    return tuner->Export(c, {}, &r);
  });
  call("ListWorkers", [&](auto* c) {
    mtune::v1::ListWorkersResponse r;
    return tuner->ListWorkers(c, {}, &r);
  });
  mtune::v1::ConvergenceRequest convergence;
  convergence.set_job_id(999);
  call("GetConvergence", [&](auto* c) {
    mtune::v1::ConvergenceResponse r;
    return tuner->GetConvergence(c, convergence, &r);
  });
  call("Register", [&](auto* c) {
    mtune::v1::RegisterRequest r;  // no name: refused after access control
    mtune::v1::RegisterResponse resp;
    return coord->Register(c, r, &resp);
  });
  // The worker stream: a start for an unknown worker, then a report; the first
  // refusal ends the stream with its status.
  call("Work", [&](auto* c) {
    auto stream = coord->Work(c);
    mtune::v1::WorkerMessage start;
    start.mutable_start()->set_worker_id("no-such-worker");
    mtune::v1::WorkerMessage report;
    report.mutable_report()->set_task_id(999);
    if (stream->Write(start)) (void)stream->Write(report);
    stream->WritesDone();
    mtune::v1::CoordinatorMessage in;
    while (stream->Read(&in)) {
    }
    return stream->Finish();
  });
  mtune::v1::HeartbeatRequest beat;
  beat.set_worker_id("no-such-worker");
  call("Heartbeat", [&](auto* c) {
    mtune::v1::HeartbeatResponse r;
    return coord->Heartbeat(c, beat, &r);
  });
  return codes;
}

TEST_F(Secured, EveryRpcChecksTheRoleOfItsToken) {
  const std::set<std::string> change = {"SubmitJob", "CancelJob"};
  const std::set<std::string> work = {"Register", "Work", "Heartbeat"};
  for (const std::string role : {"", "client", "worker", "read-only", "forged"}) {
    const std::string token = role.empty() ? "" : role == "forged" ? std::string(64, 'f') : tokens_[role];
    const auto codes = CallEveryRpc(Channel(token));
    ASSERT_EQ(codes.size(), 13u);
    for (const auto& [rpc, code] : codes) {
      bool allowed = role == "client"      ? !work.contains(rpc)
                     : role == "worker"    ? work.contains(rpc)
                     : role == "read-only" ? !work.contains(rpc) && !change.contains(rpc)
                                           : false;
      const grpc::StatusCode want = allowed                              ? code
                                    : role.empty() || role == "forged" ? grpc::StatusCode::UNAUTHENTICATED
                                                                       : grpc::StatusCode::PERMISSION_DENIED;
      EXPECT_EQ(code, want) << rpc << " with role '" << role << "'";
      if (allowed) {
        EXPECT_NE(code, grpc::StatusCode::UNAUTHENTICATED) << rpc << " " << role;
        EXPECT_NE(code, grpc::StatusCode::PERMISSION_DENIED) << rpc << " " << role;
        EXPECT_NE(code, grpc::StatusCode::UNAVAILABLE) << rpc << " " << role;
      }
    }
  }
  // Worker calls need the client certificate too, whatever the token.
  auto no_cert = CallEveryRpc(Channel(tokens_["worker"], /*worker_cert=*/false));
  for (const std::string& rpc : work) EXPECT_EQ(no_cert[rpc], grpc::StatusCode::UNAUTHENTICATED) << rpc;
  EXPECT_EQ(no_cert["ListWorkers"], grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(Secured, AWorkerWithCertificateAndTokenTunesAJobForTheCli) {
  Subprocess worker({MTUNE_WORKER_BIN, "--coordinator", address_, "--cpu", "0", "--name", "w0",
                     "--give-up-after", "60", "--tls-ca", certs_ + "/ca.pem", "--tls-cert",
                     certs_ + "/worker.pem", "--tls-key", certs_ + "/worker.key", "--token-file",
                     certs_ + "/worker.token"},
                    dir_ + "/w0.log");
  std::string out;
  const std::string tls = " --tls-ca " + certs_ + "/ca.pem";
  bool registered = false;
  for (int i = 0; i < 600 && !registered; ++i) {
    RunCommand(Cli("workers" + tls + " --token-file " + certs_ + "/read-only.token"), &out);
    registered = out.find("w0") != std::string::npos;
    if (!registered) SleepS(0.1);
  }
  ASSERT_TRUE(registered) << out << worker.Log();
  // The client token from the environment submits, watches and reads the best.
  ASSERT_EQ(RunCommand("MTUNE_TOKEN=" + tokens_["client"] + " " +
                           Cli("submit --problem matmul:m=64,n=64,k=64:f32 --trials 2 --seed 1 "
                               "--no-warm-start --wait" + tls),
                       &out),
            0)
      << out << worker.Log();
  EXPECT_NE(out.find("GFLOP/s"), std::string::npos) << out;
  // A read-only token may look but not cancel.
  EXPECT_EQ(RunCommand(Cli("status 1" + tls + " --token-file " + certs_ + "/read-only.token"), &out), 0)
      << out;
  EXPECT_EQ(RunCommand(Cli("cancel 1" + tls + " --token-file " + certs_ + "/read-only.token"), &out), 1);
  EXPECT_NE(out.find("a read-only token may not submit or cancel jobs"), std::string::npos) << out;
  EXPECT_EQ(RunCommand(Cli("status 1" + tls), &out), 1);
  EXPECT_NE(out.find("missing token"), std::string::npos) << out;
  worker.Signal(SIGTERM);
  worker.Wait(20);

  // No secret ever reaches a log.
  const std::string logs = coordinator_->Log() + worker.Log();
  for (const auto& [role, token] : tokens_)
    EXPECT_EQ(logs.find(token), std::string::npos) << role << " token logged";
  EXPECT_NE(coordinator_->Log().find("access control: 1 client, 1 worker, 1 read-only tokens"),
            std::string::npos)
      << coordinator_->Log();
}

TEST_F(Secured, WorkersWithoutCertificateOrWithTheWrongTokenAreRefused) {
  const std::vector<std::string> base = {MTUNE_WORKER_BIN, "--coordinator", address_, "--cpu", "0",
                                         "--give-up-after", "30", "--tls-ca", certs_ + "/ca.pem"};
  struct Case {
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--name", "nocert", "--token-file", certs_ + "/worker.token"}, "client certificate"},
      {{"--name", "client", "--tls-cert", certs_ + "/worker.pem", "--tls-key",
        certs_ + "/worker.key", "--token-file", certs_ + "/client.token"},
       "a client token may not act as a worker"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), c.extra.begin(), c.extra.end());
    Subprocess worker(argv, dir_ + "/refused-" + c.extra[1] + ".log");
    const int status = worker.Wait(120);
    ASSERT_NE(status, -1) << "a refused worker kept running:\n" << worker.Log();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << worker.Log();
    EXPECT_NE(worker.Log().find(c.message), std::string::npos) << worker.Log();
  }
}

TEST_F(Secured, PlaintextOrUntrustingClientsFailWithAClearError) {
  std::string out;
  // Plaintext to a TLS coordinator.
  EXPECT_EQ(RunCommand(Cli("workers --token-file " + certs_ + "/client.token"), &out), 1);
  EXPECT_NE(out.find("cannot reach the coordinator"), std::string::npos) << out;
  EXPECT_NE(out.find("if it serves TLS, pass --tls-ca"), std::string::npos) << out;
  // TLS trusting another CA: the handshake fails and says so.
  EXPECT_EQ(RunCommand(Cli("workers --tls-ca " + dir_ + "/other/ca.pem"), &out), 1);
  EXPECT_NE(out.find("cannot reach the coordinator"), std::string::npos) << out;
  EXPECT_NE(out.find("certificate signed by " + dir_ + "/other/ca.pem"), std::string::npos) << out;
  // Files that are not what they claim to be.
  EXPECT_EQ(RunCommand(Cli("workers --tls-ca " + certs_ + "/tokens"), &out), 1);
  EXPECT_NE(out.find("is not a PEM file"), std::string::npos) << out;
  chmod((certs_ + "/client.token").c_str(), 0644);
  EXPECT_EQ(RunCommand(Cli("workers --tls-ca " + certs_ + "/ca.pem --token-file " + certs_ +
                           "/client.token"),
                       &out),
            1);
  chmod((certs_ + "/client.token").c_str(), 0600);
  EXPECT_NE(out.find("chmod 600"), std::string::npos) << out;
  // A token never travels in plaintext off loopback.
  EXPECT_EQ(RunCommand("MTUNE_TOKEN=" + tokens_["client"] + " " + std::string(MTUNE_CLI_BIN) +
                           " workers --coordinator 10.255.255.1:7070",
                       &out),
            1);
  EXPECT_NE(out.find("refusing to send a token in plaintext"), std::string::npos) << out;
}

TEST_F(Secured, TheDashboardApiNeedsAReadingToken) {
  httplib::Client http("127.0.0.1", http_port_);
  auto get = [&](const std::string& path, const std::string& token) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = http.Get(path, headers);
    return res ? res->status : -1;
  };
  EXPECT_EQ(get("/api/jobs", ""), 401);
  EXPECT_EQ(get("/api/jobs", std::string(64, 'f')), 401);
  EXPECT_EQ(get("/api/workers", tokens_["worker"]), 403);
  EXPECT_EQ(get("/api/jobs", tokens_["read-only"]), 200);
  EXPECT_EQ(get("/api/workers", tokens_["client"]), 200);
  // The page itself holds no data: it loads, then sends its token to /api/.
  EXPECT_EQ(get("/", ""), 200);
}

TEST_F(Secured, OversizedRequestsAreRefusedByTheTransport) {
  auto tuner = mtune::v1::Tuner::NewStub(Channel(tokens_["client"]));
  grpc::ClientContext context;
  mtune::v1::SubmitJobRequest request;
  request.mutable_spec()->set_template_name(std::string(transport::kMaxRequestBytes + 1, 'x'));
  mtune::v1::SubmitJobResponse response;
  grpc::Status status = tuner->SubmitJob(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  // Under the transport limit, the spec's own bounds answer.
  grpc::ClientContext again;
  request.mutable_spec()->set_template_name(std::string(1000, 'x'));
  status = tuner->SubmitJob(&again, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("at most 256"), std::string::npos) << status.error_message();
}

TEST(Coordinator, RefusesPlaintextOffLoopbackAndSaysWhenItIsOpen) {
  const std::string dir = MakeTempDir("mtune-open-");
  Subprocess refused({MTUNE_COORDINATOR_BIN, "--listen", "0.0.0.0:0", "--db", dir + "/db.sqlite"},
                     dir + "/refused.log");
  const int status = refused.Wait(30);
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
  EXPECT_NE(refused.Log().find("refusing to serve plaintext gRPC on 0.0.0.0:0"), std::string::npos)
      << refused.Log();

  Subprocess open({MTUNE_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--port-file", dir + "/port",
                   "--db", dir + "/db.sqlite"},
                  dir + "/open.log");
  ASSERT_FALSE(WaitForPort(dir + "/port", 20).empty()) << open.Log();
  EXPECT_NE(open.Log().find("WARNING: plaintext gRPC"), std::string::npos) << open.Log();
  EXPECT_NE(open.Log().find("WARNING: no --tokens-file: the service is open"), std::string::npos)
      << open.Log();

  // A world-readable tokens file is refused.
  const std::string tokens = dir + "/tokens";
  FILE* f = fopen(tokens.c_str(), "w");
  fputs("client 0123456789abcdef0123456789\n", f);
  fclose(f);
  chmod(tokens.c_str(), 0644);
  Subprocess leaky({MTUNE_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--db", dir + "/db2.sqlite",
                    "--tokens-file", tokens},
                   dir + "/leaky.log");
  ASSERT_NE(leaky.Wait(30), -1);
  EXPECT_NE(leaky.Log().find("chmod 600"), std::string::npos) << leaky.Log();
}

}  // namespace
}  // namespace mtune
