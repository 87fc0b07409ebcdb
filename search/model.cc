#include "search/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "search/estimated_start.h"
#include "search/gbt_ensemble.h"
#include "search/sampler.h"
#include "search/search_base.h"

namespace mtune::search {
namespace {

const char* ObjectiveName(uint32_t objective) {
  return objective == 1 ? "rank:pairwise" : objective == 2 ? "rank:ndcg" : "reg:squarederror";
}

constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

// How many knobs two points differ in.
uint32_t KnobsApart(const Point& a, const Point& b) {
  uint32_t distance = 0;
  for (size_t k = 0; k < a.size(); ++k) distance += a[k] != b[k];
  return distance;
}

// Expected improvement over `best` of a prediction read as a normal distribution.
double ExpectedImprovement(const Prediction& p, double best) {
  const double gain = p.mean - best;
  if (p.stddev < 1e-9) return std::max(gain, 0.0);
  const double z = gain / p.stddev;
  const double cdf = 0.5 * std::erfc(-z * kSqrtHalf);
  const double pdf = kInvSqrt2Pi * std::exp(-0.5 * z * z);
  return gain * cdf + p.stddev * pdf;
}

// Random points first (the model needs something to learn from), then batches: the
// ensemble is retrained on every result so far and scores the unseen points; a share
// of the batch (`local`) takes the highest expected improvements among the points a
// knob or two away from the best results (a trust region), the rest the highest
// anywhere, a share of those swapped for random points so that a wrong model cannot
// hide a region for ever. Labels are scores
// relative to the best so far (failures 0), which keeps them in [0, 1] whatever the
// kernel's GFLOP/s scale. With prior results of other problems (transfer), the first
// model is fitted on them before any result of this problem and proposes the first
// batch itself (initial_with_prior random points, default none); this problem's
// results join them as they arrive, and the problem dimensions among the features
// let the trees tell the problems apart.
class ModelSearch final : public SearchBase {
 public:
  ModelSearch(const Space& space, const SearchOptions& options)
      : SearchBase("model", space, options),
        params_(options.model),
        sampler_(this->space(), options.seed),
        max_rejections_(options.max_consecutive_rejections),
        features_(options.features),
        estimate_(options.estimate),
        ensemble_({.models = std::max<uint32_t>(options.model.ensemble, 1),
                   .trees = std::max<uint32_t>(options.model.trees, 1),
                   .max_depth = std::max<uint32_t>(options.model.max_depth, 1),
                   .bootstrap = options.model.bootstrap,
                   .objective = ObjectiveName(options.model.objective),
                   .seed = options.seed}) {
    params_.batch = std::max<uint32_t>(params_.batch, 1);
    const uint64_t one_percent = SpaceSize(space) / 100;
    initial_random_ = static_cast<uint32_t>(
        std::clamp<uint64_t>(one_percent, std::min(params_.initial_random, params_.min_initial), params_.initial_random));
    ChoosePrior(options.prior);
    if (!prior_.empty()) initial_random_ = std::min(initial_random_, params_.initial_with_prior);
  }

  void Observe(std::span<const Observation> results) override {
    SearchBase::Observe(results);
    for (const Observation& r : results) {
      in_flight_.erase(r.point);
      if (!ValidatePoint(space(), r.point).ok()) continue;
      const bool ok = r.ok && std::isfinite(r.score) && r.score > 0;
      observed_.push_back({r.point, ok ? r.score : 0.0});
      if (ok) ++ok_count_;
    }
  }

 protected:
  std::optional<Point> NextCandidate() override {
    if (!designed_) {
      designed_ = true;
      if (estimate_ && prior_.empty() && params_.estimate_top > 0)
        EstimatedDesign();
      else if (params_.initial_design == 1)
        BalancedDesign();
    }
    if (queue_.empty() && (ok_count_ > 0 || !prior_.empty()) && observed_.size() >= initial_random_) Refill();
    while (!queue_.empty()) {
      Point next = std::move(queue_.front());
      queue_.pop_front();
      if (Acceptable(next)) {
        in_flight_.insert(next);
        return next;
      }
    }
    std::optional<Point> random = sampler_.Next();
    if (random && Acceptable(*random)) in_flight_.insert(*random);  // else the base rejects it
    return random;
  }

  bool GiveUp(uint64_t consecutive) const override {
    return !sampler_.permutes() && consecutive >= max_rejections_;
  }

 private:
  struct Sample {
    Point point;
    double score;
  };
  struct PriorSample {
    std::vector<float> features;
    double relative;
  };

