// libFuzzer target: every RPC handler of the coordinator, client-facing (Tuner) and
// worker-facing (Coordinator). Each input is a Session (rpc_session.proto) of up to
// kMaxCalls requests, served by the real service implementations (server/services.h
// over server/coordinator.h) through an in-process gRPC channel, against a fresh
// temporary SQLite file. A handler may refuse a request with any status; it must not
// crash, leak, hang, or answer a request the coordinator cannot have served.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "db/store.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/grpcpp.h"
#include "proto/mtune.grpc.pb.h"
#include "rpc_session.pb.h"
#include "server/coordinator.h"
#include "server/services.h"

namespace {

// Longer sessions add little coverage and cost time.
constexpr int kMaxCalls = 24;
// Messages read from one streaming call at most.
constexpr uint32_t kMaxReads = 4;
// Reports a Work call sends before reading, at most.
constexpr int kMaxReports = 8;
// A unary call that takes this long is a hang (libFuzzer's -timeout catches the rest).
constexpr double kUnaryDeadlineS = 20;
// Streaming calls wait this long for their next message before being cancelled.
constexpr double kStreamWaitS = 0.05;

[[noreturn]] void Fail(const std::string& what) {
  fprintf(stderr, "rpc_fuzzer: %s\n", what.c_str());
  abort();
}

std::chrono::system_clock::time_point In(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

const std::string& ScratchDir() {
  static const std::string dir = [] {
    const char* base = getenv("TMPDIR");
    std::string templ = std::string(base ? base : "/tmp") + "/mtune-rpc-fuzz-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) Fail("mkdtemp failed");
    return templ;
  }();
  return dir;
}

// A coordinator with both services behind an in-process channel, on its own
// SQLite file; torn down (and the file removed) when the session ends.
class InProcessCoordinator {
 public:
  InProcessCoordinator() {
    db_path_ = ScratchDir() + "/session.sqlite";
    RemoveFiles();
    auto store = mtune::db::Store::Open(db_path_);
    if (!store.ok()) Fail("cannot open the store: " + store.status().ToString());
    store_ = std::move(*store);
    mtune::server::CoordinatorOptions options;
    options.heartbeat_timeout_s = 2;
    coordinator_ = std::make_unique<mtune::server::Coordinator>(store_.get(), options);
    tuner_service_ = std::make_unique<mtune::server::TunerService>(
        coordinator_.get(), mtune::server::BuildInfo{"fuzz", "fuzz"}, &shutting_down_);
    worker_service_ =
        std::make_unique<mtune::server::CoordinatorService>(coordinator_.get(), &shutting_down_);
    grpc::ServerBuilder builder;
    builder.RegisterService(tuner_service_.get());
    builder.RegisterService(worker_service_.get());
    builder.SetMaxReceiveMessageSize(64 << 20);
    server_ = builder.BuildAndStart();
    if (!server_) Fail("cannot start the in-process server");
    auto channel = server_->InProcessChannel(grpc::ChannelArguments());
    tuner = mtune::v1::Tuner::NewStub(channel);
    workers = mtune::v1::Coordinator::NewStub(channel);
  }

  ~InProcessCoordinator() {
    shutting_down_ = true;
    coordinator_->Stop();
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    tuner.reset();
    workers.reset();
    server_.reset();
    worker_service_.reset();
    tuner_service_.reset();
    coordinator_.reset();
    store_.reset();
    RemoveFiles();
  }

  std::unique_ptr<mtune::v1::Tuner::Stub> tuner;
  std::unique_ptr<mtune::v1::Coordinator::Stub> workers;

 private:
  void RemoveFiles() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(db_path_ + suffix, ignored);
  }

  std::string db_path_;
  std::atomic<bool> shutting_down_{false};
  std::unique_ptr<mtune::db::Store> store_;
  std::unique_ptr<mtune::server::Coordinator> coordinator_;
  std::unique_ptr<mtune::server::TunerService> tuner_service_;
  std::unique_ptr<mtune::server::CoordinatorService> worker_service_;
  std::unique_ptr<grpc::Server> server_;
};

// Ids the session has been given, for later calls to refer to.
struct Seen {
  std::vector<int64_t> jobs;
  std::vector<std::string> workers;
  std::vector<int64_t> tasks;

  template <typename T>
  static const T* Pick(const std::vector<T>& from, uint32_t one_based) {
    if (one_based == 0 || from.empty()) return nullptr;
    return &from[(one_based - 1) % from.size()];
  }
};

std::unique_ptr<grpc::ClientContext> Unary() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(In(kUnaryDeadlineS));
  return context;
}

void ExpectNoHang(const grpc::Status& status, const char* method) {
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    Fail(std::string(method) + " did not answer within the deadline: " + status.error_message());
}

