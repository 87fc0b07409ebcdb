// mtune-bench-allocate: replays a job of several problems on ground-truth tables
// (one table per problem) and compares the two ways a job can share its trials: each
// problem the same number ("equal", `mtune submit --allocate equal`) or one budget
// for all, each next trial going to the problem with the highest expected gain
// ("gain", the default; search::ExpectedGain, as the coordinator calls it). Both
// allocations drive the same seeded searches; a trial looks its candidate up in the
// table. Printed per budget: over seeds, the median of the problems' mean best (as %
// of each table's best), of how many problems are within 95% of their best, and of
// the worst problem's best. Two yardsticks beside them (bench/allocation_bound.h),
// from each problem's search run alone (its best after each of its trials, up to
// twice the largest equal share): the trials per problem that would have done best
// on each seed's own searches ("hindsight", which no allocation of those searches
// can beat; gain's searches see their results in other rounds, so they may differ
// slightly), and the trials per problem that do best on the mean curves of other
// seeds, applied to this seed's ("known difficulty": what an allocation that knew
// how soon each problem's search levels off, but not the luck of this run, could
// get).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "bench/allocation_bound.h"
#include "bench/replay_table.h"
#include "bench/replay_stats.h"
#include "nlohmann/json.hpp"
#include "search/allocation.h"
#include "search/search.h"

