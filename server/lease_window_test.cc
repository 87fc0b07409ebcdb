// The lease window (WorkStart.window): a worker may hold several tasks at once
// (it compiles the next while it times one), never more than its window; the
// tasks held behind others get lease deadlines that allow for those; and all of
// them go back to the queue when the worker disconnects. No RPC: the coordinator
// itself, on a real SQLite file.
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <memory>
#include <set>
#include <vector>
#include <string>

#include "db/store.h"
#include "gtest/gtest.h"
#include "server/coordinator.h"

namespace mtune::server {
namespace {

class LeaseWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/mtune-lease-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    auto store = db::Store::Open(dir_ + "/mtune.sqlite");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    CoordinatorOptions options;
    options.task_time_limit_s = 100;
    coordinator_ = std::make_unique<Coordinator>(store_.get(), options);
  }
  void TearDown() override {
    coordinator_.reset();
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  std::string RegisterWorker(const std::string& name) {
    mtune::v1::RegisterRequest request;
    request.set_name(name);
    request.mutable_target()->set_id("cpu:test");
    request.mutable_target()->set_kind("cpu");
    request.mutable_calibration()->set_peak_gflops_f32(100);
    auto registered = coordinator_->Register(request);
    EXPECT_TRUE(registered.ok()) << registered.status();
    return registered.ok() ? registered->worker_id() : "";
  }

  void SubmitJob(uint32_t trials) {
    mtune::v1::JobSpec spec;
    spec.add_problems("matmul:m=64,n=64,k=64:f32");
    spec.set_search("random");
    spec.set_trials(trials);
    spec.set_seed(1);
    auto job = coordinator_->SubmitJob(spec);
    ASSERT_TRUE(job.ok()) << job.status();
  }

  std::string dir_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<Coordinator> coordinator_;
};

TEST_F(LeaseWindow, AWorkerHoldsUpToItsWindowAndNoMore) {
  const std::string worker = RegisterWorker("w");
  SubmitJob(10);
  std::vector<mtune::v1::Task> held;
  for (int i = 0; i < 3; ++i) {
    auto task = coordinator_->NextTask(worker, 2, /*window=*/3);
    ASSERT_TRUE(task.ok()) << task.status();
    ASSERT_NE(*task, nullptr) << "task " << i << " of a window of 3 not leased";
    held.push_back(**task);
  }
  // Full: the fourth waits (nullopt after the timeout) although the queue has work.
  auto fourth = coordinator_->NextTask(worker, 0.2, 3);
  ASSERT_TRUE(fourth.ok());
  EXPECT_EQ(*fourth, nullptr);
  // The one it times is the oldest; later ones may wait for those ahead of them.
  auto workers = coordinator_->ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].state(), "busy");
  EXPECT_EQ(workers[0].current_task_id(), held[0].task_id());
  const double limit = held[0].time_limit_s();
  EXPECT_NEAR(held[2].lease_deadline_unix_s() - held[0].lease_deadline_unix_s(), 2 * limit, 1.0);

  // A report frees one place in the window.
  mtune::v1::Result result;
  result.set_status(mtune::v1::RESULT_STATUS_COMPILE_ERROR);
  result.set_error("test");
  ASSERT_TRUE(coordinator_->ReportResult(worker, held[0].task_id(), result).ok());
  auto next = coordinator_->NextTask(worker, 2, 3);
  ASSERT_TRUE(next.ok());
  EXPECT_NE(*next, nullptr);
}

TEST_F(LeaseWindow, WindowOneIsTheOriginalOneTaskAtATime) {
  const std::string worker = RegisterWorker("w");
  SubmitJob(10);
  auto first = coordinator_->NextTask(worker, 2, /*window=*/0);  // 0 from an old worker
  ASSERT_TRUE(first.ok() && *first != nullptr);
  auto second = coordinator_->NextTask(worker, 0.2, 0);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, nullptr);
}

TEST_F(LeaseWindow, EveryHeldTaskIsRequeuedWhenTheWorkerDisconnects) {
  const std::string a = RegisterWorker("a");
  SubmitJob(4);
  std::set<int64_t> held;
  for (int i = 0; i < 2; ++i) {
    auto task = coordinator_->NextTask(a, 2, 2);
    ASSERT_TRUE(task.ok() && *task != nullptr);
    held.insert((*task)->task_id());
  }
  coordinator_->WorkerDisconnected(a);
  // Another worker gets them back (re-queued at the front), before new ones.
  const std::string b = RegisterWorker("b");
  std::set<int64_t> again;
  for (int i = 0; i < 2; ++i) {
    auto task = coordinator_->NextTask(b, 2, 2);
    ASSERT_TRUE(task.ok() && *task != nullptr);
    again.insert((*task)->task_id());
  }
  EXPECT_EQ(again, held);
}


// Push mode (the callback Work stream): tasks go to the worker's sink, as many
// as its window allows; a report frees its place and the next task is handed
// out on the reporting thread before the result is committed; the report's
// outcome comes after the COMMIT, from the commit thread.
struct Sunk {
  std::mutex mu;
  std::vector<std::shared_ptr<const mtune::v1::Task>> tasks;
  int ends = 0;  // null tasks: the stream should end
  Coordinator::TaskSink Sink() {
    return [this](std::shared_ptr<const mtune::v1::Task> task) {
      std::lock_guard lock(mu);
      if (task == nullptr)
        ++ends;
      else
        tasks.push_back(std::move(task));
    };
  }
  size_t size() {
    std::lock_guard lock(mu);
    return tasks.size();
  }
};

