#include "strategies/smt_constraints.h"

#include <map>

#include "llvm/ADT/DenseMap.h"
#include "absl/strings/str_cat.h"
#include "mlir/Dialect/SMT/IR/SMTOps.h"
#include "mlir/Dialect/Transform/SMTExtension/SMTExtensionOps.h"
#include "mlir/Dialect/Transform/TuneExtension/TuneExtensionOps.h"
#include "strategies/mlir_support.h"

namespace mtune::strategies {
namespace {

using Op = ParamConstraint::Op;

// SMT ops evaluated from their operands alone, in operand order.
const std::map<std::string, Op>& OperandOps() {
  static const auto* ops = new std::map<std::string, Op>{
      {"smt.int.add", Op::kAdd}, {"smt.int.sub", Op::kSub},   {"smt.int.mul", Op::kMul},
      {"smt.int.div", Op::kDiv}, {"smt.int.mod", Op::kMod},   {"smt.int.abs", Op::kAbs},
      {"smt.eq", Op::kEq},       {"smt.distinct", Op::kDistinct}, {"smt.and", Op::kAnd},
      {"smt.or", Op::kOr},       {"smt.xor", Op::kXor},       {"smt.not", Op::kNot},
      {"smt.implies", Op::kImplies}, {"smt.ite", Op::kIte},
  };
  return *ops;
}

Op CmpOp(mlir::smt::IntPredicate pred) {
  switch (pred) {
    case mlir::smt::IntPredicate::lt: return Op::kLt;
    case mlir::smt::IntPredicate::le: return Op::kLe;
    case mlir::smt::IntPredicate::gt: return Op::kGt;
    case mlir::smt::IntPredicate::ge: return Op::kGe;
  }
  return Op::kEq;  // unreachable: the enum has four cases
}

// Value of a symbol named by `smt.declare_fun`: a problem dimension, elem_bytes
// (bytes per input element), acc_bytes (bytes per accumulator element: 4 for bf16
// inputs, which accumulate in f32), or the target's vector_registers / vector_bytes /
// broadcast_registers.
absl::StatusOr<int64_t> SymbolValue(llvm::StringRef name, const Problem& problem,
                                    const VectorRegisters& registers) {
  if (name == "vector_registers") return registers.count;
  if (name == "vector_bytes") return registers.bytes;
  if (name == "broadcast_registers") return registers.BroadcastRegisters();
  if (name == "elem_bytes" || name == "acc_bytes") {
    OperandShape element{.element_type =
                             name == "elem_bytes" ? problem.element_type : problem.AccumulatorType()};
    return element.ElementBytes();
  }
  if (int64_t dim = problem.Dim(absl::string_view(name.data(), name.size())); dim > 0) return dim;
  return absl::InvalidArgumentError(absl::StrCat(
      "smt.declare_fun \"", name.str(), "\" names neither a dimension of ", problem.family,
      " nor elem_bytes / acc_bytes / vector_registers / vector_bytes / broadcast_registers"));
}

}  // namespace

absl::StatusOr<ParamConstraint> CompileParamConstraint(mlir::Operation* op, const Problem& problem,
                                                       const VectorRegisters& registers) {
  auto constrain = llvm::cast<mlir::transform::smt::ConstrainParamsOp>(op);
  ParamConstraint program;
  program.where = OpLocation(op);
  auto fail = [&](mlir::Operation* at, const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("constrain_params at ", program.where, ": ", why, " (at ", OpLocation(at), ")"));
  };
  if (op->getNumResults() != 0)
    return fail(op, "mtune evaluates constraints as filters; yielding results is not supported");
  if (mlir::Attribute rule = op->getAttr("mtune.rule")) {
    auto text = llvm::dyn_cast<mlir::StringAttr>(rule);
    if (!text || text.getValue().empty()) return fail(op, "mtune.rule must be a non-empty string");
    program.rule = text.getValue().str();
  }

  llvm::DenseMap<mlir::Value, int> node_of;
  mlir::Block& body = constrain.getBody().front();
  for (auto [param, arg] : llvm::zip(constrain.getParams(), body.getArguments())) {
    auto knob = param.getDefiningOp<mlir::transform::tune::KnobOp>();
    if (!knob) return fail(op, "every operand must be the result of a transform.tune.knob");
    if (!llvm::isa<mlir::smt::IntType>(arg.getType()))
      return fail(op, "every block argument must be !smt.int");
    node_of[arg] = static_cast<int>(program.nodes.size());
    program.nodes.push_back({.op = Op::kKnob, .knob = knob.getName().str()});
  }

  for (mlir::Operation& inner : body) {
    ParamConstraint::Node node;
    const std::string name = inner.getName().getStringRef().str();
    for (mlir::Value operand : inner.getOperands()) {
      auto it = node_of.find(operand);
      if (it == node_of.end()) return fail(&inner, "operand defined outside the constraint");
      node.args.push_back(it->second);
    }
    if (auto c = llvm::dyn_cast<mlir::smt::IntConstantOp>(inner)) {
      if (c.getValue().getSignificantBits() > 64) return fail(&inner, "constant exceeds 64 bits");
      node.op = Op::kConst;
      node.value = c.getValue().getSExtValue();
    } else if (auto b = llvm::dyn_cast<mlir::smt::BoolConstantOp>(inner)) {
      node.op = Op::kConst;
      node.value = b.getValue() ? 1 : 0;
    } else if (auto fun = llvm::dyn_cast<mlir::smt::DeclareFunOp>(inner)) {
      if (!llvm::isa<mlir::smt::IntType>(fun.getType()) || !fun.getNamePrefix())
        return fail(&inner, "declare_fun must be a named !smt.int (a problem dimension)");
      auto value = SymbolValue(*fun.getNamePrefix(), problem, registers);
      if (!value.ok()) return fail(&inner, std::string(value.status().message()));
      node.op = Op::kConst;
      node.value = *value;
    } else if (auto cmp = llvm::dyn_cast<mlir::smt::IntCmpOp>(inner)) {
      node.op = CmpOp(cmp.getPred());
    } else if (llvm::isa<mlir::smt::AssertOp>(inner)) {
      program.asserts.push_back(node.args.front());
      continue;
    } else if (llvm::isa<mlir::smt::YieldOp>(inner)) {
      if (inner.getNumOperands() != 0) return fail(&inner, "yielding values is not supported");
      continue;
    } else if (auto known = OperandOps().find(name); known != OperandOps().end()) {
      node.op = known->second;
    } else {
      return fail(&inner, "'" + name + "' is not evaluated by mtune (integer arithmetic, "
                          "comparisons, booleans, ite, constants, declare_fun and assert are)");
    }
    if (inner.getNumResults() != 1) return fail(&inner, "expected one result");
    node_of[inner.getResult(0)] = static_cast<int>(program.nodes.size());
    program.nodes.push_back(std::move(node));
  }
  if (program.asserts.empty()) return fail(op, "the constraint asserts nothing");
  return program;
}

}  // namespace mtune::strategies
