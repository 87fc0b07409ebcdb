// mtune strategy template: 2-D copy and transpose, tiled and vectorized with masks.
// mtune-family: copy_2d, transpose_2d
//
// The op is tiled by tile_r x tile_c (loops over rows, then columns) and each tile is
// vectorized at exactly that shape; masked transfers or padding (`edge_tiles`) handle
// partial tiles at the edges, so any m, n works. A transpose tile becomes a vector.transpose, lowered
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
    transform.tune.alternatives<"edge_tiles"> selected_region = 1 attributes {mtune.labels = ["masked", "padded"]} {
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
    }
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
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