mtune::v1::Result OkResult() {
  mtune::v1::Result result;
  result.set_status(mtune::v1::RESULT_STATUS_OK);
  result.set_gflops(10);
  result.mutable_timing()->set_median_s(1e-3);
  return result;
}

TEST_F(LeaseWindow, PushModeSendsTheNextTaskBeforeTheCommitAndAnswersAfterIt) {
  const std::string worker = RegisterWorker("w");
  SubmitJob(10);
  Sunk sunk;
  ASSERT_TRUE(coordinator_->StartPushing(worker, 2, sunk.Sink()).ok());
  ASSERT_EQ(sunk.size(), 2u) << "a window of 2 is filled at once";
  const int64_t first = sunk.tasks[0]->task_id();
  std::promise<absl::Status> stored;
  coordinator_->ReportResultAsync(worker, first, OkResult(),
                                  [&](absl::Status s) { stored.set_value(s); });
  // Handed out on this thread, before ReportResultAsync returned.
  ASSERT_EQ(sunk.size(), 3u);
  std::future<absl::Status> outcome = stored.get_future();
  ASSERT_EQ(outcome.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(outcome.get().ok());
  auto results = store_->ListResults(sunk.tasks[0]->job_id(), "", 0);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(results->size(), 1u) << "acknowledged, so stored";
  // A report of a task it does not hold is answered at once (nothing to store).
  std::promise<absl::Status> again;
  coordinator_->ReportResultAsync(worker, first, OkResult(),
                                  [&](absl::Status s) { again.set_value(s); });
  EXPECT_TRUE(again.get_future().get().ok());
  std::promise<absl::Status> unknown;
  coordinator_->ReportResultAsync("nobody#9", first, OkResult(),
                                  [&](absl::Status s) { unknown.set_value(s); });
  EXPECT_EQ(unknown.get_future().get().code(), absl::StatusCode::kNotFound);
  coordinator_->WorkerDisconnected(worker);  // `sunk` goes before the coordinator
}

TEST_F(LeaseWindow, PushModeStopsAtDisconnectAndItsTasksGoToOthers) {
  const std::string a = RegisterWorker("a");
  const std::string b = RegisterWorker("b");
  SubmitJob(3);
  Sunk first, second;
  ASSERT_TRUE(coordinator_->StartPushing(a, 3, first.Sink()).ok());
  ASSERT_EQ(first.size(), 3u);
  ASSERT_TRUE(coordinator_->StartPushing(b, 3, second.Sink()).ok());
  EXPECT_EQ(second.size(), 0u) << "the job has only 3 trials, all held by a";
  coordinator_->WorkerDisconnected(a);
  // a's tasks were re-queued and pushed to b, the waiting worker.
  ASSERT_EQ(second.size(), 3u);
  std::set<int64_t> ids_a, ids_b;
  for (auto& t : first.tasks) ids_a.insert(t->task_id());
  for (auto& t : second.tasks) ids_b.insert(t->task_id());
  EXPECT_EQ(ids_a, ids_b);
  EXPECT_EQ(first.size(), 3u) << "nothing more for a disconnected worker";
  coordinator_->Stop();
  EXPECT_EQ(second.ends, 1) << "Stop ends the open push-mode streams";
  EXPECT_EQ(first.ends, 0);
  EXPECT_EQ(coordinator_->StartPushing(b, 1, second.Sink()).code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(LeaseWindow, AnOlderStreamClosingLateDoesNotStopTheNewerOne) {
  const std::string worker = RegisterWorker("w");
  SubmitJob(4);
  Sunk old_stream, new_stream;
  int old_key = 0, new_key = 0;
  ASSERT_TRUE(coordinator_->StartPushing(worker, 1, old_stream.Sink(), &old_key).ok());
  ASSERT_EQ(old_stream.size(), 1u);
  // The worker reconnected before the coordinator noticed its old stream break.
  ASSERT_TRUE(coordinator_->StartPushing(worker, 1, new_stream.Sink(), &new_key).ok());
  coordinator_->WorkerDisconnected(worker, &old_key);
  // The task the old stream held is re-queued and goes to the newer stream.
  ASSERT_EQ(new_stream.size(), 1u);
  EXPECT_EQ(new_stream.tasks[0]->task_id(), old_stream.tasks[0]->task_id());
  std::promise<absl::Status> stored;
  coordinator_->ReportResultAsync(worker, new_stream.tasks[0]->task_id(), OkResult(),
                                  [&](absl::Status s) { stored.set_value(s); });
  EXPECT_EQ(new_stream.size(), 2u) << "the newer stream still receives tasks";
  EXPECT_TRUE(stored.get_future().get().ok());
  coordinator_->WorkerDisconnected(worker, &new_key);
  EXPECT_EQ(old_stream.size(), 1u);
}

}  // namespace
}  // namespace mtune::server
