#include "search/random.h"

#include "search/sampler.h"
#include "search/search_base.h"

namespace mtune::search {
namespace {

// Small spaces come out as a permutation; large ones are sampled per knob, the base
// rejects repeats and gives up after a long run of rejections, because then almost
// everything valid has been drawn (or nothing valid is left to find).
class RandomSearch final : public SearchBase {
 public:
  RandomSearch(const Space& space, const SearchOptions& options)
      : SearchBase("random", space, options),
        sampler_(this->space(), options.seed, kRandomShuffleLimit),
        max_rejections_(options.max_consecutive_rejections) {}

 protected:
  std::optional<Point> NextCandidate() override { return sampler_.Next(); }
  bool GiveUp(uint64_t consecutive) const override {
    return !sampler_.permutes() && consecutive >= max_rejections_;
  }

 private:
  RandomSampler sampler_;
  const uint64_t max_rejections_;
};

}  // namespace

std::unique_ptr<SearchAlgorithm> MakeRandomSearch(const Space& space,
                                                  const SearchOptions& options) {
  return std::make_unique<RandomSearch>(space, options);
}

}  // namespace mtune::search
