// mtune strategy template: 2-D copy and transpose, tiled and vectorized with masks.
// mtune-family: copy_2d, transpose_2d
//
// The op is tiled by tile_r x tile_c (loops over rows, then columns) and each tile is
// vectorized at exactly that shape; masked transfers, padding or peeling (`edge_tiles`)
// handle partial tiles at the edges, so any m, n works. A transpose tile becomes a vector.transpose, lowered
// by the `transpose_lowering` alternative; `transfer_rank` picks the rank of the
// transfers left after lowering.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %op = transform.structured.match ops{["linalg.copy", "linalg.transpose"]} in %root : (!transform.any_op) -> !transform.any_op
    %tr = transform.tune.knob<"tile_r"> = 16 from options = [1, 2, 4, 8, 16] -> !transform.param<i64>
    %tc = transform.tune.knob<"tile_c"> = 16 from options = [8, 16, 32, 64] -> !transform.param<i64>
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [%tr, %tc]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // Partial tiles at the edges: masked transfers, or zero padding of the tile to its
    // static shape. Padding keeps a transpose tile an unmasked permuted read, which
    // becomes a vector.transpose the `transpose_lowering` choice applies to; with
    // masks the permutation is lowered element by element whatever that choice.
    transform.tune.alternatives<"edge_tiles"> selected_region = 1 attributes {mtune.labels = ["masked", "padded", "peeled"]} {
      transform.structured.vectorize %tiled vector_sizes [%tr, %tc] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    }, {
      %padded, %pad, %copy = transform.structured.pad %tiled pad_to_multiple_of [%tr, %tc] {
          padding_dimensions = [0, 1], copy_back_op = "none"
        } : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %padded : !transform.any_op
      %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
      transform.apply_patterns to %func {
        transform.apply_patterns.linalg.pad_vectorization
        transform.apply_patterns.canonicalization
        transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      } : !transform.any_op
    }, {
      // Peeled: masked vectorization first (explicit vector sizes, so the dynamic
      // tile shapes need no canonicalization before it), then each tile loop is
      // split into a main loop of full tiles and a remainder loop of the partial
      // one (columns first, then rows: the row remainder gets both column loops).
      // In the main loops the tile sizes become constants, so the canonicalization
      // after bufferization folds their masks to all-true and removes them: full
      // tiles are plain (and, for a transpose, permuted) transfers; only remainder
      // tiles keep masks. (Canonicalizing here instead fails: it folds
      // single-iteration loops that the tiling loop handles still track.) A loop whose
      // step divides its range is not peeled (loop.peel fails silenceably on it, and
      // that failure is suppressed).
      transform.structured.vectorize %tiled vector_sizes [%tr, %tc] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
      %cols = transform.cast %loops#1 : !transform.any_op to !transform.op<"scf.for">
      transform.sequence %cols : !transform.op<"scf.for"> failures(suppress) {
      ^bb0(%l: !transform.op<"scf.for">):
        %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
      %rows = transform.cast %loops#0 : !transform.any_op to !transform.op<"scf.for">
      transform.sequence %rows : !transform.op<"scf.for"> failures(suppress) {
      ^bb0(%l: !transform.op<"scf.for">):
        %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
    }
    // Unrolling of vector ops to a target shape. The target shape is the tile
    // (tile_r x tile_c: every vector op of a full tile has exactly that shape); the
    // loop over column tiles is unrolled by U, so U such ops (and their transfers)
    // are independent in one iteration: register-level tiling followed by
    // `transform.loop.unroll` (a trip count that U does not divide gets an epilogue
    // loop; with peeled tiles only the main loop is unrolled). MLIR 22 has no
    // transform op for the vector dialect's own unroll patterns (they take a C++
    // native-shape callback); lower_transfer and lower_shape_cast below then split
    // each n-D op into 1-D rows, which LLVM splits into 512-bit registers.
    transform.tune.alternatives<"unroll_c"> selected_region = 0 attributes {mtune.labels = ["1", "2", "4"]} {
    }, {
      transform.loop.unroll %loops#1 {factor = 2} : !transform.any_op
    }, {
      transform.loop.unroll %loops#1 {factor = 4} : !transform.any_op
    }
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    // Folds the constant masks of peeled full tiles (no change to the IR of masked
    // or padded tiles: checked on 1024^2, 37x45, 1023x1025).
    transform.apply_patterns to %kernel {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // A transpose tile is vectorized into a transfer_read with a permutation map;
    // make that an explicit vector.transpose first, or no transpose lowering applies.
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.tune.alternatives<"transpose_lowering"> selected_region = 2 attributes {mtune.labels = ["shuffle_1d", "eltwise", "shuffle_16x16", "avx2"]} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = shuffle_1d
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = eltwise
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = shuffle_16x16
      } : !transform.any_op
    }, {
      // x86's AVX2-specialized 8x8 (and 4x8) shuffles; other shapes fall back to eltwise.
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = eltwise avx2_lowering_strategy = true
      } : !transform.any_op
    }
    // Transfers become loops of vectors of this rank (1: one row per transfer).
    transform.tune.alternatives<"transfer_rank"> selected_region = 0 attributes {mtune.labels = ["1", "2"]} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transfer max_transfer_rank = 2
      } : !transform.any_op
    }
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
