// The coordinator in-process (no gRPC), on a real SQLite file: paths a real
// cluster rarely takes.
#include "server/coordinator.h"

#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "strategies/candidate.h"

namespace mtune::server {
namespace {

using ::testing::ElementsAre;
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

// A worker the test itself plays: registered, never started.
std::string RegisterTestWorker(Coordinator& coordinator) {
  mtune::v1::RegisterRequest request;
  request.set_name("test-worker");
  request.mutable_target()->set_id("cpu:test");
  request.mutable_target()->set_kind("cpu");
  request.mutable_calibration()->set_peak_gflops_f32(100);
  auto registered = coordinator.Register(request);
  EXPECT_TRUE(registered.ok()) << registered.status();
  return registered.ok() ? registered->worker_id() : "";
}

// Leases the next task and reports it OK at `gflops` (and `gbps`); returns its
// candidate's hash.
std::string MeasureNext(Coordinator& coordinator, const std::string& worker, double gflops,
                        double gbps = 0) {
  auto task = coordinator.NextTask(worker, 2);
  EXPECT_TRUE(task.ok() && *task != nullptr);
  if (!task.ok() || *task == nullptr) return "";
  mtune::v1::Result result;
  result.set_status(mtune::v1::RESULT_STATUS_OK);
  result.set_gflops(gflops);
  result.set_gbps(gbps);
  result.set_total_s(0.5);
  EXPECT_TRUE(coordinator.ReportResult(worker, (*task)->task_id(), result).ok());
  return (*task)->candidate().hash();
}

constexpr char kSmallMatmul[] = "matmul:m=64,n=64,k=64:f32";

// A random-search job of `trials` on kSmallMatmul, its candidates measured at 10,
// 20, 30, ... GFLOP/s in proposal order; their hashes in that order.
std::vector<std::string> TuneAtRisingSpeeds(Coordinator& coordinator, const std::string& worker,
                                            uint32_t trials, uint64_t seed) {
  mtune::v1::JobSpec search;
  search.add_problems(kSmallMatmul);
  search.set_trials(trials);
  search.set_search("random");
  search.set_seed(seed);
  auto searched = coordinator.SubmitJob(search);
  EXPECT_TRUE(searched.ok()) << searched.status();
  std::vector<std::string> hashes;
  for (uint32_t i = 1; searched.ok() && i <= trials; ++i)
    hashes.push_back(MeasureNext(coordinator, worker, 10.0 * i));
  if (searched.ok()) {
    EXPECT_EQ(coordinator.GetJob(searched->id())->state(), mtune::v1::JOB_STATE_SUCCEEDED);
  }
  return hashes;
}

mtune::v1::JobSpec ConfirmationOfSmallMatmul(uint32_t top) {
  mtune::v1::JobSpec confirm;
  confirm.add_problems(kSmallMatmul);
  confirm.set_confirm_top(top);
  return confirm;
}

// A coordinator on a fresh SQLite file, with a registered test worker.
class CoordinatorOnAStore : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = db::Store::Open(scratch_.Path("mtune.sqlite"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    coordinator_ = std::make_unique<Coordinator>(store_.get(), CoordinatorOptions());
    worker_ = RegisterTestWorker(*coordinator_);
  }

  ScratchDir scratch_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::string worker_;
};

// Peaks a worker timed again come with a result; the coordinator shows them for the
// worker and stores them with its target (the dashboard's roofline), newer only.
TEST_F(CoordinatorOnAStore, PeaksTimedAgainReplaceTheWorkersAndItsTargetsOlderOnes) {
  mtune::v1::JobSpec spec;
  spec.add_problems(kSmallMatmul);
  spec.set_trials(3);
  spec.set_search("random");
  spec.set_seed(1);
  ASSERT_TRUE(coordinator_->SubmitJob(spec).ok());
  auto report = [&](double peak, double measured_unix_s) {
    auto task = coordinator_->NextTask(worker_, 2);
    ASSERT_TRUE(task.ok() && *task != nullptr);
    mtune::v1::Result result;
    result.set_status(mtune::v1::RESULT_STATUS_OK);
    result.set_gflops(50);
    result.set_total_s(0.5);
    result.mutable_retimed_peaks()->set_peak_gflops_f32(peak);
    result.mutable_retimed_peaks()->set_measured_unix_s(measured_unix_s);
    ASSERT_TRUE(coordinator_->ReportResult(worker_, (*task)->task_id(), result).ok());
  };
  auto shown = [&] {
    const std::vector<mtune::v1::WorkerInfo> workers = coordinator_->ListWorkers();
    return workers.size() == 1 ? workers[0].calibration().peak_gflops_f32() : -1.0;
  };
  auto stored = [&] {
    auto target = store_->GetTarget("cpu:test");
    return target.ok() ? target->second.peak_gflops_f32() : -1.0;
  };
  ASSERT_EQ(shown(), 100);
  ASSERT_EQ(stored(), 100);

  report(117, 2000);
  EXPECT_EQ(shown(), 117);
  EXPECT_EQ(stored(), 117);
  EXPECT_EQ(store_->GetTarget("cpu:test")->second.peaks_measured_unix_s(), 2000);

  report(90, 1000);  // timed before the peaks held: a late report
  EXPECT_EQ(shown(), 117);
  EXPECT_EQ(stored(), 117);
}

TEST_F(CoordinatorOnAStore, AConfirmationJobMeasuresItsBestStoredCandidatesUntilTheRankingHolds) {
  // Measured at 10, 20, ..., 50 GFLOP/s: the last is best.
  const std::vector<std::string> hashes = TuneAtRisingSpeeds(*coordinator_, worker_, 5, 1);
  ASSERT_EQ(hashes.size(), 5u);

  auto confirming = coordinator_->SubmitJob(ConfirmationOfSmallMatmul(2));
  ASSERT_TRUE(confirming.ok()) << confirming.status();
  EXPECT_EQ(confirming->trials_total(), 6u) << "at most 3 measurements per place";
  // The two best, best first. The best's 50 was a lucky burst: it measures 1 now,
  // and counts with the lower of its two, behind the one measured at 30 once...
  EXPECT_EQ(MeasureNext(*coordinator_, worker_, 1.0), hashes[4]);
  EXPECT_EQ(MeasureNext(*coordinator_, worker_, 39.0), hashes[3]);
  // ...which is among the best two now, so it is measured again too.
  EXPECT_EQ(MeasureNext(*coordinator_, worker_, 29.0), hashes[2]);
  auto ended = coordinator_->GetJob(confirming->id());
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->state(), mtune::v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(ended->trials_done(), 3u);
  EXPECT_THAT(ended->message(), HasSubstr("its best 2 measured again after 3 trials"));

  // Ranked by the lower of two measurements: the runner-up (40 and 39) is best now.
  auto best = store_->GetBest(kSmallMatmul, "");
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->candidate().hash(), hashes[3]);
  EXPECT_EQ(best->measurements(), 2u);
  EXPECT_DOUBLE_EQ(best->result().gflops(), 39.0);
}

// A candidate is its template's text plus knob values: once the template is edited,
// results measured with the old text stay with the old candidate (and the script it
// ran) and count as such; a confirmation does not measure its knobs again as if they
// were that candidate.
TEST_F(CoordinatorOnAStore, ACandidateMeasuredWithAnotherTextOfItsTemplateIsAnotherCandidate) {
  const std::vector<std::string> hashes = TuneAtRisingSpeeds(*coordinator_, worker_, 2, 1);
  ASSERT_EQ(hashes.size(), 2u);
  auto results = store_->ListResults(0, kSmallMatmul, 1);
  ASSERT_TRUE(results.ok() && results->size() == 1u) << results.status();
  const mtune::v1::TrialResult& best_now = results->front();
  ASSERT_EQ(best_now.candidate().hash(), hashes[1]);

  // The same knobs, measured at 90 GFLOP/s by an older text of the template.
  mtune::v1::TrialResult older = best_now;
  *older.mutable_candidate() = strategies::MakeCandidate(
      best_now.candidate().template_name(), strategies::TemplateDigest("// an older text"),
      strategies::ValuesOf(best_now.candidate()));
  ASSERT_NE(older.candidate().hash(), hashes[1]);
  older.mutable_result()->set_gflops(90.0);
  ASSERT_TRUE(store_->InsertResult(older, "// the older script").ok());
  auto best = store_->GetBest(kSmallMatmul, "");
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->candidate().hash(), older.candidate().hash());
  EXPECT_EQ(best->script(), "// the older script");

