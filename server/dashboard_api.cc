#include "server/dashboard_api.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "proto/enum_words.h"
#include "strategies/figure.h"
#include "strategies/problem.h"

namespace mtune::server {
namespace {

using nlohmann::json;

// Lines drawn per convergence chart: enough to compare search algorithms,
// few enough to read.
constexpr size_t kMaxConvergenceJobs = 8;

double UnixNow() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

// absl status code -> HTTP status of the API.
int HttpStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

ApiResponse FromStatus(const absl::Status& status) {
  return DashboardApi::Error(HttpStatus(status), std::string(status.message()));
}

// A positive id, or a 400 naming the parameter.
absl::StatusOr<int64_t> ParseId(const std::string& text, const std::string& what) {
  int64_t id = 0;
  if (!absl::SimpleAtoi(text, &id) || id <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a positive integer, got '", text, "'"));
  return id;
}

// Figures that depend only on the problem key; null when this build does not
// know the family (a store written by a newer mtune).
json ProblemFigures(const std::string& key) {
  auto problem = strategies::ParseProblemKey(key);
  if (!problem.ok()) return nullptr;
  const double bytes = problem->CompulsoryBytes();
  return {{"family", problem->family},
          {"element_type", problem->element_type},
          {"flops", problem->Flops()},
          {"compulsory_bytes", bytes},
          {"footprint_bytes", problem->FootprintBytes()},
          {"arithmetic_intensity", bytes > 0 ? json(problem->Flops() / bytes) : json(nullptr)}};
}

json KnobsJson(const mtune::v1::Candidate& candidate) {
  json knobs = json::object();
  for (const auto& knob : candidate.knobs()) knobs[knob.name()] = knob.value();
  return knobs;
}

json BestJson(const mtune::v1::BestStrategy& best) {
  const auto& r = best.result();
  return {{"problem", best.problem()},
          {"target_id", best.target().id()},
          {"gflops", r.gflops()},
          {"gbps", r.gbps()},
          {"roofline_gflops", r.roofline_gflops()},
          {"roofline_level", r.roofline_level()},
          {"fraction_of_roofline", r.fraction_of_roofline()},
          {"median_s", r.timing().median_s()},
          {"template", best.candidate().template_name()},
          {"candidate_hash", best.candidate().hash()},
          {"knobs", KnobsJson(best.candidate())}};
}

// Trials of (job, problem) in the order they were stored.
absl::StatusOr<std::vector<const mtune::v1::TrialResult*>> InTrialOrder(
    DashboardSource* source, int64_t job_id, const std::string& problem,
    const std::vector<mtune::v1::TrialResult>& trials) {
  auto order = source->TrialOrder(job_id, problem);
  if (!order.ok()) return order.status();
  std::map<std::string, const mtune::v1::TrialResult*> by_hash;
  for (const auto& t : trials)
    if (t.job_id() == job_id && t.problem() == problem) by_hash[t.candidate().hash()] = &t;
  std::vector<const mtune::v1::TrialResult*> out;
  for (const std::string& hash : *order)
    if (auto it = by_hash.find(hash); it != by_hash.end()) out.push_back(it->second);
  return out;
}

// "GFLOP/s", or "GB/s" for a problem without arithmetic (strategies/figure.h).
std::string FigureUnitOf(const std::string& problem_key) {
  auto problem = strategies::ParseProblemKey(problem_key);
  return problem.ok() ? std::string(strategies::FigureUnit(*problem)) : std::string("GFLOP/s");
}

}  // namespace

json CalibrationJson(const mtune::v1::Calibration& calibration) {
  json levels = json::array();
  for (const auto& level : calibration.bandwidth()) {
    json entry = {{"level", level.level()},
                  {"gbps", level.gbps()},
                  {"working_set_bytes", level.working_set_bytes()},
                  {"capacity_bytes", level.capacity_bytes()}};
    // A worker older than session 27 measured copies only.
    if (level.read_gbps() > 0) entry["read_gbps"] = level.read_gbps();
    entry["streaming_stores"] = level.streaming_stores();
    // Over how many streams the fastest copy and read ran (0: a worker before session 39).
    entry["copy_streams"] = level.copy_streams();
    entry["read_streams"] = level.read_streams();
    levels.push_back(std::move(entry));
  }
  json out = {{"peak_gflops_f32", calibration.peak_gflops_f32()},
              {"bandwidth", levels},
              // When the worker last timed its peaks (0: a worker before session 56).
              {"peaks_measured_unix_s", calibration.peaks_measured_unix_s()},
              {"duration_s", calibration.duration_s()}};
  // Only CPUs with AMX (and a worker of session 31 or later) have the first, only
  // CPUs with AVX512-BF16 (and a worker of session 32 or later) the second.
  if (calibration.peak_gflops_amx_bf16() > 0)
    out["peak_gflops_amx_bf16"] = calibration.peak_gflops_amx_bf16();
  if (calibration.peak_gflops_bf16_dot() > 0)
    out["peak_gflops_bf16_dot"] = calibration.peak_gflops_bf16_dot();
  return out;
}

json TargetJson(const mtune::v1::Target& target) {
  return {{"id", target.id()},         {"kind", target.kind()},
          {"triple", target.triple()}, {"cpu", target.cpu()},
          {"features", target.features()}};
}

json TrialJson(const mtune::v1::TrialResult& trial, uint32_t trial_number) {
  const auto& r = trial.result();
  const bool ok = r.status() == mtune::v1::RESULT_STATUS_OK;
  // Figures a failed trial does not have are null, so no chart plots a 0.
  auto if_ok = [ok](double v) { return ok ? json(v) : json(nullptr); };
  json figures = ProblemFigures(trial.problem());
  json out = {{"job_id", trial.job_id()},
              {"problem", trial.problem()},
              {"target_id", trial.target_id()},
              {"worker", trial.worker_name()},
              {"status", StatusWord(r.status())},
              {"error", r.error()},
              {"gflops", if_ok(r.gflops())},
              {"gbps", if_ok(r.gbps())},
              {"arithmetic_intensity",
               figures.is_null() ? json(nullptr) : figures["arithmetic_intensity"]},
              {"roofline_gflops", if_ok(r.roofline_gflops())},
              {"roofline_level", r.roofline_level()},
              {"fraction_of_roofline", if_ok(r.fraction_of_roofline())},
              {"median_s", if_ok(r.timing().median_s())},
              {"p25_s", if_ok(r.timing().p25_s())},
              {"p75_s", if_ok(r.timing().p75_s())},
              {"min_s", if_ok(r.timing().min_s())},
              {"cv", if_ok(r.timing().cv())},
              {"calls_per_sample", ok ? json(r.timing().calls_per_sample()) : json(nullptr)},
              {"compile_s", r.compile_s()},
              {"verify_s", r.verify_s()},
              {"total_s", r.total_s()},
              {"template", trial.candidate().template_name()},
              {"candidate_hash", trial.candidate().hash()},
              {"knobs", KnobsJson(trial.candidate())},
              {"created_unix_s", trial.created_unix_s()}};
  if (trial_number > 0) out["trial"] = trial_number;
  return out;
}

std::optional<double> EstimateEtaSeconds(const mtune::v1::Job& job, double now_unix_s) {
  if (job.state() != mtune::v1::JOB_STATE_RUNNING || job.trials_done() == 0) return std::nullopt;
  if (job.trials_done() >= job.trials_total()) return 0.0;
  const double elapsed = std::max(0.0, now_unix_s - static_cast<double>(job.created_unix_s()));
  return elapsed / job.trials_done() * (job.trials_total() - job.trials_done());
}

json JobSummaryJson(const mtune::v1::Job& job, double now_unix_s) {
  json best = json::array();
  for (const auto& b : job.best()) best.push_back(BestJson(b));
  const bool running = job.state() == mtune::v1::JOB_STATE_RUNNING;
  const double end = running ? now_unix_s : static_cast<double>(job.finished_unix_s());
  auto eta = EstimateEtaSeconds(job, now_unix_s);
  return {{"id", job.id()},
          {"state", JobStateWord(job.state())},
          {"problems", std::vector<std::string>(job.spec().problems().begin(),
                                           job.spec().problems().end())},
          {"template", job.spec().template_name()},
          {"search", job.spec().search()},
          // > 0: a confirmation job (no search; its best stored candidates measured again).
          {"confirm_top", job.spec().confirm_top()},
          {"trials", job.spec().trials()},
          {"seed", job.spec().seed()},
          {"trials_done", job.trials_done()},
          {"trials_total", job.trials_total()},
          {"trials_failed", job.trials_failed()},
          {"created_unix_s", job.created_unix_s()},
          {"finished_unix_s", running ? json(nullptr) : json(job.finished_unix_s())},
          {"elapsed_s", std::max(0.0, end - static_cast<double>(job.created_unix_s()))},
          {"eta_s", eta ? json(*eta) : json(nullptr)},
          {"message", job.message()},
          {"best", best}};
}

json BestSoFar(const std::string& problem_key,
               const std::vector<const mtune::v1::TrialResult*>& in_order) {
  // The figure a search maximizes: GFLOP/s, or GB/s for a transpose or a copy.
  auto problem = strategies::ParseProblemKey(problem_key);
  json points = json::array();
  std::optional<double> best;
  uint32_t n = 0;
  for (const auto* t : in_order) {
    const bool ok = t->result().status() == mtune::v1::RESULT_STATUS_OK;
    const double figure = problem.ok() ? strategies::FigureOf(*problem, t->result()) : t->result().gflops();
    if (ok && (!best || figure > *best)) best = figure;
    points.push_back({{"trial", ++n},
                      {"status", StatusWord(t->result().status())},
                      {"gflops", ok ? json(t->result().gflops()) : json(nullptr)},
                      {"figure", ok ? json(figure) : json(nullptr)},
                      {"best_so_far", best ? json(*best) : json(nullptr)}});
  }
  return points;
}

ApiResponse DashboardApi::Error(int status, const std::string& message) {
  return {status, json{{"error", message}, {"status", status}}};
}

ApiResponse DashboardApi::Jobs() {
  auto ids = source_->JobIds();
  if (!ids.ok()) return FromStatus(ids.status());
  const double now = UnixNow();
  json jobs = json::array();
  for (int64_t id : *ids) {
    auto job = source_->Job(id);
    if (!job.ok()) return FromStatus(job.status());
    jobs.push_back(JobSummaryJson(*job, now));
  }
  return {200, json{{"jobs", jobs}, {"now_unix_s", now}}};
}

ApiResponse DashboardApi::Job(const std::string& id_text) {
  auto id = ParseId(id_text, "job id");
  if (!id.ok()) return FromStatus(id.status());
  auto job = source_->Job(*id);
  if (!job.ok()) return FromStatus(job.status());
  auto trials = source_->Results(*id, "", 0);
  if (!trials.ok()) return FromStatus(trials.status());

  const double now = UnixNow();
  json out = JobSummaryJson(*job, now);
  std::map<std::string, const mtune::v1::BestStrategy*> best_by_problem;
  for (const auto& b : job->best()) best_by_problem[b.problem()] = &b;
  json problems = json::array();
  json failed_total = json::object();
  std::set<std::string> target_ids;
  const auto& spec = job->spec();
  for (int index = 0; index < spec.problems_size(); ++index) {
    const std::string& key = spec.problems(index);
    auto ordered = InTrialOrder(source_, *id, key, *trials);
    if (!ordered.ok()) return FromStatus(ordered.status());
    json failed = json::object();
    uint32_t ok = 0;
    for (const auto* t : *ordered) {
      if (!t->target_id().empty()) target_ids.insert(t->target_id());
      if (t->result().status() == mtune::v1::RESULT_STATUS_OK) {
        ++ok;
        continue;
      }
      const std::string word = StatusWord(t->result().status());
      failed[word] = failed.value(word, 0) + 1;
      failed_total[word] = failed_total.value(word, 0) + 1;
    }
    auto best = best_by_problem.find(key);
    // The template the problem is tuned with: chosen per problem when the job named
    // none (JobSpec.problem_templates; jobs stored before schema v3: empty).
    const std::string tpl = spec.problem_templates_size() == spec.problems_size()
                                ? spec.problem_templates(index)
                                : spec.template_name();
    problems.push_back({{"problem", key},
                        {"template", tpl},
                        {"figures", ProblemFigures(key)},
                        {"trials", ordered->size()},
                        {"ok", ok},
                        {"failed_by_status", failed},
                        {"best", best == best_by_problem.end() ? json(nullptr)
                                                               : BestJson(*best->second)},
                        {"unit", FigureUnitOf(key)},
                        {"convergence", BestSoFar(key, *ordered)}});
  }
  json targets = json::object();
  for (const std::string& target_id : target_ids) {
    auto target = source_->Target(target_id);
    if (!target.ok()) return FromStatus(target.status());
    targets[target_id] = {{"target", TargetJson(target->first)},
                          {"calibration", CalibrationJson(target->second)}};
  }
  out["problem_details"] = problems;
  out["failed_by_status"] = failed_total;
  out["targets"] = targets;
  return {200, out};
}

ApiResponse DashboardApi::Results(const QueryParams& params) {
  for (const auto& [name, value] : params)
    if (name != "job" && name != "problem" && name != "limit")
      return Error(400, absl::StrCat("unknown parameter '", name, "' (known: job, problem, limit)"));
  auto job_param = params.find("job");
  if (job_param == params.end())
    return Error(400, "missing parameter 'job' (a job id, e.g. /api/results?job=1)");
  auto job_id = ParseId(job_param->second, "parameter 'job'");
  if (!job_id.ok()) return FromStatus(job_id.status());
  uint32_t limit = 0;
  if (auto it = params.find("limit"); it != params.end() && !absl::SimpleAtoi(it->second, &limit))
    return Error(400, absl::StrCat("parameter 'limit' must be a non-negative integer, got '",
                                   it->second, "'"));
  std::string problem;
  if (auto it = params.find("problem"); it != params.end()) problem = it->second;

  auto job = source_->Job(*job_id);  // 404 for an unknown job, not an empty list
  if (!job.ok()) return FromStatus(job.status());
  if (!problem.empty() && std::find(job->spec().problems().begin(), job->spec().problems().end(),
                                    problem) == job->spec().problems().end())
    return Error(404, absl::StrCat("job ", *job_id, " has no problem '", problem, "'"));
  auto trials = source_->Results(*job_id, problem, limit);
  if (!trials.ok()) return FromStatus(trials.status());

  // Trial numbers: the position of each candidate in its problem's storage order.
  std::map<std::string, std::map<std::string, uint32_t>> number;  // problem -> hash -> n
  for (const auto& t : *trials) {
    if (number.contains(t.problem())) continue;
    auto order = source_->TrialOrder(*job_id, t.problem());
    if (!order.ok()) return FromStatus(order.status());
    auto& by_hash = number[t.problem()];
    for (size_t i = 0; i < order->size(); ++i) by_hash[(*order)[i]] = static_cast<uint32_t>(i + 1);
  }
  json results = json::array();
  for (const auto& t : *trials)
    results.push_back(TrialJson(t, number[t.problem()][t.candidate().hash()]));
  return {200, json{{"job_id", *job_id}, {"results", results}}};
}

ApiResponse DashboardApi::Workers() {
  json workers = json::array();
  for (const auto& w : source_->Workers()) {
    json task = nullptr;
    if (w.current_task_id() != 0) {
      task = {{"task_id", w.current_task_id()}};
      if (auto leased = source_->LeasedTask(w.current_task_id())) {
        task["job_id"] = leased->job_id();
        task["problem"] = leased->problem();
        task["candidate_hash"] = leased->candidate().hash();
        task["knobs"] = KnobsJson(leased->candidate());
      }
    }
    workers.push_back({{"name", w.name()},
                       {"state", w.state()},
                       {"cpu", w.cpu()},
                       {"target", TargetJson(w.target())},
                       {"calibration", CalibrationJson(w.calibration())},
                       {"current_task", task},
                       {"last_seen_s_ago", w.last_seen_s_ago()},
                       {"tasks_done", w.tasks_done()}});
  }
  return {200, json{{"workers", workers}}};
}

ApiResponse DashboardApi::Target(const std::string& target_id) {
  if (target_id.empty()) return Error(400, "missing target id (e.g. /api/targets/cpu:...)");
  auto target = source_->Target(target_id);
  if (!target.ok()) return FromStatus(target.status());
  return {200, json{{"target", TargetJson(target->first)},
                    {"calibration", CalibrationJson(target->second)}}};
}

ApiResponse DashboardApi::Convergence(const QueryParams& params) {
  auto it = params.find("problem");
  if (it == params.end() || it->second.empty())
    return Error(400, "missing parameter 'problem' (a problem key, e.g. "
                      "/api/convergence?problem=matmul:m=64,n=64,k=64:f32)");
  const std::string& problem = it->second;
  auto trials = source_->Results(0, problem, 0);
  if (!trials.ok()) return FromStatus(trials.status());
  std::set<int64_t> job_ids;
  for (const auto& t : *trials) job_ids.insert(t.job_id());
  std::vector<int64_t> newest(job_ids.rbegin(), job_ids.rend());
  if (newest.size() > kMaxConvergenceJobs) newest.resize(kMaxConvergenceJobs);
  json lines = json::array();
  for (auto job_id = newest.rbegin(); job_id != newest.rend(); ++job_id) {
    auto job = source_->Job(*job_id);
    if (!job.ok()) return FromStatus(job.status());
    auto ordered = InTrialOrder(source_, *job_id, problem, *trials);
    if (!ordered.ok()) return FromStatus(ordered.status());
    lines.push_back({{"job_id", *job_id},
                     {"search", job->spec().search()},
                     {"seed", job->spec().seed()},
                     {"state", JobStateWord(job->state())},
                     {"points", BestSoFar(problem, *ordered)}});
  }
  return {200, json{{"problem", problem}, {"unit", FigureUnitOf(problem)}, {"jobs", lines}}};
}

}  // namespace mtune::server
