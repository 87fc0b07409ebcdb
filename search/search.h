// Search algorithms behind one interface: propose candidates, learn from their results.
#ifndef MTUNE_SEARCH_SEARCH_H_
#define MTUNE_SEARCH_SEARCH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "search/space.h"

namespace mtune::search {

// One measured candidate fed back to the algorithm.
struct Observation {
  Point point;
  // False for any failed candidate (invalid, compile error, wrong result, timeout, crash).
  bool ok = false;
  // Achieved GFLOP/s (GB/s for a kernel without arithmetic); higher is better;
  // ignored when !ok.
  double score = 0.0;
};

// Proposes points of one Space in batches; not thread-safe (the caller serialises).
class SearchAlgorithm {
 public:
  virtual ~SearchAlgorithm() = default;

  // Up to n points never returned before; fewer (possibly none) once the space is spent.
  virtual std::vector<Point> Propose(size_t n) = 0;

  // Feeds back results; observed points are never proposed afterwards.
  virtual void Observe(std::span<const Observation> results) = 0;

  // The best OK observation so far (first one wins ties); nullopt before any.
  virtual std::optional<Observation> Best() const = 0;

  // The registry name this algorithm was made under ("exhaustive", "random", ...).
  virtual std::string_view name() const = 0;
};

// Classic tensor-compiler genetic search: a generation is `population` measured
// candidates; children come from three parents picked with probability proportional
// to fitness (GFLOP/s), one gene from a parent chosen uniformly per knob, each gene
// then mutated to a random option with probability `mutation_rate`. The best
// `elites` ever measured stay parents in every generation.
struct GeneticParams {
  uint32_t population = 16;
  uint32_t elites = 2;
  double mutation_rate = 0.1;
  // Stop proposing after this many generations (0: until the space or budget ends).
  uint32_t generations = 0;
  // Roulette-wheel weights are fitness^selection_power (power scaling). The GFLOP/s
  // of a space's candidates mostly lie within 2-4x of each other, so weights
  // proportional to them barely preferred the best parents: genetic needed more
  // trials than random to reach 95% on 3 of the 11 ground-truth tables. With ^8 it
  // needed fewer on every table where either needed more than 15, over four seed
  // sets of 40 (bench/README.md, session 29).
  double selection_power = 8;
  // With SearchOptions::estimate: the first generation is drawn at random from the
  // points whose estimate is at least this share of the best estimate (as
  // ModelParams::estimate_top does for the model's initial points), not from the
  // whole space. Where random search reaches 95% of the best within a generation (a
  // plateau), a random first generation can only tie it. 0, with estimate_fallback
  // 0: a random first generation.
  double estimate_top = 0.99;
  // With SearchOptions::estimate: the share of the points breeding cannot give taken
  // from the estimate's ranking of the unseen points, best first, rather than at
  // random: the first generation's points beyond those within estimate_top, and
  // children that are all seen or invalid (once a small space's best neighbourhood is
  // spent). Cold replays, 100 seeds (bench/README.md, session 67): trials to 95% on
  // reduce_rows 448x480 Zen 5 87 -> 8, 768x320 Zen 5 221.5 -> 177.5 (random's exact
  // median 216 on both), 256x512 Intel 29 -> 20 (39); the other 52 tables as before
  // but two transposes (34.5 -> 35, 53.5 -> 51 to 5% of the space). 0: all at random.
  double estimate_fallback = 1;
};

// Simulated annealing over knob neighbourhoods (one knob moved to an adjacent option,
// sometimes to any option). A worse neighbour is accepted with probability
// exp(-(loss relative to the best) / temperature); the temperature decays per result.
struct AnnealingParams {
  double initial_temperature = 0.1;
  double cooling = 0.97;
  // Results without a new current point before restarting from the best.
  uint32_t restart_after = 24;
};

// Cost-model guided search: gradient-boosted trees (xgboost) trained on every result,
// an ensemble of `ensemble` models giving mean and spread, batches of `batch` points
// chosen by expected improvement, a share `local` of them near the best results and
// a fraction `exploration` of the others at random.
struct ModelParams {
  // Random points before the first model: this many at most, and about 1% of the
  // space (at least 8) in smaller spaces, whose whole budget may be a few dozen trials.
  uint32_t initial_random = 16;
  // Points per model fit: 4 fits twice as often as 8 (about twice the search time per
  // trial, still milliseconds) and did better on the ground-truth replays.
  uint32_t batch = 4;
  double exploration = 0.1;
  uint32_t ensemble = 4;
  uint32_t trees = 40;
  uint32_t max_depth = 5;
  // Labels are (GFLOP/s / best so far)^label_power: above 1 the fit spends its
  // splits on the top of the distribution, where the optimum is.
  double label_power = 1;
  // Label scale: 0 (GFLOP/s / best)^label_power; 1 log2(GFLOP/s / best), floored at
  // -6 and mapped to [0, 1]; 2 the rank among the results, in [0, 1].
  uint32_t label_mode = 0;
  // Ensemble members learn from bootstrap resamples (a real spread for expected improvement).
  bool bootstrap = false;
  // Share of each batch taken from the unseen points within `local_radius` knobs of
  // the `local_top` best results, ranked by the same acquisition (a trust region).
  // 0.75, within 2 knobs of the 2 best: the model alone settles on the first good
  // region; ranking the neighbourhood of the best with it is what annealing does
  // well, without annealing's blind moves (bench/README.md has the replays).
  double local = 0.75;
  uint32_t local_radius = 2;
  uint32_t local_top = 2;
  // When > 0, the local_top centres are at least this many knobs apart (the best
  // results of distinct regions, not the best and its neighbour).
  uint32_t local_apart = 0;
  // Acquisition: expected improvement when negative, else the upper confidence bound
  // mean + ucb_kappa * spread (0: pure exploitation of the predicted mean).
  double ucb_kappa = -1;
  // Spaces larger than this are scored on a random sample of this many unseen points
  // (plus the neighbours of the best ones) instead of every point.
  uint32_t pool = 4096;
  // Fewest initial random points, whatever the space's size.
  uint32_t min_initial = 8;
  // The options below stay off (except max_train): on the ground-truth replays none
  // did better than seed-set noise (bench/README.md lists the sums).
  // Initial design: 0 uniform random points; 1 balanced over knob levels (each knob's
  // options appear equally often among the initial points, like a Latin hypercube),
  // so the first model sees every option of every knob.
  uint32_t initial_design = 0;
  // What the trees learn: 0 regression on the labels; 1 xgboost's pairwise ranking
  // (rank:pairwise); 2 rank:ndcg on graded labels. A ranking model is scored by its
  // predicted order (plus ucb_kappa * spread when ucb_kappa > 0), not expected improvement.
  uint32_t objective = 0;
  // Training rows at most (0: all): past this, the best half of the cap plus a seeded
  // sample of the rest, which bounds the cost of a refit late in a long run (a full
  // 1440-point replay: ~40 ms of search per trial uncapped, ~14 ms at 256). Nothing
  // changes before 256 results, past the 5% of every ground-truth table.
  uint32_t max_train = 256;
  // Slots of each batch (taken first) for the unseen points best under an additive
  // model: per-knob mean relative scores plus additive_bonus / sqrt(1 + results with
  // that option). 0: none.
  uint32_t additive = 0;
  double additive_bonus = 0.1;
  // Random points before the first model when the search has prior results (other
  // problems' results, SearchOptions::prior): the prior trains the first model.
  uint32_t initial_with_prior = 0;
  // With SearchOptions::estimate and no prior: the initial points are drawn at random
  // from the points whose estimate is at least this share of the best estimate (the
  // tile shapes a first-principles model rates best), not from the whole space; the
  // model then learns what the estimate leaves out (loop orders, lowerings, cache
  // tiles). 0: uniform initial points. Cold replays of the 12 tables with an estimate:
  // 0.99 as good as 0.95 or better on each, 0.9 worse (bench/README.md, session 52).
  double estimate_top = 0.99;
  // With SearchOptions::estimate and no prior, where fewer points than the initial
  // ones lie within estimate_top: the rest are the next points by the estimate's
  // ranking rather than random ones. A needle the estimate rates just below its top
  // set is then among the initial points. Cold replays of the 22 tables where it
  // applies, 100 seeds, to 5% of the space (bench/README.md, session 67): reduce_rows
  // 448x480 Zen 5 never within 5% -> 8 trials (random's exact median 216), 256x512
  // Intel 14 trials on 56% of seeds -> 11 on 97% (39); the other 20 as before.
  bool estimate_fill = true;
  // With SearchOptions::estimate and a prior: the first batch (before any result of
  // this problem) ranks the points by the prior-trained model's predicted mean times
  // the point's estimate over the best estimate in the pool. Leave-one-out replays of
  // the 12 tables with an estimate: 11 meet both search goals, 10 without it; ranking
  // among the points within estimate_top only also 11 (bench/README.md, session 53).
  bool estimate_with_prior = true;
  // With SearchOptions::estimate, once results arrive, each point's acquisition
  // (expected improvement) is weighed by (its estimate over the pool's best estimate)
  // to this power (0: the estimate picks the initial points only). The trees learn
  // what the estimate leaves out from a handful of results, but they know nothing yet
  // of a point whose tile shape none of those results has: without the weight they
  // rank such points as if the estimate's ceiling did not apply. 8: a point rated 0.9
  // of the best weighs 0.43, 0.8 weighs 0.17 (bench/README.md, session 62).
  double estimate_gain_power = 8;
  // Prior results the model learns from at most: the best half of this and a seeded
  // sample of the others, so that this problem's own results weigh in as they come.
  uint32_t max_prior = 256;
  // When > 0, the slots of a batch's second half that are outside the trust region
  // take the best-ranked point at least this many knobs from every point of the batch
  // and every point still being measured (else the best-ranked): half the batch where
  // the model ranks best, the rest spread over other predicted-good regions rather
  // than that region's neighbours, whose results say much the same. With 16
  // proposals out per round it met both search goals on one table more with priors
  // and was level cold (bench/README.md, sessions 45 and 46).
  uint32_t batch_apart = 2;
  // batch_apart spreads a refill only when its batch and the points still being
  // measured come to at least this many proposals without results: a worker pool
  // wider than a batch (two default workers and more; a lone worker keeps at most 3
  // out). Spreading every batch of 4 was a trade on the warm replays (session 45);
  // 0 spreads every batch.
  uint32_t batch_apart_window = 8;
};

// A measured result of another problem (same family and template) that the cost
// model may learn from before this problem has results of its own: its features,
// computed against its own problem (so problem dimensions tell the problems apart),
// and its score relative to the best result of that problem (0 failed, 1 the best).
struct PriorResult {
  std::vector<double> features;
  double relative_score = 0.0;
};

// Features of a point for the cost model: one row, the same length for every point.
using FeatureFn = std::function<std::vector<double>(const Point&)>;

// How an algorithm is seeded and constrained.
struct SearchOptions {
  // Seed of randomised algorithms; the same seed replays the same proposals.
  uint64_t seed = 0;
  // Constraint check: rejected points are never proposed, so they never cost a compile.
  // Empty = every point is valid.
  std::function<bool(const Point&)> is_valid;
  // Proposed before anything else, in order (e.g. the template's default candidate),
  // unless rejected by is_valid or listed in already_measured.
  std::vector<Point> seeds_first;
  // Points measured by an earlier run (resuming a job); never proposed.
  std::vector<Point> already_measured;
  // Randomised sampling of spaces too large to enumerate gives up (reports the space
  // as spent) after this many consecutive duplicate or invalid draws.
  uint64_t max_consecutive_rejections = 100000;
  GeneticParams genetic;
  AnnealingParams annealing;
  ModelParams model;
  // Cost-model features (problem dimensions, tile footprints, ...). Empty = the knob
  // values themselves (log2 of numeric options, else the option index).
  FeatureFn features;
  // Results of other problems for `model` to learn from (transfer); ignored by the
  // other algorithms. Rows whose length differs from `features`' are dropped; NaN in a
  // row is a feature it lacks (the coordinator lays rows of another version of the
  // template out by feature name, strategies::FeaturesAs).
  std::vector<PriorResult> prior;
  // A first-principles estimate of a point's speed (any scale, higher is faster; NaN
  // where there is none) that `model` draws its initial points by (ModelParams::
  // estimate_top, estimate_fill) and `genetic` its first generation and the points
  // breeding cannot give (GeneticParams::estimate_top, estimate_fallback); ignored by
  // the other algorithms. Empty = none.
  std::function<double(const Point&)> estimate;
};

// The default features of `point`: per knob, log2 of a positive numeric option, else
// its option index.
std::vector<double> KnobFeatures(const Space& space, const Point& point);

// Names accepted by MakeSearch, sorted.
std::vector<std::string> SearchAlgorithmNames();

// Creates the named algorithm over `space`. InvalidArgument for an unknown name (the
// message lists the valid ones), a malformed space, or a seed/measured point that does
// not fit the space.
absl::StatusOr<std::unique_ptr<SearchAlgorithm>> MakeSearch(std::string_view name,
                                                            const Space& space,
                                                            const SearchOptions& options);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_SEARCH_H_
