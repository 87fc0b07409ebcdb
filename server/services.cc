#include "server/services.h"

#include "server/work_stream.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "db/export.h"
#include "strategies/candidate.h"
#include "strategies/template_library.h"
#include "strategies/transform_library.h"

namespace mtune::server {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

grpc::Status Authorize(const grpc::ServerContextBase* context, const ServiceSecurity& security,
                       Action action) {
  if (action == Action::kWork && security.require_worker_certificate) {
    std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
    if (auth == nullptr || !auth->IsPeerAuthenticated())
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "worker calls need a TLS client certificate signed by the "
                          "coordinator's --tls-client-ca (mtune-worker --tls-cert/--tls-key)");
  }
  if (security.access == nullptr || security.access->open()) return grpc::Status::OK;
  std::string authorization;
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end())
    authorization.assign(it->second.data(), it->second.size());
  return ToGrpc(security.access->Authorize(authorization, action));
}

// Bounds on a job spec, checked before anything else looks at it: the problem
// count (each is planned, searched and shown on every status call) and the
// length of every string in it.
static absl::Status CheckSpecSize(const mtune::v1::JobSpec& spec) {
  constexpr int kMaxProblems = 256;
  constexpr size_t kMaxText = 256;
  if (spec.problems_size() > kMaxProblems)
    return absl::InvalidArgumentError(absl::StrCat("a job may tune at most ", kMaxProblems,
                                                   " problems, got ", spec.problems_size()));
  for (const std::string& problem : spec.problems())
    if (problem.size() > kMaxText)
      return absl::InvalidArgumentError(absl::StrCat("problem key of ", problem.size(),
                                                     " characters (at most ", kMaxText, ")"));
  for (const std::string* text : {&spec.template_name(), &spec.search(), &spec.allocation()})
    if (text->size() > kMaxText)
      return absl::InvalidArgumentError(absl::StrCat("job spec field of ", text->size(),
                                                     " characters (at most ", kMaxText, ")"));
  return absl::OkStatus();
}

// Every handler starts with this: no RPC runs before its caller is checked.
#define MTUNE_AUTHORIZE(context, action)                                           \
  if (grpc::Status denied = Authorize(context, security_, action); !denied.ok()) \
    return denied

grpc::Status TunerService::SubmitJob(grpc::ServerContext* context, const mtune::v1::SubmitJobRequest* req,
                                     mtune::v1::SubmitJobResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kChangeJobs);
  if (absl::Status size = CheckSpecSize(req->spec()); !size.ok()) return ToGrpc(size);
  auto job = coordinator_->SubmitJob(req->spec());
  if (!job.ok()) return ToGrpc(job.status());
  *resp->mutable_job() = *job;
  return grpc::Status::OK;
}

grpc::Status TunerService::GetJob(grpc::ServerContext* context, const mtune::v1::GetJobRequest* req,
                                  mtune::v1::Job* resp) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
  auto job = coordinator_->GetJob(req->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  *resp = *job;
  return grpc::Status::OK;
}

grpc::Status TunerService::ListJobs(grpc::ServerContext* context,
                                    const mtune::v1::ListJobsRequest* req,
                                    mtune::v1::ListJobsResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
  auto jobs = coordinator_->ListJobs(req->limit(), req->state());
  if (!jobs.ok()) return ToGrpc(jobs.status());
  *resp = *std::move(jobs);
  return grpc::Status::OK;
}

grpc::Status TunerService::WatchJob(grpc::ServerContext* context,
                                    const mtune::v1::WatchJobRequest* req,
                                    grpc::ServerWriter<mtune::v1::Job>* writer) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
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

grpc::Status TunerService::CancelJob(grpc::ServerContext* context, const mtune::v1::CancelJobRequest* req,
                                     mtune::v1::Job* resp) {
  MTUNE_AUTHORIZE(context, Action::kChangeJobs);
  auto job = coordinator_->CancelJob(req->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  *resp = *job;
  return grpc::Status::OK;
}

grpc::Status TunerService::ListResults(grpc::ServerContext* context,
                                       const mtune::v1::ListResultsRequest* req,
                                       mtune::v1::ListResultsResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
  auto results = coordinator_->store()->ListResults(req->job_id(), req->problem(), req->limit());
  if (!results.ok()) return ToGrpc(results.status());
  for (auto& r : *results) *resp->add_results() = std::move(r);
  return grpc::Status::OK;
}

namespace {

// Whether `candidate` names a built-in template whose text today gives its knobs
// another hash: it was measured with another text of it (see TemplateDigest).
bool OfAnotherTemplateText(const mtune::v1::Candidate& candidate) {
  auto tpl = strategies::FindTemplate(candidate.template_name());
  if (!tpl.ok()) return false;  // not built in: nothing to compare with
  return !strategies::HasTemplateDigest(candidate, strategies::TemplateDigest(tpl->text));
}

}  // namespace

grpc::Status TunerService::GetBest(grpc::ServerContext* context, const mtune::v1::GetBestRequest* req,
                                   mtune::v1::BestStrategy* resp) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
  auto best = coordinator_->store()->GetBest(req->problem(), req->target_id());
  if (!best.ok()) return ToGrpc(best.status());
  *resp = *best;
  resp->set_other_template_text(OfAnotherTemplateText(resp->candidate()));
  return grpc::Status::OK;
}

grpc::Status TunerService::Export(grpc::ServerContext* context, const mtune::v1::ExportRequest*,
                                  mtune::v1::ExportResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
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

grpc::Status TunerService::ListWorkers(grpc::ServerContext* context, const mtune::v1::ListWorkersRequest*,
                                       mtune::v1::ListWorkersResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
  for (auto& w : coordinator_->ListWorkers()) *resp->add_workers() = std::move(w);
  return grpc::Status::OK;
}

grpc::Status TunerService::GetConvergence(grpc::ServerContext* context,
                                          const mtune::v1::ConvergenceRequest* req,
                                          mtune::v1::ConvergenceResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kQuery);
  auto convergence = coordinator_->GetConvergence(req->job_id());
  if (!convergence.ok()) return ToGrpc(convergence.status());
  *resp = *std::move(convergence);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Register(grpc::ServerContext* context,
                                          const mtune::v1::RegisterRequest* req,
                                          mtune::v1::RegisterResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kWork);
  auto r = coordinator_->Register(*req);
  if (!r.ok()) return ToGrpc(r.status());
  *resp = *r;
  return grpc::Status::OK;
}

grpc::ServerBidiReactor<mtune::v1::WorkerMessage, mtune::v1::CoordinatorMessage>*
CoordinatorService::Work(grpc::CallbackServerContext* context) {
  // Checked before anything is read; a refused stream ends with the refusal.
  return new WorkReactor(coordinator_, Authorize(context, security_, Action::kWork));
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext* context,
                                           const mtune::v1::HeartbeatRequest* req,
                                           mtune::v1::HeartbeatResponse* resp) {
  MTUNE_AUTHORIZE(context, Action::kWork);
  *resp = coordinator_->Heartbeat(*req);
  return grpc::Status::OK;
}

}  // namespace mtune::server