  // Confirming the best 2 measures today's two, not the older text's knobs (which
  // would measure today's best twice over).
  auto confirming = coordinator_->SubmitJob(ConfirmationOfSmallMatmul(2));
  ASSERT_TRUE(confirming.ok()) << confirming.status();
  EXPECT_EQ(MeasureNext(*coordinator_, worker_, 21.0), hashes[1]);
  EXPECT_EQ(MeasureNext(*coordinator_, worker_, 11.0), hashes[0]);
  auto ended = coordinator_->GetJob(confirming->id());
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->state(), mtune::v1::JOB_STATE_SUCCEEDED);
  EXPECT_THAT(ended->message(), HasSubstr("its best 2 measured again after 2 trials"));
}

TEST_F(CoordinatorOnAStore, AConfirmationOfCandidatesOfAnotherTemplateTextOnlySaysSo) {
  mtune::v1::JobSpec search;
  search.add_problems(kSmallMatmul);
  search.set_trials(1);
  search.set_search("random");
  auto job = coordinator_->SubmitJob(search);
  ASSERT_TRUE(job.ok()) << job.status();
  auto task = coordinator_->NextTask(worker_, 2);
  ASSERT_TRUE(task.ok() && *task != nullptr);
  // The only stored result: the task's knobs, measured with another text of the
  // template (as a store tuned by an earlier build holds).
  mtune::v1::TrialResult other;
  other.set_job_id(job->id());
  other.set_problem(kSmallMatmul);
  other.set_target_id("cpu:test");
  other.set_worker_name("test-worker");
  *other.mutable_candidate() = strategies::MakeCandidate(
      (*task)->candidate().template_name(), strategies::TemplateDigest("// another text"),
      strategies::ValuesOf((*task)->candidate()));
  other.mutable_result()->set_status(mtune::v1::RESULT_STATUS_OK);
  other.mutable_result()->set_gflops(10.0);
  absl::StatusOr<bool> inserted = store_->InsertResult(other, "// the other script");
  ASSERT_TRUE(inserted.ok()) << inserted.status();

  auto refused = coordinator_->SubmitJob(ConfirmationOfSmallMatmul(1));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("its 1 stored candidate of template matmul_packed was measured with another "
                        "text of that template than this build's"));
}

