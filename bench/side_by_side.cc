#include "bench/side_by_side.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/measure_command.h"
#include "db/export.h"
#include "db/store.h"
#include "nlohmann/json.hpp"
#include "proto/enum_words.h"
#include "search/search.h"
#include "search/space.h"
#include "server/candidate_space.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/template_library.h"
#include "worker/jit_kernel.h"
#include "worker/measure.h"

namespace mtune::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

strategies::KnobValues KnobsFromJson(const std::string& text) {
  strategies::KnobValues knobs;
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return knobs;
  for (const auto& [name, value] : parsed.items())
    knobs[name] = value.is_string() ? value.get<std::string>() : value.dump();
  return knobs;
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double PairedSpeedup(const std::map<int, double>& mine, const std::map<int, double>& other) {
  std::vector<double> ratios;
  for (const auto& [round, seconds] : mine) {
    auto paired = other.find(round);
    if (paired != other.end() && seconds > 0) ratios.push_back(paired->second / seconds);
  }
  return Median(std::move(ratios));
}

std::vector<double> InRoundOrder(const std::map<int, double>& by_round) {
  std::vector<double> values;
  values.reserve(by_round.size());
  for (const auto& [round, seconds] : by_round) values.push_back(seconds);
  return values;
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(q * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double Geomean(const std::vector<double>& values) {
  double log_sum = 0;
  int count = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) continue;
    log_sum += std::log(v);
    ++count;
  }
  return count == 0 ? 0.0 : std::exp(log_sum / count);
}

std::string CompactKnobs(const strategies::KnobValues& knobs) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : knobs) {
    absl::string_view short_name = name;
    absl::ConsumePrefix(&short_name, "tile_");
    if (short_name == "contraction_lowering") short_name = "lower";
    parts.push_back(absl::StrCat(short_name, "=", value));
  }
  return absl::StrJoin(parts, " ");
}