  const std::vector<float>& FeaturesOf(const Point& point) {
    auto it = feature_cache_.find(point);
    if (it != feature_cache_.end()) return it->second;
    std::vector<double> raw = features_ ? features_(point) : KnobFeatures(space(), point);
    return feature_cache_.emplace(point, std::vector<float>(raw.begin(), raw.end())).first->second;
  }

  // initial_random_ points whose knob options are balanced: per knob, concatenated
  // random permutations of its options, so that every option of a knob with at most
  // initial_random_ options appears, and the knobs' sequences are paired at random.
  // A point that is invalid or a repeat has random knobs redrawn (a few tries).
  void BalancedDesign() {
    const size_t n = initial_random_, knobs = space().knobs.size();
    std::vector<std::vector<uint32_t>> levels(knobs);
    for (size_t k = 0; k < knobs; ++k) {
      const uint32_t options = static_cast<uint32_t>(space().knobs[k].options.size());
      while (levels[k].size() < n) {
        std::vector<uint32_t> perm(options);
        std::iota(perm.begin(), perm.end(), 0u);
        for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[UniformBelow(sampler_.rng(), i)]);
        levels[k].insert(levels[k].end(), perm.begin(), perm.end());
      }
      levels[k].resize(n);
    }
    absl::flat_hash_set<Point> chosen;
    for (size_t i = 0; i < n; ++i) {
      Point p(knobs);
      for (size_t k = 0; k < knobs; ++k) p[k] = levels[k][i];
      for (int attempt = 0; attempt < 64 && (chosen.contains(p) || !Acceptable(p)); ++attempt) {
        const size_t k = UniformBelow(sampler_.rng(), knobs);
        p[k] = static_cast<uint32_t>(UniformBelow(sampler_.rng(), space().knobs[k].options.size()));
      }
      if (chosen.contains(p) || !Acceptable(p)) continue;  // the random sampler fills in
      chosen.insert(p);
      queue_.push_back(std::move(p));
    }
  }

  // initial_random_ points drawn from those the estimate rates within estimate_top
  // of its best (estimated_start.h).
  void EstimatedDesign() {
    auto acceptable = [this](const Point& p) { return Acceptable(p); };
    for (Point& p : EstimatedStart(space(), estimate_, params_.estimate_top, initial_random_, params_.pool, acceptable,
                                   sampler_.rng()))
      queue_.push_back(std::move(p));
    if (!params_.estimate_fill || queue_.size() >= initial_random_) return;
    // With estimate_fill, the rest from the ranking (those already queued skipped).
    absl::flat_hash_set<Point> queued(queue_.begin(), queue_.end());
    for (Point& p : RankedByEstimate(space(), estimate_, params_.pool, acceptable, sampler_.rng())) {
      if (queue_.size() >= initial_random_) break;
      if (!queued.contains(p)) queue_.push_back(std::move(p));
    }
  }

  // The prior results the model learns from: all, or past max_prior the best half of
  // the cap and a seeded sample of the others (like TrainingSet).
  void ChoosePrior(const std::vector<PriorResult>& prior) {
    std::vector<const PriorResult*> kept;
    for (const PriorResult& r : prior)
      if (!r.features.empty() && std::isfinite(r.relative_score)) kept.push_back(&r);
    if (params_.max_prior > 0 && kept.size() > params_.max_prior) {
      std::stable_sort(kept.begin(), kept.end(), [](const PriorResult* a, const PriorResult* b) {
        return a->relative_score > b->relative_score;
      });
      const size_t top = params_.max_prior / 2;
      for (size_t i = kept.size(); i > top + 1; --i)
        std::swap(kept[i - 1], kept[top + UniformBelow(sampler_.rng(), i - top)]);
      kept.resize(params_.max_prior);
    }
    for (const PriorResult* r : kept)
      prior_.push_back({std::vector<float>(r->features.begin(), r->features.end()),
                        std::clamp(r->relative_score, 0.0, 1.0)});
  }

  // The training label of a score relative to the best (0 failed, 1 the best).
  double Label(double relative) const {
    if (params_.label_mode == 1) {
      // log2 of the relative score, failures and anything under 1/64 of the best at -6.
      return 1.0 + std::max(std::log2(std::max(relative, 1e-12)), -6.0) / 6.0;
    }
    return std::pow(relative, params_.label_power);
  }