TEST(Coordinator, AConfirmationJobResumedAfterARestartGoesOnFromTheStoredRanking) {
  ScratchDir scratch;
  auto store = db::Store::Open(scratch.Path("mtune.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<std::string> hashes;
  int64_t confirm_id = 0;
  {
    Coordinator coordinator(store->get(), CoordinatorOptions());
    const std::string worker = RegisterTestWorker(coordinator);
    hashes = TuneAtRisingSpeeds(coordinator, worker, 4, 3);
    ASSERT_EQ(hashes.size(), 4u);
    auto confirming = coordinator.SubmitJob(ConfirmationOfSmallMatmul(2));
    ASSERT_TRUE(confirming.ok()) << confirming.status();
    confirm_id = confirming->id();
    // The best measures far slower now, and the coordinator stops.
    EXPECT_EQ(MeasureNext(coordinator, worker, 1.0), hashes[3]);
  }
  Coordinator restarted(store->get(), CoordinatorOptions());
  ASSERT_TRUE(restarted.ResumeRunningJobs().ok());
  const std::string worker = RegisterTestWorker(restarted);
  // Still a confirmation job (its spec is stored): the best two now are the ones
  // measured at 30 and 20, each measured once before; the old best, measured by
  // this job already, is not proposed again.
  EXPECT_EQ(MeasureNext(restarted, worker, 28.0), hashes[2]);
  EXPECT_EQ(MeasureNext(restarted, worker, 19.0), hashes[1]);
  auto ended = restarted.GetJob(confirm_id);
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->state(), mtune::v1::JOB_STATE_SUCCEEDED) << ended->message();
  EXPECT_EQ(ended->trials_done(), 3u);
  EXPECT_EQ(ended->spec().confirm_top(), 2u);
}

TEST_F(CoordinatorOnAStore, AConfirmationJobStopsAtThreeMeasurementsPerPlace) {
  ASSERT_EQ(TuneAtRisingSpeeds(*coordinator_, worker_, 6, 5).size(), 6u);
  auto confirming = coordinator_->SubmitJob(ConfirmationOfSmallMatmul(1));
  ASSERT_TRUE(confirming.ok()) << confirming.status();
  // Every best so far collapses when measured again: the job gives up after 3.
  for (int i = 0; i < 3; ++i) MeasureNext(*coordinator_, worker_, 1.0);
  auto ended = coordinator_->GetJob(confirming->id());
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->state(), mtune::v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(ended->trials_done(), 3u);
  EXPECT_THAT(ended->message(), HasSubstr("confirmation budget of 3 spent after 3 trials"));
}

// A transpose has no arithmetic: every result of it has 0 GFLOP/s, so its search, its
// patience and its progress go by GB/s. By GFLOP/s no trial would ever improve on the
// first, and a patience of 2 would stop the job after its third.
TEST_F(CoordinatorOnAStore, AProblemWithoutArithmeticIsTunedByItsBandwidth) {
  mtune::v1::JobSpec spec;
  spec.add_problems("transpose_2d:m=64,n=64:f32");
  spec.set_trials(5);
  spec.set_search("random");
  spec.set_seed(1);
  spec.set_patience(2);
  auto submitted = coordinator_->SubmitJob(spec);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  for (int i = 1; i <= 5; ++i) MeasureNext(*coordinator_, worker_, 0.0, 10.0 * i);
  auto ended = coordinator_->GetJob(submitted->id());
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->state(), mtune::v1::JOB_STATE_SUCCEEDED) << ended->message();
  EXPECT_EQ(ended->trials_done(), 5u) << ended->message();
  ASSERT_EQ(ended->progress_size(), 1);
  const mtune::v1::ProblemProgress& progress = ended->progress(0);
  EXPECT_EQ(progress.unit(), "GB/s");
  EXPECT_EQ(progress.trials_failed(), 0u);
  EXPECT_DOUBLE_EQ(progress.best_figure(), 50.0);
  EXPECT_EQ(progress.best_trial(), 5u);
  auto convergence = coordinator_->GetConvergence(submitted->id());
  ASSERT_TRUE(convergence.ok()) << convergence.status();
  ASSERT_EQ(convergence->problems_size(), 1);
  EXPECT_EQ(convergence->problems(0).unit(), "GB/s");
  EXPECT_THAT(convergence->problems(0).figures(), ElementsAre(10.0, 20.0, 30.0, 40.0, 50.0));
  EXPECT_THAT(convergence->problems(0).gflops(), ElementsAre(0.0, 0.0, 0.0, 0.0, 0.0));
}

