// The dashboard's read-only JSON API, independent of HTTP: every endpoint is a
// function from (path parameters, query parameters) to (HTTP status, JSON body).
// It reads through DashboardSource only, so what the dashboard can see is listed
// in one place; server/dashboard.h serves it over HTTP.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "proto/mtune.pb.h"

namespace mtune::server {

class Coordinator;

// Everything the dashboard reads. Implementations must be thread-safe: HTTP
// handlers call them concurrently.
class DashboardSource {
 public:
  virtual ~DashboardSource() = default;
  // Job ids in creation order.
  virtual absl::StatusOr<std::vector<int64_t>> JobIds() = 0;
  // The job with progress and best per problem; NotFound when missing.
  virtual absl::StatusOr<mtune::v1::Job> Job(int64_t job_id) = 0;
  // Stored trials of a job (0 = any) and problem ("" = any), best first.
  virtual absl::StatusOr<std::vector<mtune::v1::TrialResult>> Results(int64_t job_id,
                                                                      const std::string& problem,
                                                                      uint32_t limit) = 0;
  // Candidate hashes of (job, problem) in the order their results were stored.
  virtual absl::StatusOr<std::vector<std::string>> TrialOrder(int64_t job_id,
                                                              const std::string& problem) = 0;
  // Workers known to the coordinator (live and gone).
  virtual std::vector<mtune::v1::WorkerInfo> Workers() = 0;
  // The task a worker holds, if it is still leased.
  virtual std::optional<mtune::v1::Task> LeasedTask(int64_t task_id) = 0;
  // A registered target and its latest calibration; NotFound when missing.
  virtual absl::StatusOr<std::pair<mtune::v1::Target, mtune::v1::Calibration>> Target(
      const std::string& target_id) = 0;
};

// DashboardSource over a live coordinator and its store.
std::unique_ptr<DashboardSource> MakeCoordinatorSource(Coordinator* coordinator);

// An endpoint's answer: HTTP status and JSON body ({"error": ...} when not 200).
struct ApiResponse {
  int status = 200;
  nlohmann::json body;
};

// Query parameters of a request (first value of each name).
using QueryParams = std::map<std::string, std::string>;

// The endpoints. Numbers are plain JSON numbers in the proto's units (GFLOP/s,
// GB/s, seconds, bytes); a figure that does not exist (ETA of an ended job,
// GFLOP/s of a failed trial) is null, never 0.
class DashboardApi {
 public:
  explicit DashboardApi(DashboardSource* source) : source_(source) {}

  // GET /api/jobs: every job with progress, ETA and best per problem.
  ApiResponse Jobs();
  // GET /api/jobs/{id}: one job, plus per problem its arithmetic intensity,
  // failures by status and convergence (best so far after each trial), and the
  // calibration of every target that measured it.
  ApiResponse Job(const std::string& id_text);
  // GET /api/results?job=ID[&problem=KEY][&limit=N]: stored trials, best first,
  // each with its trial number (order of storage within its job and problem).
  ApiResponse Results(const QueryParams& params);
  // GET /api/workers: target, calibration, pinned core, state and current task.
  ApiResponse Workers();
  // GET /api/targets/{id}: a target and its measured ceilings.
  ApiResponse Target(const std::string& target_id);
  // GET /api/convergence?problem=KEY: best so far per trial, one line per job
  // that tuned the problem (newest 8), labelled with its search algorithm.
  ApiResponse Convergence(const QueryParams& params);

  // The body of a 4xx/5xx answer.
  static ApiResponse Error(int status, const std::string& message);

 private:
  DashboardSource* source_;
};

// --- JSON forms, shared by the endpoints and their tests -------------------

nlohmann::json CalibrationJson(const mtune::v1::Calibration& calibration);
nlohmann::json TargetJson(const mtune::v1::Target& target);
// One trial; `trial_number` is 1-based, 0 when unknown (then omitted).
nlohmann::json TrialJson(const mtune::v1::TrialResult& trial, uint32_t trial_number);
// A job's summary; `now_unix_s` dates the ETA.
nlohmann::json JobSummaryJson(const mtune::v1::Job& job, double now_unix_s);

// Estimated seconds until a running job ends, from its rate so far; nullopt
// when it has ended or has no finished trial yet to extrapolate from.
std::optional<double> EstimateEtaSeconds(const mtune::v1::Job& job, double now_unix_s);

// Per trial of `problem_key`, in trial order: its figure (GFLOP/s, or GB/s for a
// problem without arithmetic: strategies/figure.h) and the best so far (failed
// trials keep the previous best; null before the first OK trial).
nlohmann::json BestSoFar(const std::string& problem_key,
                         const std::vector<const mtune::v1::TrialResult*>& in_order);

}  // namespace mtune::server
