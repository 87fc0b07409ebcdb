#include "strategies/param_constraint.h"

#include "gtest/gtest.h"

namespace mtune::strategies {
namespace {

using Op = ParamConstraint::Op;

// assert(op(knob "x", const c)).
ParamConstraint Compare(Op op, int64_t c, Op outer = Op::kEq, int64_t expect = 0) {
  ParamConstraint p;
  p.nodes.push_back({.op = Op::kKnob, .knob = "x"});
  p.nodes.push_back({.op = Op::kConst, .value = c});
  p.nodes.push_back({.op = op, .args = {0, 1}});
  p.nodes.push_back({.op = Op::kConst, .value = expect});
  p.nodes.push_back({.op = outer, .args = {2, 3}});
  p.asserts = {4};
  return p;
}

TEST(ParamConstraint, ModAndDivAreEuclideanLikeSmtLib) {
  // (-7 mod 3) = 2 and (-7 div 3) = -3 in SMT-LIB; C++ would give -1 and -2.
  EXPECT_TRUE(Compare(Op::kMod, 3, Op::kEq, 2).Holds({{"x", "-7"}}));
  EXPECT_TRUE(Compare(Op::kDiv, 3, Op::kEq, -3).Holds({{"x", "-7"}}));
  EXPECT_TRUE(Compare(Op::kMod, 3, Op::kEq, 1).Holds({{"x", "7"}}));
}

TEST(ParamConstraint, UnprovableCandidatesDoNotHold) {
  EXPECT_FALSE(Compare(Op::kMod, 0).Holds({{"x", "4"}}));           // division by zero
  EXPECT_FALSE(Compare(Op::kMul, 4).Holds({{"x", "4611686018427387904"}}));  // overflow
  EXPECT_FALSE(Compare(Op::kAdd, 1).Holds({}));                     // no value for x
  EXPECT_FALSE(Compare(Op::kAdd, 1).Holds({{"x", "outerproduct"}}));  // not an integer
  EXPECT_TRUE(Compare(Op::kAdd, 1, Op::kEq, 5).Holds({{"x", "4"}}));
}

TEST(ParamConstraint, KnobsAreListedOnce) {
  ParamConstraint p = Compare(Op::kAdd, 1);
  p.nodes.push_back({.op = Op::kKnob, .knob = "x"});
  EXPECT_EQ(p.Knobs(), std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace mtune::strategies