TEST_F(CoordinatorOnAStore, AConfirmationJobIsRefusedWithATrialBudgetOrNothingStored) {
  mtune::v1::JobSpec confirm = ConfirmationOfSmallMatmul(3);
  confirm.set_trials(8);
  auto with_trials = coordinator_->SubmitJob(confirm);
  ASSERT_FALSE(with_trials.ok());
  EXPECT_THAT(with_trials.status().message(), HasSubstr("takes no trial budget"));

  confirm.set_trials(0);
  auto nothing_stored = coordinator_->SubmitJob(confirm);
  ASSERT_FALSE(nothing_stored.ok());
  EXPECT_THAT(nothing_stored.status().message(),
              HasSubstr("nothing to confirm for matmul:m=64,n=64,k=64:f32"));
  // Refused before anything was stored.
  EXPECT_TRUE(store_->ListJobIds(mtune::v1::JOB_STATE_RUNNING)->empty());
}

// A problem no candidate of the template can tune (matmul_bf16_vnni's k cache tiles
// hold at least two pairs, or three elements where k is odd, and k = 2 has none) is
// refused at submission, naming the template and the command that shows its space,
// instead of a job that can only fail.
TEST_F(CoordinatorOnAStore, AProblemWithoutAValidCandidateIsRefused) {
  mtune::v1::JobSpec job;
  job.add_problems("matmul:m=40,n=40,k=2:bf16");
  job.set_template_name("matmul_bf16_vnni");
  job.set_trials(4);
  job.set_search("random");
  auto refused = coordinator_->SubmitJob(job);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("template matmul_bf16_vnni has no valid candidate for matmul:m=40,n=40,k=2:bf16"));
  EXPECT_TRUE(store_->ListJobIds(mtune::v1::JOB_STATE_RUNNING)->empty());
  // A shape it tiles is accepted.
  job.set_problems(0, "matmul:m=37,n=64,k=64:bf16");
  EXPECT_TRUE(coordinator_->SubmitJob(job).ok());
}