absl::Status TuneProblem(const strategies::Problem& problem, const TuneOptions& options,
                         const mtune::v1::Calibration& calibration, worker::Measurer& measurer,
                         const std::string& label, std::optional<BestKernel>& best,
                         TuningStats& stats) {
  // The template `mtune measure` and a job naming none would take on this host.
  client::MeasureRequest request;
  request.problem = problem.Key();
  auto loaded = client::LoadProblemTemplate(request);
  if (!loaded.ok()) return loaded.status();
  const strategies::StrategyTemplate* tpl = &loaded->tpl;
  auto knobs = strategies::ExtractKnobSpace(tpl->text, problem, loaded->registers);
  if (!knobs.ok()) return knobs.status();
  const std::string template_digest = strategies::TemplateDigest(tpl->text);
  // Searched over the free knobs, as by the coordinator (derived ones are solved).
  const server::CandidateSpace candidates(*knobs);
  const search::Space& space = candidates.search_space();

  search::SearchOptions search_options;
  search_options.seed = options.seed;
  search_options.is_valid = [&](const search::Point& point) {
    return candidates.Complete(point).has_value();
  };
  // The template's default, or the valid candidate nearest to it, comes first, then
  // the template's start points: with a budget of a few trials, starting from random
  // points would often compare a pathological kernel.
  const std::vector<strategies::KnobValues> starts = strategies::StartingCandidates(*knobs);
  const std::optional<strategies::KnobValues> first =
      starts.empty() ? std::nullopt : std::optional<strategies::KnobValues>(starts.front());
  for (const strategies::KnobValues& start : starts) {
    if (auto point = candidates.PointOf(start); point.ok())
      search_options.seeds_first.push_back(*point);
  }
  auto algorithm = search::MakeSearch(options.search, space, search_options);
  if (!algorithm.ok()) return algorithm.status();

  // Data movement (copy, transpose) does no arithmetic: its GFLOP/s is always 0, so
  // candidates are ranked by GB/s there.
  const bool by_bandwidth = problem.Flops() <= 0;
  auto score = [by_bandwidth](const mtune::v1::Result& r) {
    return by_bandwidth ? r.gbps() : r.gflops();
  };
  // Every OK candidate, for the confirmation below.
  struct Measured {
    double score;
    strategies::KnobValues values;
    std::string script;
    mtune::v1::Task task;
    double gflops;
  };
  std::vector<Measured> measured;
  for (int trial = 0; trial < options.trials; ++trial) {
    std::vector<search::Point> points = (*algorithm)->Propose(1);
    if (points.empty()) break;  // the space is spent
    const auto start = Clock::now();
    std::optional<strategies::KnobValues> values = candidates.Complete(points[0]);
    if (!values) return absl::InternalError("the search proposed a point that is_valid rejects");
    mtune::v1::Result result;
    mtune::v1::Task task;
    auto script = strategies::Instantiate(tpl->text, problem, *values, loaded->registers);
    if (!script.ok()) {
      result.set_status(mtune::v1::RESULT_STATUS_INVALID_CANDIDATE);
      result.set_error(std::string(script.status().message()));
    } else {
      task.set_problem(problem.Key());
      *task.mutable_candidate() = strategies::MakeCandidate(tpl->name, template_digest, *values);
      task.set_script(*script);
      task.set_min_measure_s(options.min_time_s);
      result = measurer.Measure(task, calibration);
    }
    const double wall_s = Since(start);

    const bool ok = result.status() == mtune::v1::RESULT_STATUS_OK;
    stats.tried++;
    stats.candidate_s.push_back(wall_s);
    if (ok) {
      stats.ok++;
      measured.push_back({score(result), *values, *script, task, result.gflops()});
    } else {
      stats.failures[mtune::v1::StatusWord(result.status())]++;
    }
    search::Observation observation{points[0], ok, ok ? score(result) : 0.0};
    (*algorithm)->Observe({&observation, 1});

    std::fprintf(stderr, "  %s %2d/%d  %-17s %8.2f GFLOP/s %7.2f GB/s  %5.2f s (compile %.2f s)  %s\n",
                 label.c_str(), trial + 1, options.trials, mtune::v1::StatusWord(result.status()).c_str(),
                 ok ? result.gflops() : 0.0, ok ? result.gbps() : 0.0, wall_s, result.compile_s(),
                 CompactKnobs(*values).c_str());
  }
  if (measured.empty()) return absl::OkStatus();

  // On a noisy machine the fastest of many short measurements is partly luck (one
  // quiet moment, or one slow one: a default that measures 140-170 GFLOP/s side by
  // side once measured 74 while tuning): the top candidates, and the template's
  // default whatever it measured, are timed again in interleaved rounds, and the best
  // median of those rounds wins.
  std::stable_sort(measured.begin(), measured.end(),
            [](const Measured& a, const Measured& b) { return a.score > b.score; });
  std::vector<size_t> finalists;
  for (size_t i = 0; i < measured.size() && finalists.size() < static_cast<size_t>(std::max(1, options.confirm_top)); ++i)
    finalists.push_back(i);
  if (first && options.confirm_top > 1) {
    for (size_t i = finalists.size(); i < measured.size(); ++i)
      if (measured[i].values == *first) finalists.push_back(i);
  }
  const bool confirm = finalists.size() > 1;
  std::vector<std::vector<double>> rounds(finalists.size());
  if (confirm) {
    for (int round = 0; round < options.confirm_rounds; ++round) {
      for (size_t f = 0; f < finalists.size(); ++f) {
        const mtune::v1::Result again = measurer.Measure(measured[finalists[f]].task, calibration);
        if (again.status() == mtune::v1::RESULT_STATUS_OK) rounds[f].push_back(score(again));
      }
    }
  }
  size_t winner = finalists[0];
  double winner_score = -1;
  for (size_t f = 0; f < finalists.size(); ++f) {
    const Measured& m = measured[finalists[f]];
    const double confirmed = confirm ? Median(rounds[f]) : m.score;
    if (confirm)
      std::fprintf(stderr, "  %s confirm #%zu%s: %.2f -> median %.2f over %zu rounds  %s\n",
                   label.c_str(), f + 1, first && m.values == *first ? " (default)" : "",
                   m.score, confirmed, rounds[f].size(), CompactKnobs(m.values).c_str());
    if (confirmed > winner_score) {
      winner_score = confirmed;
      winner = finalists[f];
    }
  }
  best = BestKernel{measured[winner].script, measured[winner].values, measured[winner].gflops,
                    absl::StrFormat("tuned in this run (%s search, seed %d, %s%s)",
                                    std::string((*algorithm)->name()), options.seed, tpl->name,
                                    confirm
                                        ? absl::StrFormat("; best median of %d confirmation "
                                                          "rounds among %zu finalists",
                                                          options.confirm_rounds, finalists.size())
                                        : std::string())};
  return absl::OkStatus();
}