namespace {

using mtune::search::Point;

using Truth = mtune::bench::ReplayTable;

// One problem of the replayed job: its search and what it has seen.
struct ProblemRun {
  const Truth* truth = nullptr;
  std::unique_ptr<mtune::search::SearchAlgorithm> search;
  std::vector<double> scores;  // each result's figure in order, 0 for a failed one
  uint32_t proposed = 0;
  double best = 0;
  bool exhausted = false;
};

// Fraction of its table's best that each problem has found, after each trial of the job.
using Trace = std::vector<std::vector<double>>;

std::vector<ProblemRun> StartProblems(const std::vector<Truth>& truths, const std::string& algorithm,
                                      uint64_t seed) {
  std::vector<ProblemRun> runs;
  for (size_t i = 0; i < truths.size(); ++i) {
    const Truth& truth = truths[i];
    mtune::search::SearchOptions options = mtune::bench::ReplayOptions(truth, {});
    options.seed = seed * 1000 + i;  // the same per problem under both allocations
    auto search = mtune::search::MakeSearch(algorithm, truth.table.space, options);
    if (!search.ok()) {
      fprintf(stderr, "mtune-bench-allocate: %s\n", search.status().ToString().c_str());
      std::exit(1);
    }
    runs.push_back({.truth = &truth, .search = *std::move(search)});
  }
  return runs;
}

// A trial of `run`: looks the point up in its table, records its figure and best.
mtune::search::Observation Measure(ProblemRun& run, const Point& p) {
  const auto* row = run.truth->by_index.at(mtune::search::IndexOfPoint(run.truth->table.space, p));
  const bool ok = row->status == "OK";
  run.scores.push_back(ok ? row->gflops : 0.0);
  if (ok) run.best = std::max(run.best, row->gflops);
  return {p, ok, row->gflops};
}

// Looks the points up, feeds them back and appends one trace row per trial.
void Observe(ProblemRun& run, const std::vector<Point>& points, std::vector<ProblemRun>& all, Trace& trace) {
  std::vector<mtune::search::Observation> results;
  for (const Point& p : points) {
    results.push_back(Measure(run, p));
    std::vector<double> fractions;
    for (const ProblemRun& r : all) fractions.push_back(r.best / r.truth->optimum);
    trace.push_back(std::move(fractions));
  }
  run.search->Observe(results);
}

// Every problem gets `per_problem` trials, in batches of `batch`, one problem after another.
Trace RunEqual(std::vector<ProblemRun> runs, uint32_t per_problem, size_t batch) {
  Trace trace;
  for (ProblemRun& run : runs) {
    while (run.proposed < per_problem) {
      std::vector<Point> points = run.search->Propose(std::min<size_t>(batch, per_problem - run.proposed));
      if (points.empty()) break;
      run.proposed += points.size();
      Observe(run, points, runs, trace);
    }
  }
  return trace;
}

// One budget for all: rounds of `batch` proposals, each to the problem with the highest
// expected gain given the results observed before the round (as the coordinator asks
// while earlier proposals are still being measured), then the round's results.
// `trials` gets how many trials each problem was given.
Trace RunGain(std::vector<ProblemRun> runs, uint64_t budget, size_t batch, std::vector<uint32_t>& trials) {
  Trace trace;
  uint64_t proposed = 0;
  while (proposed < budget) {
    std::map<size_t, std::vector<Point>> round;
    for (size_t slot = 0; slot < batch && proposed < budget; ++slot) {
      ProblemRun* pick = nullptr;
      double pick_gain = 0;
      for (ProblemRun& run : runs) {
        if (run.exhausted) continue;
        const double gain = mtune::search::ExpectedGain(run.scores, run.proposed, proposed);
        if (!pick || gain > pick_gain) pick = &run, pick_gain = gain;
      }
      if (!pick) break;
      std::vector<Point> point = pick->search->Propose(1);
      if (point.empty()) {
        pick->exhausted = true;
        continue;
      }
      ++pick->proposed, ++proposed;
      round[pick - runs.data()].push_back(point.front());
    }
    if (round.empty()) break;
    for (auto& [index, points] : round) Observe(runs[index], points, runs, trace);
  }
  trials.clear();
  for (const ProblemRun& run : runs) trials.push_back(run.proposed);
  return trace;
}

// Each problem's search run alone for `most` trials in batches of `batch`:
// curves[i][t] is problem i's best after t trials (fraction of its table's best); a
// search that runs out keeps its last best.
std::vector<std::vector<double>> Curves(std::vector<ProblemRun> runs, uint32_t most, size_t batch) {
  std::vector<std::vector<double>> curves;
  for (ProblemRun& run : runs) {
    std::vector<double> curve = {0.0};
    while (run.proposed < most) {
      std::vector<Point> points = run.search->Propose(std::min<size_t>(batch, most - run.proposed));
      if (points.empty()) break;
      run.proposed += points.size();
      std::vector<mtune::search::Observation> results;
      for (const Point& p : points) {
        results.push_back(Measure(run, p));
        curve.push_back(run.best / run.truth->optimum);
      }
      run.search->Observe(results);
    }
    curve.resize(most + 1, curve.back());
    curves.push_back(std::move(curve));
  }
  return curves;
}

struct Summary {
  double mean = 0, within95 = 0, worst = 0;
};

// The problems' bests when problem i gets trials[i] trials of its curve.
Summary Allotted(const std::vector<std::vector<double>>& curves, const std::vector<uint32_t>& trials) {
  Summary s;
  s.worst = 1;
  for (size_t i = 0; i < curves.size(); ++i) {
    const double x = curves[i][trials[i]];
    s.mean += x / curves.size(), s.within95 += x >= 0.95, s.worst = std::min(s.worst, x);
  }
  return s;
}

// The problems after `trials` trials of the job (or its end, if it stopped sooner).
Summary At(const Trace& trace, size_t trials) {
  Summary s;
  if (trace.empty()) return s;
  const std::vector<double>& f = trace[std::min(trials, trace.size()) - 1];
  s.worst = 1;
  for (double x : f) s.mean += x / f.size(), s.within95 += x >= 0.95, s.worst = std::min(s.worst, x);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune-bench-allocate: replay a job of several problems, one ground-truth table each, with "
               "trials shared equally or by expected gain"};
  std::vector<std::string> paths;
  std::string algorithm = "model";
  int seeds = 20;
  uint64_t first_seed = 0;
  size_t batch = 4;
  std::vector<uint32_t> per_problem = {8, 16, 32, 64};
  std::string json_out;
  app.add_option("tables", paths, "ground-truth tables (bench/data/*.csv), one per problem of the job")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--algorithm", algorithm, "search algorithm of every problem")->capture_default_str();
  app.add_option("--seeds", seeds, "jobs replayed per allocation")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--first-seed", first_seed, "seeds are first-seed, first-seed+1, ...")->capture_default_str();
  app.add_option("--batch", batch, "proposals before their results are observed (a worker pool's window)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--trials-per-problem", per_problem,
                 "job budgets, as trials per problem (the job has this times the problems)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--json", json_out, "also write the figures as JSON here");
  CLI11_PARSE(app, argc, argv);
  if (paths.size() < 2) {
    fprintf(stderr, "mtune-bench-allocate: a job needs at least two tables to share trials between\n");
    return 1;
  }
  std::sort(per_problem.begin(), per_problem.end());

  std::vector<Truth> truths(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    Truth& truth = truths[i];
    if (absl::Status loaded = mtune::bench::LoadReplayTable(paths[i], truth); !loaded.ok()) {
      fprintf(stderr, "mtune-bench-allocate: %s\n", loaded.ToString().c_str());
      return 1;
    }
    if (truth.optimum <= 0) {
      fprintf(stderr, "mtune-bench-allocate: %s has no OK candidate\n", paths[i].c_str());
      return 1;
    }
  }
  const size_t n = truths.size();
  printf("a job of %zu problems, %s search, batch %zu, %d seeds from %llu\n", n, algorithm.c_str(), batch, seeds,
         static_cast<unsigned long long>(first_seed));

