// The coordinator in-process (no gRPC), on a real SQLite file: paths a real
// cluster rarely takes.
#include "server/coordinator.h"

#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::server {
namespace {

using ::testing::HasSubstr;

// A fresh directory, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "mtune-coord-XXXXXX").string();
    if (mkdtemp(templ.data()) != nullptr) dir_ = templ;
  }
  ~ScratchDir() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

TEST(Coordinator, CandidateWhoseInstantiationFailsIsAStoredFailedResult) {
  ScratchDir scratch;
  auto store = db::Store::Open(scratch.Path("mtune.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status();
  CoordinatorOptions options;
  int calls = 0;
  options.test_instantiate = [&](const std::string&,
                                 const strategies::KnobValues&) -> absl::StatusOr<std::string> {
    ++calls;
    return absl::InvalidArgumentError("injected: the template does not verify");
  };
  Coordinator coordinator(store->get(), options);
  mtune::v1::JobSpec spec;
  spec.add_problems("matmul:m=64,n=64,k=64:f32");
  spec.set_trials(3);
  spec.set_search("random");
  spec.set_seed(1);
  auto submitted = coordinator.SubmitJob(spec);
  ASSERT_TRUE(submitted.ok()) << submitted.status();

  // No worker is needed: every proposal failed in the coordinator, each is a
  // stored trial, and the job ends as soon as its budget is spent.
  auto job = coordinator.GetJob(submitted->id());
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), mtune::v1::JOB_STATE_FAILED);
  EXPECT_EQ(job->trials_done(), 3u);
  EXPECT_EQ(job->trials_failed(), 3u);
  EXPECT_EQ(calls, 3);

  auto results = (*store)->ListResults(submitted->id(), "", 0);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  std::set<std::string> hashes;
  for (const auto& trial : *results) {
    EXPECT_EQ(trial.result().status(), mtune::v1::RESULT_STATUS_INVALID_CANDIDATE);
    EXPECT_THAT(trial.result().error(), HasSubstr("instantiation failed in the coordinator"));
    EXPECT_THAT(trial.result().error(), HasSubstr("injected: the template does not verify"));
    EXPECT_EQ(trial.target_id(), kCoordinatorTargetId);
    EXPECT_EQ(trial.worker_name(), "coordinator");
    hashes.insert(trial.candidate().hash());
  }
  EXPECT_EQ(hashes.size(), 3u);
  // Failures never count as best.
  EXPECT_FALSE((*store)->GetBest("matmul:m=64,n=64,k=64:f32", "").ok());
}

}  // namespace
}  // namespace mtune::server
