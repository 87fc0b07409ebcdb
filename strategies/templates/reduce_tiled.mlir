// mtune strategy template: 2-D row or column sum, tiled and vectorized with masks.
// mtune-family: reduce_rows_2d, reduce_cols_2d
//
// The reduction is tiled by tile_m x tile_n (loops over m, then n) and each tile is
// vectorized at exactly that shape into a vector.multi_reduction; masked transfers
// handle partial edge tiles, so any m, n works. (The output slice is still read and
// written per tile: hoisting it out of the reduced loop is not done yet.) The
// multi-reduction is lowered by the `reduction_lowering` alternative: reduce along
// the innermost vector dimension, or accumulate whole vectors elementwise.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %op = transform.structured.match ops{["linalg.reduce"]} in %root : (!transform.any_op) -> !transform.any_op
    %tm = transform.tune.knob<"tile_m"> = 8 from options = [1, 2, 4, 8, 16, 32] -> !transform.param<i64>
    %tn = transform.tune.knob<"tile_n"> = 32 from options = [8, 16, 32, 64, 128] -> !transform.param<i64>
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tiled vector_sizes [%tm, %tn] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    transform.tune.alternatives<"reduction_lowering"> selected_region = 0 attributes {mtune.labels = ["innerparallel", "innerreduction"]} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = innerparallel
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = innerreduction
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