// One Work stream: start, the call's reports, then up to `reads` tasks (each
// reported at once if asked, waiting at most kStreamWaitS * (reads + 1)), then the
// worker closes its side and the stream runs to its end. A reader thread takes
// everything the coordinator sends while this thread writes (the in-process
// transport completes a write only when the other side reads it, so one thread
// writing and reading in turn could deadlock with the coordinator's writes).
// Every report must get exactly one acknowledgement when the stream ends OK.
void RunWork(InProcessCoordinator& c, const mtune::fuzz::Call& call, const std::string* worker,
             const int64_t* task, uint32_t reads, Seen& seen) {
  const mtune::fuzz::WorkCall& work = call.work();
  // By value: `task` points into seen.tasks, which the reader thread appends to.
  const std::optional<int64_t> use_task = task ? std::optional<int64_t>(*task) : std::nullopt;
  grpc::ClientContext context;
  context.set_deadline(In(kUnaryDeadlineS));
  auto stream = c.workers->Work(&context);
  std::mutex mu;
  std::condition_variable changed;
  // Guarded by mu:
  std::deque<int64_t> to_report;  // tasks read, to report (report_tasks)
  uint32_t tasks_read = 0;
  bool ended = false;
  std::map<int64_t, int> sent, acked;  // reports and acknowledgements per task id
  std::thread reader([&] {
    mtune::v1::CoordinatorMessage in;
    while (stream->Read(&in)) {
      std::lock_guard lock(mu);
      if (in.has_task()) {
        const mtune::v1::Task& leased = in.task();
        if (leased.task_id() <= 0 || leased.script().empty())
          Fail("Work streamed a task without an id or a script");
        seen.tasks.push_back(leased.task_id());
        if (++tasks_read <= reads && work.report_tasks()) to_report.push_back(leased.task_id());
      } else if (in.has_ack()) {
        const int64_t id = in.ack().task_id();
        if (++acked[id] > sent[id]) Fail("Work acknowledged a report that was not sent");
        if (in.ack().stored() != in.ack().error().empty())
          Fail("a ReportAck must carry an error exactly when it says not stored");
      }
      changed.notify_all();
    }
    std::lock_guard lock(mu);
    ended = true;
    changed.notify_all();
  });
  auto send = [&](const mtune::v1::WorkerMessage& message) {
    if (message.has_report()) {
      std::lock_guard lock(mu);
      ++sent[message.report().task_id()];  // before the ack can arrive
    }
    return stream->Write(message);
  };
  mtune::v1::WorkerMessage message;
  *message.mutable_start() = work.start();
  if (worker) message.mutable_start()->set_worker_id(*worker);
  bool open = send(message);
  for (int i = 0; open && i < std::min(work.reports_size(), kMaxReports); ++i) {
    *message.mutable_report() = work.reports(i);
    if (use_task && message.report().task_id() == 0)
      message.mutable_report()->set_task_id(*use_task);
    open = send(message);
  }
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(kStreamWaitS * (reads + 1)));
  while (open) {
    std::unique_lock lock(mu);
    changed.wait_until(lock, until,
                       [&] { return ended || !to_report.empty() || tasks_read >= reads; });
    if (!to_report.empty()) {
      const int64_t id = to_report.front();
      to_report.pop_front();
      lock.unlock();
      message.mutable_report()->set_task_id(id);
      *message.mutable_report()->mutable_result() = work.result_for_each_task();
      open = send(message);
      continue;
    }
    if (ended || tasks_read >= reads || std::chrono::steady_clock::now() >= until) break;
  }
  stream->WritesDone();
  reader.join();
  grpc::Status s = stream->Finish();
  ExpectNoHang(s, "Work");
  if (s.ok() && acked != sent) Fail("Work ended OK without acknowledging every report");
}

