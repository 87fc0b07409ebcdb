// mtune strategy template: 2-D copy and transpose, tiled and vectorized with masks.
// mtune-family: copy_2d, transpose_2d
//
// The op is tiled by tile_r x tile_c (loops over rows, then columns) and each tile is
// vectorized at exactly that shape; masked vector transfers handle partial tiles at
// the edges, so any m, n works. A transpose tile becomes a vector.transpose, lowered
// by the `transpose_lowering` alternative.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %op = transform.structured.match ops{["linalg.copy", "linalg.transpose"]} in %root : (!transform.any_op) -> !transform.any_op
    %tr = transform.tune.knob<"tile_r"> = 8 from options = [1, 2, 4, 8, 16] -> !transform.param<i64>
    %tc = transform.tune.knob<"tile_c"> = 16 from options = [8, 16, 32, 64] -> !transform.param<i64>
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [%tr, %tc]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled vector_sizes [%tr, %tc] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    transform.tune.alternatives<"transpose_lowering"> selected_region = 0 attributes {mtune.labels = ["shuffle_1d", "eltwise", "shuffle_16x16"]} {
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
    }
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
