// gRPC adapters of the Coordinator: the client-facing Tuner service and the
// worker-facing Coordinator service of mtune.v1.
#pragma once

#include <atomic>
#include <string>

#include "proto/mtune.grpc.pb.h"
#include "server/access.h"
#include "server/coordinator.h"

namespace mtune::server {

// Versions stamped on exported strategies.
struct BuildInfo {
  std::string mtune_version;
  std::string mlir_version;
};

// Access control of both services; the default is an open service.
struct ServiceSecurity {
  // Tokens and roles; null = every call allowed.
  const AccessControl* access = nullptr;
  // Worker RPCs also need a TLS client certificate verified against the
  // coordinator's --tls-client-ca (mutual TLS).
  bool require_worker_certificate = false;
};

// OK when the call's `authorization` metadata (and, for workers, its client
// certificate) allows `action`; UNAUTHENTICATED or PERMISSION_DENIED otherwise.
grpc::Status Authorize(const grpc::ServerContextBase* context, const ServiceSecurity& security,
                       Action action);

class TunerService final : public mtune::v1::Tuner::Service {
 public:
  TunerService(Coordinator* coordinator, BuildInfo build, const std::atomic<bool>* shutting_down,
               ServiceSecurity security = {})
      : coordinator_(coordinator),
        build_(std::move(build)),
        shutting_down_(shutting_down),
        security_(security) {}

  grpc::Status SubmitJob(grpc::ServerContext*, const mtune::v1::SubmitJobRequest*,
                         mtune::v1::SubmitJobResponse*) override;
  grpc::Status GetJob(grpc::ServerContext*, const mtune::v1::GetJobRequest*,
                      mtune::v1::Job*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const mtune::v1::ListJobsRequest*,
                        mtune::v1::ListJobsResponse*) override;
  grpc::Status WatchJob(grpc::ServerContext*, const mtune::v1::WatchJobRequest*,
                        grpc::ServerWriter<mtune::v1::Job>*) override;
  grpc::Status CancelJob(grpc::ServerContext*, const mtune::v1::CancelJobRequest*,
                         mtune::v1::Job*) override;
  grpc::Status ListResults(grpc::ServerContext*, const mtune::v1::ListResultsRequest*,
                           mtune::v1::ListResultsResponse*) override;
  grpc::Status GetBest(grpc::ServerContext*, const mtune::v1::GetBestRequest*,
                       mtune::v1::BestStrategy*) override;
  grpc::Status Export(grpc::ServerContext*, const mtune::v1::ExportRequest*,
                      mtune::v1::ExportResponse*) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const mtune::v1::ListWorkersRequest*,
                           mtune::v1::ListWorkersResponse*) override;
  grpc::Status GetConvergence(grpc::ServerContext*, const mtune::v1::ConvergenceRequest*,
                              mtune::v1::ConvergenceResponse*) override;

 private:
  Coordinator* coordinator_;
  BuildInfo build_;
  const std::atomic<bool>* shutting_down_;
  ServiceSecurity security_;
};

// Work is on gRPC's callback API (server/work_stream.h); the unary calls stay
// synchronous.
class CoordinatorService final
    : public mtune::v1::Coordinator::WithCallbackMethod_Work<mtune::v1::Coordinator::Service> {
 public:
  CoordinatorService(Coordinator* coordinator, const std::atomic<bool>* shutting_down,
                     ServiceSecurity security = {})
      : coordinator_(coordinator), shutting_down_(shutting_down), security_(security) {}

  grpc::Status Register(grpc::ServerContext*, const mtune::v1::RegisterRequest*,
                        mtune::v1::RegisterResponse*) override;
  // No thread per stream: a reactor (WorkReactor) sends a worker's next task
  // from the gRPC thread that read its report, before the report's COMMIT, and
  // the acknowledgement from the commit thread after it. Streams end when the
  // worker closes its side, breaks, or Coordinator::Stop() is called.
  grpc::ServerBidiReactor<mtune::v1::WorkerMessage, mtune::v1::CoordinatorMessage>* Work(
      grpc::CallbackServerContext*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const mtune::v1::HeartbeatRequest*,
                         mtune::v1::HeartbeatResponse*) override;

 private:
  Coordinator* coordinator_;
  const std::atomic<bool>* shutting_down_;
  ServiceSecurity security_;
};

// absl::Status -> grpc::Status, keeping the code and message.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace mtune::server
