// The exported transform library: one named sequence per tuned (problem, target)
// (with the helper sequences its strategy includes, renamed `<entry>__<helper>`),
// plus an entry point that dispatches every matching op to its tuned sequence.
//
// How the dispatch works (all upstream transform ops, runs in plain mlir-opt):
//   mlir-opt --transform-preload-library=transform-library-paths=LIB.mlir
//            --transform-interpreter payload.mlir   (one command line)
// `@__transform_main` first collects the functions holding two or more linalg
// ops (%shared). Then, for each tuned problem, `transform.structured.match`
// finds exactly the ops of that problem (op name, indexing maps / strides /
// dilations, operand types; see strategies/op_key.h), and:
//  - an op alone in its function: `transform.foreach_match` hands that
//    function to the problem's tuned sequence, as before;
//  - an op in a function of %shared: `transform.loop.outline` moves the op
//    into a new private function `@mtune_kernel__<problem>[_N]` (its operands
//    become arguments, its results the return values; the op is replaced by a
//    call in an scf.execute_region), and the tuned sequence transforms that
//    function.
// Untuned ops are left alone. Only tensor-form ops match (strategies bufferize
// what they tile).
//
// Why whole functions, and outlining for shared ones: a tuned strategy was
// measured on a function holding its op alone, and it transforms that function
// as a whole (vectorization clean-up patterns, bufferization and lowering
// patterns run on the enclosing function, with the lowering alternative the
// search chose). Outlining gives every op exactly that situation, so the
// stored script runs unchanged and does to the op what was measured, and two
// ops whose strategies chose different lowerings never share a pattern
// application. Restricting the patterns to the op's loop nest instead was
// tried and does not reproduce the measured code (patterns applied to a loop
// nest do not rewrite the loop itself: the accumulator stayed in memory and
// an extra copy of the output remained). The cost is one call per tuned op
// in a shared function, with tensor arguments: inside the kernel its
// strategy's bufferization makes the arguments memrefs with fully dynamic
// strides (the unknown-type layout cannot be chosen from the transform op)
// and copies the output argument once per call (it is not writable there).
// The library marks the kernel's argument buffers read_only and its returned
// buffers restrict (both true by construction) so that callers bufferize
// without copying the inputs; bench/outlined_vs_lone.sh compares the two.
//
// Each problem's sequence is the stored script, adapted so that its root may be
// that function instead of a module: handles to the root function are re-linked
// after each transform that consumes one (see AdaptScriptToFunctionRoot).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mlir/IR/MLIRContext.h"

namespace mtune::strategies {

// One resolved strategy to put in the library.
struct LibraryEntry {
  std::string problem;
  std::string target_id;
  // Instantiated template text (every knob selected) with @__transform_main.
  std::string script;
};

// Name given to the function an op of `problem` is outlined into when it
// shares its function with other linalg ops ("mtune_kernel__" + the problem
// with characters outside [A-Za-z0-9_] replaced by '_'; MLIR appends _0, _1,
// ... when several ops of one problem are outlined).
std::string OutlinedFunctionPrefix(const std::string& problem);

// Symbol of an entry's sequence: "mtune__" + problem and target with every
// character outside [A-Za-z0-9_] replaced by '_', e.g. mtune__matmul_m_512_....
std::string LibrarySymbol(const std::string& problem, const std::string& target_id);

// The library of `entries`. `dispatch_target` selects the entries that
// `@__transform_main` dispatches to; empty means the entries' only target
// (with entries of several targets and no dispatch target, the library has no
// `@__transform_main`, and each entry is applied by its symbol:
// `--transform-interpreter=entry-point=SYMBOL`). DataLoss when a stored script
// does not parse or has no @__transform_main. `context` (default: a fresh one)
// must have the transform dialect and its extensions registered.
absl::StatusOr<std::string> BuildTransformLibrary(const std::vector<LibraryEntry>& entries,
                                                  const std::string& dispatch_target = "",
                                                  mlir::MLIRContext* context = nullptr);

// The stored script's @__transform_main adapted to run with its root bound to
// a function as well as to a module, as MLIR text of a module holding it.
absl::StatusOr<std::string> AdaptScriptToFunctionRoot(const std::string& script);

}  // namespace mtune::strategies