  // Per budget and allocation, each seed's summary.
  std::map<uint32_t, std::vector<Summary>> equal, gain, known, hindsight;
  // Known difficulty: the allocation that does best on the mean curves of seeds other
  // than those replayed (first_seed + seeds onwards), one per budget.
  const uint32_t most = per_problem.back();
  // The yardsticks may give a problem up to twice the largest equal share (at that
  // budget they would otherwise have no choice but equal shares).
  const uint32_t curve_trials = 2 * most;
  std::map<uint32_t, std::vector<uint32_t>> known_trials;
  {
    std::vector<std::vector<double>> mean(n, std::vector<double>(curve_trials + 1, 0.0));
    for (int s = 0; s < seeds; ++s) {
      const uint64_t seed = first_seed + static_cast<uint64_t>(seeds + s);
      const auto curves = Curves(StartProblems(truths, algorithm, seed), curve_trials, batch);
      for (size_t i = 0; i < n; ++i)
        for (uint32_t t = 0; t <= curve_trials; ++t) mean[i][t] += curves[i][t] / seeds;
    }
    for (uint32_t c : per_problem) known_trials[c] = mtune::bench::BestAllocation(mean, uint64_t(c) * n);
  }
  // Trials each problem got under gain at the largest budget, per seed.
  std::vector<std::vector<double>> gain_share(n);
  for (int s = 0; s < seeds; ++s) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(s);
    std::vector<uint32_t> trials;
    const Trace gain_trace = RunGain(StartProblems(truths, algorithm, seed), uint64_t(most) * n, batch, trials);
    for (size_t i = 0; i < n; ++i) gain_share[i].push_back(trials[i]);
    for (uint32_t c : per_problem) {
      // Equal shares differ by budget (each problem stops at c), so each is its own run.
      equal[c].push_back(At(RunEqual(StartProblems(truths, algorithm, seed), c, batch), size_t(c) * n));
      gain[c].push_back(At(gain_trace, size_t(c) * n));
    }
    const auto curves = Curves(StartProblems(truths, algorithm, seed), curve_trials, batch);
    for (uint32_t c : per_problem) {
      known[c].push_back(Allotted(curves, known_trials[c]));
      hindsight[c].push_back(Allotted(curves, mtune::bench::BestAllocation(curves, uint64_t(c) * n)));
    }
    fprintf(stderr, "seed %llu done\n", static_cast<unsigned long long>(seed));
  }

  auto median = [](const std::vector<Summary>& v, double Summary::*field) {
    std::vector<double> x;
    for (const Summary& s : v) x.push_back(s.*field);
    return mtune::bench::Median(x);
  };
  struct Allocation {
    const char* label;     // printed
    const char* json_key;  // in --json
    std::map<uint32_t, std::vector<Summary>>* by_budget;
  };
  const std::vector<Allocation> allocations = {{"equal", "equal", &equal},
                                               {"gain", "gain", &gain},
                                               {"known difficulty", "known_difficulty", &known},
                                               {"hindsight", "hindsight", &hindsight}};
  printf("\nmedians over seeds; %% of each table's best (mean best, problems at 95%%, worst)\n");
  printf("%9s %9s", "trials", "per");
  for (const Allocation& a : allocations) printf(" | %-26s", a.label);
  printf("\n%9s %9s", "in all", "problem");
  for (size_t a = 0; a < allocations.size(); ++a) printf(" | %7s %9s %8s", "mean", "at 95%", "worst");
  printf("\n");
  nlohmann::json report = nlohmann::json::array();
  for (uint32_t c : per_problem) {
    printf("%9zu %9u", size_t(c) * n, c);
    nlohmann::json row = {{"trials_per_problem", c}, {"trials", size_t(c) * n}};
    for (const Allocation& a : allocations) {
      const std::vector<Summary>& v = (*a.by_budget)[c];
      printf(" | %6.1f%% %6.1f/%-2zu %7.1f%%", 100 * median(v, &Summary::mean), median(v, &Summary::within95), n,
             100 * median(v, &Summary::worst));
      row[a.json_key] = {{"mean_best", median(v, &Summary::mean)},
                         {"problems_within_95", median(v, &Summary::within95)},
                         {"worst_best", median(v, &Summary::worst)}};
    }
    printf("\n");
    report.push_back(std::move(row));
  }
  printf("\nwith %u trials per problem in all, gain gave each (median over seeds), and known difficulty:\n",
         per_problem.back());
  nlohmann::json shares = nlohmann::json::object(), known_shares = nlohmann::json::object();
  for (size_t i = 0; i < n; ++i) {
    const double median_trials = mtune::bench::Median(gain_share[i]);
    printf("  %6.1f %6u  %s\n", median_trials, known_trials[most][i], paths[i].c_str());
    shares[paths[i]] = median_trials;
    known_shares[paths[i]] = known_trials[most][i];
  }
  if (!json_out.empty()) {
    FILE* f = fopen(json_out.c_str(), "w");
    if (!f) {
      fprintf(stderr, "mtune-bench-allocate: cannot write %s\n", json_out.c_str());
      return 1;
    }
    fprintf(f, "%s\n", nlohmann::json{{"tables", paths}, {"algorithm", algorithm}, {"batch", batch},
                                      {"seeds", seeds}, {"first_seed", first_seed}, {"budgets", report},
                                      {"gain_trials_at_largest_budget", shares},
                                      {"known_difficulty_trials_at_largest_budget", known_shares}}
                           .dump(2)
                           .c_str());
    fclose(f);
  }
  return 0;
}
