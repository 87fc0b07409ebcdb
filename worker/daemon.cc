#include "worker/daemon.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/mtune.grpc.pb.h"
#include "worker/jit_kernel.h"
#include "worker/pipeline.h"
#include "worker/roofline.h"
#include "worker/sandbox.h"

namespace mtune::worker {
namespace {

using Clock = std::chrono::steady_clock;

// A result in one log line: both figures (a copy or transpose has 0 GFLOP/s, and its
// GB/s is what counts) and the roofline fraction, or the failure's first line.
std::string ResultSummary(const mtune::v1::Result& result) {
  if (result.status() == mtune::v1::RESULT_STATUS_OK) {
    std::string summary = absl::StrFormat("%.2f GFLOP/s, %.2f GB/s, %.2f of roofline", result.gflops(),
                                          result.gbps(), result.fraction_of_roofline());
    // Which stream figures a bandwidth-bound result is held against, and when they were
    // timed (worker/footprint_figures.h).
    if (const mtune::v1::BandwidthLevel& at = result.footprint_bandwidth(); at.gbps() > 0)
      absl::StrAppendFormat(&summary, " (copy %.1f / read %.1f GB/s at its footprint, timed %s UTC)",
                            at.gbps(), at.read_gbps(),
                            absl::FormatTime("%H:%M:%E3S", absl::FromUnixSeconds(0) +
                                                               absl::Seconds(at.measured_unix_s()),
                                             absl::UTCTimeZone()));
    // Peaks timed again for this result, which is held against them
    // (worker/peak_figures.h).
    if (result.has_retimed_peaks()) {
      const mtune::v1::ComputePeaks& peaks = result.retimed_peaks();
      absl::StrAppendFormat(&summary, " (peaks timed again, %s: f32 FMA %.1f GFLOP/s",
                            peaks.beaten() ? "the kernel beat them" : "stale", peaks.peak_gflops_f32());
      if (peaks.peak_gflops_amx_bf16() > 0)
        absl::StrAppendFormat(&summary, ", AMX bf16 %.1f", peaks.peak_gflops_amx_bf16());
      if (peaks.peak_gflops_bf16_dot() > 0)
        absl::StrAppendFormat(&summary, ", AVX512-BF16 dot %.1f", peaks.peak_gflops_bf16_dot());
      summary += ")";
    }
    return summary;
  }
  std::string error = result.error().substr(0, result.error().find('\n'));
  if (error.size() > 200) error = error.substr(0, 200) + "...";
  return error;
}

void Log(const std::string& name, const std::string& message) {
  fprintf(stderr, "mtune-worker %s: %s\n", name.c_str(), message.c_str());
}

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(double seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int>(seconds * 1000)));
  return context;
}

// gRPC's own reconnect backoff grows to 2 minutes; a restarted coordinator should
// see its workers again within the daemon's own backoff (at most 5 s).
grpc::ChannelArguments ReconnectArgs() {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  return args;
}

}  // namespace

mtune::v1::Target HostTarget() {
  mtune::v1::Target target;
  target.set_kind("cpu");
  target.set_triple(JitKernel::HostTriple());
  target.set_cpu(JitKernel::HostCpuName());
  target.set_features(JitKernel::HostFeatures());
  target.set_id(absl::StrCat("cpu:", target.triple(), ":", target.cpu()));
  return target;
}

WorkerDaemon::WorkerDaemon(DaemonOptions options) : options_(std::move(options)) {
  if (options_.name.empty()) {
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    options_.name = absl::StrCat(host, "/cpu", options_.cpu);
  }
}

