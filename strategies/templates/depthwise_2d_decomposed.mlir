// mtune strategy template: 2-D NHWC depthwise convolution, decomposed to 1-D
// depthwise convolutions and vectorized.
// mtune-family: depthwise_conv_2d_nhwc_hwc
//
// Iteration dims are (n, oh, ow, c, kh, kw). The op is tiled to one output row of
// tile_ow x tile_c outputs (channels are the vector lanes) and padded with zeros to
// static ow and c extents (the convolution vectorizer needs static shapes). The
// filter rows are then tiled by 1, which makes each step a 1-D depthwise
// convolution (`structured.decompose`) over the whole filter width; vectorized, a
// step is kw x tile_ow vector FMAs, and the accumulator tile is hoisted out of the
// kh loop so it stays in registers. `loop_order` walks channel tiles innermost or
// output positions innermost (the filter slice of a channel tile stays in L1).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %conv = transform.structured.match ops{["linalg.depthwise_conv_2d_nhwc_hwc"]} in %root : (!transform.any_op) -> !transform.any_op

    %tow = transform.tune.knob<"tile_ow"> = 8 from options = [1, 2, 4, 6, 8, 12, 16, 32] -> !transform.param<i64>
    %tc = transform.tune.knob<"tile_c"> = 32 from options = [8, 16, 32, 64] -> !transform.param<i64>

    %tiled = transform.tune.alternatives<"loop_order"> selected_region = 0 attributes {mtune.labels = ["n_oh_ow_c", "n_c_oh_ow"]} -> !transform.any_op {
      %t, %l:4 = transform.structured.tile_using_for %conv tile_sizes [1, 1, %tow, %tc, 0, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }, {
      %t, %l:4 = transform.structured.tile_using_for %conv tile_sizes [1, 1, %tow, %tc, 0, 0] interchange = [0, 3, 1, 2, 4, 5]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }
    %padded, %pad, %copy = transform.structured.pad %tiled {
        padding_dimensions = [2, 3],
        copy_back_op = "none"
      } : (!transform.any_op)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %rows, %kh_loop = transform.structured.tile_using_for %padded tile_sizes [0, 0, 0, 0, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %conv1d = transform.structured.decompose %rows : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %conv1d : !transform.any_op

    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.linalg.pad_vectorization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // Only now fold the tile slices into the transfers: canonicalization has marked
    // the reads of static slices in bounds, and the folded reads keep that (folded
    // first, the input reads stay out-of-bounds-checked, one branch per element).
    transform.apply_patterns to %func {
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %kh_loop : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
