#include "strategies/amx_matmul.h"

#include <algorithm>
#include <string>
#include <vector>

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "strategies/register_pass_once.h"

namespace mtune::strategies {
namespace {

// AMX tiles hold at most 16 rows of 64 bytes: 16 f32 accumulators or 16 bf16 pairs.
constexpr int64_t kTileRows = 16;
constexpr int64_t kTilePairs = 16;

// A [start, start + size) piece of a dimension.
struct Piece {
  int64_t start;
  int64_t size;
};

// The dimension cut into pieces of `most`, the last one taking what is left.
std::vector<Piece> Pieces(int64_t extent, int64_t most) {
  std::vector<Piece> pieces;
  for (int64_t start = 0; start < extent; start += most)
    pieces.push_back({start, std::min(most, extent - start)});
  return pieces;
}

bool IsArg(mlir::Value v, mlir::Block& body, unsigned index) {
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(v);
  return arg && arg.getOwner() == &body && arg.getArgNumber() == index;
}

bool IsWidenedArg(mlir::Value v, mlir::Block& body, unsigned index) {
  auto ext = v.getDefiningOp<mlir::arith::ExtFOp>();
  return ext && IsArg(ext.getIn(), body, index);
}

// The body of a widening multiply-accumulate: out + extf(a) * extf(b).
bool IsWideningMultiplyAdd(mlir::linalg::GenericOp op) {
  mlir::Block& body = op.getRegion().front();
  auto yield = llvm::dyn_cast<mlir::linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1) return false;
  auto add = yield.getOperand(0).getDefiningOp<mlir::arith::AddFOp>();
  if (!add) return false;
  mlir::Value product = IsArg(add.getLhs(), body, 2) ? add.getRhs() : add.getLhs();
  if (!IsArg(add.getLhs(), body, 2) && !IsArg(add.getRhs(), body, 2)) return false;
  auto mul = product.getDefiningOp<mlir::arith::MulFOp>();
  if (!mul) return false;
  return (IsWidenedArg(mul.getLhs(), body, 0) && IsWidenedArg(mul.getRhs(), body, 1)) ||
         (IsWidenedArg(mul.getLhs(), body, 1) && IsWidenedArg(mul.getRhs(), body, 0));
}

// The packed matmul's signature: loops (m, n, p, t), A[m][p][t], B[p][n][t],
// C[m][n]; bf16 x bf16 -> f32 on buffers.
bool IsVnniMatmul(mlir::linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return false;
  auto iterators = op.getIteratorTypesArray();
  using mlir::utils::IteratorType;
  if (iterators != llvm::SmallVector<IteratorType>{IteratorType::parallel, IteratorType::parallel,
                                                   IteratorType::reduction,
                                                   IteratorType::reduction})
    return false;
  mlir::MLIRContext* context = op.getContext();
  auto d = [&](unsigned i) { return mlir::getAffineDimExpr(i, context); };
  auto map = [&](llvm::ArrayRef<mlir::AffineExpr> results) {
    return mlir::AffineMap::get(4, 0, results, context);
  };
  if (op.getIndexingMapsArray() != llvm::SmallVector<mlir::AffineMap>{map({d(0), d(2), d(3)}),
                                                                      map({d(2), d(1), d(3)}),
                                                                      map({d(0), d(1)})})
    return false;
  auto element = [&](unsigned i) {
    return llvm::cast<mlir::ShapedType>(op->getOperand(i).getType()).getElementType();
  };
  if (!element(0).isBF16() || !element(1).isBF16() || !element(2).isF32()) return false;
  return IsWideningMultiplyAdd(op);
}

// The memref's leading stride (elements between rows of a tile) if its other
// strides are `inner` (contiguous pairs, or contiguous f32 columns).
mlir::FailureOr<int64_t> RowStride(mlir::Value memref, llvm::ArrayRef<int64_t> inner,
                                   std::string* why) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  llvm::SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (!type.hasStaticShape()) {
    *why = "its shapes are not static (tile by sizes that divide the problem, or peel)";
    return mlir::failure();
  }
  if (mlir::failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::ArrayRef<int64_t>(strides).drop_front() != inner) {
    *why = "an operand is not laid out as AMX tiles load it (rows of contiguous pairs or columns)";
    return mlir::failure();
  }
  return strides.front();
}