absl::Status WorkerDaemon::Run() {
  const std::string& name = options_.name;
  size_t tasks_received = 0;  // indexes test_inject_faults

  // Calibrate once, on the pinned core, before offering to measure anything.
  absl::StatusOr<mtune::v1::Calibration> calibrated;
  {
    Sandbox calibrator(options_.sandbox_argv, options_.sandbox_memory_limit_mib);
    calibrated = calibrator.Calibrate();
  }
  if (!calibrated.ok()) return calibrated.status();
  const mtune::v1::Calibration calibration = *calibrated;
  const std::string bf16_peak = Bf16PeakText(calibration);
  Log(name, absl::StrCat("calibrated: f32 FMA peak ", calibration.peak_gflops_f32(), " GFLOP/s",
                         bf16_peak.empty() ? "" : ", ", bf16_peak));
  Pipeline pipeline(PipelineOptions{options_.sandbox_argv, options_.sandbox_memory_limit_mib,
                                    options_.prefetch, options_.footprint_figures_max_age_s,
                                    options_.peaks_max_age_s},
                    calibration);

  // gRPC's own reconnect backoff grows to minutes; a restarted coordinator should
  // see its workers back within seconds.
  auto channel = transport::MakeChannel(options_.coordinator, options_.security, ReconnectArgs());
  if (!channel.ok()) return channel.status();
  auto stub = mtune::v1::Coordinator::NewStub(*channel);
  mtune::v1::RegisterRequest registration;
  registration.set_name(name);
  *registration.mutable_target() = HostTarget();
  *registration.mutable_calibration() = calibration;
  registration.set_cpu(options_.cpu);

  double backoff_s = 0.2;
  auto last_contact = Clock::now();
  while (!stop_) {
    mtune::v1::RegisterResponse registered;
    grpc::Status status = stub->Register(ContextWithDeadline(5).get(), registration, &registered);
    // Refusals that retrying cannot change: a taken name, a bad request, a
    // missing or wrong token or certificate.
    if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS ||
        status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
        status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        status.error_code() == grpc::StatusCode::PERMISSION_DENIED)
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    if (!status.ok()) {
      double silent = std::chrono::duration<double>(Clock::now() - last_contact).count();
      if (options_.give_up_after_s > 0 && silent > options_.give_up_after_s)
        return absl::UnavailableError(absl::StrCat("coordinator ", options_.coordinator,
                                                   " unreachable for ", silent,
                                                   " s: ", status.error_message()));
      Log(name, absl::StrCat("coordinator ", options_.coordinator, " unreachable (",
                             status.error_message(), "); retrying in ", backoff_s, " s"));
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
      backoff_s = std::min(backoff_s * 2, 5.0);
      continue;
    }
    backoff_s = 0.2;
    last_contact = Clock::now();
    const std::string worker_id = registered.worker_id();
    Log(name, "registered as " + worker_id);

    // Heartbeats run beside the Work stream; they also relay cancellations.
    std::atomic<int64_t> current_task{0};
    std::atomic<bool> session_over{false};
    grpc::ClientContext work_context;
    std::thread heartbeat([&] {
      while (!session_over && !stop_) {
        mtune::v1::HeartbeatRequest beat;
        beat.set_worker_id(worker_id);
        beat.set_task_id(current_task);
        mtune::v1::HeartbeatResponse reply;
        grpc::Status s = stub->Heartbeat(ContextWithDeadline(2).get(), beat, &reply);
        if (s.ok() && !reply.known()) work_context.TryCancel();  // register again
        auto until = Clock::now() + std::chrono::duration<double>(registered.heartbeat_interval_s());
        while (!session_over && !stop_ && Clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      // Stop() while waiting for a task: end the stream so that Run() returns now.
      if (stop_) work_context.TryCancel();
    });

    // One stream carries tasks in and reports out. A reader thread sorts what
    // comes in: tasks for the pipeline's next(), acknowledgements for done().
    auto stream = stub->Work(&work_context);
    std::mutex write_mu;  // done() writes reports; nothing else writes after start
    {
      mtune::v1::WorkerMessage start;
      start.mutable_start()->set_worker_id(worker_id);
      // Hold the task being timed plus the ones compiled ahead of it.
      start.mutable_start()->set_window(static_cast<uint32_t>(options_.prefetch + 1));
      std::lock_guard lock(write_mu);
      (void)stream->Write(start);  // a failure shows as the stream's end below
    }
    std::mutex inbox_mu;
    std::condition_variable inbox_changed;
    std::deque<mtune::v1::Task> tasks;                 // guarded by inbox_mu
    std::map<int64_t, mtune::v1::ReportAck> acks;      // guarded by inbox_mu
    bool stream_ended = false;                         // guarded by inbox_mu
    std::thread reader([&] {
      mtune::v1::CoordinatorMessage in;
      while (stream->Read(&in)) {
        std::lock_guard lock(inbox_mu);
        if (in.has_task())
          tasks.push_back(std::move(*in.mutable_task()));
        else if (in.has_ack())
          acks[in.ack().task_id()] = in.ack();
        inbox_changed.notify_all();
      }
      std::lock_guard lock(inbox_mu);
      stream_ended = true;
      inbox_changed.notify_all();
    });

    PipelineCallbacks callbacks;
    callbacks.next = [&]() -> std::optional<PipelineTask> {
      PipelineTask item;
      {
        std::unique_lock lock(inbox_mu);
        inbox_changed.wait(lock, [&] { return stop_ || stream_ended || !tasks.empty(); });
        // Ended: tasks received but not started are re-queued by the coordinator
        // (their results could not be reported on this stream anyway).
        if (stop_ || stream_ended || tasks.empty()) return std::nullopt;
        item.task = std::move(tasks.front());
        tasks.pop_front();
      }
      // TEST ONLY: the i-th task received may be given a fault.
      if (tasks_received < options_.test_inject_faults.size() &&
          options_.test_inject_faults[tasks_received] != "none") {
        item.inject_fault = options_.test_inject_faults[tasks_received];
        Log(name, absl::StrCat("TEST: injecting fault '", item.inject_fault, "' into task ",
                               item.task.task_id()));
      }
      ++tasks_received;
      return item;
    };
    callbacks.stop = [&] {
      std::lock_guard lock(inbox_mu);
      return stop_ || stream_ended;
    };
    callbacks.interrupt = [&] { work_context.TryCancel(); };
    callbacks.measuring = [&](int64_t task_id) { current_task = task_id; };
    callbacks.done = [&](const mtune::v1::Task& task, const mtune::v1::Result& result,
                         int64_t overlapped_with) {
      Log(name, absl::StrCat("task ", task.task_id(), " ", task.candidate().canonical_json(), ": ",
                             mtune::v1::ResultStatus_Name(result.status()), " ", ResultSummary(result),
                             overlapped_with != 0
                                 ? absl::StrCat(" (compiled while task ", overlapped_with,
                                                " was timed)")
                                 : std::string()));
      mtune::v1::WorkerMessage report;
      report.mutable_report()->set_task_id(task.task_id());
      *report.mutable_report()->mutable_result() = result;
      bool sent;
      {
        std::lock_guard lock(write_mu);
        sent = stream->Write(report);
      }
      // Wait for the commit: the next task may already be here, but the result
      // counts only once the coordinator says it is stored.
      std::unique_lock lock(inbox_mu);
      const bool answered = sent && inbox_changed.wait_for(lock, std::chrono::seconds(60), [&] {
        return stream_ended || acks.contains(task.task_id());
      });
      auto ack = acks.find(task.task_id());
      if (ack == acks.end()) {
        // The coordinator either committed it before the stream broke or hands the
        // task to a worker again when it sees the stream end: nothing is lost.
        Log(name, absl::StrCat("task ", task.task_id(), ": no acknowledgement (",
                               sent ? (answered ? "stream ended" : "none within 60 s")
                                    : "stream broken",
                               "); the coordinator re-queues the task unless it stored it"));
      } else {
        if (!ack->second.stored())
          Log(name, absl::StrCat("task ", task.task_id(), ": not stored: ", ack->second.error()));
        acks.erase(ack);
      }
      current_task = 0;
    };
    pipeline.Run(callbacks);
    work_context.TryCancel();
    reader.join();
    grpc::Status end = stream->Finish();
    session_over = true;
    heartbeat.join();
    if (!stop_) Log(name, "Work stream ended (" + end.error_message() + "); reconnecting");
    last_contact = Clock::now();
  }
  return absl::OkStatus();
}

}  // namespace mtune::worker
