#include "server/coordinator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "strategies/candidate.h"
#include "strategies/default_candidate.h"
#include "strategies/features.h"
#include "strategies/figure.h"
#include "strategies/space_audit.h"
#include "strategies/template_choice.h"
#include "strategies/template_library.h"

namespace mtune::server {
namespace {

// Beyond its time limit a task gets this much longer before the coordinator
// takes it back: the worker's sandbox enforces the limit itself.
constexpr double kLeaseGraceS = 15;
// Most tasks one worker may hold at once: a few compiled ahead keep its measuring
// core busy; more would only starve other workers.
constexpr uint32_t kMaxLeaseWindow = 8;

double UnixNow() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

// Problems of a gain-allocated job each get this many trials before gains compare.
constexpr uint32_t kGainWarmupTrials = 4;
// Stored candidates taken from each of the nearest problems when warm starting.
constexpr uint32_t kWarmStartPerProblem = 4;
// A confirmation job measures at most this many candidates per place it confirms.
constexpr uint32_t kConfirmationsPerPlace = 3;
constexpr size_t kWarmStartProblems = 2;
// Stored results per nearest problem the model may learn from (the best first).
constexpr uint32_t kWarmStartPriorPerProblem = 1024;

// How far apart two problems of one family are: summed |log2| ratios of their dims.
double ShapeDistance(const strategies::Problem& a, const strategies::Problem& b) {
  double d = 0;
  for (const auto& [name, value] : a.dims) {
    const int64_t other = b.Dim(name);
    d += other > 0 && value > 0 ? std::abs(std::log2(double(value) / double(other))) : 64.0;
  }
  return d + (a.element_type == b.element_type ? 0 : 8);
}

// Expected gain of one more trial on a problem: how much its best rose over its
// recent trials (relative), plus an exploration term that shrinks as it gets trials.
double ExpectedGain(const std::vector<double>& scores, uint32_t proposed, uint64_t job_trials) {
  if (proposed < kGainWarmupTrials) return 1e9 - proposed;
  double best = 0, best_before = 0;
  const size_t recent = std::max<size_t>(8, scores.size() / 2);
  for (size_t i = 0; i < scores.size(); ++i) {
    best = std::max(best, scores[i]);
    if (i + recent < scores.size()) best_before = best;
  }
  const double improvement = best > 0 ? (best - best_before) / best : 0.0;
  return improvement + 0.1 * std::sqrt(std::log(double(job_trials) + 1) / double(proposed));
}

}  // namespace

class Coordinator::Locked {
 public:
  explicit Locked(Coordinator& c) : c_(c), lock_(c.mu_) {}
  ~Locked() {
    if (lock_.owns_lock()) Unlock();
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  void Unlock() {
    std::vector<std::pair<TaskSink, std::shared_ptr<const mtune::v1::Task>>> deliveries;
    deliveries.swap(c_.deliveries_);
    lock_.unlock();
    for (auto& [sink, task] : deliveries) sink(std::move(task));
  }
  // For condition variables.
  std::unique_lock<std::mutex>& lock() { return lock_; }

 private:
  Coordinator& c_;
  std::unique_lock<std::mutex> lock_;
};

Coordinator::Coordinator(db::Store* store, CoordinatorOptions options)
    : store_(store), options_(options) {
  reaper_ = std::thread([this] { ReaperLoop(); });
  committer_ = std::thread([this] { CommitLoop(); });
}

Coordinator::~Coordinator() {
  Stop();
  reaper_.join();
  {
    std::lock_guard lock(commit_mu_);
    commit_stop_ = true;  // after committing what is queued
  }
  commit_wake_.notify_all();
  committer_.join();
}

void Coordinator::Stop() {
  {
    Locked lock(*this);
    stopping_ = true;
    for (auto& [id, w] : workers_) {
      w.wake->notify_all();
      // Push-mode streams end (null task), once.
      if (w.sink) deliveries_.emplace_back(std::exchange(w.sink, nullptr), nullptr);
    }
  }
  job_changed_.notify_all();
  reaper_wake_.notify_all();
}

double Coordinator::Now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

absl::StatusOr<std::unique_ptr<Coordinator::JobRun>> Coordinator::PlanJob(
    int64_t job_id, const mtune::v1::JobSpec& spec, bool resuming,
    const std::vector<std::string>& target_features) const {
  if (spec.problems().empty())
    return absl::InvalidArgumentError("a job needs at least one problem");
  // A stored job's choice of templates is kept (resuming); a new job's is made here.
  const bool templates_stored = resuming && spec.problem_templates_size() == spec.problems_size();
  if (!resuming && spec.problem_templates_size() != 0)
    return absl::InvalidArgumentError(
        "JobSpec.problem_templates is set by the coordinator; name one template for every "
        "problem with template_name, or none to have each problem's chosen");
  const bool confirming = spec.confirm_top() > 0;
  if (confirming && spec.trials() != 0)
    return absl::InvalidArgumentError(
        "a confirmation job (confirm_top > 0) takes no trial budget: the stored candidates it "
        "measures again are its trials");
  if (!confirming && spec.trials() == 0) return absl::InvalidArgumentError("the trial budget must be > 0");
  const auto names = search::SearchAlgorithmNames();
  if (!confirming && std::find(names.begin(), names.end(), spec.search()) == names.end())
    return absl::InvalidArgumentError(absl::StrCat("unknown search algorithm '", spec.search(),
                                                   "' (known: ", absl::StrJoin(names, ", "), ")"));
  if (spec.allocation() != "" && spec.allocation() != "gain" && spec.allocation() != "equal")
    return absl::InvalidArgumentError(absl::StrCat("unknown allocation '", spec.allocation(),
                                                   "' (known: gain, equal)"));
  if (!(spec.time_budget_s() >= 0) || !std::isfinite(spec.time_budget_s()))
    return absl::InvalidArgumentError("the time budget must be >= 0 seconds");
  auto job = std::make_unique<JobRun>();
  job->id = job_id;
  job->spec = spec;
  double created_unix = UnixNow();
  if (job_id != 0) {
    if (auto stored = store_->GetJob(job_id); stored.ok()) created_unix = stored->created_unix_s();
  }
  std::set<std::string> seen;
  for (int index = 0; index < spec.problems_size(); ++index) {
    const std::string& key = spec.problems(index);
    auto problem = strategies::ParseProblemKey(key);
    if (!problem.ok()) return problem.status();
    if (!seen.insert(problem->Key()).second)
      return absl::InvalidArgumentError(absl::StrCat("problem ", problem->Key(), " is listed twice"));
    std::string template_reason;
    std::optional<strategies::TemplateInstantiator> prepared;  // by ChooseTemplate
    auto tpl = [&]() -> absl::StatusOr<strategies::StrategyTemplate> {
      if (templates_stored) return strategies::FindTemplate(spec.problem_templates(index));
      if (!spec.template_name().empty()) return strategies::FindTemplate(spec.template_name());
      auto choice = strategies::ChooseTemplate(*problem, target_features);
      if (!choice.ok()) return choice.status();
      template_reason = std::move(choice->reason);
      prepared = std::move(choice->instantiator);
      return std::move(choice->tpl);
    }();
    if (!tpl.ok()) return absl::InvalidArgumentError(tpl.status().message());
    if (!tpl->TunesFamily(problem->family))
      return absl::InvalidArgumentError(absl::StrCat("template ", tpl->name, " tunes ", tpl->family,
                                                     ", not ", problem->family));
    // Parsed and printed once: each task's script is then spliced, not re-printed.
    auto instantiator = prepared ? absl::StatusOr<strategies::TemplateInstantiator>(*std::move(prepared))
                                 : strategies::TemplateInstantiator::Create(tpl->text, *problem);
    if (!instantiator.ok())
      return absl::Status(instantiator.status().code(),
                          absl::StrCat("template ", tpl->name, " for ", problem->Key(), ": ",
                                       instantiator.status().message()));
    const strategies::KnobSpace* knobs = &instantiator->space();
    // A space whose constraints no candidate satisfies (a template for some shapes
    // only, e.g. matmul_bf16_vnni for an n that no 16-column tile divides) is
    // refused here rather than queued as a job that can only fail. Counted only
    // without a default candidate, which most problems have.
    if (!strategies::DefaultCandidate(*knobs).has_value()) {
      const strategies::CandidateCount count = strategies::CountCandidates(*knobs);
      if (count.exact && count.valid == 0)
        return absl::InvalidArgumentError(absl::StrCat(
            "template ", tpl->name, " has no valid candidate for ", problem->Key(), ": none of its ",
            count.combinations, " combinations of knob options satisfies its constraints (`mtune space --problem ",
            problem->Key(), " --template ", tpl->name, "` lists them)"));
    }

    auto run = std::make_unique<ProblemRun>();
    run->problem = *problem;
    run->template_name = tpl->name;
    run->template_text = tpl->text;
    run->template_digest = strategies::TemplateDigest(tpl->text);
    run->template_reason = std::move(template_reason);
    run->needs_features = knobs->cpu_features;
    run->candidates = CandidateSpace(*knobs);
    run->budget = spec.trials();

    std::set<std::string> measured;
    if (resuming) {
      auto hashes = store_->ResultCandidateHashes(job_id, problem->Key());
      if (!hashes.ok()) return hashes.status();
      measured.insert(hashes->begin(), hashes->end());
      run->budget = spec.trials() > measured.size() ? spec.trials() - measured.size() : 0;
      run->measured_before = static_cast<uint32_t>(measured.size());
      // Timeouts keep scaling with the best time measured before the restart.
      auto stored = store_->ListResults(job_id, problem->Key(), 0);
      if (!stored.ok()) return stored.status();
      for (const auto& trial : *stored) {
        const double total = trial.result().total_s();
        if (trial.result().status() == mtune::v1::RESULT_STATUS_OK && total > 0 &&
            (run->best_total_s == 0 || total < run->best_total_s))
          run->best_total_s = total;
      }
    }
    if (confirming) {
      run->confirm_top = spec.confirm_top();
      run->confirmed = measured;
      // Each measurement may lift a candidate measured once before into the best
      // confirm_top, so the job may measure more than confirm_top; at most this.
      const uint32_t cap = kConfirmationsPerPlace * spec.confirm_top();
      run->budget = cap > measured.size() ? cap - static_cast<uint32_t>(measured.size()) : 0;
      auto queued = QueueCandidatesToConfirm(*run);
      if (!queued.ok()) return queued.status();
      const uint32_t other_text = queued->other_text_candidates;
      if (run->to_confirm.empty() && !resuming && other_text > 0)
        return absl::InvalidArgumentError(absl::StrCat(
            "nothing to confirm for ", problem->Key(), ": its ", other_text,
            other_text == 1 ? " stored candidate" : " stored candidates", " of template ",
            tpl->name, other_text == 1 ? " was" : " were",
            " measured with another text of that template than this build's "
            "(tune it again: a warm start measures their knob values first)"));
      if (run->to_confirm.empty() && !resuming)
        return absl::InvalidArgumentError(absl::StrCat(
            "nothing to confirm for ", problem->Key(), ": no OK result of template ", tpl->name,
            " is stored for it (tune it first)"));
    }
    run->limits.emplace(search::BudgetLimits{.time_s = spec.time_budget_s(),
                                             .patience = spec.patience()},
                        created_unix);
    // A confirmation job proposes from its list: it has no search.
    if (!confirming) {
      if (absl::Status planned = PlanSearch(spec, *knobs, measured, *run); !planned.ok()) return planned;
    }
    run->instantiator.emplace(*std::move(instantiator));
    job->problems.push_back(std::move(run));
  }
  if (job->problems.size() > 1 && spec.allocation() != "equal" && !confirming) {
    // One pool of trials x problems; each problem may take all of what is left.
    uint32_t left = 0;
    for (const auto& run : job->problems) left += run->budget;
    job->shared_budget = left;
    for (auto& run : job->problems) run->budget = left;
  }
  return job;
}

absl::Status Coordinator::PlanSearch(const mtune::v1::JobSpec& spec, const strategies::KnobSpace& knobs,
                                     const std::set<std::string>& measured, ProblemRun& run) const {
  search::SearchOptions search_options;
  search_options.seed = spec.seed();
  const CandidateSpace* candidates = &run.candidates;
  const std::string template_name = run.template_name, template_digest = run.template_digest;
  // Constraint-violating and already-measured candidates never cost a compile.
  search_options.is_valid = [candidates, template_name, template_digest, measured](const search::Point& point) {
    std::optional<strategies::KnobValues> values = candidates->Complete(point);
    if (!values) return false;
    return measured.empty() ||
           !measured.contains(strategies::MakeCandidate(template_name, template_digest, *values).hash());
  };
  // The template's default (or the valid candidate nearest to it) is tried first,
  // then the template's start points.
  for (const strategies::KnobValues& start : strategies::StartingCandidates(knobs)) {
    if (auto point = run.candidates.PointOf(start); point.ok())
      search_options.seeds_first.push_back(*point);
  }
  if (spec.warm_start()) {
    const std::vector<std::string> nearest = NearestStoredProblems(run);
    std::vector<search::Point> warm = WarmStartSeeds(run, nearest);
    run.warm_start_seeds = static_cast<uint32_t>(warm.size());
    search_options.seeds_first.insert(search_options.seeds_first.end(), warm.begin(), warm.end());
    // `model` also learns from those problems' results before its first trial.
    if (spec.search() == "model") {
      search_options.prior = WarmStartPrior(run, nearest);
      run.warm_start_prior = static_cast<uint32_t>(search_options.prior.size());
    }
  }
  // The model learns from problem-aware features (tile footprints, intensity).
  const strategies::Problem* problem_ptr = &run.problem;
  search_options.features = [problem_ptr, candidates](const search::Point& point) {
    std::optional<strategies::KnobValues> values = candidates->Complete(point);
    return values ? strategies::CandidateFeatures(*problem_ptr, *values) : std::vector<double>{};
  };
  auto algorithm =
      search::MakeSearch(spec.search(), run.candidates.search_space(), search_options);
  if (!algorithm.ok()) return algorithm.status();
  run.search = std::move(*algorithm);
  return absl::OkStatus();
}

std::vector<std::string> Coordinator::NearestStoredProblems(const ProblemRun& run) const {
  std::vector<std::string> keys_out;
  auto all = store_->AllBest();
  if (!all.ok()) return keys_out;
  // Nearest stored problems of the same family, nearest first (ties by key).
  std::vector<std::pair<double, std::string>> nearest;
  std::set<std::string> keys;
  for (const auto& best : *all) {
    if (!keys.insert(best.problem()).second) continue;
    auto other = strategies::ParseProblemKey(best.problem());
    if (!other.ok() || other->family != run.problem.family) continue;
    nearest.emplace_back(ShapeDistance(run.problem, *other), best.problem());
  }
  std::sort(nearest.begin(), nearest.end());
  if (nearest.size() > kWarmStartProblems) nearest.resize(kWarmStartProblems);
  for (auto& [distance, key] : nearest) keys_out.push_back(std::move(key));
  return keys_out;
}

std::vector<search::Point> Coordinator::WarmStartSeeds(const ProblemRun& run,
                                                       const std::vector<std::string>& nearest) const {
  std::vector<search::Point> seeds;
  for (const std::string& key : nearest) {
    // Ranked as the best-strategy queries rank (a re-measured candidate by its
    // median), so that what a warm start measures again is what they would pick.
    auto results = store_->ListRankedCandidates(key, kWarmStartPerProblem * 4);
    if (!results.ok()) continue;
    uint32_t taken = 0;
    for (const auto& trial : *results) {
      if (taken == kWarmStartPerProblem) break;
      if (trial.result().status() != mtune::v1::RESULT_STATUS_OK ||
          trial.candidate().template_name() != run.template_name)
        continue;
      auto point = search::NearestPoint(run.candidates.search_space(), strategies::ValuesOf(trial.candidate()));
      if (!point || std::find(seeds.begin(), seeds.end(), *point) != seeds.end()) continue;
      seeds.push_back(*point);
      ++taken;
    }
  }
  return seeds;
}

absl::StatusOr<Coordinator::ConfirmRanking> Coordinator::QueueCandidatesToConfirm(ProblemRun& run) const {
  auto ranked = store_->ListRankedCandidates(run.problem.Key(), 0);
  if (!ranked.ok()) return ranked.status();
  std::set<std::string> among_best;
  std::vector<std::pair<std::string, search::Point>> unmeasured;
  std::set<std::string> other_text;
  for (const auto& trial : *ranked) {
    if (among_best.size() == run.confirm_top) break;
    const mtune::v1::Candidate& candidate = trial.candidate();
    // One row per (candidate, target): a candidate measured on two targets counts once.
    if (candidate.template_name() != run.template_name || among_best.contains(candidate.hash())) continue;
    // A candidate the template no longer has (its knobs changed since) is passed
    // over, and so is one measured with another version of the template's text:
    // measuring its knobs now would measure another script, a candidate of its own.
    if (!strategies::HasTemplateDigest(candidate, run.template_digest)) {
      other_text.insert(candidate.hash());
      continue;
    }
    auto point = run.candidates.PointOf(strategies::ValuesOf(candidate));
    if (!point.ok()) continue;
    among_best.insert(candidate.hash());
    if (!run.confirmed.contains(candidate.hash())) unmeasured.emplace_back(candidate.hash(), *std::move(point));
  }
  for (auto& [hash, point] : unmeasured) {
    if (run.proposed + run.to_confirm.size() >= run.budget) break;
    run.confirmed.insert(hash);
    run.to_confirm.push_back(std::move(point));
  }
  return ConfirmRanking{.all_measured = unmeasured.empty(),
                        .other_text_candidates = static_cast<uint32_t>(other_text.size())};
}

std::vector<search::PriorResult> Coordinator::WarmStartPrior(const ProblemRun& run,
                                                             const std::vector<std::string>& nearest) const {
  std::vector<search::PriorResult> prior;
  for (const std::string& key : nearest) {
    auto other = strategies::ParseProblemKey(key);
    auto results = store_->ListResults(0, key, kWarmStartPriorPerProblem);
    if (!other.ok() || !results.ok()) continue;
    // Scores relative to the best of the same problem on the same target: a slower
    // machine's results say the same about the knobs as a faster one's.
    std::map<std::string, double> best_per_target;
    for (const auto& trial : *results)
      best_per_target[trial.target_id()] =
          std::max(best_per_target[trial.target_id()], strategies::FigureOf(*other, trial.result()));
    for (const auto& trial : *results) {
      const double best = best_per_target[trial.target_id()];
      if (trial.candidate().template_name() != run.template_name || best <= 0) continue;
      prior.push_back({strategies::CandidateFeatures(*other, strategies::ValuesOf(trial.candidate())),
                       strategies::FigureOf(*other, trial.result()) / best});
    }
  }
  return prior;
}

absl::Status Coordinator::ResumeRunningJobs() {
  auto ids = store_->ListJobIds(mtune::v1::JOB_STATE_RUNNING);
  if (!ids.ok()) return ids.status();
  Locked lock(*this);
  for (int64_t id : *ids) {
    auto stored = store_->GetJob(id);
    if (!stored.ok()) return stored.status();
    // No worker has registered yet: a job stored without its templates (before
    // schema v3) gets its template_name or each family's portable default, as then.
    auto job = PlanJob(id, stored->spec(), /*resuming=*/true, /*target_features=*/{});
    if (!job.ok()) {
      (void)store_->FinishJob(id, mtune::v1::JOB_STATE_FAILED,
                              "cannot resume: " + std::string(job.status().message()));
      continue;
    }
    JobRun& run = *jobs_.emplace(id, std::move(*job)).first->second;
    uint32_t measured = 0;
    for (const auto& problem : run.problems) measured += problem->measured_before;
    fprintf(stderr, "mtune-coordinator: resuming job %lld: %u trials already stored\n",
            static_cast<long long>(id), measured);
    RefillLocked(run);
    MaybeFinishLocked(run);
  }
  WakeWorkersLocked();
  job_changed_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<mtune::v1::Job> Coordinator::SubmitJob(const mtune::v1::JobSpec& spec) {
  // Validate everything before storing anything. Templates are chosen for the
  // targets of the workers registered now (the same job submitted before any worker
  // registers gets each family's portable default; its status says so).
  std::vector<std::string> target_features;
  {
    Locked lock(*this);
    for (const auto& [id, w] : workers_)
      if (!w.gone) target_features.push_back(w.info.target().features());
  }
  auto planned = PlanJob(0, spec, /*resuming=*/false, target_features);
  if (!planned.ok()) return planned.status();
  std::vector<std::pair<std::string, uint32_t>> problems;
  mtune::v1::JobSpec canonical = spec;
  canonical.clear_problems();
  for (const auto& run : (*planned)->problems) {
    uint64_t size = search::SpaceSize(run->candidates.search_space());
    // Planned per problem is the nominal share, also when the job shares its trials.
    problems.emplace_back(run->problem.Key(),
                          run->confirm_top > 0 ? run->budget
                                          : static_cast<uint32_t>(std::min<uint64_t>(spec.trials(), size)));
    canonical.add_problems(run->problem.Key());
    canonical.add_problem_templates(run->template_name);
  }
  auto id = store_->CreateJob(canonical, problems);
  if (!id.ok()) return id.status();
  {
    Locked lock(*this);
    (*planned)->id = *id;
    (*planned)->spec = canonical;
    JobRun& run = *jobs_.emplace(*id, std::move(*planned)).first->second;
    RefillLocked(run);
    MaybeFinishLocked(run);
    WakeWorkersLocked();
  }
  job_changed_.notify_all();
  return GetJob(*id);  // with each problem's template and why
}

absl::StatusOr<mtune::v1::ListJobsResponse> Coordinator::ListJobs(uint32_t limit,
                                                                   mtune::v1::JobState state) {
  auto ids = store_->ListJobIds(state == mtune::v1::JOB_STATE_UNSPECIFIED
                                    ? std::nullopt
                                    : std::optional<mtune::v1::JobState>(state));
  if (!ids.ok()) return ids.status();
  mtune::v1::ListJobsResponse response;
  for (auto id = ids->rbegin(); id != ids->rend(); ++id) {
    if (limit > 0 && static_cast<uint32_t>(response.jobs_size()) >= limit) break;
    auto job = store_->GetJob(*id);
    if (!job.ok()) return job.status();
    *response.add_jobs() = *std::move(job);
  }
  return response;
}

absl::StatusOr<mtune::v1::Job> Coordinator::GetJob(int64_t job_id) {
  auto job = store_->GetJob(job_id);
  if (!job.ok()) return job;
  auto convergence = GetConvergence(job_id);
  if (!convergence.ok()) return convergence.status();
  Locked lock(*this);
  auto live = jobs_.find(job_id);
  for (const auto& problem : convergence->problems()) {
    mtune::v1::ProblemProgress* progress = job->add_progress();
    progress->set_problem(problem.problem());
    progress->set_trials_done(problem.figures_size());
    progress->set_unit(problem.unit());
    for (int i = 0; i < problem.figures_size(); ++i) {
      if (problem.figures(i) <= 0) progress->set_trials_failed(progress->trials_failed() + 1);
      if (problem.figures(i) > progress->best_figure()) {
        progress->set_best_figure(problem.figures(i));
        progress->set_best_gflops(problem.gflops(i));
        progress->set_best_trial(i + 1);
      }
    }
    if (live == jobs_.end()) continue;
    if (ProblemRun* run = FindProblemLocked(*live->second, problem.problem())) {
      progress->set_trials_planned(run->budget + run->measured_before);
      progress->set_stopped(run->stopped);
      progress->set_warm_start_seeds(run->warm_start_seeds);
      progress->set_warm_start_prior(run->warm_start_prior);
      progress->set_template_reason(run->template_reason);
      if (!run->needs_features.empty() && !live->second->ended) {
        size_t registered = 0;
        bool runnable = false;
        for (const auto& [id, w] : workers_) {
          if (w.gone) continue;
          ++registered;
          runnable = runnable || HasFeatures(w, run->needs_features);
        }
        if (!runnable)
          progress->set_waiting_for(absl::StrCat(
              "a worker with ", absl::StrJoin(run->needs_features, ", "), " (", run->template_name,
              " needs them; none of the ", registered, " live workers has them all)"));
      }
    }
  }
  return job;
}

absl::StatusOr<mtune::v1::ConvergenceResponse> Coordinator::GetConvergence(int64_t job_id) {
  auto job = store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  mtune::v1::ConvergenceResponse response;
  response.set_job_id(job_id);
  const auto problems = job->spec().problems();
  for (const std::string& key : problems) {
    // Results come best first; the hashes give the order they were stored in.
    auto hashes = store_->ResultCandidateHashes(job_id, key);
    if (!hashes.ok()) return hashes.status();
    auto results = store_->ListResults(job_id, key, 0);
    if (!results.ok()) return results.status();
    // A stored key this build cannot parse (another mtune's grammar) shows GFLOP/s.
    auto problem = strategies::ParseProblemKey(key);
    std::map<std::string, const mtune::v1::Result*> result_of;
    for (const auto& trial : *results) result_of[trial.candidate().hash()] = &trial.result();
    mtune::v1::ProblemConvergence* out = response.add_problems();
    out->set_problem(key);
    out->set_unit(problem.ok() ? std::string(strategies::FigureUnit(*problem)) : "GFLOP/s");
    for (const std::string& hash : *hashes) {
      const mtune::v1::Result* result = result_of[hash];
      const bool ok = result != nullptr && result->status() == mtune::v1::RESULT_STATUS_OK;
      out->add_gflops(ok ? result->gflops() : 0.0);
      out->add_figures(!ok ? 0.0 : problem.ok() ? strategies::FigureOf(*problem, *result) : result->gflops());
    }
  }
  return response;
}

absl::StatusOr<mtune::v1::Job> Coordinator::CancelJob(int64_t job_id) {
  {
    Locked lock(*this);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end() || it->second->ended) {
      auto job = store_->GetJob(job_id);
      if (!job.ok()) return job.status();
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", job_id, " already ended (", mtune::v1::JobState_Name(job->state()), ")"));
    }
    JobRun& job = *it->second;
    // Queued tasks are dropped; leased ones finish and their results are kept.
    std::erase_if(queue_, [&](const QueuedTask& q) { return q.task->job_id() == job_id; });
    for (auto& p : job.problems) p->exhausted = true;
    uint32_t done = 0;
    for (auto& p : job.problems) done += p->finished;
    if (absl::Status s = store_->FinishJob(job_id, mtune::v1::JOB_STATE_CANCELLED,
                                           absl::StrCat("cancelled by user after ", done, " trials"));
        !s.ok())
      return s;
    job.ended = true;
    ++job.version;
  }
  job_changed_.notify_all();
  return store_->GetJob(job_id);
}

uint64_t Coordinator::WaitForJobChange(int64_t job_id, uint64_t seen_version, double timeout_s) {
  std::unique_lock lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return seen_version + 1;  // not live here: nothing to wait for
  JobRun* job = it->second.get();
  job_changed_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                        [&] { return stopping_ || job->version != seen_version; });
  return job->version;
}

void Coordinator::RefillLocked(JobRun& job) {
  if (job.ended) return;
  // Time and patience: stop the problems whose limits are spent.
  const double now = UnixNow();
  for (auto& run : job.problems) {
    if (run->exhausted) continue;
    if (std::string why = run->limits->Exhausted(now); !why.empty())
      StopProblemLocked(*run, job.id, why);
  }
  // Enough work queued to keep busy every worker that can run a problem's tasks
  // (each holds up to its lease window, plus one waiting), little enough that
  // proposals can still learn from results. Problems are windowed by the CPU
  // features their template needs, so tasks waiting for one busy AMX worker do not
  // hold back the tasks any worker can run.
  // Computed once per refill: the workers do not change while it proposes.
  std::map<std::vector<std::string>, uint32_t> windows;  // by needed features
  for (const auto& run : job.problems) {
    if (windows.contains(run->needs_features)) continue;
    size_t wanted = 0;
    for (const auto& [id, w] : workers_)
      if (!w.gone && HasFeatures(w, run->needs_features)) wanted += w.window + 1;
    windows[run->needs_features] = static_cast<uint32_t>(std::max<size_t>(2, wanted));
  }
  if (job.shared_budget == 0) {
    for (auto& run : job.problems) {
      const uint32_t window = windows.at(run->needs_features);
      // A confirmation asks on past its budget, to say why it stops.
      while (!run->exhausted && (run->proposed < run->budget || run->confirm_top > 0) &&
             run->proposed - run->finished < window) {
        if (!ProposeOneLocked(job, *run)) break;
      }
    }
    return;
  }
  // Shared budget: each proposal goes to the problem where the next trial is
  // expected to gain most, among those whose workers' window has room.
  std::set<const ProblemRun*> declined;  // proposed nothing when asked this time
  for (;;) {
    uint32_t proposed = 0;
    std::map<std::vector<std::string>, uint32_t> in_flight;  // by needed features
    for (const auto& run : job.problems) {
      proposed += run->proposed;
      in_flight[run->needs_features] += run->proposed - run->finished;
    }
    if (proposed >= job.shared_budget) break;
    ProblemRun* pick = nullptr;
    double pick_gain = 0;
    for (auto& run : job.problems) {
      if (run->exhausted || declined.contains(run.get()) ||
          in_flight[run->needs_features] >= windows.at(run->needs_features))
        continue;
      const double gain = ExpectedGain(run->scores, run->proposed, proposed);
      if (!pick || gain > pick_gain) pick = run.get(), pick_gain = gain;
    }
    if (!pick) break;
    if (!ProposeOneLocked(job, *pick)) declined.insert(pick);
  }
}

bool Coordinator::ProposeOneLocked(JobRun& job, ProblemRun& run) {
  std::vector<search::Point> points;
  if (run.confirm_top == 0) {
    points = run.search->Propose(1);
  } else {
    if (run.to_confirm.empty()) {
      // Re-ranked only once every proposal is measured: until then the ranking is
      // about to move.
      if (run.proposed != run.finished) return false;
      absl::StatusOr<ConfirmRanking> ranking = QueueCandidatesToConfirm(run);
      if (!ranking.ok()) {
        StopProblemLocked(run, job.id,
                          absl::StrCat("cannot rank its stored candidates: ", ranking.status().message()));
        return false;
      }
      if (run.to_confirm.empty()) {
        StopProblemLocked(run, job.id,
                          ranking->all_measured ? absl::StrCat("its best ", run.confirm_top, " measured again")
                                        : absl::StrCat("confirmation budget of ",
                                                       kConfirmationsPerPlace * run.confirm_top, " spent"));
        return false;
      }
    }
    points.push_back(std::move(run.to_confirm.front()));
    run.to_confirm.pop_front();
  }
  if (points.empty()) {
    run.exhausted = true;
    return false;
  }
  // The point names the free knobs; the candidate adds its derived ones. Searches
  // propose only points that is_valid accepted, so a point without a valid
  // completion is not expected; should one come, it is stored as invalid.
  std::optional<strategies::KnobValues> values = run.candidates.Complete(points[0]);
  const bool completed = values.has_value();
  if (!completed) {
    auto free_values = search::ValuesFromPoint(run.candidates.search_space(), points[0]);
    values = free_values.ok() ? *std::move(free_values) : strategies::KnobValues{};
  }
  mtune::v1::Task task;
  task.set_task_id(next_task_id_++);
  task.set_job_id(job.id);
  task.set_problem(run.problem.Key());
  *task.mutable_candidate() = strategies::MakeCandidate(run.template_name, run.template_digest, *values);
  task.set_time_limit_s(options_.task_time_limit_s);
  task.set_min_measure_s(options_.min_measure_s);
  ++run.proposed;
  absl::StatusOr<std::string> script =
      !completed ? absl::InvalidArgumentError(
                       "the search proposed knob values that no choice of the template's "
                       "derived knobs (mtune.derived) makes satisfy its constraints")
      : options_.test_instantiate ? options_.test_instantiate(task.problem(), *values)
      : run.instantiator          ? run.instantiator->Instantiate(*values)
                                  : strategies::Instantiate(run.template_text, run.problem, *values);
  if (!script.ok()) {
    // Stored as a failed trial without bothering a worker, against the
    // coordinator's own target since no worker ran it.
    mtune::v1::TrialResult trial;
    trial.set_job_id(job.id);
    trial.set_problem(task.problem());
    trial.set_target_id(kCoordinatorTargetId);
    *trial.mutable_candidate() = task.candidate();
    trial.mutable_result()->set_status(mtune::v1::RESULT_STATUS_INVALID_CANDIDATE);
    trial.mutable_result()->set_error(
        absl::StrCat("instantiation failed in the coordinator: ", script.status().message()));
    trial.set_worker_name("coordinator");
    absl::Status stored = EnsureCoordinatorTargetLocked();
    if (stored.ok()) stored = store_->InsertResult(trial, "").status();
    // The trial still counts as finished (the job must not wait for it), but a
    // result that could not be stored is said, never lost silently.
    if (!stored.ok())
      fprintf(stderr, "mtune-coordinator: job %lld: invalid candidate %s not stored: %s\n",
              static_cast<long long>(job.id), task.candidate().hash().c_str(),
              std::string(stored.message()).c_str());
    if (run.search) run.search->Observe(std::vector<search::Observation>{{points[0], false, 0}});
    ++run.finished;
    RecordResultLocked(run, false, 0);
    return true;
  }
  task.set_script(std::move(*script));
  queue_.push_back({std::make_shared<mtune::v1::Task>(std::move(task)), points[0], run.needs_features});
  return true;
}

absl::Status Coordinator::EnsureCoordinatorTargetLocked() {
  if (coordinator_target_stored_) return absl::OkStatus();
  mtune::v1::Target target;
  target.set_id(kCoordinatorTargetId);
  target.set_kind("none");
  target.set_cpu("coordinator");
  if (absl::Status s = store_->UpsertTarget(target, mtune::v1::Calibration()); !s.ok()) return s;
  coordinator_target_stored_ = true;
  return absl::OkStatus();
}

void Coordinator::StopProblemLocked(ProblemRun& run, int64_t job_id, const std::string& why) {
  run.exhausted = true;
  if (run.stopped.empty()) run.stopped = why;
  const std::string key = run.problem.Key();
  const size_t before = queue_.size();
  std::erase_if(queue_, [&](const QueuedTask& q) {
    return q.task->job_id() == job_id && q.task->problem() == key;
  });
  run.proposed -= static_cast<uint32_t>(before - queue_.size());
}

void Coordinator::RecordResultLocked(ProblemRun& run, bool ok, double figure) {
  run.scores.push_back(ok ? figure : 0.0);
  run.limits->Record(ok, figure);
}

void Coordinator::MaybeFinishLocked(JobRun& job) {
  if (job.ended) return;
  uint32_t done = 0, proposed = 0;
  bool all_finished = true;
  for (const auto& run : job.problems) {
    all_finished = all_finished && (run->finished >= run->budget ||
                                    (run->exhausted && run->finished == run->proposed));
    done += run->finished;
    proposed += run->proposed;
  }
  const bool shared_spent = job.shared_budget != 0 && done >= job.shared_budget && done == proposed;
  if (!all_finished && !shared_spent) return;
  auto stored = store_->GetJob(job.id);
  const bool any_ok = stored.ok() && !stored->best().empty();
  const auto state = any_ok ? mtune::v1::JOB_STATE_SUCCEEDED : mtune::v1::JOB_STATE_FAILED;
  std::string message = any_ok ? "" : "no candidate compiled, verified and ran";
  for (const auto& run : job.problems) {
    if (!run->stopped.empty())
      message = absl::StrCat(message.empty() ? "" : message + "; ", run->problem.Key(), ": ",
                             run->stopped, " after ", run->finished, " trials");
    else if (run->exhausted && run->proposed < run->budget && job.shared_budget == 0)
      message = absl::StrCat(message.empty() ? "" : message + "; ", run->problem.Key(),
                             ": knob space exhausted after ", run->proposed, " candidates");
  }
  (void)store_->FinishJob(job.id, state, message);
  job.ended = true;
  ++job.version;
}

std::vector<mtune::v1::WorkerInfo> Coordinator::ListWorkers() {
  Locked lock(*this);
  std::vector<mtune::v1::WorkerInfo> out;
  const double now = Now();
  for (const auto& [id, w] : workers_) {
    mtune::v1::WorkerInfo info;
    info.set_name(w.info.name());
    *info.mutable_target() = w.info.target();
    *info.mutable_calibration() = w.info.calibration();
    info.set_cpu(w.info.cpu());
    info.set_state(w.gone ? "gone" : (!w.leased.empty() ? "busy" : "idle"));
    // The oldest task it holds is the one it measures (it measures in lease order).
    info.set_current_task_id(w.leased.empty() ? 0 : *w.leased.begin());
    info.set_last_seen_s_ago(now - w.last_seen);
    info.set_tasks_done(w.tasks_done);
    out.push_back(std::move(info));
  }
  return out;
}

std::optional<mtune::v1::Task> Coordinator::LeasedTask(int64_t task_id) {
  Locked lock(*this);
  auto it = leases_.find(task_id);
  if (it == leases_.end()) return std::nullopt;
  return *it->second.queued.task;
}

absl::StatusOr<mtune::v1::RegisterResponse> Coordinator::Register(
    const mtune::v1::RegisterRequest& request) {
  if (request.name().empty()) return absl::InvalidArgumentError("a worker needs a name");
  if (request.target().id().empty()) return absl::InvalidArgumentError("a worker needs a target");
  if (!(request.calibration().peak_gflops_f32() > 0))
    return absl::InvalidArgumentError("a worker needs a calibration with a positive FMA peak");
  Locked lock(*this);
  const double now = Now();
  for (auto it = workers_.begin(); it != workers_.end(); ++it) {
    WorkerState& w = it->second;
    if (w.info.name() != request.name()) continue;
    const bool alive = !w.gone && (w.streaming || now - w.last_seen < options_.heartbeat_timeout_s);
    if (alive)
      return absl::AlreadyExistsError(absl::StrCat(
          "a live worker named '", request.name(), "' is already registered (cpu ", w.info.cpu(),
          "); stop it or give this one another --name"));
    for (int64_t task_id : std::set<int64_t>(w.leased))
      RequeueLocked(task_id, "its worker registered again");
    w.wake->notify_all();  // its blocked NextTask returns NotFound
    if (w.sink) deliveries_.emplace_back(std::exchange(w.sink, nullptr), nullptr);  // ends its stream
    workers_.erase(it);
    break;
  }
  if (absl::Status s = store_->UpsertTarget(request.target(), request.calibration()); !s.ok())
    return s;
  WorkerState w;
  w.id = absl::StrCat(request.name(), "#", next_worker_serial_++);
  w.info = request;
  for (absl::string_view f : absl::StrSplit(request.target().features(), ',', absl::SkipEmpty()))
    if (absl::ConsumePrefix(&f, "+")) w.features.emplace(f);
  w.last_seen = now;
  mtune::v1::RegisterResponse response;
  response.set_worker_id(w.id);
  response.set_heartbeat_interval_s(options_.heartbeat_interval_s);
  workers_.emplace(w.id, std::move(w));
  // More workers: a wider window of queued tasks.
  for (auto& [id, job] : jobs_) RefillLocked(*job);
  WakeWorkersLocked();
  return response;
}

absl::StatusOr<std::shared_ptr<const mtune::v1::Task>> Coordinator::NextTask(
    const std::string& worker_id, double timeout_s, uint32_t window) {
  Locked locked(*this);
  std::unique_lock<std::mutex>& lock = locked.lock();
  auto it = workers_.find(worker_id);
  if (it == workers_.end())
    return absl::NotFoundError(absl::StrCat("unknown worker '", worker_id, "': register again"));
  // An open stream says nothing about the worker being alive (a frozen process
  // keeps its connection): only heartbeats and reports refresh last_seen.
  it->second.streaming = true;
  if (const uint32_t capped = std::clamp<uint32_t>(window, 1, kMaxLeaseWindow);
      capped != it->second.window) {
    it->second.window = capped;
    for (auto& [id, job] : jobs_) RefillLocked(*job);  // a wider window wants more queued
    WakeWorkersLocked();
  }
  const std::shared_ptr<std::condition_variable> wake = it->second.wake;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  for (;;) {
    it = workers_.find(worker_id);
    if (it == workers_.end())
      return absl::NotFoundError(absl::StrCat("worker '", worker_id, "' was replaced"));
    WorkerState& w = it->second;
    if (stopping_) return nullptr;
    if (!w.streaming) return nullptr;  // its Work stream ended meanwhile
    if (CanTakeTaskLocked(w) && FirstRunnableLocked(w) != queue_.end()) {
      if (w.waiting) {  // woken by something else than WakeWorkersLocked
        w.waiting = false;
        std::erase(waiting_, worker_id);
      }
      break;
    }
    // WakeWorkersLocked takes a woken worker off the list; it lists itself again
    // if the task went to someone else meanwhile.
    if (!w.waiting) {
      w.waiting = true;
      waiting_.push_back(worker_id);
    }
    if (wake->wait_until(lock, deadline) == std::cv_status::timeout) {
      it = workers_.find(worker_id);
      if (it != workers_.end() && it->second.waiting) {
        it->second.waiting = false;
        std::erase(waiting_, worker_id);
      }
      return nullptr;
    }
  }
  return LeaseLocked(it->second);
}

bool Coordinator::HasFeatures(const WorkerState& w, const std::vector<std::string>& features) {
  return std::all_of(features.begin(), features.end(),
                     [&](const std::string& f) { return w.features.contains(f); });
}

std::deque<Coordinator::QueuedTask>::iterator Coordinator::FirstRunnableLocked(const WorkerState& w) {
  return std::find_if(queue_.begin(), queue_.end(),
                      [&](const QueuedTask& q) { return HasFeatures(w, q.needs_features); });
}

std::shared_ptr<const mtune::v1::Task> Coordinator::LeaseLocked(WorkerState& w) {
  const auto first = FirstRunnableLocked(w);
  QueuedTask queued = std::move(*first);
  queue_.erase(first);
  // Shared with the stream that sends it, which serializes it outside mu_: a task
  // still held by an earlier stream (re-queued while being sent) is copied before
  // it changes.
  if (queued.task.use_count() > 1) queued.task = std::make_shared<mtune::v1::Task>(*queued.task);
  mtune::v1::Task& task = *queued.task;
  // The limit is set now, when the run starts, from the best time known now;
  // time spent waiting in the queue is not counted.
  task.set_time_limit_s(TimeLimitLocked(task));
  // A task leased behind others waits for them: its run starts at the latest
  // when every task ahead of it has used up its own limit.
  double ahead_s = 0;
  for (int64_t held : w.leased)
    if (auto l = leases_.find(held); l != leases_.end()) ahead_s += l->second.queued.task->time_limit_s();
  const double lease_s = ahead_s + task.time_limit_s() + kLeaseGraceS;
  Lease lease;
  lease.worker_id = w.id;
  lease.deadline = Now() + lease_s;
  task.set_lease_deadline_unix_s(UnixNow() + lease_s);
  std::shared_ptr<const mtune::v1::Task> leased = queued.task;
  lease.queued = std::move(queued);
  w.leased.insert(leased->task_id());
  leases_[leased->task_id()] = std::move(lease);
  return leased;
}

void Coordinator::ListWaitingLocked(WorkerState& w) {
  if (!w.sink || w.waiting) return;
  w.waiting = true;
  waiting_.push_back(w.id);
}

double Coordinator::TimeLimitLocked(const mtune::v1::Task& task) {
  const double ceiling = options_.task_time_limit_s;
  auto job = jobs_.find(task.job_id());
  if (job == jobs_.end()) return ceiling;
  ProblemRun* run = FindProblemLocked(*job->second, task.problem());
  if (run == nullptr || run->best_total_s <= 0) return ceiling;
  return std::min(ceiling,
                  std::max(options_.task_time_floor_s, options_.task_time_multiple * run->best_total_s));
}

void Coordinator::RequeueLocked(int64_t task_id, const std::string& why) {
  auto it = leases_.find(task_id);
  if (it == leases_.end()) return;
  auto w = workers_.find(it->second.worker_id);
  if (w != workers_.end()) {
    w->second.leased.erase(task_id);
    ListWaitingLocked(w->second);
  }
  fprintf(stderr, "mtune-coordinator: task %lld re-queued: %s\n", static_cast<long long>(task_id),
          why.c_str());
  // To the front: it has waited longest.
  queue_.push_front(std::move(it->second.queued));
  leases_.erase(it);
}

bool Coordinator::CanTakeTaskLocked(const WorkerState& w) const {
  return !w.gone && w.leased.size() < w.window;
}

void Coordinator::WakeWorkersLocked() {
  size_t tasks = queue_.size();
  for (auto it = waiting_.begin(); it != waiting_.end() && tasks > 0;) {
    auto w = workers_.find(*it);
    if (w == workers_.end()) {  // replaced or removed: nobody to wake
      it = waiting_.erase(it);
      continue;
    }
    // Busy (window full), gone, or nothing queued that it can run (tasks of
    // templates needing CPU features it lacks wait for a worker that has them).
    if (!CanTakeTaskLocked(w->second) || FirstRunnableLocked(w->second) == queue_.end()) {
      ++it;
      continue;
    }
    if (w->second.sink) {
      // Push mode: leased here, sent when mu_ is released (Locked), by this thread.
      while (tasks > 0 && CanTakeTaskLocked(w->second) &&
             FirstRunnableLocked(w->second) != queue_.end()) {
        deliveries_.emplace_back(w->second.sink, LeaseLocked(w->second));
        --tasks;
      }
      if (CanTakeTaskLocked(w->second)) {  // the queue ran dry: it waits on
        ++it;
        continue;
      }
      w->second.waiting = false;
      it = waiting_.erase(it);
      continue;
    }
    w->second.waiting = false;
    w->second.wake->notify_one();
    it = waiting_.erase(it);
    --tasks;
  }
}

absl::Status Coordinator::StartPushing(const std::string& worker_id, uint32_t window,
                                       TaskSink sink, const void* stream) {
  Locked lock(*this);
  auto it = workers_.find(worker_id);
  if (it == workers_.end())
    return absl::NotFoundError(absl::StrCat("unknown worker '", worker_id, "': register again"));
  WorkerState& w = it->second;
  if (stopping_) return absl::UnavailableError("coordinator shutting down");
  w.streaming = true;
  w.sink = std::move(sink);
  w.push_stream = stream;
  w.window = std::clamp<uint32_t>(window, 1, kMaxLeaseWindow);
  for (auto& [id, job] : jobs_) RefillLocked(*job);  // a wider window wants more queued
  ListWaitingLocked(w);
  WakeWorkersLocked();
  return absl::OkStatus();
}

bool Coordinator::KnowsWorker(const std::string& worker_id) {
  Locked lock(*this);
  return workers_.contains(worker_id);
}

void Coordinator::WorkerDisconnected(const std::string& worker_id, const void* stream) {
  {
    Locked lock(*this);
    auto it = workers_.find(worker_id);
    if (it == workers_.end()) return;
    if (stream != nullptr && it->second.sink && it->second.push_stream != stream) {
      // An older stream of a worker that reconnected: what it held goes back to
      // the queue (as with the sync stream), the newer stream stays open.
      for (int64_t task_id : std::set<int64_t>(it->second.leased))
        RequeueLocked(task_id, "an older stream of " + worker_id + " closed");
      WakeWorkersLocked();
      return;
    }
    it->second.streaming = false;
    it->second.gone = true;
    it->second.sink = nullptr;
    it->second.push_stream = nullptr;
    it->second.wake->notify_all();  // a NextTask of the ended stream returns now
    if (it->second.waiting) {
      it->second.waiting = false;
      std::erase(waiting_, worker_id);
    }
    for (int64_t task_id : std::set<int64_t>(it->second.leased))
      RequeueLocked(task_id, "its worker " + worker_id + " disconnected");
    WakeWorkersLocked();
  }
}

mtune::v1::HeartbeatResponse Coordinator::Heartbeat(const mtune::v1::HeartbeatRequest& request) {
  mtune::v1::HeartbeatResponse response;
  Locked lock(*this);
  auto it = workers_.find(request.worker_id());
  if (it == workers_.end()) return response;  // known = false: register again
  response.set_known(true);
  it->second.last_seen = Now();
  if (it->second.gone) {
    it->second.gone = false;
    WakeWorkersLocked();  // it may take queued work again
  }
  if (request.task_id() != 0) {
    auto lease = leases_.find(request.task_id());
    if (lease != leases_.end()) {
      auto job = jobs_.find(lease->second.queued.task->job_id());
      if (job != jobs_.end() && job->second->ended) response.set_cancel_task(true);
    }
  }
  return response;
}

Coordinator::ProblemRun* Coordinator::FindProblemLocked(JobRun& job, const std::string& key) {
  for (auto& run : job.problems)
    if (run->problem.Key() == key) return run.get();
  return nullptr;
}

absl::StatusOr<std::optional<Coordinator::Released>> Coordinator::ReleaseLocked(
    const std::string& worker_id, int64_t task_id) {
  auto w = workers_.find(worker_id);
  if (w == workers_.end())
    return absl::NotFoundError(absl::StrCat("unknown worker '", worker_id, "': register again"));
  Released r;
  w->second.last_seen = Now();
  r.worker_id = worker_id;
  r.worker_name = w->second.info.name();
  r.target_id = w->second.info.target().id();
  auto lease = leases_.find(task_id);
  if (lease != leases_.end()) {
    r.done = std::move(lease->second.queued);
    if (lease->second.worker_id != worker_id) {
      // A straggler: its lease expired and the task went to another worker, which
      // is still measuring it. This result is stored; the re-run's report will
      // find nothing leased and be dropped. The other worker stays busy (it is).
      fprintf(stderr,
              "mtune-coordinator: task %lld: late report from %s stored; the re-run on %s "
              "will be dropped\n",
              static_cast<long long>(task_id), worker_id.c_str(),
              lease->second.worker_id.c_str());
    }
    leases_.erase(lease);
  } else {
    // Re-queued after its lease expired, but the first worker finished after all.
    auto queued = std::find_if(queue_.begin(), queue_.end(), [&](const QueuedTask& q) {
      return q.task->task_id() == task_id;
    });
    if (queued == queue_.end()) {
      // Already stored from another report (or its job ended): storing is
      // idempotent by (job, problem, candidate), so there is nothing to do.
      fprintf(stderr,
              "mtune-coordinator: task %lld: late report from %s dropped: the task was "
              "already reported\n",
              static_cast<long long>(task_id), worker_id.c_str());
      w->second.leased.erase(task_id);
      ListWaitingLocked(w->second);
      WakeWorkersLocked();
      return std::nullopt;
    }
    fprintf(stderr,
            "mtune-coordinator: task %lld: late report from %s stored; its re-queued copy "
            "leaves the queue\n",
            static_cast<long long>(task_id), worker_id.c_str());
    r.done = std::move(*queued);
    queue_.erase(queued);
  }
  w->second.leased.erase(task_id);
  // The worker's next task goes out while this result is being committed, so
  // it is not idle for the commit; the acknowledgement still waits for it.
  ListWaitingLocked(w->second);
  WakeWorkersLocked();
  return r;
}

mtune::v1::TrialResult Coordinator::TrialOf(const Released& r) {
  mtune::v1::TrialResult trial;
  trial.set_job_id(r.done.task->job_id());
  trial.set_problem(r.done.task->problem());
  trial.set_target_id(r.target_id);
  *trial.mutable_candidate() = r.done.task->candidate();
  *trial.mutable_result() = r.result;
  trial.set_worker_name(r.worker_name);
  return trial;
}

void Coordinator::AfterCommitLocked(Released& r, const absl::StatusOr<bool>& inserted) {
  if (!inserted.ok()) {
    queue_.push_front(std::move(r.done));  // not stored: measure it again
    WakeWorkersLocked();
    return;
  }
  const mtune::v1::Result& result = r.result;
  auto w = workers_.find(r.worker_id);
  if (w != workers_.end()) ++w->second.tasks_done;
  auto job = jobs_.find(r.done.task->job_id());
  if (job != jobs_.end()) {
    JobRun& run = *job->second;
    // Counted whether or not this insert added the row: the task was still
    // leased or queued, so it completes exactly once here; had its candidate been
    // stored already (proposed twice), not counting it would stall the job.
    if (ProblemRun* problem = FindProblemLocked(run, r.done.task->problem()); problem) {
      const bool ok = result.status() == mtune::v1::RESULT_STATUS_OK;
      const double total = result.total_s();
      if (ok && total > 0 && (problem->best_total_s == 0 || total < problem->best_total_s))
        problem->best_total_s = total;
      // GFLOP/s, or GB/s for a problem without arithmetic: with 0 GFLOP/s for every
      // candidate of a transpose, its search would learn nothing.
      const double figure = strategies::FigureOf(problem->problem, result);
      if (problem->search)
        problem->search->Observe(std::vector<search::Observation>{{r.done.point, ok, figure}});
      ++problem->finished;
      RecordResultLocked(*problem, ok, figure);
    }
    ++run.version;
    RefillLocked(run);
    MaybeFinishLocked(run);
  }
  WakeWorkersLocked();
}

absl::Status Coordinator::ReportResult(const std::string& worker_id, int64_t task_id,
                                       const mtune::v1::Result& result) {
  absl::StatusOr<std::optional<Released>> released;
  {
    Locked lock(*this);
    released = ReleaseLocked(worker_id, task_id);
  }
  if (!released.ok()) return released.status();
  if (!released->has_value()) return absl::OkStatus();
  Released& r = **released;
  r.result = result;
  // Commit before acknowledging: once the worker hears "stored", the result is durable.
  const mtune::v1::TrialResult trial = TrialOf(r);
  absl::StatusOr<bool> inserted = store_->InsertResult(trial, r.done.task->script());
  {
    Locked lock(*this);
    AfterCommitLocked(r, inserted);
  }
  job_changed_.notify_all();
  return inserted.status();
}

void Coordinator::ReportResultAsync(const std::string& worker_id, int64_t task_id,
                                    mtune::v1::Result result, ReportDone done) {
  absl::StatusOr<std::optional<Released>> released;
  {
    Locked lock(*this);  // the next task is sent on unlocking, before the commit
    released = ReleaseLocked(worker_id, task_id);
  }
  if (!released.ok()) return done(released.status());
  if (!released->has_value()) return done(absl::OkStatus());
  Released& r = **released;
  r.result = std::move(result);
  r.done_callback = std::move(done);
  {
    std::lock_guard lock(commit_mu_);
    commit_queue_.push_back(std::move(r));
  }
  commit_wake_.notify_one();
}

void Coordinator::CommitLoop() {
  std::unique_lock lock(commit_mu_);
  for (;;) {
    commit_wake_.wait(lock, [&] { return commit_stop_ || !commit_queue_.empty(); });
    if (commit_queue_.empty()) return;  // stopping, nothing left
    // Everything reported while the previous group committed: one transaction.
    std::vector<Released> group;
    group.swap(commit_queue_);
    lock.unlock();
    std::vector<mtune::v1::TrialResult> trials;
    trials.reserve(group.size());
    std::vector<db::Store::TrialToStore> to_store;
    to_store.reserve(group.size());
    for (const Released& r : group) trials.push_back(TrialOf(r));
    for (size_t i = 0; i < group.size(); ++i)
      to_store.push_back({&trials[i], &group[i].done.task->script()});
    std::vector<absl::StatusOr<bool>> outcomes = store_->InsertResults(to_store);
    // One lock per result, not one for the group: report readers (which lease
    // the next tasks) get mu_ in between instead of waiting for a whole group's
    // searches and proposals.
    for (size_t i = 0; i < group.size(); ++i) {
      Locked locked(*this);
      AfterCommitLocked(group[i], outcomes[i]);
    }
    job_changed_.notify_all();
    for (size_t i = 0; i < group.size(); ++i) group[i].done_callback(outcomes[i].status());
    lock.lock();
    ++commit_stats_.transactions;
    commit_stats_.trials += group.size();
  }
}

db::Store::GroupCommitStats Coordinator::async_commit_stats() {
  std::lock_guard lock(commit_mu_);
  return commit_stats_;
}

void Coordinator::ReaperLoop() {
  Locked locked(*this);
  std::unique_lock<std::mutex>& lock = locked.lock();
  while (!stopping_) {
    // Hands out what the last round leased to push-mode workers.
    locked.Unlock();
    lock.lock();
    reaper_wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (stopping_) break;
    const double now = Now();
    std::vector<std::pair<int64_t, std::string>> expired;
    for (const auto& [task_id, lease] : leases_) {
      auto w = workers_.find(lease.worker_id);
      if (now > lease.deadline)
        expired.emplace_back(task_id, "its lease deadline passed");
      else if (w == workers_.end() || now - w->second.last_seen > options_.heartbeat_timeout_s)
        expired.emplace_back(task_id, "its worker " + lease.worker_id + " stopped heartbeating");
    }
    // Silent idle workers get no more tasks until they heartbeat again.
    for (auto& [id, w] : workers_)
      if (!w.gone && now - w.last_seen > options_.heartbeat_timeout_s) w.gone = true;
    for (const auto& [task_id, why] : expired) {
      auto w = workers_.find(leases_[task_id].worker_id);
      if (w != workers_.end() && now - w->second.last_seen > options_.heartbeat_timeout_s)
        w->second.gone = true;
      RequeueLocked(task_id, why);
    }
    // Time budgets end jobs even while no result arrives.
    bool timed_out = false;
    for (auto& [id, job] : jobs_) {
      if (job->ended || job->spec.time_budget_s() <= 0) continue;
      const double unix_now = UnixNow();
      bool stopped = false;
      for (auto& run : job->problems) {
        if (run->exhausted) continue;
        if (std::string why = run->limits->Exhausted(unix_now); !why.empty()) {
          StopProblemLocked(*run, id, why);
          stopped = timed_out = true;
        }
      }
      if (stopped) {
        ++job->version;
        MaybeFinishLocked(*job);
      }
    }
    // Also a safety net: push-mode workers have no timed wait of their own.
    if (!expired.empty() || (!queue_.empty() && !waiting_.empty())) WakeWorkersLocked();
    if (timed_out) job_changed_.notify_all();
  }
}

}  // namespace mtune::server
