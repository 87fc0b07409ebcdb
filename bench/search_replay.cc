// mtune-bench-search: replays search algorithms on ground-truth tables (every
// candidate of a space measured once, see bench/ground_truth_table.h) over many
// seeds, and prints per algorithm the median number of trials to reach 95% and 99%
// of the best measured candidate, and the best found within 5% of the space. No
// compiling here: a "trial" looks the candidate up in the table, so the figures
// are about search, and identical on every machine for the same tables.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/ground_truth_table.h"
#include "bench/replay_stats.h"
#include "bench/replay_table.h"
#include "nlohmann/json.hpp"
#include "search/search.h"
#include "strategies/features.h"
#include "strategies/figure.h"
#include "strategies/problem.h"

namespace {

using mtune::bench::Median;
using mtune::search::Point;

// Bootstrap resamples behind each interval printed (fixed seed: a replay's figures
// stay the same from run to run).
constexpr uint32_t kResamples = 4000;
constexpr double kIntervalLevel = 0.9;

struct Replay {
  // Best-so-far after each trial (0 before any OK result).
  std::vector<double> best;
  // Table index of the best candidate after 5% of the space (for --per-seed).
  uint64_t best_at_5 = 0;
  double search_s = 0;  // time spent inside Propose/Observe
};

using Truth = mtune::bench::ReplayTable;

// Applies "--param NAME=VALUE" settings to the algorithms' tunables.
bool SetParam(mtune::search::SearchOptions& o, const std::string& setting) {
  std::pair<std::string, std::string> kv = absl::StrSplit(setting, absl::MaxSplits('=', 1));
  double v = 0;
  if (!absl::SimpleAtod(kv.second, &v)) return false;
  const std::map<std::string, std::function<void(double)>> setters = {
      {"genetic.population", [&](double x) { o.genetic.population = uint32_t(x); }},
      {"genetic.elites", [&](double x) { o.genetic.elites = uint32_t(x); }},
      {"genetic.mutation_rate", [&](double x) { o.genetic.mutation_rate = x; }},
      {"genetic.selection_power", [&](double x) { o.genetic.selection_power = x; }},
      {"genetic.estimate_top", [&](double x) { o.genetic.estimate_top = x; }},
      {"genetic.estimate_fallback", [&](double x) { o.genetic.estimate_fallback = x; }},
      {"annealing.initial_temperature", [&](double x) { o.annealing.initial_temperature = x; }},
      {"annealing.cooling", [&](double x) { o.annealing.cooling = x; }},
      {"annealing.restart_after", [&](double x) { o.annealing.restart_after = uint32_t(x); }},
      {"model.estimate_fill", [&](double x) { o.model.estimate_fill = x != 0; }},
      {"model.initial_random", [&](double x) { o.model.initial_random = uint32_t(x); }},
      {"model.batch", [&](double x) { o.model.batch = uint32_t(x); }},
      {"model.exploration", [&](double x) { o.model.exploration = x; }},
      {"model.ensemble", [&](double x) { o.model.ensemble = uint32_t(x); }},
      {"model.trees", [&](double x) { o.model.trees = uint32_t(x); }},
      {"model.max_depth", [&](double x) { o.model.max_depth = uint32_t(x); }},
      {"model.pool", [&](double x) { o.model.pool = uint32_t(x); }},
      {"model.ucb_kappa", [&](double x) { o.model.ucb_kappa = x; }},
      {"model.label_power", [&](double x) { o.model.label_power = x; }},
      {"model.label_mode", [&](double x) { o.model.label_mode = uint32_t(x); }},
      {"model.bootstrap", [&](double x) { o.model.bootstrap = x != 0; }},
      {"model.local", [&](double x) { o.model.local = x; }},
      {"model.local_radius", [&](double x) { o.model.local_radius = uint32_t(x); }},
      {"model.local_top", [&](double x) { o.model.local_top = uint32_t(x); }},
      {"model.min_initial", [&](double x) { o.model.min_initial = uint32_t(x); }},
      {"model.initial_design", [&](double x) { o.model.initial_design = uint32_t(x); }},
      {"model.objective", [&](double x) { o.model.objective = uint32_t(x); }},
      {"model.max_train", [&](double x) { o.model.max_train = uint32_t(x); }},
      {"model.local_apart", [&](double x) { o.model.local_apart = uint32_t(x); }},
      {"model.additive", [&](double x) { o.model.additive = uint32_t(x); }},
      {"model.additive_bonus", [&](double x) { o.model.additive_bonus = x; }},
      {"model.max_prior", [&](double x) { o.model.max_prior = uint32_t(x); }},
      {"model.initial_with_prior", [&](double x) { o.model.initial_with_prior = uint32_t(x); }},
      {"model.batch_apart", [&](double x) { o.model.batch_apart = uint32_t(x); }},
      {"model.batch_apart_window", [&](double x) { o.model.batch_apart_window = uint32_t(x); }},
      {"model.estimate_top", [&](double x) { o.model.estimate_top = x; }},
      {"model.estimate_with_prior", [&](double x) { o.model.estimate_with_prior = x != 0; }},
      {"model.estimate_gain_power", [&](double x) { o.model.estimate_gain_power = x; }},
  };
  auto it = setters.find(kv.first);
  if (it == setters.end()) return false;
  it->second(v);
  return true;
}

Replay Run(const Truth& truth, const std::string& algorithm, uint64_t seed, size_t batch,
           size_t max_trials, size_t five_percent, const mtune::search::SearchOptions& base, bool knob_features) {
  const auto& space = truth.table.space;
  mtune::search::SearchOptions options = mtune::bench::ReplayOptions(truth, base, knob_features);
  options.seed = seed;
  Replay replay;
  auto search = mtune::search::MakeSearch(algorithm, space, options);
  if (!search.ok()) {
    fprintf(stderr, "mtune-bench-search: %s\n", search.status().ToString().c_str());
    std::exit(1);
  }
  double best = 0;
  using Clock = std::chrono::steady_clock;
  while (replay.best.size() < max_trials) {
    auto start = Clock::now();
    std::vector<Point> points = (*search)->Propose(std::min(batch, max_trials - replay.best.size()));
    replay.search_s += std::chrono::duration<double>(Clock::now() - start).count();
    if (points.empty()) break;
    std::vector<mtune::search::Observation> results;
    for (const Point& p : points) {
      const auto* row = truth.by_index.at(mtune::search::IndexOfPoint(space, p));
      const bool ok = row->status == "OK";
      results.push_back({p, ok, row->gflops});
      if (ok && row->gflops > best && replay.best.size() < five_percent) replay.best_at_5 = row->index;
      if (ok) best = std::max(best, row->gflops);
      replay.best.push_back(best);
    }
    start = Clock::now();
    (*search)->Observe(results);
    replay.search_s += std::chrono::duration<double>(Clock::now() - start).count();
  }
  return replay;
}

// A prior table's rows as transfer results for `model`: features against the prior
// table's own problem (free knobs, as Run computes them), scores relative to its
// best. Only tables of the same template are used: its knobs are what features name
// (another version of it, with a knob more or less, is laid out by feature name).
struct PriorTable {
  std::string problem_key;
  std::string template_name;
  struct Row {
    std::vector<mtune::strategies::NamedFeature> features;
    double relative_score = 0;
  };
  std::vector<Row> rows;
  // Its OK candidates, fastest first (what a warm start proposes first).
  std::vector<mtune::search::KnobValues> fastest;
};

absl::StatusOr<PriorTable> ReadPriorTable(const std::string& path) {
  auto table = mtune::bench::ReadGroundTruth(path);
  if (!table.ok()) return table.status();
  auto problem = mtune::strategies::ParseProblemKey(table->header["problem"]);
  if (!problem.ok()) return problem.status();
  PriorTable prior{.problem_key = problem->Key(), .template_name = table->header["template"]};
  double best = 0;
  for (const auto& row : table->rows)
    if (row.status == "OK") best = std::max(best, row.gflops);
  std::vector<std::pair<double, mtune::search::KnobValues>> ok;
  for (const auto& row : table->rows) {
    auto values = mtune::search::ValuesFromPoint(table->space, mtune::search::PointAtIndex(table->space, row.index));
    if (!values.ok()) continue;
    prior.rows.push_back({mtune::strategies::NamedCandidateFeatures(*problem, *values),
                          row.status == "OK" && best > 0 ? row.gflops / best : 0.0});
    if (row.status == "OK") ok.emplace_back(row.gflops, *values);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [gflops, values] : ok) prior.fastest.push_back(std::move(values));
  return prior;
}

// First trial (1-based) whose best reaches `fraction` of the optimum; beyond the run
// (never reached) counts as one more than the candidates there are.
double TrialsTo(const Replay& r, double optimum, double fraction, size_t never) {
  for (size_t i = 0; i < r.best.size(); ++i)
    if (r.best[i] >= fraction * optimum) return static_cast<double>(i + 1);
  return static_cast<double>(never);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune-bench-search: replay search algorithms on measured ground-truth tables"};
  std::vector<std::string> tables;
  std::string algorithms = "random,exhaustive,genetic,annealing,model";
  int seeds = 20;
  uint64_t first_seed = 0;
  size_t batch = 4;
  std::string json_out;
  std::vector<std::string> params;
  double max_fraction = 1.0;
  bool knob_features = false;
  bool per_seed = false;
  app.add_option("--param", params,
                 "NAME=VALUE tunable of an algorithm, e.g. model.batch=4 (repeatable)");
  app.add_option("--max-fraction", max_fraction,
                 "stop each run after this fraction of the space (trials beyond count as never)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_flag("--per-seed", per_seed,
               "also print each seed's trials to 95% and the table index of its best candidate within 5%");
  app.add_flag("--knob-features", knob_features,
               "model learns from knob values only (no problem-aware features)");
  app.add_option("tables", tables, "ground-truth tables (bench/data/*.csv)")->required();
  app.add_option("--algorithms", algorithms, "comma-separated")->capture_default_str();
  app.add_option("--seeds", seeds, "seeds per algorithm")->capture_default_str();
  app.add_option("--first-seed", first_seed,
                 "seeds are first-seed, first-seed+1, ... (another set checks a tuning is not fitted to one)")
      ->capture_default_str();
  app.add_option("--batch", batch,
                 "points proposed before their results are observed (a worker pool's window)")
      ->capture_default_str();
  app.add_option("--json", json_out, "also write the figures as JSON here");
  std::vector<std::string> prior_tables;
  app.add_option("--prior", prior_tables,
                 "ground-truth table of another problem of the same template whose results `model` "
                 "learns from before the first trial (transfer; repeatable; a table is never its own prior; "
                 "another version of the template too, its rows laid out by feature name)")
      ->check(CLI::ExistingFile);
  uint32_t warm_seeds = 0;
  app.add_option("--warm-seeds", warm_seeds,
                 "every algorithm first proposes the N fastest candidates of each --prior table, mapped to "
                 "the nearest options (the coordinator's warm start proposes 4 per nearest problem)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (warm_seeds > 0 && prior_tables.empty()) {
    fprintf(stderr, "mtune-bench-search: --warm-seeds needs --prior\n");
    return 1;
  }
  if (knob_features && !prior_tables.empty()) {
    fprintf(stderr, "mtune-bench-search: --prior needs the problem-aware features (not --knob-features)\n");
    return 1;
  }
  std::vector<PriorTable> priors;
  for (const std::string& prior_path : prior_tables) {
    auto prior = ReadPriorTable(prior_path);
    if (!prior.ok()) {
      fprintf(stderr, "mtune-bench-search: --prior %s: %s\n", prior_path.c_str(), prior.status().ToString().c_str());
      return 1;
    }
    priors.push_back(*std::move(prior));
  }
  mtune::search::SearchOptions base;
  for (const std::string& p : params) {
    if (!SetParam(base, p)) {
      fprintf(stderr, "mtune-bench-search: bad --param '%s'\n", p.c_str());
      return 1;
    }
  }

  nlohmann::json report = nlohmann::json::array();
  for (const std::string& path : tables) {
    Truth truth;
    if (absl::Status loaded = mtune::bench::LoadReplayTable(path, truth); !loaded.ok()) {
      fprintf(stderr, "mtune-bench-search: %s\n", loaded.ToString().c_str());
      return 1;
    }
    mtune::search::SearchOptions options = base;
    std::vector<std::string> priors_used;
    // The names of this table's feature rows, which prior rows are laid out as.
    std::vector<std::string> feature_names;
    if (!truth.table.rows.empty()) {
      auto values = mtune::search::ValuesFromPoint(
          truth.table.space, mtune::search::PointAtIndex(truth.table.space, truth.table.rows.front().index));
      if (values.ok())
        feature_names = mtune::strategies::FeatureNames(mtune::strategies::NamedCandidateFeatures(truth.problem, *values));
    }
    std::set<std::string> names_lacking;  // this table's feature names a prior row lacks
    for (const PriorTable& prior : priors) {
      if (prior.problem_key == truth.problem.Key()) continue;
      if (prior.template_name != truth.table.header["template"]) {
        fprintf(stderr, "mtune-bench-search: --prior of %s is a table of template '%s', not '%s'\n",
                prior.problem_key.c_str(), prior.template_name.c_str(), truth.table.header["template"].c_str());
        return 1;
      }
      for (const PriorTable::Row& row : prior.rows) {
        std::vector<double> features = mtune::strategies::FeaturesAs(row.features, feature_names);
        for (size_t i = 0; i < features.size(); ++i)
          if (std::isnan(features[i])) names_lacking.insert(feature_names[i]);
        options.prior.push_back({std::move(features), row.relative_score});
      }
      priors_used.push_back(prior.problem_key);
    }
    size_t ok = 0;
    for (const auto& row : truth.table.rows) ok += row.status == "OK";
    size_t within95 = 0, within99 = 0;
    for (const auto& [index, row] : truth.by_index) {
      if (row->status != "OK") continue;
      within95 += row->gflops >= 0.95 * truth.optimum;
      within99 += row->gflops >= 0.99 * truth.optimum;
    }
    // Warm-start seeds, for every algorithm alike: the fastest candidates of each prior
    // table that map to a candidate of this table (else constraints pruned it here).
    for (const PriorTable& prior : priors) {
      if (prior.problem_key == truth.problem.Key()) continue;
      for (size_t i = 0; i < std::min<size_t>(warm_seeds, prior.fastest.size()); ++i) {
        std::optional<Point> point = mtune::search::NearestPoint(truth.table.space, prior.fastest[i]);
        if (!point || !truth.by_index.contains(mtune::search::IndexOfPoint(truth.table.space, *point)) ||
            std::find(options.seeds_first.begin(), options.seeds_first.end(), *point) != options.seeds_first.end())
          continue;
        options.seeds_first.push_back(*point);
      }
    }
    const size_t n = truth.by_index.size();
    const size_t five_percent = std::max<size_t>(1, static_cast<size_t>(std::ceil(0.05 * n)));
    // A transpose's or copy's table holds GB/s in its gflops column (its "# figure").
    printf("\n%s: %s, %zu candidates (%zu OK), best %.2f %s; %d seeds from %llu, batch %zu\n",
           path.c_str(), truth.problem.Key().c_str(), n, ok, truth.optimum,
           std::string(mtune::strategies::FigureUnit(truth.problem)).c_str(), seeds,
           static_cast<unsigned long long>(first_seed), batch);
    if (!priors_used.empty())
      printf("model learns first from the results of %s (%zu rows%s)\n", absl::StrJoin(priors_used, ", ").c_str(),
             options.prior.size(),
             names_lacking.empty() ? ""
                                   : absl::StrCat("; missing there: ", absl::StrJoin(names_lacking, " ")).c_str());
    if (!options.seeds_first.empty())
      printf("every algorithm first proposes %zu warm-start seeds (the %u fastest of each prior table, mapped)\n",
             options.seeds_first.size(), warm_seeds);
    // Random search draws valid candidates uniformly without replacement, so its
    // trials to a goal follow a known distribution: its median is exact, and it is
    // the yardstick a goal against random is best measured by (no seed luck in it).
    const uint64_t random95 = mtune::bench::RandomTrialsQuantile(n, within95, 0.5);
    const uint64_t random99 = mtune::bench::RandomTrialsQuantile(n, within99, 0.5);
    // With warm-start seeds every algorithm, random too, proposes them first: the
    // formula is then not random's distribution, and the sampled runs are the yardstick.
    const bool cold = options.seeds_first.empty();
    printf("%zu candidates within 95%% of the best, %zu within 99%%; random search's exact median%s: "
           "%llu trials to 95%%, %llu to 99%%\n",
           within95, within99, cold ? "" : " without the warm-start seeds", static_cast<unsigned long long>(random95),
           static_cast<unsigned long long>(random99));
    printf("%-11s %12s %15s %12s %16s %16s %12s\n", "algorithm", "trials->95%", "90% interval", "trials->99%",
           "best@5% (% opt)", "p(95% by 5%)", "search ms/tr");
    std::map<std::string, double> median95;
    std::map<std::string, mtune::bench::Interval> interval95;
    for (absl::string_view name : absl::StrSplit(algorithms, ',', absl::SkipEmpty())) {
      std::vector<double> t95, t99, at5, hit;
      double search_s = 0, trials = 0;
      for (int s = 0; s < seeds; ++s) {
        const size_t cap = std::max<size_t>(five_percent, static_cast<size_t>(max_fraction * n));
        const Replay r = Run(truth, std::string(name), first_seed + static_cast<uint64_t>(s), batch, cap,
                             five_percent, options, knob_features);
        t95.push_back(TrialsTo(r, truth.optimum, 0.95, n + 1));
        t99.push_back(TrialsTo(r, truth.optimum, 0.99, n + 1));
        const double b5 = r.best.empty() ? 0 : r.best[std::min(five_percent, r.best.size()) - 1];
        at5.push_back(100 * b5 / truth.optimum);
        hit.push_back(t95.back() <= five_percent ? 1 : 0);
        if (per_seed)
          printf("  seed %llu: trials->95%% %.0f, best@5%% %.1f%% (index %llu)\n",
                 static_cast<unsigned long long>(first_seed + s), t95.back(), at5.back(),
                 static_cast<unsigned long long>(r.best_at_5));
        search_s += r.search_s;
        trials += r.best.size();
      }
      double p_hit = 0;
      for (double h : hit) p_hit += h;
      p_hit /= hit.size();
      median95[std::string(name)] = Median(t95);
      const mtune::bench::Interval i95 = mtune::bench::BootstrapMedianInterval(t95, kIntervalLevel, kResamples, 1);
      interval95[std::string(name)] = i95;
      const std::string interval = absl::StrFormat("[%g, %g]", i95.low, i95.high);
      printf("%-11s %12.1f %15s %12.1f %16.1f %16.2f %12.3f\n", std::string(name).c_str(), Median(t95),
             interval.c_str(), Median(t99), Median(at5), p_hit, 1e3 * search_s / std::max(1.0, trials));
      report.push_back({{"table", path}, {"problem", truth.problem.Key()}, {"candidates", n},
                        {"algorithm", std::string(name)}, {"prior", priors_used}, {"prior_rows", options.prior.size()},
                        {"prior_missing_features", names_lacking}, {"seeds", seeds}, {"first_seed", first_seed}, {"batch", batch},
                        {"median_trials_to_95", Median(t95)}, {"median_trials_to_99", Median(t99)},
                        {"median_trials_to_95_interval90", {i95.low, i95.high}}, {"trials_to_95", t95},
                        {"within_95", within95}, {"within_99", within99},
                        {"random_exact_median_to_95", random95}, {"random_exact_median_to_99", random99},
                        {"median_best_at_5pct", Median(at5)}, {"p_95_within_5pct", p_hit},
                        {"search_ms_per_trial", 1e3 * search_s / std::max(1.0, trials)}});
    }
    printf("5%% of the space = %zu trials.", five_percent);
    if (median95.contains("random") && median95.contains("model"))
      printf(" random/model trials to 95%%: %.1fx (goal >= 3).", median95["random"] / median95["model"]);
    if (median95.contains("model") && cold) {
      // Against random's exact median, the only uncertainty left is the model's own
      // median over these seeds (its interval, inverted).
      const mtune::bench::Interval m = interval95["model"];
      printf(" exact random/model: %.1fx (90%% interval %.1f-%.1fx).", random95 / median95["model"], random95 / m.high,
             random95 / m.low);
    }
    if (median95.contains("random") && median95.contains("genetic"))
      printf(" random/genetic: %.1fx (goal > 1).", median95["random"] / median95["genetic"]);
    if (median95.contains("genetic") && cold)
      printf(" exact random/genetic: %.1fx.", random95 / median95["genetic"]);
    printf("\n");
  }
  if (!json_out.empty()) {
    FILE* f = fopen(json_out.c_str(), "w");
    if (!f) return 1;
    fprintf(f, "%s\n", report.dump(2).c_str());
    fclose(f);
  }
  return 0;
}
