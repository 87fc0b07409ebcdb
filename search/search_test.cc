#include "search/search.h"

#include <chrono>
#include <map>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "search/random.h"

namespace mtune::search {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 3 x 4 x 5 = 60 points.
Space SmallSpace() {
  return Space{{{"a", {"0", "1", "2"}},
                {"b", {"0", "1", "2", "3"}},
                {"c", {"0", "1", "2", "3", "4"}}}};
}

// 10^20 points: far beyond what may be materialised.
Space HugeSpace() {
  Space space;
  for (int i = 0; i < 20; ++i) {
    Knob knob{"k" + std::to_string(i), {}};
    for (int j = 0; j < 10; ++j) knob.options.push_back(std::to_string(j));
    space.knobs.push_back(knob);
  }
  return space;
}

std::unique_ptr<SearchAlgorithm> Make(std::string_view name, const Space& space,
                                      const SearchOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<SearchAlgorithm>> search = MakeSearch(name, space, options);
  EXPECT_TRUE(search.ok()) << search.status();
  return search.ok() ? std::move(*search) : nullptr;
}

// Proposes in batches of `batch` until the algorithm runs dry (or `cap` points).
std::vector<Point> Drain(SearchAlgorithm& search, size_t batch, size_t cap = 1'000'000) {
  std::vector<Point> all;
  while (all.size() < cap) {
    std::vector<Point> got = search.Propose(batch);
    EXPECT_LE(got.size(), batch);
    if (got.empty()) break;
    all.insert(all.end(), got.begin(), got.end());
  }
  return all;
}

class EveryAlgorithm : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryAlgorithm, CoversTheWholeSpaceExactlyOnce) {
  auto search = Make(GetParam(), SmallSpace());
  ASSERT_NE(search, nullptr);
  EXPECT_EQ(search->name(), GetParam());
  const std::vector<Point> all = Drain(*search, 7);
  EXPECT_EQ(all.size(), 60u);
  EXPECT_EQ(std::set<Point>(all.begin(), all.end()).size(), 60u);
  for (const Point& p : all) EXPECT_TRUE(ValidatePoint(SmallSpace(), p).ok());
  EXPECT_TRUE(search->Propose(5).empty()) << "stays exhausted";
}

TEST_P(EveryAlgorithm, PrunesInvalidPointsWithoutProposingThem) {
  SearchOptions options;
  int checks = 0;
  // Constraint "a <= b" keeps (4 + 3 + 2) (a, b) pairs times 5 values of c = 45 points.
  options.is_valid = [&](const Point& p) {
    ++checks;
    return p[0] <= p[1];
  };
  auto search = Make(GetParam(), SmallSpace(), options);
  const std::vector<Point> all = Drain(*search, 10);
  EXPECT_EQ(all.size(), 45u);
  for (const Point& p : all) EXPECT_LE(p[0], p[1]) << FormatPoint(SmallSpace(), p);
  EXPECT_GE(checks, 60);
}

TEST_P(EveryAlgorithm, SeedsComeFirstUnlessInvalidOrMeasured) {
  SearchOptions options;
  options.is_valid = [](const Point& p) { return p[2] != 4; };
  options.seeds_first = {{2, 3, 1}, {0, 0, 4} /* invalid */, {1, 1, 1} /* measured */,
                         {0, 2, 0}, {2, 3, 1} /* repeated */};
  options.already_measured = {{1, 1, 1}, {0, 0, 0}};
  auto search = Make(GetParam(), SmallSpace(), options);
  EXPECT_THAT(search->Propose(1), ElementsAre(Point{2, 3, 1}));
  const std::vector<Point> rest = Drain(*search, 4);
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.front(), (Point{0, 2, 0}));
  // 60 points - 12 with c == 4 - 2 measured - 1 proposed first.
  EXPECT_EQ(rest.size(), 45u);
  const std::set<Point> unique(rest.begin(), rest.end());
  EXPECT_EQ(unique.size(), rest.size());
  EXPECT_FALSE(unique.contains(Point{2, 3, 1}));
  EXPECT_FALSE(unique.contains(Point{1, 1, 1}));
  EXPECT_FALSE(unique.contains(Point{0, 0, 0}));
}