  // Unseen valid points to score: all of them in small spaces, else a random sample
  // plus the neighbours of the best results (where improvement usually is).
  std::vector<Point> Pool() {
    std::vector<Point> pool;
    const uint64_t size = SpaceSize(space());
    if (size <= params_.pool) {
      for (uint64_t i = 0; i < size; ++i) {
        Point p = PointAtIndex(space(), i);
        if (Acceptable(p)) pool.push_back(std::move(p));
      }
      return pool;
    }
    std::vector<const Sample*> ranked;
    for (const Sample& s : observed_) ranked.push_back(&s);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Sample* a, const Sample* b) { return a->score > b->score; });
    absl::flat_hash_set<Point> chosen;
    for (size_t r = 0; r < std::min<size_t>(ranked.size(), 8); ++r) {
      for (size_t k = 0; k < space().knobs.size(); ++k) {
        for (uint32_t o = 0; o < space().knobs[k].options.size(); ++o) {
          Point p = ranked[r]->point;
          p[k] = o;
          if (!chosen.contains(p) && Acceptable(p)) chosen.insert(p), pool.push_back(p);
        }
      }
    }
    for (uint32_t draws = 0; draws < 4 * params_.pool && pool.size() < params_.pool; ++draws) {
      Point p(space().knobs.size());
      for (size_t k = 0; k < p.size(); ++k)
        p[k] = static_cast<uint32_t>(UniformBelow(sampler_.rng(), space().knobs[k].options.size()));
      if (!chosen.contains(p) && Acceptable(p)) chosen.insert(p), pool.push_back(std::move(p));
    }
    return pool;
  }

  // The rows to learn from: every result, or past max_train the best half of the cap
  // and a seeded sample of the others (the order near the top is what matters).
  std::vector<const Sample*> TrainingSet() {
    std::vector<const Sample*> all;
    for (const Sample& s : observed_) all.push_back(&s);
    if (params_.max_train == 0 || all.size() <= params_.max_train) return all;
    std::stable_sort(all.begin(), all.end(), [](const Sample* a, const Sample* b) { return a->score > b->score; });
    const size_t top = params_.max_train / 2;
    for (size_t i = all.size(); i > top + 1; --i)
      std::swap(all[i - 1], all[top + UniformBelow(sampler_.rng(), i - top)]);
    all.resize(params_.max_train);
    return all;
  }

  void Refill() {
    std::vector<Point> pool = Pool();
    if (pool.empty()) return;
    double best = 0;
    for (const Sample& s : observed_) best = std::max(best, s.score);
    std::vector<std::vector<float>> rows;
    std::vector<float> labels;
    // Prior results of other problems first (with rank labels, label_mode 2, their
    // relative score stands for the rank); only rows of this problem's feature length
    // (a row of a template that has changed since is dropped).
    const size_t width = FeaturesOf(pool.front()).size();
    for (const PriorSample& p : prior_) {
      if (p.features.size() != width) continue;
      rows.push_back(p.features);
      const double label = params_.label_mode == 2 ? p.relative : Label(p.relative);
      labels.push_back(static_cast<float>(params_.objective == 2 ? std::round(20.0 * label) : label));
    }
    std::vector<double> sorted;
    const std::vector<const Sample*> training = TrainingSet();
    for (const Sample* s : training) sorted.push_back(s->score);
    std::sort(sorted.begin(), sorted.end());
    for (const Sample* sp : training) {
      const Sample& s = *sp;
      rows.push_back(FeaturesOf(s.point));
      double label = Label(best > 0 ? s.score / best : 0.0);
      if (params_.label_mode == 2) {
        const auto rank = std::lower_bound(sorted.begin(), sorted.end(), s.score) - sorted.begin();
        label = sorted.size() > 1 ? double(rank) / double(sorted.size() - 1) : 1.0;
      }
      // rank:ndcg takes integer relevance grades.
      if (params_.objective == 2) label = std::round(20.0 * label);
      labels.push_back(static_cast<float>(label));
    }
    if (rows.size() == training.size() && !prior_.empty()) prior_.clear();  // all of another width
    if (rows.empty()) return;  // random points go on until a result arrives
    if (absl::Status s = ensemble_.Fit(rows, labels); !s.ok()) return Disable(s);
    std::vector<std::vector<float>> pool_rows;
    pool_rows.reserve(pool.size());
    for (const Point& p : pool) pool_rows.push_back(FeaturesOf(p));
    auto predictions = ensemble_.Predict(pool_rows);
    if (!predictions.ok()) return Disable(predictions.status());
    // The estimate relative to the pool's best weighs each point's gain: before this
    // problem's first result the prior-trained model's predictions (the prior knows
    // which tiles other problems liked, the estimate how this problem's extents pad
    // them); after it, to estimate_gain_power, the acquisition.
    std::vector<double> weight;
    if (estimate_ && ok_count_ == 0 && !prior_.empty() && params_.estimate_with_prior) {
      weight = RelativeEstimates(estimate_, pool);
    } else if (estimate_ && ok_count_ > 0 && params_.estimate_gain_power > 0) {
      weight = RelativeEstimates(estimate_, pool);
      for (double& w : weight) w = std::pow(w, params_.estimate_gain_power);
    }
    std::vector<double> gain(pool.size());
    for (size_t i = 0; i < pool.size(); ++i) {
      const Prediction& p = (*predictions)[i];
      // Before this problem's first result, the prior's own best (label 1) is not a
      // bar an unseen point has to clear: the first batch goes where it predicts best.
      if (ok_count_ == 0)
        gain[i] = p.mean;
      else if (params_.objective != 0)
        gain[i] = p.mean + std::max(params_.ucb_kappa, 0.0) * p.stddev;
      else
        gain[i] = params_.ucb_kappa < 0 ? ExpectedImprovement(p, 1.0) : p.mean + params_.ucb_kappa * p.stddev;
      if (!weight.empty()) gain[i] *= weight[i];
    }
    // Ties are common (trees predict piecewise constants): they go to the higher
    // mean, then to a seeded random order, so that a tied plateau is sampled
    // evenly rather than from its lowest indices, and a seed still replays exactly.
    std::vector<size_t> order(pool.size());
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[UniformBelow(sampler_.rng(), i)]);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (gain[a] != gain[b]) return gain[a] > gain[b];
      return (*predictions)[a].mean > (*predictions)[b].mean;
    });
    // Trust region: pool points within local_radius knobs of the best results.
    std::vector<size_t> local_order;
    if (params_.local > 0) {
      std::vector<const Sample*> ranked;
      for (const Sample& s : observed_) ranked.push_back(&s);
      std::stable_sort(ranked.begin(), ranked.end(),
                       [](const Sample* a, const Sample* b) { return a->score > b->score; });
      if (params_.local_apart > 0) {
        // Centres at least local_apart knobs from each other: the best of distinct
        // regions rather than the best and its own neighbour.
        std::vector<const Sample*> centres;
        for (const Sample* r : ranked) {
          if (centres.size() >= std::max<uint32_t>(params_.local_top, 1)) break;
          bool apart = true;
          for (const Sample* c : centres) {
            apart = apart && KnobsApart(r->point, c->point) >= params_.local_apart;
          }
          if (apart) centres.push_back(r);
        }
        ranked = std::move(centres);
      }
      ranked.resize(std::min<size_t>(ranked.size(), std::max<uint32_t>(params_.local_top, 1)));
      for (size_t i : order) {
        for (const Sample* r : ranked) {
          if (KnobsApart(pool[i], r->point) <= params_.local_radius) {
            local_order.push_back(i);
            break;
          }
        }
      }
    }
    std::vector<bool> taken(pool.size(), false);
    // Additive slots first: the unseen points best under per-knob marginal means.
    if (params_.additive > 0) {
      const std::vector<double> additive = AdditiveScores(pool, training, best);
      std::vector<size_t> additive_order(order);
      std::stable_sort(additive_order.begin(), additive_order.end(),
                       [&](size_t a, size_t b) { return additive[a] > additive[b]; });
      for (uint32_t slot = 0; slot < params_.additive && slot < additive_order.size(); ++slot) {
        taken[additive_order[slot]] = true;
        queue_.push_back(pool[additive_order[slot]]);
      }
    }
    // The next untaken point of `ranked` from `cursor` on; with `apart` (the global
    // slots of the batch's second half, when this batch and the points still out come
    // to batch_apart_window), the first at least batch_apart knobs from every point of
    // this batch and every point still being measured, where the ranking has one.
    auto far_from_pending = [&](const Point& p) {
      auto far = [&](const Point& q) { return KnobsApart(p, q) >= params_.batch_apart; };
      return std::all_of(queue_.begin(), queue_.end(), far) && std::all_of(in_flight_.begin(), in_flight_.end(), far);
    };
    // Points proposed without results once this batch is out (Refill runs on an empty queue).
    const bool spread = params_.batch_apart > 0 && in_flight_.size() + params_.batch >= params_.batch_apart_window;
    auto pick = [&](const std::vector<size_t>& ranked, size_t& cursor, bool apart) -> std::optional<size_t> {
      while (cursor < ranked.size() && taken[ranked[cursor]]) ++cursor;
      if (cursor >= ranked.size()) return std::nullopt;
      if (apart && spread)
        for (size_t j = cursor; j < ranked.size(); ++j)
          if (!taken[ranked[j]] && far_from_pending(pool[ranked[j]])) return ranked[j];
      return ranked[cursor];
    };
    size_t next = 0, next_local = 0;
    const uint32_t local_slots = static_cast<uint32_t>(std::lround(params_.local * params_.batch));
    for (uint32_t slot = static_cast<uint32_t>(queue_.size()); slot < local_slots; ++slot) {
      const std::optional<size_t> i = pick(local_order, next_local, false);
      if (!i) break;
      taken[*i] = true;
      queue_.push_back(pool[*i]);
    }
    for (uint32_t slot = static_cast<uint32_t>(queue_.size()); slot < params_.batch && next < order.size(); ++slot) {
      if (UniformUnit(sampler_.rng()) < params_.exploration) {
        // Exploration: a random unseen point (falls through to the model when none).
        std::optional<Point> random;
        for (int attempt = 0; attempt < 64 && !random; ++attempt) {
          random = sampler_.Next();
          if (!random) break;
          if (!Acceptable(*random)) random.reset();
        }
        if (random) {
          queue_.push_back(std::move(*random));
          continue;
        }
      }
      const std::optional<size_t> i = pick(order, next, queue_.size() >= params_.batch / 2);
      if (!i) break;
      taken[*i] = true;
      queue_.push_back(pool[*i]);
    }
  }

  // An additive model of the space: per knob option, the mean relative score of the
  // results with that option, shrunk towards the overall mean (one pseudo-result), plus
  // an optimism bonus additive_bonus / sqrt(1 + results with it) for rarely tried
  // options. A point scores the sum over its knobs. Knob effects that hold whatever the
  // other knobs are (a lowering, an inner tile) are what this finds from few results.
  std::vector<double> AdditiveScores(const std::vector<Point>& pool, const std::vector<const Sample*>& training,
                                     double best) {
    const size_t knobs = space().knobs.size();
    std::vector<std::vector<double>> sum(knobs), count(knobs);
    for (size_t k = 0; k < knobs; ++k) {
      sum[k].assign(space().knobs[k].options.size(), 0.0);
      count[k].assign(space().knobs[k].options.size(), 0.0);
    }
    double total = 0;
    for (const Sample* s : training) {
      const double label = best > 0 ? s->score / best : 0.0;
      total += label;
      for (size_t k = 0; k < knobs; ++k) sum[k][s->point[k]] += label, count[k][s->point[k]] += 1;
    }
    const double mean = training.empty() ? 0.0 : total / training.size();
    std::vector<std::vector<double>> effect(knobs);
    for (size_t k = 0; k < knobs; ++k)
      for (size_t o = 0; o < sum[k].size(); ++o)
        effect[k].push_back((sum[k][o] + mean) / (count[k][o] + 1) +
                            params_.additive_bonus / std::sqrt(1.0 + count[k][o]));
    std::vector<double> scores(pool.size(), 0.0);
    for (size_t i = 0; i < pool.size(); ++i)
      for (size_t k = 0; k < knobs; ++k) scores[i] += effect[k][pool[i][k]];
    return scores;
  }

  // Without a model the search still proceeds, at random; say so once.
  void Disable(const absl::Status& status) {
    if (!warned_) fprintf(stderr, "mtune search model: %s; proposing at random\n", status.ToString().c_str());
    warned_ = true;
  }

  ModelParams params_;
  uint32_t initial_random_;
  RandomSampler sampler_;
  const uint64_t max_rejections_;
  const FeatureFn features_;
  const std::function<double(const Point&)> estimate_;
  GbtEnsemble ensemble_;
  std::vector<Sample> observed_;
  std::vector<PriorSample> prior_;
  uint64_t ok_count_ = 0;
  std::deque<Point> queue_;
  // Proposed and not yet observed (a worker pool's window).
  absl::flat_hash_set<Point> in_flight_;
  absl::flat_hash_map<Point, std::vector<float>> feature_cache_;
  bool warned_ = false;
  bool designed_ = false;
};

}  // namespace

std::unique_ptr<SearchAlgorithm> MakeModelSearch(const Space& space, const SearchOptions& options) {
  return std::make_unique<ModelSearch>(space, options);
}

}  // namespace mtune::search
