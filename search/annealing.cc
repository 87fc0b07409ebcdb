#include "search/annealing.h"

#include <cmath>

#include "search/sampler.h"
#include "search/search_base.h"

namespace mtune::search {
namespace {

// Neighbours tried per proposal before a random jump: around a well-explored point
// most neighbours are already measured.
constexpr int kNeighbourAttempts = 64;
// Share of moves that jump a knob to any option instead of an adjacent one; options
// are ordered (tile sizes ascend), so adjacent moves are the usual small step.
constexpr double kJumpShare = 0.25;

// The walk proposes neighbours of the current point; each result is a proposed move
// from it (several can be in flight at once), accepted by the Metropolis rule. The
// loss is relative to the best score, so one temperature suits any GFLOP/s scale.
class AnnealingSearch final : public SearchBase {
 public:
  AnnealingSearch(const Space& space, const SearchOptions& options)
      : SearchBase("annealing", space, options),
        params_(options.annealing),
        sampler_(this->space(), options.seed),
        max_rejections_(options.max_consecutive_rejections),
        temperature_(params_.initial_temperature) {}

  void Observe(std::span<const Observation> results) override {
    SearchBase::Observe(results);
    for (const Observation& r : results) {
      if (!ValidatePoint(space(), r.point).ok()) continue;
      temperature_ *= params_.cooling;
      const bool ok = r.ok && std::isfinite(r.score) && r.score > 0;
      if (ok && (!current_ || r.score > current_score_ || Accept(r.score))) {
        current_ = r.point;
        current_score_ = r.score;
        stuck_ = 0;
      } else if (current_ && ++stuck_ >= params_.restart_after) {
        // Wandered too long without moving: go back to the best point found.
        current_ = Best()->point;
        current_score_ = Best()->score;
        stuck_ = 0;
      }
    }
  }

 protected:
  std::optional<Point> NextCandidate() override {
    if (current_) {
      for (int attempt = 0; attempt < kNeighbourAttempts; ++attempt) {
        Point next = Neighbour(*current_, attempt >= kNeighbourAttempts / 2);
        if (Acceptable(next)) return next;
      }
    }
    return sampler_.Next();
  }

  bool GiveUp(uint64_t consecutive) const override {
    return !sampler_.permutes() && consecutive >= max_rejections_;
  }

 private:
  bool Accept(double score) {
    const double best = Best() ? Best()->score : current_score_;
    const double loss = (current_score_ - score) / best;
    const double draw = UniformUnit(sampler_.rng());
    return temperature_ > 0 && draw < std::exp(-loss / temperature_);
  }

  // Moves one knob (two when `wide`, once adjacent moves are used up).
  Point Neighbour(const Point& from, bool wide) {
    Point next = from;
    const int moves = wide ? 2 : 1;
    for (int m = 0; m < moves; ++m) {
      const size_t knob = UniformBelow(sampler_.rng(), next.size());
      const uint32_t options = static_cast<uint32_t>(space().knobs[knob].options.size());
      if (options < 2) continue;
      if (UniformUnit(sampler_.rng()) < kJumpShare) {
        next[knob] = static_cast<uint32_t>(UniformBelow(sampler_.rng(), options));
      } else if (next[knob] == 0) {
        next[knob] = 1;
      } else if (next[knob] + 1 == options) {
        next[knob] = options - 2;
      } else {
        next[knob] += UniformBelow(sampler_.rng(), 2) == 0 ? -1 : 1;
      }
    }
    return next;
  }

  const AnnealingParams params_;
  RandomSampler sampler_;
  const uint64_t max_rejections_;
  double temperature_;
  std::optional<Point> current_;
  double current_score_ = 0;
  uint32_t stuck_ = 0;
};

}  // namespace

std::unique_ptr<SearchAlgorithm> MakeAnnealingSearch(const Space& space,
                                                     const SearchOptions& options) {
  return std::make_unique<AnnealingSearch>(space, options);
}

}  // namespace mtune::search
