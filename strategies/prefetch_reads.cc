#include "strategies/prefetch_reads.h"

#include <algorithm>
#include <cstdint>

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

// Locality 2 = prefetcht1 on x86: into the L2, not the L1. Why: tiles beyond the L3
// that read many rows far apart side by side (a transpose's 64 input rows, a column
// sum's 8) are followed poorly by the hardware prefetchers; prefetching their next
// rows into the L2 ran a 2048x4096 transpose at 1.4x and column sums at 1.3x
// (bench/HISTORY session 42), where prefetching into the L1 gained nothing in a
// standalone transpose (session 41: its 8 ways cannot hold lines of 32 rows 16 KiB
// apart).
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
    // stay as they are: they dominate every read they reach. (An inner loop's
    // carried value stays this iteration's: a prefetch is a hint.)
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

// A read the pass prefetches for: its memref and indices, the vector it reads,
// and whether that vector's dimensions lie along the memref's trailing ones in
// order (a vector.load's always do; a permuted transfer's do not).
struct Read {
  mlir::Operation* op;
  mlir::Value base;
  mlir::ValueRange indices;
  mlir::VectorType type;
  bool along_trailing_dims;
};

// Cache lines of 64 bytes (x86-64; most AArch64 cores too). More prefetches than
// this for one read would mean a vector far larger than any tile a template makes.
constexpr int64_t kLineBytes = 64;
constexpr int64_t kMaxPrefetchesPerRead = 256;

// Prefetches every line `read`, made at `indices` of `base`, covers: each row of
// the vector (its last dimension, along the memref's last) line by line, rows along
// the memref's trailing dimensions. A permuted transfer, or elements of no fixed
// width (index): only the line it starts at.
mlir::LogicalResult PrefetchLines(mlir::OpBuilder& builder, const Read& read, mlir::Value base,
                                  llvm::ArrayRef<mlir::Value> indices) {
  const mlir::Location loc = read.op->getLoc();
  auto prefetch = [&](llvm::ArrayRef<mlir::Value> at) {
    mlir::memref::PrefetchOp::create(builder, loc, base, at, /*isWrite=*/false, kLocalityL2, /*isDataCache=*/true);
  };
  auto memref = llvm::cast<mlir::MemRefType>(base.getType());
  const int64_t rank = memref.getRank(), vector_rank = read.type.getRank();
  if (!read.along_trailing_dims || read.type.isScalable() || vector_rank == 0 || vector_rank > rank ||
      !memref.getElementType().isIntOrFloat()) {
    prefetch(indices);
    return mlir::success();
  }
  const int64_t element_bytes = std::max<int64_t>(1, memref.getElementTypeBitWidth() / 8);
  const int64_t per_line = std::max<int64_t>(1, kLineBytes / element_bytes);
  llvm::ArrayRef<int64_t> shape = read.type.getShape();
  const int64_t lines = (shape.back() + per_line - 1) / per_line;
  int64_t rows = 1;
  for (int64_t extent : shape.drop_back()) rows *= extent;
  if (rows * lines > kMaxPrefetchesPerRead)
    return read.op->emitError("mtune-prefetch-reads: this read covers ")
           << rows * lines << " cache lines, more than the " << kMaxPrefetchesPerRead << " it prefetches for one read";
  auto plus = [&](mlir::Value index, int64_t offset) {
    if (offset == 0) return index;
    return builder.createOrFold<mlir::arith::AddIOp>(
        loc, index, mlir::arith::ConstantIndexOp::create(builder, loc, offset));
  };
  for (int64_t row = 0; row < rows; ++row) {
    llvm::SmallVector<mlir::Value> at(indices);
    // The row's position along each leading vector dimension, last fastest.
    int64_t rest = row;
    for (int64_t dim = vector_rank - 2; dim >= 0; --dim) {
      const int64_t memref_dim = rank - vector_rank + dim;
      at[memref_dim] = plus(at[memref_dim], rest % shape[dim]);
      rest /= shape[dim];
    }
    const mlir::Value row_start = at.back();
    for (int64_t line = 0; line < lines; ++line) {
      at.back() = plus(row_start, line * per_line);
      prefetch(at);
    }
  }
  return mlir::success();
}

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
    // size the rotation made dynamic keeps its transfers, and column sums keep their
    // 2-D ones until the final lowering) of memrefs. A masked row past the end
    // prefetches an address past it, which a prefetch may do (it never faults, and
    // LLVM's prefetch takes any pointer).
    llvm::SmallVector<Read> reads;
    loop.getBody()->walk([&](mlir::Operation* op) {
      if (auto load = llvm::dyn_cast<mlir::vector::LoadOp>(op))
        reads.push_back({op, load.getBase(), load.getIndices(), load.getVectorType(), true});
      else if (auto masked = llvm::dyn_cast<mlir::vector::MaskedLoadOp>(op))
        reads.push_back({op, masked.getBase(), masked.getIndices(), masked.getVectorType(), true});
      else if (auto transfer = llvm::dyn_cast<mlir::vector::TransferReadOp>(op);
               transfer && llvm::isa<mlir::MemRefType>(transfer.getBase().getType()))
        reads.push_back({op, transfer.getBase(), transfer.getIndices(), transfer.getVectorType(),
                         transfer.getPermutationMap().isMinorIdentity()});
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
      if (mlir::failed(PrefetchLines(builder, read, base, indices))) return mlir::failure();
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
