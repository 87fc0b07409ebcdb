// The dashboard's view of a live coordinator: reads only, through the store
// (persistent state) and the coordinator (workers and leases, in memory).
#include "server/coordinator.h"
#include "server/dashboard_api.h"

namespace mtune::server {
namespace {

class CoordinatorSource final : public DashboardSource {
 public:
  explicit CoordinatorSource(Coordinator* coordinator) : coordinator_(coordinator) {}

  absl::StatusOr<std::vector<int64_t>> JobIds() override {
    return coordinator_->store()->ListJobIds();
  }
  absl::StatusOr<mtune::v1::Job> Job(int64_t job_id) override {
    return coordinator_->GetJob(job_id);
  }
  absl::StatusOr<std::vector<mtune::v1::TrialResult>> Results(int64_t job_id,
                                                              const std::string& problem,
                                                              uint32_t limit) override {
    return coordinator_->store()->ListResults(job_id, problem, limit);
  }
  absl::StatusOr<std::vector<std::string>> TrialOrder(int64_t job_id,
                                                      const std::string& problem) override {
    return coordinator_->store()->ResultCandidateHashes(job_id, problem);
  }
  std::vector<mtune::v1::WorkerInfo> Workers() override { return coordinator_->ListWorkers(); }
  std::optional<mtune::v1::Task> LeasedTask(int64_t task_id) override {
    return coordinator_->LeasedTask(task_id);
  }
  absl::StatusOr<std::pair<mtune::v1::Target, mtune::v1::Calibration>> Target(
      const std::string& target_id) override {
    return coordinator_->store()->GetTarget(target_id);
  }

 private:
  Coordinator* coordinator_;
};

}  // namespace

std::unique_ptr<DashboardSource> MakeCoordinatorSource(Coordinator* coordinator) {
  return std::make_unique<CoordinatorSource>(coordinator);
}

}  // namespace mtune::server