// A worker the test plays on a CPU with `features` (an LLVM feature string).
// `l2_bytes` > 0: its calibration records an L2 of that capacity.
std::string RegisterWorkerWith(Coordinator& coordinator, const std::string& name, const std::string& features,
                               uint64_t l2_bytes = 0) {
  mtune::v1::RegisterRequest request;
  request.set_name(name);
  request.mutable_target()->set_id("cpu:test:" + name);
  request.mutable_target()->set_kind("cpu");
  request.mutable_target()->set_features(features);
  request.mutable_calibration()->set_peak_gflops_f32(100);
  if (l2_bytes > 0) {
    mtune::v1::BandwidthLevel* l2 = request.mutable_calibration()->add_bandwidth();
    l2->set_level("L2");
    l2->set_capacity_bytes(l2_bytes);
    l2->set_working_set_bytes(l2_bytes / 2);
    l2->set_gbps(100);
  }
  auto registered = coordinator.Register(request);
  EXPECT_TRUE(registered.ok()) << registered.status();
  return registered.ok() ? registered->worker_id() : "";
}

constexpr char kAvx2Cpu[] = "+avx2,+fma,-avx512bf16,-amx-tile,-amx-bf16";
constexpr char kAmxCpu[] = "+avx512f,+avx512bf16,+amx-tile,+amx-bf16";
constexpr char kBf16Matmul[] = "matmul:m=64,n=64,k=64:bf16";

mtune::v1::JobSpec Bf16AndF32Matmuls() {
  mtune::v1::JobSpec spec;
  spec.add_problems(kBf16Matmul);
  spec.add_problems(kSmallMatmul);
  spec.set_trials(2);
  spec.set_search("random");
  spec.set_seed(5);
  spec.set_allocation("equal");
  return spec;
}

