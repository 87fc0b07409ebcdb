// Simulated workers for load tests only: the fast measurement mode of
// mtune-bench-load. A SimulatedWorker speaks the real worker protocol of
// mtune.v1.Coordinator (Register, the Work stream, Heartbeat) over its own gRPC
// connection, but instead of compiling and timing a candidate it reports a
// synthetic RESULT_STATUS_OK result at once. Its worker names start with
// "load-sim/" and its target id is kSimulatedTargetId, so its results can never be
// mistaken for measurements.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"
#include "proto/mtune.grpc.pb.h"

namespace mtune::bench {

// The target every simulated worker registers with.
inline constexpr char kSimulatedTargetId[] = "cpu:simulated:load-test";

// The synthetic result reported for `task`: OK, with a figure derived from the
// candidate's hash so that searches see varied (but meaningless) feedback.
mtune::v1::Result SyntheticResult(const mtune::v1::Task& task);

class SimulatedWorker {
 public:
  // `index` makes the name unique: "load-sim/<index>". `stored`, if given, counts
  // the reports acknowledged as stored (shared by all workers of a run).
  // `task_time` is how long it "measures" a task before reporting (sleeping, so that
  // 64 of them load the coordinator like a fleet whose tasks take that long: a fleet
  // of N workers offers N / task_time tasks per second); zero: report at once.
  SimulatedWorker(const std::string& coordinator_address, int index,
                  std::atomic<int64_t>* stored = nullptr,
                  std::chrono::microseconds task_time = std::chrono::microseconds(0));

  absl::Status Register();
  // Opens its Work stream and reports each task at once until the stream ends or
  // Stop() is called. Returns the stream's final status (CANCELLED after Stop()).
  grpc::Status Serve();
  // One heartbeat (the protocol asks for one every heartbeat_interval_s).
  void Heartbeat();
  // Ends Serve() soon; thread-safe.
  void Stop();

  const std::string& name() const { return name_; }
  double heartbeat_interval_s() const { return heartbeat_interval_s_; }
  // Lease latency, one per task but the first, seconds: from sending the previous
  // task's report, which frees the worker (window 1), to receiving its next task:
  // the time the worker waits for work. With task_time 0 the coordinator is
  // saturated and this is mostly queueing (in a closed loop its mean is about
  // workers / rate); with a task_time it is the coordinator's response at the
  // offered load. Read after Serve() returned.
  const std::vector<double>& lease_latencies_s() const { return lease_latencies_s_; }
  // When the first task arrived (the stream opens before any job exists, so its
  // wait is job start-up, not lease latency).
  std::chrono::steady_clock::time_point first_task_at() const { return first_task_at_; }
  // Every task id received, in order. Read after Serve() returned.
  const std::vector<int64_t>& task_ids() const { return task_ids_; }
  // Reports the coordinator answered with stored = false.
  int failed_reports() const { return failed_reports_; }
  // (job id, problem, candidate hash) of every report acknowledged as stored, in
  // order: what the coordinator promised is durable. Read after Serve() returned.
  struct Acknowledged {
    int64_t job_id;
    std::string problem;
    std::string candidate_hash;
  };
  const std::vector<Acknowledged>& acknowledged() const { return acknowledged_; }

 private:
  std::string name_;
  std::atomic<int64_t>* stored_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<mtune::v1::Coordinator::Stub> stub_;
  std::string worker_id_;
  double heartbeat_interval_s_ = 1;
  std::atomic<int64_t> current_task_{0};
  std::atomic<bool> stop_{false};
  std::mutex context_mu_;
  grpc::ClientContext* lease_context_ = nullptr;  // the Work stream's; guarded by context_mu_
  std::chrono::microseconds task_time_;
  std::vector<double> lease_latencies_s_;
  std::chrono::steady_clock::time_point first_task_at_{};
  std::vector<int64_t> task_ids_;
  int failed_reports_ = 0;
  std::vector<Acknowledged> acknowledged_;
};

}  // namespace mtune::bench