TEST_P(EveryAlgorithm, ObservedPointsAreNotProposedAgain) {
  auto search = Make(GetParam(), SmallSpace());
  const std::vector<Observation> earlier = {{{0, 0, 0}, true, 5.0}, {{1, 2, 3}, false, 0.0}};
  search->Observe(earlier);
  const std::vector<Point> all = Drain(*search, 16);
  EXPECT_EQ(all.size(), 58u);
  for (const Point& p : all) {
    EXPECT_NE(p, (Point{0, 0, 0}));
    EXPECT_NE(p, (Point{1, 2, 3}));
  }
}

TEST_P(EveryAlgorithm, BestSoFarIsMonotoneAndIgnoresFailures) {
  auto search = Make(GetParam(), SmallSpace());
  EXPECT_FALSE(search->Best().has_value());
  double previous = -1;
  const double scores[] = {3.0, 10.0, 7.0, 100.0, 1.0, 50.0};
  size_t i = 0;
  for (const Point& p : Drain(*search, 6, 6)) {
    const bool ok = i != 3;  // The 100 GFLOP/s candidate failed verification: no best.
    const Observation observation{p, ok, scores[i++]};
    search->Observe({&observation, 1});
    ASSERT_TRUE(search->Best().has_value());
    EXPECT_GE(search->Best()->score, previous);
    previous = search->Best()->score;
  }
  EXPECT_EQ(search->Best()->score, 50.0);
  EXPECT_TRUE(search->Best()->ok);
}

TEST_P(EveryAlgorithm, SpaceWithoutKnobsHasOneCandidate) {
  auto search = Make(GetParam(), Space{});
  EXPECT_THAT(search->Propose(3), ElementsAre(Point{}));
  EXPECT_TRUE(search->Propose(3).empty());
}

TEST_P(EveryAlgorithm, EmptyKnobMeansNothingToPropose) {
  auto search = Make(GetParam(), Space{{{"a", {"1", "2"}}, {"b", {}}}});
  EXPECT_TRUE(search->Propose(3).empty());
}

TEST_P(EveryAlgorithm, HugeSpaceProposesDistinctPointsQuickly) {
  auto search = Make(GetParam(), HugeSpace());
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Point> all = Drain(*search, 500, 5000);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(all.size(), 5000u);
  EXPECT_EQ(std::set<Point>(all.begin(), all.end()).size(), 5000u);
}

INSTANTIATE_TEST_SUITE_P(Search, EveryAlgorithm,
                         ::testing::Values("annealing", "exhaustive", "genetic", "model", "random"),
                         [](const auto& info) { return info.param; });

TEST(Exhaustive, IsLexicographic) {
  auto search = Make("exhaustive", Space{{{"x", {"a", "b"}}, {"y", {"p", "q", "r"}}}});
  EXPECT_THAT(search->Propose(100),
              ElementsAre(Point{0, 0}, Point{0, 1}, Point{0, 2}, Point{1, 0}, Point{1, 1},
                          Point{1, 2}));
}

TEST(Random, SameSeedSameOrderOtherSeedOtherOrder) {
  for (const Space& space : {SmallSpace(), HugeSpace()}) {
    SearchOptions seven{.seed = 7};
    SearchOptions eight{.seed = 8};
    const std::vector<Point> a = Drain(*Make("random", space, seven), 9, 50);
    const std::vector<Point> b = Drain(*Make("random", space, seven), 9, 50);
    const std::vector<Point> c = Drain(*Make("random", space, eight), 9, 50);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
  }
}

TEST(Random, BatchSizeDoesNotChangeTheOrder) {
  const std::vector<Point> ones = Drain(*Make("random", SmallSpace(), {.seed = 3}), 1);
  const std::vector<Point> tens = Drain(*Make("random", SmallSpace(), {.seed = 3}), 10);
  EXPECT_EQ(ones, tens);
}

