// Turning a job spec into problem runs (template choice, knob space, search,
// warm start from the nearest stored problems, confirmation) and keeping the task
// queue topped up from each problem's search within its budgets.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "search/allocation.h"
#include "server/coordinator.h"
#include "server/coordinator_locked.h"
#include "strategies/candidate.h"
#include "strategies/default_candidate.h"
#include "strategies/features.h"
#include "strategies/figure.h"
#include "strategies/kernel_estimate.h"
#include "strategies/space_audit.h"
#include "strategies/template_choice.h"
#include "strategies/template_library.h"

namespace mtune::server {
namespace {

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

// A register file stored with a job (JobSpec.problem_registers).
absl::StatusOr<strategies::VectorRegisters> StoredRegisters(const mtune::v1::VectorRegisterFile& stored) {
  if (stored.count() == 0 || stored.bytes() == 0)
    return absl::InvalidArgumentError("the job's stored register file is empty");
  return strategies::VectorRegisters{stored.count(), stored.bytes()};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Coordinator::JobRun>> Coordinator::PlanJob(
    int64_t job_id, const mtune::v1::JobSpec& spec, bool resuming,
    const std::vector<std::string>& target_features) const {
  if (spec.problems().empty())
    return absl::InvalidArgumentError("a job needs at least one problem");
  // A stored job's choice of templates is kept (resuming); a new job's is made here.
  const bool templates_stored = resuming && spec.problem_templates_size() == spec.problems_size();
  // Jobs stored before register files were recorded were planned for AVX-512's.
  const bool registers_stored = resuming && spec.problem_registers_size() == spec.problems_size();
  if (!resuming && spec.problem_templates_size() != 0)
    return absl::InvalidArgumentError(
        "JobSpec.problem_templates is set by the coordinator; name one template for every "
        "problem with template_name, or none to have each problem's chosen");
  if (!resuming && spec.problem_registers_size() != 0)
    return absl::InvalidArgumentError(
        "JobSpec.problem_registers is set by the coordinator from the registered workers' targets");
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
    auto registers = registers_stored ? StoredRegisters(spec.problem_registers(index))
                                      : strategies::RegistersForTemplate(*tpl, target_features);
    if (!registers.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("problem ", problem->Key(), ": ", registers.status().message()));
    // Parsed and printed once: each task's script is then spliced, not re-printed.
    if (prepared && !(prepared->space().registers == *registers)) prepared.reset();
    auto instantiator = prepared ? absl::StatusOr<strategies::TemplateInstantiator>(*std::move(prepared))
                                 : strategies::TemplateInstantiator::Create(tpl->text, *problem, *registers);
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
    run->registers = *registers;
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
  const std::vector<strategies::KnobValues> starts = strategies::StartingCandidates(knobs);
  for (const strategies::KnobValues& start : starts) {
    if (auto point = run.candidates.PointOf(start); point.ok())
      search_options.seeds_first.push_back(*point);
  }
  if (spec.warm_start()) {
    const std::vector<std::string> nearest = NearestStoredProblems(run);
    std::vector<search::Point> warm =
        WarmStartSeeds(run, nearest, starts.empty() ? strategies::KnobValues{} : starts.front());
    run.warm_start_seeds = static_cast<uint32_t>(warm.size());
    search_options.seeds_first.insert(search_options.seeds_first.end(), warm.begin(), warm.end());
    // `model` also learns from those problems' results before its first trial.
    if (spec.search() == "model") {
      // Prior rows take the names of this run's rows (those of its first valid start
      // point), so that results of an earlier version of the template, with a knob more
      // or less, still count: what they lack is missing to the model, not misplaced.
      std::vector<std::string> feature_names;
      for (const search::Point& start : search_options.seeds_first) {
        if (std::optional<strategies::KnobValues> values = candidates->Complete(start)) {
          feature_names = strategies::FeatureNames(strategies::NamedCandidateFeatures(run.problem, *values));
          break;
        }
      }
      search_options.prior = WarmStartPrior(run, nearest, feature_names);
      run.warm_start_prior = static_cast<uint32_t>(search_options.prior.size());
    }
  }
  // The model learns from problem-aware features (tile footprints, intensity).
  const strategies::Problem* problem_ptr = &run.problem;
  search_options.features = [problem_ptr, candidates](const search::Point& point) {
    std::optional<strategies::KnobValues> values = candidates->Complete(point);
    return values ? strategies::CandidateFeatures(*problem_ptr, *values) : std::vector<double>{};
  };
  // Without a prior, `model` draws its first points from the candidates a
  // first-principles estimate rates best for the register file
  // (strategies/kernel_estimate.h) instead of the whole space; with one, the estimate
  // weighs the prior-trained model's first batch. `genetic` draws its first
  // generation the same way, or fills it from the estimate's ranking.
  if (strategies::HasKernelEstimate(run.template_name, run.problem)) {
    run.estimated_start = spec.search() == "model"
                              ? (search_options.prior.empty() ? search_options.model.estimate_top > 0
                                                              : search_options.model.estimate_with_prior)
                              : spec.search() == "genetic" && (search_options.genetic.estimate_top > 0 ||
                                                                search_options.genetic.estimate_fallback > 0);
    search_options.estimate = [problem_ptr, candidates, template_name = run.template_name, registers = run.registers,
                               l2_bytes = static_cast<int64_t>(spec.estimate_l2_bytes())](const search::Point& point) {
      std::optional<strategies::KnobValues> values = candidates->Complete(point);
      std::optional<double> estimate =
          values ? strategies::KernelEstimate(template_name, *problem_ptr, *values, registers, l2_bytes)
                 : std::nullopt;
      return estimate ? *estimate : std::nan("");
    };
  }
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

std::vector<search::Point> Coordinator::WarmStartSeeds(const ProblemRun& run, const std::vector<std::string>& nearest,
                                                       const strategies::KnobValues& defaults) const {
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
      auto point =
          search::NearestPoint(run.candidates.search_space(), strategies::ValuesOf(trial.candidate()), defaults);
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
                                                             const std::vector<std::string>& nearest,
                                                             const std::vector<std::string>& feature_names) const {
  if (feature_names.empty()) return {};
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
      prior.push_back({strategies::FeaturesAs(
                           strategies::NamedCandidateFeatures(*other, strategies::ValuesOf(trial.candidate())),
                           feature_names),
                       strategies::FigureOf(*other, trial.result()) / best});
    }
  }
  return prior;
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
      const double gain = search::ExpectedGain(run->scores, run->proposed, proposed);
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
                                  : strategies::Instantiate(run.template_text, run.problem, *values,
                                                            run.registers);
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

}  // namespace mtune::server
