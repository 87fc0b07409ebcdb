// mtune-bench-allocate: replays a job of several problems on ground-truth tables
// (one table per problem) and compares the two ways a job can share its trials: each
// problem the same number ("equal", `mtune submit --allocate equal`) or one budget
// for all, each next trial going to the problem with the highest expected gain
// ("gain", the default; search::ExpectedGain, as the coordinator calls it). Both
// allocations drive the same seeded searches; a trial looks its candidate up in the
// table. Printed per budget: over seeds, the median of the problems' mean best (as %
// of each table's best), of how many problems are within 95% of their best, and of
// the worst problem's best.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
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

// Looks the points up, feeds them back and appends one trace row per trial.
void Observe(ProblemRun& run, const std::vector<Point>& points, std::vector<ProblemRun>& all, Trace& trace) {
  std::vector<mtune::search::Observation> results;
  for (const Point& p : points) {
    const auto* row = run.truth->by_index.at(mtune::search::IndexOfPoint(run.truth->table.space, p));
    const bool ok = row->status == "OK";
    results.push_back({p, ok, row->gflops});
    run.scores.push_back(ok ? row->gflops : 0.0);
    if (ok) run.best = std::max(run.best, row->gflops);
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

struct Summary {
  double mean = 0, within95 = 0, worst = 0;
};

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
  std::map<uint32_t, std::vector<Summary>> equal, gain;
  // Trials each problem got under gain at the largest budget, per seed.
  std::vector<std::vector<double>> gain_share(n);
  for (int s = 0; s < seeds; ++s) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(s);
    const uint32_t most = per_problem.back();
    std::vector<uint32_t> trials;
    const Trace gain_trace = RunGain(StartProblems(truths, algorithm, seed), uint64_t(most) * n, batch, trials);
    for (size_t i = 0; i < n; ++i) gain_share[i].push_back(trials[i]);
    for (uint32_t c : per_problem) {
      // Equal shares differ by budget (each problem stops at c), so each is its own run.
      equal[c].push_back(At(RunEqual(StartProblems(truths, algorithm, seed), c, batch), size_t(c) * n));
      gain[c].push_back(At(gain_trace, size_t(c) * n));
    }
    fprintf(stderr, "seed %llu done\n", static_cast<unsigned long long>(seed));
  }

  auto median = [](const std::vector<Summary>& v, double Summary::*field) {
    std::vector<double> x;
    for (const Summary& s : v) x.push_back(s.*field);
    return mtune::bench::Median(x);
  };
  printf("\nmedians over seeds; %% of each table's best\n");
  printf("%9s %9s | %-32s | %-32s\n", "trials", "per", "equal", "gain");
  printf("%9s %9s | %10s %10s %10s | %10s %10s %10s\n", "in all", "problem", "mean best", "at 95%", "worst",
         "mean best", "at 95%", "worst");
  nlohmann::json report = nlohmann::json::array();
  for (uint32_t c : per_problem) {
    printf("%9zu %9u | %9.1f%% %7.1f/%zu %9.1f%% | %9.1f%% %7.1f/%zu %9.1f%%\n", size_t(c) * n, c,
           100 * median(equal[c], &Summary::mean), median(equal[c], &Summary::within95), n,
           100 * median(equal[c], &Summary::worst), 100 * median(gain[c], &Summary::mean),
           median(gain[c], &Summary::within95), n, 100 * median(gain[c], &Summary::worst));
    report.push_back({{"trials_per_problem", c},
                      {"trials", size_t(c) * n},
                      {"equal", {{"mean_best", median(equal[c], &Summary::mean)},
                                 {"problems_within_95", median(equal[c], &Summary::within95)},
                                 {"worst_best", median(equal[c], &Summary::worst)}}},
                      {"gain", {{"mean_best", median(gain[c], &Summary::mean)},
                                {"problems_within_95", median(gain[c], &Summary::within95)},
                                {"worst_best", median(gain[c], &Summary::worst)}}}});
  }
  printf("\nwith %u trials per problem in all, gain gave each (median over seeds):\n", per_problem.back());
  nlohmann::json shares = nlohmann::json::object();
  for (size_t i = 0; i < n; ++i) {
    const double median_trials = mtune::bench::Median(gain_share[i]);
    printf("  %6.1f  %s\n", median_trials, paths[i].c_str());
    shares[paths[i]] = median_trials;
  }
  if (!json_out.empty()) {
    FILE* f = fopen(json_out.c_str(), "w");
    if (!f) {
      fprintf(stderr, "mtune-bench-allocate: cannot write %s\n", json_out.c_str());
      return 1;
    }
    fprintf(f, "%s\n", nlohmann::json{{"tables", paths}, {"algorithm", algorithm}, {"batch", batch},
                                      {"seeds", seeds}, {"first_seed", first_seed}, {"budgets", report},
                                      {"gain_trials_at_largest_budget", shares}}
                           .dump(2)
                           .c_str());
    fclose(f);
  }
  return 0;
}
