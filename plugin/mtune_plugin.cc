// mlir-opt pass plugin: the `mtune-apply` pass applies the tuned strategies of
// a best-strategy database to every tensor op of a tuned problem (ops sharing
// their function are outlined first; the same dispatch as the exported
// transform library).
//
//   mlir-opt-22 --load-pass-plugin=libMtunePlugin.so
//     --pass-pipeline='builtin.module(mtune-apply{db=best.sqlite report=true})' in.mlir
//   (one command line)
//
// It also registers mtune's own passes that strategies run through
// transform.apply_registered_pass (`mtune-rotate-tiles` and `mtune-prefetch-reads`
// for transposes, ...): loading the plugin lets plain mlir-opt apply an exported
// library holding them.
#include <memory>
#include <string>

#include "db/strategy_db.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "strategies/apply.h"
#include "strategies/amx_matmul.h"
#include "strategies/flatten_transfers.h"
#include "strategies/prefetch_reads.h"
#include "strategies/rotate_tiles.h"
#include "strategies/split_pair_transposes.h"

namespace {

class MtuneApplyPass
    : public mlir::PassWrapper<MtuneApplyPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MtuneApplyPass)

  MtuneApplyPass() = default;
  MtuneApplyPass(const MtuneApplyPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const final { return "mtune-apply"; }
  llvm::StringRef getDescription() const final {
    return "Apply mtune's tuned transform strategies from a best-strategy database to every "
           "op with a tuned entry (ops sharing their function are outlined first)";
  }

  // Parsing the library loads the transform dialect and its extensions; that
  // must happen before the pass manager goes multi-threaded.
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::transform::TransformDialect>();
  }

  // Reads the database and builds the library once per pass manager run.
  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    if (db_.empty()) {
      init_error_ = "mtune-apply needs db=FILE (a best-strategy database)";
      return mlir::success();  // reported by runOnOperation, with a location
    }
    mtune::db::StrategyDb::Options options{MTUNE_MLIR_VERSION};
    auto strategies = mtune::db::StrategyDb::Open(db_, options);
    if (!strategies.ok()) {
      init_error_ = std::string(strategies.status().message());
      return mlir::success();
    }
    target_id_ = target_.empty() ? mtune::strategies::HostCpuTargetId() : std::string(target_);
    auto rows = (*strategies)->Entries(target_id_);
    if (!rows.ok()) {
      init_error_ = std::string(rows.status().message());
      return mlir::success();
    }
    if (rows->empty()) {
      init_error_ = db_ + " has no entries for target " + target_id_ + " (set target=...)";
      return mlir::success();
    }
    std::vector<mtune::strategies::LibraryEntry> entries;
    for (const auto& row : *rows) entries.push_back({row.problem, row.target_id, row.script});
    auto library = mtune::strategies::PrepareLibrary(entries, target_id_, context);
    if (!library.ok()) {
      init_error_ = std::string(library.status().message());
      return mlir::success();
    }
    library_ = std::make_shared<mtune::strategies::PreparedLibrary>(std::move(*library));
    return mlir::success();
  }

  void runOnOperation() override {
    if (!init_error_.empty() || !library_) {
      getOperation().emitError() << "mtune-apply: " << init_error_;
      return signalPassFailure();
    }
    auto outcomes = mtune::strategies::ApplyLibrary(getOperation(), *library_);
    if (!outcomes.ok()) {
      getOperation().emitError() << "mtune-apply: " << std::string(outcomes.status().message());
      return signalPassFailure();
    }
    if (!report_) return;
    for (const auto& o : *outcomes)
      mlir::emitRemark(getOperation().getLoc()) << "mtune-apply: " << mtune::strategies::OutcomeName(o.kind)
                                  << " @" << o.function << " " << o.op_name << " "
                                  << o.key_or_reason
                                  << (o.outlined ? " (shares its function: outlined)" : "");
  }

 private:
  Option<std::string> db_{*this, "db", llvm::cl::desc("best-strategy database file")};
  Option<std::string> target_{*this, "target",
                              llvm::cl::desc("target id (default: this machine's)")};
  Option<bool> report_{*this, "report",
                       llvm::cl::desc("emit a remark per linalg op saying what happened"),
                       llvm::cl::init(false)};
  std::string init_error_;
  std::string target_id_;
  std::shared_ptr<mtune::strategies::PreparedLibrary> library_;
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MtunePlugin", "0.1.0",
          []() {
            mlir::PassRegistration<MtuneApplyPass>();
            // Strategies may run them (transform.apply_registered_pass), so the exported
            // transform library needs them in mlir-opt too.
            mtune::strategies::RegisterRotateTilesPass();
            mtune::strategies::RegisterPrefetchReadsPass();
            mtune::strategies::RegisterFlattenTransfersPass();
            mtune::strategies::RegisterVnniMatmulToAmxPass();
            mtune::strategies::RegisterSplitPairTransposesPass();
          }};
}
