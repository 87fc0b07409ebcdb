// Constraints between knobs, declared in a template with upstream
// `transform.smt.constrain_params` and evaluated by mtune (the transform
// interpreter itself always fails on that op; mtune removes it when instantiating).
//
// A constraint is compiled once per problem and target into a small straight-line program over
// 64-bit integers and booleans: the region's block arguments are the knob values,
// `smt.declare_fun "NAME" : !smt.int` names a problem dimension ("m", "k", "ow", ...)
// or "elem_bytes" / "acc_bytes" (bytes per input / accumulator element) or the
// target's "vector_registers" / "vector_bytes" / "broadcast_registers" (vector_registers.h)
// and becomes a constant, and every `smt.assert` must hold. No MLIR here: the coordinator
// and search evaluate it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strategies/candidate.h"

namespace mtune::strategies {

struct ParamConstraint {
  enum class Op {
    kConst, kKnob,                                        // leaves
    kAdd, kSub, kMul, kDiv, kMod, kAbs,                   // integers
    kLt, kLe, kGt, kGe, kEq, kDistinct,                   // comparisons
    kAnd, kOr, kXor, kNot, kImplies, kIte,                // booleans and if-then-else
  };
  struct Node {
    Op op = Op::kConst;
    std::vector<int> args;  // indices of earlier nodes
    int64_t value = 0;      // kConst
    std::string knob;       // kKnob
  };
  std::vector<Node> nodes;
  // Nodes that must evaluate to true.
  std::vector<int> asserts;
  // Where the constraint is declared, for messages ("template:31:5").
  std::string where;
  // What it requires, in words, from the op's `mtune.rule` string ("bands divide m");
  // empty when the template gives none. Messages about a violation quote it.
  std::string rule;

  // The knobs the constraint reads, in first-use order.
  std::vector<std::string> Knobs() const;
  // True when every assertion holds for `values`. A missing or non-integer knob
  // value, a division by zero or an integer overflow makes it false: such a
  // candidate cannot be shown valid, so it is never compiled.
  bool Holds(const KnobValues& values) const;
};

}  // namespace mtune::strategies
