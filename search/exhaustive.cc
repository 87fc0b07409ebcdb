#include "search/exhaustive.h"

#include "search/search_base.h"

namespace mtune::search {
namespace {

// An odometer over the knobs; needs no index arithmetic, so it also walks spaces
// whose size overflows 64 bits.
class ExhaustiveSearch final : public SearchBase {
 public:
  ExhaustiveSearch(const Space& space, const SearchOptions& options)
      : SearchBase("exhaustive", space, options),
        next_(space.knobs.size(), 0),
        done_(SpaceSize(space) == 0) {}

 protected:
  std::optional<Point> NextCandidate() override {
    if (done_) return std::nullopt;
    Point current = next_;
    done_ = !Advance();
    return current;
  }

 private:
  // Steps `next_` to its successor; false after the last point.
  bool Advance() {
    for (size_t i = next_.size(); i-- > 0;) {
      if (++next_[i] < space().knobs[i].options.size()) return true;
      next_[i] = 0;
    }
    return false;
  }

  Point next_;
  bool done_;
};

}  // namespace

std::unique_ptr<SearchAlgorithm> MakeExhaustiveSearch(const Space& space,
                                                      const SearchOptions& options) {
  return std::make_unique<ExhaustiveSearch>(space, options);
}

}  // namespace mtune::search