absl::StatusOr<BestKernel> DefaultKernel(const strategies::Problem& problem,
                                         const std::map<std::string, std::string>& knobs) {
  // Checked first so that "no template" is NotFound whatever ResolveCandidate says.
  client::MeasureRequest request;
  request.problem = problem.Key();
  if (auto loaded = client::LoadProblemTemplate(request); !loaded.ok()) return loaded.status();
  request.knobs = knobs;
  auto resolved = client::ResolveCandidate(request);
  if (!resolved.ok()) return resolved.status();
  return BestKernel{resolved->script, strategies::ValuesOf(resolved->candidate), 0,
                    absl::StrCat(knobs.empty() ? "template default (" : "given knobs (",
                                 resolved->candidate.template_name(), ")")};
}

absl::StatusOr<std::map<std::string, std::string>> ParseKnobList(absl::string_view text) {
  std::map<std::string, std::string> knobs;
  for (absl::string_view item : absl::StrSplit(text, absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty())
      return absl::InvalidArgumentError(absl::StrCat("'", item, "': want NAME=VALUE"));
    knobs[kv.first] = kv.second;
  }
  return knobs;
}

absl::StatusOr<std::vector<std::optional<BestKernel>>> LoadBestKernels(
    const std::string& path, const std::vector<strategies::Problem>& problems) {
  if (!std::filesystem::exists(path))
    return absl::NotFoundError(absl::StrCat("--db: no such file: ", path));
  std::vector<std::optional<BestKernel>> best(problems.size());

  auto exported = db::ReadExportedDb(path);
  if (exported.ok()) {
    const std::string host_cpu = worker::JitKernel::HostCpuName();
    for (size_t i = 0; i < problems.size(); ++i) {
      const std::string key = problems[i].Key();
      const db::ExportedStrategy* chosen = nullptr;
      for (const db::ExportedStrategy& row : *exported) {
        if (row.problem != key) continue;
        // Prefer a row tuned on this CPU model, then the fastest.
        auto rank = [&](const db::ExportedStrategy& r) {
          return std::make_pair(r.target_cpu == host_cpu, r.gflops);
        };
        if (!chosen || rank(row) > rank(*chosen)) chosen = &row;
      }
      if (!chosen) continue;
      best[i] = BestKernel{chosen->script, KnobsFromJson(chosen->knobs_json), chosen->gflops,
                           absl::StrFormat("export %s, target %s (%s), %.2f GFLOP/s there", path,
                                           chosen->target_id, chosen->target_cpu, chosen->gflops)};
    }
    return best;
  }
  if (exported.status().code() != absl::StatusCode::kFailedPrecondition) return exported.status();

  auto store = db::Store::Open(path);
  if (!store.ok())
    return absl::FailedPreconditionError(absl::StrCat(
        "--db ", path, " is neither a best-strategy export (", exported.status().message(),
        ") nor a coordinator store (", store.status().message(), ")"));
  for (size_t i = 0; i < problems.size(); ++i) {
    auto row = (*store)->GetBest(problems[i].Key(), "");
    if (absl::IsNotFound(row.status())) continue;
    if (!row.ok()) return row.status();
    best[i] = BestKernel{
        row->script(), strategies::ValuesOf(row->candidate()), row->result().gflops(),
        absl::StrFormat("store %s, job %d, target %s, %.2f GFLOP/s there", path, row->job_id(),
                        row->target().id(), row->result().gflops())};
  }
  return best;
}

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    const std::string& name = run.run_name.function_name;
    if (run.error_occurred) {
      errors_[name] = run.error_message;
      continue;
    }
    if (run.run_type != Run::RT_Iteration || run.iterations <= 0) continue;
    samples_[name].push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
  }
  // Aggregates arrive in a batch of their own; only the repetitions are shown.
  if (!runs.empty() && runs.front().run_type == Run::RT_Iteration) {
    const std::string& name = runs.front().run_name.function_name;
    auto it = samples_.find(name);
    if (it != samples_.end())
      std::fprintf(stderr, "  %-40s %9.3f ms/call (median of %zu)\n", name.c_str(),
                   1e3 * Median(it->second), it->second.size());
    else if (errors_.contains(name))
      std::fprintf(stderr, "  %-40s error: %s\n", name.c_str(), errors_[name].c_str());
  }
}

}  // namespace mtune::bench