// Rewrites one packed matmul. Accumulator tiles are loaded once, carried through
// the k loop in tile registers, and stored once. In each k step, the operand tiles
// of the shorter side (A's row pieces or B's column pieces) are loaded first and held;
// the other side's are loaded one at a time, each used by every held tile: a x b
// accumulators need a x b + min(a, b) + 1 of the 8 tile registers.
mlir::LogicalResult Rewrite(mlir::linalg::GenericOp op) {
  mlir::Value a = op.getDpsInputOperand(0)->get();
  mlir::Value b = op.getDpsInputOperand(1)->get();
  mlir::Value c = op.getDpsInitOperand(0)->get();
  std::string why;
  mlir::FailureOr<int64_t> a_stride = RowStride(a, {2, 1}, &why), b_stride = mlir::failure(),
                           c_stride = mlir::failure();
  if (mlir::succeeded(a_stride)) b_stride = RowStride(b, {2, 1}, &why);
  if (mlir::succeeded(b_stride)) c_stride = RowStride(c, {1}, &why);
  if (mlir::failed(c_stride))
    return op.emitError() << "mtune-vnni-matmul-to-amx: cannot rewrite this bf16 matmul into AMX "
                             "tiles: "
                          << why;
  auto a_type = llvm::cast<mlir::MemRefType>(a.getType());
  auto c_type = llvm::cast<mlir::MemRefType>(c.getType());
  const int64_t m = c_type.getDimSize(0), n = c_type.getDimSize(1), pairs = a_type.getDimSize(1);
  if (a_type.getDimSize(2) != 2)
    return op.emitError() << "mtune-vnni-matmul-to-amx: k must be split in pairs, not "
                          << a_type.getDimSize(2);

  mlir::OpBuilder builder(op);
  const mlir::Location loc = op.getLoc();
  auto index = [&](int64_t v) -> mlir::Value {
    return mlir::arith::ConstantIndexOp::create(builder, loc, v);
  };
  mlir::Type bf16 = builder.getBF16Type(), f32 = builder.getF32Type();
  const mlir::Value zero = index(0);
  const mlir::Value a_row = index(*a_stride), b_row = index(*b_stride), c_row = index(*c_stride);
  const std::vector<Piece> rows = Pieces(m, kTileRows), columns = Pieces(n, kTileRows);
  auto accumulator = [&](const Piece& r, const Piece& col) {
    return mlir::amx::TileType::get({r.size, col.size}, f32);
  };

  llvm::SmallVector<mlir::Value> acc;
  for (const Piece& r : rows)
    for (const Piece& col : columns)
      acc.push_back(
          mlir::amx::TileLoadOp::create(builder, loc, accumulator(r, col), c,
                                        mlir::ValueRange{index(r.start), index(col.start)}, c_row));

  // One k step of `step_pairs` pairs at pair `p`, at the builder's insertion point;
  // returns the new accumulators.
  auto step = [&](mlir::Value p, int64_t step_pairs,
                  mlir::ValueRange in) -> llvm::SmallVector<mlir::Value> {
    auto load_a = [&](const Piece& r) -> mlir::Value {
      return mlir::amx::TileLoadOp::create(builder, loc,
                                           mlir::amx::TileType::get({r.size, 2 * step_pairs}, bf16),
                                           a, mlir::ValueRange{index(r.start), p, zero}, a_row);
    };
    auto load_b = [&](const Piece& col) -> mlir::Value {
      return mlir::amx::TileLoadOp::create(
          builder, loc, mlir::amx::TileType::get({step_pairs, 2 * col.size}, bf16), b,
          mlir::ValueRange{p, index(col.start), zero}, b_row);
    };
    llvm::SmallVector<mlir::Value> out(in.begin(), in.end());
    auto multiply = [&](size_t i, size_t j, mlir::Value lhs, mlir::Value rhs) {
      mlir::Value& slot = out[i * columns.size() + j];
      slot = mlir::amx::TileMulFOp::create(builder, loc, slot.getType(), lhs, rhs, slot);
    };
    if (rows.size() <= columns.size()) {
      llvm::SmallVector<mlir::Value> held;
      for (const Piece& r : rows) held.push_back(load_a(r));
      for (size_t j = 0; j < columns.size(); ++j) {
        mlir::Value streamed = load_b(columns[j]);
        for (size_t i = 0; i < rows.size(); ++i) multiply(i, j, held[i], streamed);
      }
    } else {
      llvm::SmallVector<mlir::Value> held;
      for (const Piece& col : columns) held.push_back(load_b(col));
      for (size_t i = 0; i < rows.size(); ++i) {
        mlir::Value streamed = load_a(rows[i]);
        for (size_t j = 0; j < columns.size(); ++j) multiply(i, j, streamed, held[j]);
      }
    }
    return out;
  };

  const int64_t whole_steps = pairs / kTilePairs, rest_pairs = pairs % kTilePairs;
  if (whole_steps > 0) {
    auto loop = mlir::scf::ForOp::create(
        builder, loc, zero, index(whole_steps * kTilePairs), index(kTilePairs), acc,
        [&](mlir::OpBuilder& body, mlir::Location, mlir::Value p, mlir::ValueRange carried) {
          mlir::OpBuilder::InsertionGuard guard(builder);
          builder.setInsertionPoint(body.getInsertionBlock(), body.getInsertionPoint());
          llvm::SmallVector<mlir::Value> next = step(p, kTilePairs, carried);
          mlir::scf::YieldOp::create(builder, loc, next);
        });
    builder.setInsertionPointAfter(loop);
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }
  if (rest_pairs > 0) acc = step(index(whole_steps * kTilePairs), rest_pairs, acc);

  size_t next = 0;
  for (const Piece& r : rows)
    for (const Piece& col : columns)
      mlir::amx::TileStoreOp::create(
          builder, loc, c, mlir::ValueRange{index(r.start), index(col.start)}, acc[next++], c_row);
  op.erase();
  return mlir::success();
}

class VnniMatmulToAmxPass : public mlir::PassWrapper<VnniMatmulToAmxPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VnniMatmulToAmxPass)

  llvm::StringRef getArgument() const final { return kVnniMatmulToAmxPassName; }
  llvm::StringRef getDescription() const final {
    return "Rewrite bf16 matmul tiles packed in k pairs (VNNI) into AMX tile operations";
  }

  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::amx::AMXDialect, mlir::arith::ArithDialect, mlir::scf::SCFDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::linalg::GenericOp> matmuls;
    getOperation()->walk([&](mlir::linalg::GenericOp op) {
      if (IsVnniMatmul(op)) matmuls.push_back(op);
    });
    for (mlir::linalg::GenericOp op : matmuls)
      if (mlir::failed(Rewrite(op))) return signalPassFailure();
  }
};

}  // namespace

void RegisterVnniMatmulToAmxPass() { RegisterPassOnce<VnniMatmulToAmxPass>(); }

}  // namespace mtune::strategies