void RunCall(InProcessCoordinator& c, const mtune::fuzz::Call& call, Seen& seen) {
  const uint32_t reads = std::min(call.reads(), kMaxReads);
  const int64_t* job = Seen::Pick(seen.jobs, call.use_job());
  const std::string* worker = Seen::Pick(seen.workers, call.use_worker());
  const int64_t* task = Seen::Pick(seen.tasks, call.use_task());
  switch (call.request_case()) {
    case mtune::fuzz::Call::kSubmitJob: {
      mtune::v1::SubmitJobResponse response;
      grpc::Status s = c.tuner->SubmitJob(Unary().get(), call.submit_job(), &response);
      ExpectNoHang(s, "SubmitJob");
      if (s.ok()) {
        if (response.job().id() <= 0) Fail("SubmitJob answered OK without a job id");
        seen.jobs.push_back(response.job().id());
      }
      break;
    }
    case mtune::fuzz::Call::kGetJob: {
      mtune::v1::GetJobRequest request = call.get_job();
      if (job) request.set_job_id(*job);
      mtune::v1::Job response;
      grpc::Status s = c.tuner->GetJob(Unary().get(), request, &response);
      ExpectNoHang(s, "GetJob");
      if (s.ok() && response.id() != request.job_id()) Fail("GetJob answered another job");
      break;
    }
    case mtune::fuzz::Call::kListJobs: {
      mtune::v1::ListJobsResponse response;
      grpc::Status s = c.tuner->ListJobs(Unary().get(), call.list_jobs(), &response);
      ExpectNoHang(s, "ListJobs");
      if (!s.ok()) break;
      const uint32_t limit = call.list_jobs().limit();
      if (limit > 0 && static_cast<uint32_t>(response.jobs_size()) > limit)
        Fail("ListJobs answered more jobs than its limit");
      for (int i = 1; i < response.jobs_size(); ++i)
        if (response.jobs(i - 1).id() <= response.jobs(i).id()) Fail("ListJobs is not newest first");
      for (const mtune::v1::Job& listed : response.jobs())
        if (call.list_jobs().state() != mtune::v1::JOB_STATE_UNSPECIFIED &&
            listed.state() != call.list_jobs().state())
          Fail("ListJobs answered a job in another state");
      break;
    }
    case mtune::fuzz::Call::kWatchJob: {
      mtune::v1::WatchJobRequest request = call.watch_job();
      if (job) request.set_job_id(*job);
      grpc::ClientContext context;
      context.set_deadline(In(kStreamWaitS * (reads + 1)));
      auto reader = c.tuner->WatchJob(&context, request);
      mtune::v1::Job update;
      for (uint32_t i = 0; i < reads && reader->Read(&update); ++i) {
        if (update.id() != request.job_id()) Fail("WatchJob streamed another job");
      }
      context.TryCancel();
      (void)reader->Finish();
      break;
    }
    case mtune::fuzz::Call::kCancelJob: {
      mtune::v1::CancelJobRequest request = call.cancel_job();
      if (job) request.set_job_id(*job);
      mtune::v1::Job response;
      grpc::Status s = c.tuner->CancelJob(Unary().get(), request, &response);
      ExpectNoHang(s, "CancelJob");
      if (s.ok() && response.state() != mtune::v1::JOB_STATE_CANCELLED)
        Fail("CancelJob answered OK but the job is not cancelled");
      break;
    }
    case mtune::fuzz::Call::kListResults: {
      mtune::v1::ListResultsRequest request = call.list_results();
      if (job) request.set_job_id(*job);
      mtune::v1::ListResultsResponse response;
      grpc::Status s = c.tuner->ListResults(Unary().get(), request, &response);
      ExpectNoHang(s, "ListResults");
      if (s.ok() && request.limit() > 0 &&
          static_cast<uint32_t>(response.results_size()) > request.limit())
        Fail("ListResults returned more than its limit");
      break;
    }
    case mtune::fuzz::Call::kGetBest: {
      mtune::v1::BestStrategy response;
      ExpectNoHang(c.tuner->GetBest(Unary().get(), call.get_best(), &response), "GetBest");
      break;
    }
    case mtune::fuzz::Call::kExport: {
      mtune::v1::ExportResponse response;
      ExpectNoHang(c.tuner->Export(Unary().get(), call.export_(), &response), "Export");
      break;
    }
    case mtune::fuzz::Call::kListWorkers: {
      mtune::v1::ListWorkersResponse response;
      ExpectNoHang(c.tuner->ListWorkers(Unary().get(), call.list_workers(), &response),
                   "ListWorkers");
      break;
    }
    case mtune::fuzz::Call::kGetConvergence: {
      mtune::v1::ConvergenceRequest request = call.get_convergence();
      if (job) request.set_job_id(*job);
      mtune::v1::ConvergenceResponse response;
      ExpectNoHang(c.tuner->GetConvergence(Unary().get(), request, &response), "GetConvergence");
      break;
    }
    case mtune::fuzz::Call::kRegister: {
      mtune::v1::RegisterResponse response;
      grpc::Status s = c.workers->Register(Unary().get(), call.register_(), &response);
      ExpectNoHang(s, "Register");
      if (s.ok()) {
        if (response.worker_id().empty()) Fail("Register answered OK without a worker id");
        seen.workers.push_back(response.worker_id());
      }
      break;
    }
    case mtune::fuzz::Call::kWork:
      RunWork(c, call, worker, task, reads, seen);
      break;
    case mtune::fuzz::Call::kHeartbeat: {
      mtune::v1::HeartbeatRequest request = call.heartbeat();
      if (worker) request.set_worker_id(*worker);
      if (task) request.set_task_id(*task);
      mtune::v1::HeartbeatResponse response;
      ExpectNoHang(c.workers->Heartbeat(Unary().get(), request, &response), "Heartbeat");
      break;
    }
    case mtune::fuzz::Call::REQUEST_NOT_SET:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Most mutated sessions carry invalid UTF-8 and are refused by the parser below;
  // protobuf would log one line for each.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mtune::fuzz::Session session;
  if (!session.ParseFromArray(data, static_cast<int>(size))) return -1;  // not a session
  if (session.calls_size() > kMaxCalls) return -1;
  InProcessCoordinator coordinator;
  Seen seen;
  for (const mtune::fuzz::Call& call : session.calls()) RunCall(coordinator, call, seen);
  return 0;
}
