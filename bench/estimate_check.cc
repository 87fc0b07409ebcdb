// mtune-bench-estimate: how well a kernel estimate (strategies/kernel_estimate.h)
// ranks a measured space. For each ground-truth table it rates every candidate as
// the replays do and prints the set the model's first points are drawn from (those
// rated within --top of the best rating, search.h's model.estimate_top): its size,
// how many of them measured within 95% of the best, their median; where the best
// measured candidate ranks; and the best-rated candidates with their figures. No
// compiling and no search: the figures say what an estimate gives a cold search
// before its first trial.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "bench/replay_stats.h"
#include "bench/replay_table.h"
#include "search/search.h"

namespace {

struct Rated {
  double rating = 0;    // over the best rating of the table
  double measured = 0;  // over the best measured figure; 0 for a failed candidate
  uint64_t index = 0;
};

std::string KnobsOf(const mtune::bench::ReplayTable& truth, uint64_t index) {
  auto values =
      mtune::search::ValuesFromPoint(truth.table.space, mtune::search::PointAtIndex(truth.table.space, index));
  if (!values.ok()) return values.status().ToString();
  return absl::StrJoin(*values, " ", absl::PairFormatter("="));
}

// 0 when the table has no estimate; 1 on a bad table.
int Report(const std::string& path, double top, size_t show) {
  mtune::bench::ReplayTable truth;
  if (absl::Status loaded = mtune::bench::LoadReplayTable(path, truth); !loaded.ok()) {
    fprintf(stderr, "mtune-bench-estimate: %s\n", loaded.ToString().c_str());
    return 1;
  }
  const mtune::search::SearchOptions options = mtune::bench::ReplayOptions(truth, {});
  if (!options.estimate || truth.optimum <= 0) {
    printf(
        "%s: %s, template %s: no estimate (none knows the kernel, or the table records no register file or no OK "
        "row)\n\n",
        path.c_str(), truth.problem.Key().c_str(), truth.template_name.c_str());
    return 0;
  }
  std::vector<Rated> rated;
  double best_rating = 0;
  for (const auto& [index, row] : truth.by_index) {
    const double e = options.estimate(mtune::search::PointAtIndex(truth.table.space, index));
    rated.push_back({std::isfinite(e) ? e : 0.0, row->status == "OK" ? row->gflops / truth.optimum : 0.0, index});
    best_rating = std::max(best_rating, rated.back().rating);
  }
  if (best_rating <= 0) {
    printf("%s: %s: the estimate rates no candidate\n\n", path.c_str(), truth.problem.Key().c_str());
    return 0;
  }
  for (Rated& r : rated) r.rating /= best_rating;
  std::sort(rated.begin(), rated.end(), [](const Rated& a, const Rated& b) {
    return a.rating != b.rating ? a.rating > b.rating : a.measured > b.measured;
  });
  size_t within95 = 0, top_set = 0, top_within95 = 0;
  std::vector<double> top_measured;
  for (const Rated& r : rated) {
    within95 += r.measured >= 0.95;
    if (r.rating >= top) {
      ++top_set;
      top_within95 += r.measured >= 0.95;
      top_measured.push_back(r.measured);
    }
  }
  const auto best = std::max_element(rated.begin(), rated.end(),
                                     [](const Rated& a, const Rated& b) { return a.measured < b.measured; });
  printf("%s: %s, %zu candidates, %zu within 95%% of the best\n", path.c_str(), truth.problem.Key().c_str(),
         rated.size(), within95);
  printf(
      "  rated within %.0f%% of the best rating: %zu, of which %zu within 95%% (%.0f%%); their median %.1f%% of the "
      "best\n",
      100 * (1 - top), top_set, top_within95, 100.0 * top_within95 / top_set, 100 * mtune::bench::Median(top_measured));
  printf("  the best measured is rated %.3f of the best rating, rank %zu\n", best->rating,
         static_cast<size_t>(
             std::count_if(rated.begin(), rated.end(), [&](const Rated& r) { return r.rating > best->rating; })) +
             1);
  printf("  %-8s %9s  %s\n", "rating", "measured", "candidate");
  for (size_t i = 0; i < std::min(show, rated.size()); ++i)
    printf("  %-8.3f %8.1f%%  %s\n", rated[i].rating, 100 * rated[i].measured, KnobsOf(truth, rated[i].index).c_str());
  printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune-bench-estimate: how a kernel estimate ranks measured ground-truth tables"};
  std::vector<std::string> tables;
  double top = 0.99;
  size_t show = 10;
  app.add_option("tables", tables, "ground-truth tables (bench/data/*.csv)")->required()->check(CLI::ExistingFile);
  app.add_option("--top", top,
                 "the share of the best rating a candidate needs to be in the top set (model.estimate_top)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--show", show, "best-rated candidates to list per table")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  int status = 0;
  for (const std::string& path : tables) status |= Report(path, top, show);
  return status;
}