TEST(Random, IsNotTheExhaustiveOrder) {
  const std::vector<Point> random = Drain(*Make("random", SmallSpace(), {.seed = 1}), 60);
  const std::vector<Point> ordered = Drain(*Make("exhaustive", SmallSpace()), 60);
  EXPECT_NE(random, ordered);
}

TEST(Random, FirstPickIsRoughlyUniform) {
  // Over many seeds, each of 4 points should be first about a quarter of the time.
  const Space space{{{"x", {"a", "b", "c", "d"}}}};
  std::map<Point, int> first;
  for (uint64_t seed = 0; seed < 4000; ++seed) {
    ++first[Make("random", space, {.seed = seed})->Propose(1).at(0)];
  }
  ASSERT_EQ(first.size(), 4u);
  for (const auto& [point, count] : first) {
    EXPECT_GT(count, 850) << point[0];
    EXPECT_LT(count, 1150) << point[0];
  }
}

TEST(Random, SampledSpaceGivesUpWhenNothingValidIsLeft) {
  SearchOptions options;
  options.max_consecutive_rejections = 2000;
  // Only 10 valid points among 10^20: all but the first knob must be zero.
  options.is_valid = [](const Point& p) {
    for (size_t i = 1; i < p.size(); ++i) {
      if (p[i] != 0) return false;
    }
    return true;
  };
  options.seeds_first = {Point(20, 0)};
  auto search = Make("random", HugeSpace(), options);
  // The seed is found; random draws almost never hit the rest, so the search gives up
  // instead of spinning forever.
  const std::vector<Point> all = Drain(*search, 5);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), Point(20, 0));
  EXPECT_LE(all.size(), 10u);
  EXPECT_TRUE(search->Propose(5).empty());
}

TEST(Random, ShuffleLimitBoundaryStillCoversEverything) {
  // Just above the shuffle limit the sampler takes over; with a generous rejection
  // budget it still proposes only distinct points.
  Space space{{{"x", {}}, {"y", {}}}};
  for (int i = 0; i < 1025; ++i) space.knobs[0].options.push_back(std::to_string(i));
  for (int i = 0; i < 1024; ++i) space.knobs[1].options.push_back(std::to_string(i));
  ASSERT_GT(SpaceSize(space), kRandomShuffleLimit);
  const std::vector<Point> some = Drain(*Make("random", space, {.seed = 5}), 1000, 20000);
  EXPECT_EQ(some.size(), 20000u);
  EXPECT_EQ(std::set<Point>(some.begin(), some.end()).size(), 20000u);
}

TEST(MakeSearch, UnknownNameListsTheValidOnes) {
  absl::StatusOr<std::unique_ptr<SearchAlgorithm>> search =
      MakeSearch("bayesian", SmallSpace(), {});
  ASSERT_FALSE(search.ok());
  EXPECT_EQ(search.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(search.status().message(), HasSubstr("bayesian"));
  EXPECT_THAT(search.status().message(),
              HasSubstr("annealing, exhaustive, genetic, model, random"));
  EXPECT_THAT(SearchAlgorithmNames(),
              ElementsAre("annealing", "exhaustive", "genetic", "model", "random"));
}

TEST(MakeSearch, RejectsPointsThatDoNotFit) {
  EXPECT_THAT(MakeSearch("random", SmallSpace(), {.seeds_first = {{0, 0}}}).status().message(),
              HasSubstr("seeds_first[0]"));
  EXPECT_THAT(
      MakeSearch("exhaustive", SmallSpace(), {.already_measured = {{0, 0, 0}, {9, 0, 0}}})
          .status()
          .message(),
      HasSubstr("already_measured[1]"));
  EXPECT_FALSE(MakeSearch("exhaustive", Space{{{"a", {"1"}}, {"a", {"2"}}}}, {}).ok());
}

}  // namespace
}  // namespace mtune::search