// A job naming no template gets, per problem, the best suited one that a registered
// worker's CPU can run; the choice is stored with the job and kept when it resumes
// after a restart, whoever has registered again by then.
TEST(Coordinator, ChoosesEachProblemsTemplateForTheRegisteredWorkersAndKeepsItOnResume) {
  ScratchDir scratch;
  auto store = db::Store::Open(scratch.Path("mtune.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status();
  int64_t job_id = 0;
  {
    Coordinator coordinator(store->get(), CoordinatorOptions());
    RegisterWorkerWith(coordinator, "avx2", kAvx2Cpu);
    auto portable = coordinator.SubmitJob(Bf16AndF32Matmuls());
    ASSERT_TRUE(portable.ok()) << portable.status();
    EXPECT_THAT(portable->spec().problem_templates(), ElementsAre("matmul_packed", "matmul_packed"));
    ASSERT_EQ(portable->progress_size(), 2);
    EXPECT_THAT(portable->progress(0).template_reason(),
                HasSubstr("matmul_bf16_amx needs amx-tile, amx-bf16, which no target has"));
    ASSERT_TRUE(coordinator.CancelJob(portable->id()).ok());

    RegisterWorkerWith(coordinator, "amx", kAmxCpu);
    auto amx = coordinator.SubmitJob(Bf16AndF32Matmuls());
    ASSERT_TRUE(amx.ok()) << amx.status();
    EXPECT_THAT(amx->spec().problem_templates(), ElementsAre("matmul_bf16_amx", "matmul_packed"));
    EXPECT_THAT(amx->progress(0).template_reason(), HasSubstr("preferred"));
    EXPECT_EQ(amx->progress(1).template_reason(), "the family's default");
    job_id = amx->id();

    // A client does not choose per problem: that is the coordinator's to record.
    mtune::v1::JobSpec forged = Bf16AndF32Matmuls();
    forged.add_problem_templates("matmul_bf16_amx");
    forged.add_problem_templates("matmul_packed");
    EXPECT_EQ(coordinator.SubmitJob(forged).status().code(), absl::StatusCode::kInvalidArgument);
  }
  Coordinator restarted(store->get(), CoordinatorOptions());
  ASSERT_TRUE(restarted.ResumeRunningJobs().ok());
  const std::string amx = RegisterWorkerWith(restarted, "amx", kAmxCpu);
  std::set<std::string> leased_templates;
  for (int i = 0; i < 4; ++i) {
    auto task = restarted.NextTask(amx, 2, /*window=*/4);
    ASSERT_TRUE(task.ok() && *task != nullptr);
    EXPECT_EQ((*task)->job_id(), job_id);
    leased_templates.insert((*task)->candidate().template_name());
  }
  EXPECT_THAT(leased_templates, ElementsAre("matmul_bf16_amx", "matmul_packed"));
}

std::string KnobOf(const mtune::v1::Task& task, const std::string& name) {
  for (const auto& knob : task.candidate().knobs())
    if (knob.name() == name) return knob.value();
  return "";
}

// A job's register tiles are sized for the registered workers' vector registers (the
// smallest of the targets that can run its template): an AVX2 worker beside an
// AVX-512 one makes the f32 matmul's default the 6 x 16 tile that fits 16 ymm. The
// sizing is stored with the job and kept when it resumes, whoever registers by then.
TEST(Coordinator, SizesRegisterTilesForTheRegisteredTargetsAndKeepsThemOnResume) {
  ScratchDir scratch;
  auto store = db::Store::Open(scratch.Path("mtune.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status();
  mtune::v1::JobSpec spec;
  spec.add_problems("matmul:m=512,n=512,k=512:f32");
  spec.set_trials(8);
  spec.set_search("random");
  spec.set_seed(3);
  {
    Coordinator coordinator(store->get(), CoordinatorOptions());
    RegisterWorkerWith(coordinator, "avx512", kAmxCpu);
    const std::string avx2 = RegisterWorkerWith(coordinator, "avx2", kAvx2Cpu);
    auto job = coordinator.SubmitJob(spec);
    ASSERT_TRUE(job.ok()) << job.status();
    ASSERT_EQ(job->spec().problem_registers_size(), 1);
    EXPECT_EQ(job->spec().problem_registers(0).count(), 16u);
    EXPECT_EQ(job->spec().problem_registers(0).bytes(), 32u);
    auto first = coordinator.NextTask(avx2, 2, /*window=*/4);
    ASSERT_TRUE(first.ok() && *first != nullptr);
    EXPECT_EQ(KnobOf(**first, "tile_m2"), "6");  // the default candidate, repaired for AVX2
    EXPECT_EQ(KnobOf(**first, "tile_n2"), "16");

    // The sizing is the coordinator's to record, not a client's.
    mtune::v1::JobSpec forged = spec;
    forged.add_problem_registers()->set_count(32);
    EXPECT_EQ(coordinator.SubmitJob(forged).status().code(), absl::StatusCode::kInvalidArgument);
  }
  Coordinator restarted(store->get(), CoordinatorOptions());
  ASSERT_TRUE(restarted.ResumeRunningJobs().ok());
  const std::string avx512 = RegisterWorkerWith(restarted, "avx512", kAmxCpu);
  for (int i = 0; i < 4; ++i) {
    auto task = restarted.NextTask(avx512, 2, /*window=*/4);
    ASSERT_TRUE(task.ok() && *task != nullptr);
    // Every register tile that fits 16 ymm is 4 or 6 rows of 16 columns.
    EXPECT_EQ(KnobOf(**task, "tile_n2"), "16");
    EXPECT_THAT(KnobOf(**task, "tile_m2"), testing::AnyOf("4", "6"));
  }
}

// The kernel estimates size working sets against the smallest L2 among the registered
// workers' calibrations (a worker that recorded none does not count); the job stores
// it, keeps it when it resumes, and a client cannot set it.
TEST(Coordinator, RecordsTheSmallestRegisteredL2ForTheEstimates) {
  ScratchDir scratch;
  auto store = db::Store::Open(scratch.Path("mtune.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status();
  mtune::v1::JobSpec spec;
  spec.add_problems("transpose_2d:m=512,n=768:f32");
  spec.set_trials(4);
  spec.set_search("model");
  int64_t job_id = 0;
  {
    Coordinator coordinator(store->get(), CoordinatorOptions());
    auto before_any = coordinator.SubmitJob(spec);
    ASSERT_TRUE(before_any.ok()) << before_any.status();
    EXPECT_EQ(before_any->spec().estimate_l2_bytes(), 0u);
    RegisterWorkerWith(coordinator, "two-mib", kAmxCpu, 2 << 20);
    RegisterWorkerWith(coordinator, "one-mib", kAmxCpu, 1 << 20);
    RegisterWorkerWith(coordinator, "unknown", kAmxCpu);
    auto job = coordinator.SubmitJob(spec);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->spec().estimate_l2_bytes(), uint64_t{1} << 20);
    job_id = job->id();

    mtune::v1::JobSpec forged = spec;
    forged.set_estimate_l2_bytes(4 << 20);
    EXPECT_EQ(coordinator.SubmitJob(forged).status().code(), absl::StatusCode::kInvalidArgument);
  }
  Coordinator restarted(store->get(), CoordinatorOptions());
  ASSERT_TRUE(restarted.ResumeRunningJobs().ok());
  auto resumed = restarted.GetJob(job_id);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->spec().estimate_l2_bytes(), uint64_t{1} << 20);
}

// Tasks of a template that needs CPU features go only to workers that have them; the
// others take the rest of the queue. While no live worker has them, the problem's
// progress says what it waits for.
TEST(Coordinator, LeasesTasksOnlyToWorkersWhoseCpuCanRunThem) {
  ScratchDir scratch;
  auto store = db::Store::Open(scratch.Path("mtune.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status();
  Coordinator coordinator(store->get(), CoordinatorOptions());
  const std::string avx2 = RegisterWorkerWith(coordinator, "avx2", kAvx2Cpu);
  const std::string amx = RegisterWorkerWith(coordinator, "amx", kAmxCpu);
  auto job = coordinator.SubmitJob(Bf16AndF32Matmuls());
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_THAT(job->spec().problem_templates(), ElementsAre("matmul_bf16_amx", "matmul_packed"));

  // The AVX2 worker, asking first, is leased the f32 tasks only, then nothing.
  std::vector<std::string> avx2_problems;
  for (;;) {
    auto task = coordinator.NextTask(avx2, 0.3, /*window=*/4);
    ASSERT_TRUE(task.ok()) << task.status();
    if (*task == nullptr) break;
    avx2_problems.push_back((*task)->problem());
  }
  EXPECT_THAT(avx2_problems, ElementsAre(kSmallMatmul, kSmallMatmul));
  auto waiting = coordinator.GetJob(job->id());
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->progress(0).waiting_for(), "");  // the AMX worker is live

  // With the AMX worker gone, the bf16 problem waits, and says for what.
  coordinator.WorkerDisconnected(amx);
  waiting = coordinator.GetJob(job->id());
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_THAT(waiting->progress(0).waiting_for(), HasSubstr("a worker with amx-tile, amx-bf16"));
  EXPECT_EQ(waiting->progress(1).waiting_for(), "");

  // Back again: it is leased the bf16 tasks.
  const std::string amx_again = RegisterWorkerWith(coordinator, "amx", kAmxCpu);
  for (int i = 0; i < 2; ++i) {
    auto task = coordinator.NextTask(amx_again, 2, /*window=*/4);
    ASSERT_TRUE(task.ok() && *task != nullptr);
    EXPECT_EQ((*task)->problem(), kBf16Matmul);
    EXPECT_EQ((*task)->candidate().template_name(), "matmul_bf16_amx");
  }
}

// With a shared budget, the tasks of a problem that only a busy worker can run do not
// fill the job's window: the other problem's tasks keep flowing to the workers that
// can run them.
TEST(Coordinator, TasksWaitingForABusyWorkerDoNotStallTheRestOfASharedBudget) {
  ScratchDir scratch;
  auto store = db::Store::Open(scratch.Path("mtune.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status();
  Coordinator coordinator(store->get(), CoordinatorOptions());
  const std::string avx2 = RegisterWorkerWith(coordinator, "avx2", kAvx2Cpu);
  RegisterWorkerWith(coordinator, "amx", kAmxCpu);  // busy elsewhere: it never asks
  mtune::v1::JobSpec spec = Bf16AndF32Matmuls();
  spec.set_allocation("gain");
  spec.set_trials(8);  // 16 shared between the two problems
  auto job = coordinator.SubmitJob(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_THAT(job->spec().problem_templates(), ElementsAre("matmul_bf16_amx", "matmul_packed"));

  // The AVX2 worker measures f32 candidates one at a time; the bf16 ones wait, at
  // most what the AMX worker could hold queued for it.
  for (int i = 0; i < 8; ++i) {
    auto task = coordinator.NextTask(avx2, 0.3, /*window=*/1);
    ASSERT_TRUE(task.ok()) << task.status();
    ASSERT_NE(*task, nullptr) << "no f32 task for the idle worker after " << i;
    EXPECT_EQ((*task)->problem(), kSmallMatmul);
    mtune::v1::Result result;
    result.set_status(mtune::v1::RESULT_STATUS_OK);
    result.set_gflops(10 + i);
    result.set_total_s(0.5);
    ASSERT_TRUE(coordinator.ReportResult(avx2, (*task)->task_id(), result).ok());
  }
  auto progress = coordinator.GetJob(job->id());
  ASSERT_TRUE(progress.ok()) << progress.status();
  EXPECT_EQ(progress->progress(1).trials_done(), 8u);
  EXPECT_EQ(progress->progress(0).trials_done(), 0u);
}

}  // namespace
}  // namespace mtune::server
