#include "strategies/prefetch_reads.h"

#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "strategies/register_pass_once.h"

namespace mtune::strategies {
namespace {

// Locality 2 = prefetcht1 on x86: into the L2, not the L1. Why: a transpose beyond
// the L3 reads 32-64 input rows at once, which the hardware prefetchers do not
// follow; prefetching them into the L2 ran a standalone AVX-512 transpose at 1.2x
// (27-29 GB/s against 22-23, bench/HISTORY session 41), where prefetching into the
// L1 gained nothing (its 8 ways cannot hold lines of 32 rows 16 KiB apart).
constexpr uint32_t kLocalityL2 = 2;

// Recomputes values of one loop iteration for a later one: `Ahead(v)` is v with
// the loop's induction variable replaced by `later`, cloning (before the current
// insertion point) the pure ops between them. Values that do not depend on the
// induction variable are returned as they are.
class LaterIteration {
 public:
  LaterIteration(mlir::scf::ForOp loop, mlir::Value later, mlir::OpBuilder& builder)
      : loop_(loop), builder_(builder) {
    ahead_[loop.getInductionVar()] = later;
  }

  // Null where an op between v and the induction variable cannot be cloned.
  mlir::Value Ahead(mlir::Value v) {
    if (auto it = ahead_.find(v); it != ahead_.end()) return it->second;
    mlir::Operation* def = v.getDefiningOp();
    // Block arguments (inner induction variables) and values from outside the loop
    // stay as they are: they dominate every load in the loop.
    if (def == nullptr || !loop_->isProperAncestor(def)) return v;
    llvm::SmallVector<mlir::Value> operands;
    bool changed = false;
    for (mlir::Value operand : def->getOperands()) {
      mlir::Value later = Ahead(operand);
      if (!later) return nullptr;
      changed |= later != operand;
      operands.push_back(later);
    }
    mlir::Value result = v;
    if (changed) {
      if (!mlir::isPure(def) || def->getNumRegions() != 0) return nullptr;
      mlir::IRMapping mapping;
      mapping.map(def->getOperands(), operands);
      mlir::Operation* clone = builder_.clone(*def, mapping);
      result = clone->getResult(llvm::cast<mlir::OpResult>(v).getResultNumber());
    }
    ahead_[v] = result;
    return result;
  }

 private:
  mlir::scf::ForOp loop_;
  mlir::OpBuilder& builder_;
  llvm::DenseMap<mlir::Value, mlir::Value> ahead_;
};

class PrefetchReadsPass : public mlir::PassWrapper<PrefetchReadsPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrefetchReadsPass)

  llvm::StringRef getArgument() const final { return kPrefetchReadsPassName; }
  llvm::StringRef getDescription() const final {
    return "Prefetch into the L2 what the vector.loads of each scf.for marked "
           "mtune.prefetch_ahead = D read D iterations later";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::arith::ArithDialect, mlir::memref::MemRefDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> loops;
    getOperation()->walk([&](mlir::scf::ForOp loop) {
      if (loop->hasAttr(kPrefetchAheadAttr)) loops.push_back(loop);
    });
    bool failed = false;
    for (mlir::scf::ForOp loop : loops)
      if (mlir::failed(Prefetch(loop))) failed = true;
    if (failed) signalPassFailure();
  }

 private:
  static mlir::LogicalResult Prefetch(mlir::scf::ForOp loop) {
    auto ahead = llvm::dyn_cast<mlir::IntegerAttr>(loop->getAttr(kPrefetchAheadAttr));
    loop->removeAttr(kPrefetchAheadAttr);
    if (!ahead || ahead.getInt() < 0)
      return loop.emitError("mtune-prefetch-reads: ") << kPrefetchAheadAttr << " must be an integer >= 0";
    if (ahead.getInt() == 0) return mlir::success();
    mlir::Value iv = loop.getInductionVar();
    if (!iv.getType().isIndex()) return loop.emitError("mtune-prefetch-reads: needs an index-typed loop");

    // The reads: plain, masked (partial tiles) and transfer reads (a tile whose
    // size the rotation made dynamic keeps its transfers) of memrefs. A masked row
    // past the end prefetches an address past it, which a prefetch may do (it never
    // faults, and LLVM's prefetch takes any pointer).
    struct Read {
      mlir::Operation* op;
      mlir::Value base;
      mlir::ValueRange indices;
    };
    llvm::SmallVector<Read> reads;
    loop.getBody()->walk([&](mlir::Operation* op) {
      if (auto load = llvm::dyn_cast<mlir::vector::LoadOp>(op))
        reads.push_back({op, load.getBase(), load.getIndices()});
      else if (auto masked = llvm::dyn_cast<mlir::vector::MaskedLoadOp>(op))
        reads.push_back({op, masked.getBase(), masked.getIndices()});
      else if (auto transfer = llvm::dyn_cast<mlir::vector::TransferReadOp>(op);
               transfer && llvm::isa<mlir::MemRefType>(transfer.getBase().getType()))
        reads.push_back({op, transfer.getBase(), transfer.getIndices()});
    });

    // later = i + D * step where that is still an iteration, else i.
    mlir::OpBuilder builder = mlir::OpBuilder::atBlockBegin(loop.getBody());
    const mlir::Location loc = loop.getLoc();
    using namespace mlir::arith;
    const std::optional<int64_t> step = mlir::getConstantIntValue(loop.getStep());
    mlir::Value distance =
        step ? ConstantIndexOp::create(builder, loc, *step * ahead.getInt()).getResult()
             : MulIOp::create(builder, loc, loop.getStep(), ConstantIndexOp::create(builder, loc, ahead.getInt()));
    mlir::Value next = builder.createOrFold<AddIOp>(loc, iv, distance);
    mlir::Value in_loop = builder.createOrFold<CmpIOp>(loc, CmpIPredicate::slt, next, loop.getUpperBound());
    mlir::Value later = builder.createOrFold<SelectOp>(loc, in_loop, next, iv);

    int prefetched = 0;
    for (const Read& read : reads) {
      builder.setInsertionPoint(read.op);
      // One mapping per read: a value recomputed for an earlier read may sit in a
      // block that does not dominate this one.
      LaterIteration iteration(loop, later, builder);
      mlir::Value base = iteration.Ahead(read.base);
      llvm::SmallVector<mlir::Value> indices;
      bool cloned = static_cast<bool>(base);
      bool moves = base != read.base;
      for (mlir::Value index : read.indices) {
        mlir::Value later_index = iteration.Ahead(index);
        cloned &= static_cast<bool>(later_index);
        moves |= later_index != index;
        indices.push_back(later_index);
      }
      if (!cloned)
        return read.op->emitError("mtune-prefetch-reads: cannot recompute this read's address for a later "
                                  "iteration (an op with side effects or regions in between)");
      if (!moves) continue;  // the same address every iteration: nothing ahead to fetch
      mlir::memref::PrefetchOp::create(builder, read.op->getLoc(), base, indices, /*isWrite=*/false, kLocalityL2,
                                       /*isDataCache=*/true);
      ++prefetched;
    }
    if (prefetched == 0)
      return loop.emitError("mtune-prefetch-reads: no read in this loop (vector.load, vector.maskedload, "
                            "vector.transfer_read of a memref) has an address that moves with its "
                            "induction variable");
    return mlir::success();
  }
};

}  // namespace

void RegisterPrefetchReadsPass() { RegisterPassOnce<PrefetchReadsPass>(); }

}  // namespace mtune::strategies
