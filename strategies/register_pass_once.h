// Registration of mtune's own passes (mtune-rotate-tiles, mtune-flatten-transfers,
// ...) in MLIR's global pass registry, once per process however often it is asked:
// the worker, the CLI and the mlir-opt plugin each register them on start-up.
// Internal to strategies/.
#pragma once

#include "mlir/Pass/PassRegistry.h"

namespace mtune::strategies {

template <typename Pass>
void RegisterPassOnce() {
  static const bool registered = [] {
    mlir::PassRegistration<Pass>();
    return true;
  }();
  (void)registered;
}

}  // namespace mtune::strategies
