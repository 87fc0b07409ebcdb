#include "server/services.h"

#include "db/export.h"
#include "strategies/transform_library.h"

namespace mtune::server {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

grpc::Status TunerService::SubmitJob(grpc::ServerContext*, const mtune::v1::SubmitJobRequest* req,
                                     mtune::v1::SubmitJobResponse* resp) {
  auto job = coordinator_->SubmitJob(req->spec());
  if (!job.ok()) return ToGrpc(job.status());
  *resp->mutable_job() = *job;
  return grpc::Status::OK;
}

grpc::Status TunerService::GetJob(grpc::ServerContext*, const mtune::v1::GetJobRequest* req,
                                  mtune::v1::Job* resp) {
  auto job = coordinator_->GetJob(req->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  *resp = *job;
  return grpc::Status::OK;
}

grpc::Status TunerService::WatchJob(grpc::ServerContext* context,
                                    const mtune::v1::WatchJobRequest* req,
                                    grpc::ServerWriter<mtune::v1::Job>* writer) {
  uint64_t version = 0;
  while (!context->IsCancelled() && !shutting_down_->load()) {
    auto job = coordinator_->GetJob(req->job_id());
    if (!job.ok()) return ToGrpc(job.status());
    if (!writer->Write(*job)) return grpc::Status::OK;  // the client went away
    if (job->state() != mtune::v1::JOB_STATE_RUNNING) return grpc::Status::OK;
    // Timed waits so that a cancelled stream or shutdown is noticed promptly.
    uint64_t next = version;
    while (next == version && !context->IsCancelled() && !shutting_down_->load())
      next = coordinator_->WaitForJobChange(req->job_id(), version, 0.5);
    version = next;
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "watch ended");
}

grpc::Status TunerService::CancelJob(grpc::ServerContext*, const mtune::v1::CancelJobRequest* req,
                                     mtune::v1::Job* resp) {
  auto job = coordinator_->CancelJob(req->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  *resp = *job;
  return grpc::Status::OK;
}

grpc::Status TunerService::ListResults(grpc::ServerContext*,
                                       const mtune::v1::ListResultsRequest* req,
                                       mtune::v1::ListResultsResponse* resp) {
  auto results = coordinator_->store()->ListResults(req->job_id(), req->problem(), req->limit());
  if (!results.ok()) return ToGrpc(results.status());
  for (auto& r : *results) *resp->add_results() = std::move(r);
  return grpc::Status::OK;
}

grpc::Status TunerService::GetBest(grpc::ServerContext*, const mtune::v1::GetBestRequest* req,
                                   mtune::v1::BestStrategy* resp) {
  auto best = coordinator_->store()->GetBest(req->problem(), req->target_id());
  if (!best.ok()) return ToGrpc(best.status());
  *resp = *best;
  return grpc::Status::OK;
}

grpc::Status TunerService::Export(grpc::ServerContext*, const mtune::v1::ExportRequest*,
                                  mtune::v1::ExportResponse* resp) {
  auto db = db::BuildBestStrategyDb(*coordinator_->store(),
                                    db::ExportInfo{build_.mtune_version, build_.mlir_version});
  if (!db.ok()) return ToGrpc(db.status());
  auto best = coordinator_->store()->AllBest();
  if (!best.ok()) return ToGrpc(best.status());
  std::vector<strategies::LibraryEntry> entries;
  for (const auto& b : *best) entries.push_back({b.problem(), b.target().id(), b.script()});
  auto library = strategies::BuildTransformLibrary(entries);
  if (!library.ok()) return ToGrpc(library.status());
  resp->set_sqlite_db(std::move(db->sqlite_bytes));
  resp->set_transform_library(std::move(*library));
  resp->set_entries(db->entries);
  return grpc::Status::OK;
}

grpc::Status TunerService::ListWorkers(grpc::ServerContext*, const mtune::v1::ListWorkersRequest*,
                                       mtune::v1::ListWorkersResponse* resp) {
  for (auto& w : coordinator_->ListWorkers()) *resp->add_workers() = std::move(w);
  return grpc::Status::OK;
}

grpc::Status TunerService::GetConvergence(grpc::ServerContext*,
                                          const mtune::v1::ConvergenceRequest* req,
                                          mtune::v1::ConvergenceResponse* resp) {
  auto convergence = coordinator_->GetConvergence(req->job_id());
  if (!convergence.ok()) return ToGrpc(convergence.status());
  *resp = *std::move(convergence);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Register(grpc::ServerContext*,
                                          const mtune::v1::RegisterRequest* req,
                                          mtune::v1::RegisterResponse* resp) {
  auto r = coordinator_->Register(*req);
  if (!r.ok()) return ToGrpc(r.status());
  *resp = *r;
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Lease(grpc::ServerContext* context,
                                       const mtune::v1::LeaseRequest* req,
                                       grpc::ServerWriter<mtune::v1::Task>* writer) {
  while (!context->IsCancelled() && !shutting_down_->load()) {
    auto task = coordinator_->NextTask(req->worker_id(), 0.5);
    if (!task.ok()) return ToGrpc(task.status());
    if (!task->has_value()) continue;
    if (!writer->Write(**task)) break;
  }
  // Stream closed (worker gone or shutting down): its unfinished task is re-queued.
  coordinator_->WorkerDisconnected(req->worker_id());
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "lease stream closed");
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext*,
                                           const mtune::v1::HeartbeatRequest* req,
                                           mtune::v1::HeartbeatResponse* resp) {
  *resp = coordinator_->Heartbeat(*req);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::ReportResult(grpc::ServerContext*,
                                              const mtune::v1::ReportResultRequest* req,
                                              mtune::v1::ReportResultResponse* resp) {
  auto r = coordinator_->ReportResult(*req);
  if (!r.ok()) return ToGrpc(r.status());
  *resp = *r;
  return grpc::Status::OK;
}

}  // namespace mtune::server
