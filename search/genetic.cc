#include "search/genetic.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <iterator>

#include "search/estimated_start.h"
#include "search/sampler.h"
#include "search/search_base.h"

namespace mtune::search {
namespace {

// Children tried per proposal before falling back to a random point: in a crowded
// neighbourhood most children are duplicates or break constraints.
constexpr int kChildAttempts = 64;

// Points the estimated first generation is chosen among in spaces larger than this
// (a random sample of it), as ModelParams::pool does for the model's.
constexpr uint32_t kEstimatePool = 4096;

// Results arrive asynchronously (a worker pool keeps several candidates in flight), so
// a generation is "the last `population` results" rather than a lock-step batch:
// the parents are those plus the elites, and every proposal is a fresh child of them.
// Until the first generation is measured, children are random points, or with an
// estimate the points it rates best (GeneticParams::estimate_top) and then the next by
// its ranking (GeneticParams::estimate_fallback), as are the points breeding cannot give.
class GeneticSearch final : public SearchBase {
 public:
  GeneticSearch(const Space& space, const SearchOptions& options)
      : SearchBase("genetic", space, options),
        params_(options.genetic),
        sampler_(this->space(), options.seed),
        max_rejections_(options.max_consecutive_rejections),
        estimate_(options.estimate) {
    params_.population = std::max<uint32_t>(params_.population, 3);
    params_.elites = std::min(params_.elites, params_.population);
  }

  void Observe(std::span<const Observation> results) override {
    SearchBase::Observe(results);
    for (const Observation& r : results) {
      if (!ValidatePoint(space(), r.point).ok()) continue;
      const double fitness = r.ok && std::isfinite(r.score) && r.score > 0 ? r.score : 0.0;
      generation_.push_back({r.point, fitness});
      ++observed_;
      if (generation_.size() > params_.population) generation_.pop_front();
      // Elites: the best ever, best first; first come wins ties, so replays agree.
      auto pos = std::find_if(elites_.begin(), elites_.end(),
                              [&](const Member& m) { return m.fitness < fitness; });
      elites_.insert(pos, {r.point, fitness});
      if (elites_.size() > params_.elites) elites_.pop_back();
    }
  }

 protected:
  std::optional<Point> NextCandidate() override {
    const bool bred = observed_ >= params_.population;
    if (bred && params_.generations != 0 &&
        observed_ / params_.population > params_.generations)
      return std::nullopt;
    if (!bred && !started_) {
      started_ = true;
      if (estimate_ && params_.estimate_top > 0) {
        std::vector<Point> start =
            EstimatedStart(space(), estimate_, params_.estimate_top, params_.population, kEstimatePool,
                           [this](const Point& p) { return Acceptable(p); }, sampler_.rng());
        start_.assign(std::make_move_iterator(start.begin()), std::make_move_iterator(start.end()));
      }
    }
    while (!bred && !start_.empty()) {
      Point next = std::move(start_.front());
      start_.pop_front();
      if (Acceptable(next)) return next;
    }
    if (bred) {
      std::vector<const Member*> parents;
      for (const Member& m : generation_) parents.push_back(&m);
      for (const Member& m : elites_) parents.push_back(&m);
      for (int attempt = 0; attempt < kChildAttempts; ++attempt) {
        Point child = Child(parents);
        if (Acceptable(child)) return child;
      }
    }
    return Unbred();
  }

  bool GiveUp(uint64_t consecutive) const override {
    return !sampler_.permutes() && consecutive >= max_rejections_;
  }

 private:
  struct Member {
    Point point;
    double fitness;
  };

  // Fitness-proportional (roulette wheel) selection on fitness^selection_power;
  // uniform when nothing is fit.
  const Member& Select(const std::vector<const Member*>& parents) {
    auto weight = [&](const Member* m) { return std::pow(m->fitness, params_.selection_power); };
    double total = 0;
    for (const Member* m : parents) total += weight(m);
    if (total <= 0) return *parents[UniformBelow(sampler_.rng(), parents.size())];
    double spin = UniformUnit(sampler_.rng()) * total;
    for (const Member* m : parents) {
      spin -= weight(m);
      if (spin < 0) return *m;
    }
    return *parents.back();
  }

  // A point for when breeding gives nothing new (before the first generation without
  // an estimated start, or once the neighbourhood of the parents is spent): with an
  // estimate, a share estimate_fallback of them are the unseen points it rates best,
  // best first; the rest are random.
  std::optional<Point> Unbred() {
    if (estimate_ && params_.estimate_fallback > 0 && UniformUnit(sampler_.rng()) < params_.estimate_fallback) {
      if (!ranked_built_) {
        ranked_built_ = true;
        ranked_ = RankedByEstimate(space(), estimate_, kEstimatePool, [this](const Point& p) { return Acceptable(p); },
                                   sampler_.rng());
      }
      while (next_ranked_ < ranked_.size()) {
        const Point& p = ranked_[next_ranked_++];
        if (Acceptable(p)) return p;
      }
    }
    return sampler_.Next();
  }

  Point Child(const std::vector<const Member*>& parents) {
    const Member* three[3] = {&Select(parents), &Select(parents), &Select(parents)};
    Point child(space().knobs.size());
    for (size_t i = 0; i < child.size(); ++i) {
      child[i] = three[UniformBelow(sampler_.rng(), 3)]->point[i];
      const uint64_t options = space().knobs[i].options.size();
      if (options > 1 && UniformUnit(sampler_.rng()) < params_.mutation_rate) {
        // Any other option, uniformly.
        const uint32_t other = static_cast<uint32_t>(UniformBelow(sampler_.rng(), options - 1));
        child[i] = other >= child[i] ? other + 1 : other;
      }
    }
    return child;
  }

  GeneticParams params_;
  RandomSampler sampler_;
  const uint64_t max_rejections_;
  const std::function<double(const Point&)> estimate_;
  // The estimated first generation, not yet proposed; drawn on the first proposal.
  std::deque<Point> start_;
  bool started_ = false;
  // The estimate's ranking for Unbred(), built on its first use.
  std::vector<Point> ranked_;
  size_t next_ranked_ = 0;
  bool ranked_built_ = false;
  std::deque<Member> generation_;
  std::vector<Member> elites_;
  uint64_t observed_ = 0;
};

}  // namespace

std::unique_ptr<SearchAlgorithm> MakeGeneticSearch(const Space& space, const SearchOptions& options) {
  return std::make_unique<GeneticSearch>(space, options);
}

}  // namespace mtune::search
