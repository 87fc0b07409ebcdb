#include "bench/load/simulated_worker.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"

namespace mtune::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::system_clock::time_point In(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

}  // namespace

mtune::v1::Result SyntheticResult(const mtune::v1::Task& task) {
  // FNV-1a of the candidate hash: stable, spread over [10, 110) GFLOP/s.
  uint64_t h = 1469598103934665603ull;
  for (char c : task.candidate().hash()) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  const double gflops = 10 + static_cast<double>(h % 10000) / 100;
  mtune::v1::Result result;
  result.set_status(mtune::v1::RESULT_STATUS_OK);
  result.set_gflops(gflops);
  result.set_gbps(gflops / 4);
  result.set_roofline_gflops(200);
  result.set_roofline_level("L2");
  result.set_fraction_of_roofline(gflops / 200);
  mtune::v1::Timing* timing = result.mutable_timing();
  const double median_s = 1e-3 * 100 / gflops;
  timing->set_median_s(median_s);
  timing->set_p25_s(median_s);
  timing->set_p75_s(median_s);
  timing->set_min_s(median_s);
  timing->set_repetitions(1);
  return result;
}

SimulatedWorker::SimulatedWorker(const std::string& coordinator_address, int index,
                                 std::atomic<int64_t>* stored, std::chrono::microseconds task_time)
    : name_(absl::StrCat("load-sim/", index)), stored_(stored), task_time_(task_time) {
  // A connection of its own, as separate worker processes would have.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  channel_ = grpc::CreateCustomChannel(coordinator_address, grpc::InsecureChannelCredentials(), args);
  stub_ = mtune::v1::Coordinator::NewStub(channel_);
}

absl::Status SimulatedWorker::Register() {
  mtune::v1::RegisterRequest request;
  request.set_name(name_);
  request.mutable_target()->set_id(kSimulatedTargetId);
  request.mutable_target()->set_kind("cpu");
  request.mutable_target()->set_cpu("simulated");
  request.mutable_calibration()->set_peak_gflops_f32(200);
  mtune::v1::BandwidthLevel* l2 = request.mutable_calibration()->add_bandwidth();
  l2->set_level("L2");
  l2->set_gbps(100);
  request.set_cpu(-1);
  grpc::ClientContext context;
  context.set_deadline(In(30));
  mtune::v1::RegisterResponse response;
  grpc::Status status = stub_->Register(&context, request, &response);
  if (!status.ok())
    return absl::UnavailableError(absl::StrCat(name_, ": Register: ", status.error_message()));
  worker_id_ = response.worker_id();
  heartbeat_interval_s_ = response.heartbeat_interval_s();
  return absl::OkStatus();
}

grpc::Status SimulatedWorker::Serve() {
  grpc::ClientContext context;
  {
    std::lock_guard lock(context_mu_);
    if (stop_) return grpc::Status(grpc::StatusCode::CANCELLED, "stopped");
    lease_context_ = &context;
  }
  auto stream = stub_->Work(&context);
  mtune::v1::WorkerMessage out;
  out.mutable_start()->set_worker_id(worker_id_);
  out.mutable_start()->set_window(1);
  // Reports sent and not yet acknowledged, by task id.
  std::map<int64_t, Acknowledged> pending;
  // Per task in arrival order: when it arrived and when its report went out.
  struct Times {
    Clock::time_point arrived, reported;
  };
  std::vector<Times> times;
  if (stream->Write(out)) {
    mtune::v1::CoordinatorMessage in;
    while (stream->Read(&in)) {
      if (in.has_ack()) {
        const mtune::v1::ReportAck& ack = in.ack();
        auto it = pending.find(ack.task_id());
        if (!ack.stored() || it == pending.end()) {
          ++failed_reports_;
        } else {
          acknowledged_.push_back(std::move(it->second));
          if (stored_ != nullptr) ++*stored_;
        }
        if (it != pending.end()) pending.erase(it);
        if (pending.empty()) current_task_ = 0;
        continue;
      }
      if (!in.has_task()) continue;
      const mtune::v1::Task& task = in.task();
      const Clock::time_point now = Clock::now();
      if (task_ids_.empty()) first_task_at_ = now;
      times.push_back({now, {}});
      task_ids_.push_back(task.task_id());
      current_task_ = task.task_id();
      pending.emplace(task.task_id(),
                      Acknowledged{task.job_id(), task.problem(), task.candidate().hash()});
      mtune::v1::TaskReport* report = out.mutable_report();
      report->set_task_id(task.task_id());
      *report->mutable_result() = SyntheticResult(task);
      // The simulated measurement (acknowledgements of earlier reports wait in the
      // stream meanwhile).
      if (task_time_.count() > 0) std::this_thread::sleep_until(now + task_time_);
      // Reporting frees this worker's window: the coordinator pushes the next task
      // as soon as it has read the report, before committing it.
      times.back().reported = Clock::now();
      if (!stream->Write(out)) break;
    }
  }
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  for (size_t i = 1; i < times.size(); ++i)
    lease_latencies_s_.push_back(seconds(times[i].arrived - times[i - 1].reported));
  grpc::Status end = stream->Finish();
  std::lock_guard lock(context_mu_);
  lease_context_ = nullptr;
  return end;
}

void SimulatedWorker::Heartbeat() {
  if (worker_id_.empty()) return;
  mtune::v1::HeartbeatRequest beat;
  beat.set_worker_id(worker_id_);
  beat.set_task_id(current_task_);
  grpc::ClientContext context;
  context.set_deadline(In(5));
  mtune::v1::HeartbeatResponse reply;
  (void)stub_->Heartbeat(&context, beat, &reply);
}

void SimulatedWorker::Stop() {
  std::lock_guard lock(context_mu_);
  stop_ = true;
  if (lease_context_ != nullptr) lease_context_->TryCancel();
}

}  // namespace mtune::bench
