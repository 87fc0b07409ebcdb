// mtune strategy template: batch matmul, one batch at a time with B packed in
// register-tile layout (the matmul_packed recipe with a leading batch loop).
// mtune-family: batch_matmul
//
// Iteration dims are (b, m, n, k). Level 1 tiles the batch by 1 and n, k into cache
// tiles (tile_n1, tile_k1), padded with zeros to multiples of the next tiles so
// that level 2 and vectorization see static shapes for any size. Level 2 gives the
// register tile (tile_m2 x tile_n2 x tile_k2) in the m/n order of `loop_order`.
// The level-2 B operand is padded with nofold and hoisted out of the three level-2
// loops: one contiguous [n1/n2][k1/k2][k2][n2] buffer per cache tile (`pack_a`
// does the same for A). Only the register tile and the pads are vectorized; the
// accumulator is hoisted out of the innermost k loop. See matmul_packed.mlir for
// the reasons behind each step. Unlike there, lower_broadcast is left out of the
// final patterns: with the unit batch dimension it ping-pongs with canonicalization
// forever.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %matmul = transform.structured.match ops{["linalg.batch_matmul"]} in %root : (!transform.any_op) -> !transform.any_op

    %tn1 = transform.tune.knob<"tile_n1"> = 128 from options = "pow2(32, n)" -> !transform.param<i64>
    %tk1 = transform.tune.knob<"tile_k1"> = 256 from options = "pow2(32, k)" -> !transform.param<i64>
    %tm2 = transform.tune.knob<"tile_m2"> = 8 from options = [4, 8, 16] -> !transform.param<i64>
    %tn2 = transform.tune.knob<"tile_n2"> = 32 from options = [16, 32] {mtune.divides = "tile_n1"} -> !transform.param<i64>
    %tk2 = transform.tune.knob<"tile_k2"> = 1 from options = [1, 2, 4] {mtune.divides = "tile_k1"} -> !transform.param<i64>

    // The accumulator tile plus one row of B and one broadcast of A fit the 32 zmm
    // registers of 64 bytes (as in matmul_packed: an f64 8x32 tile would spill).
    transform.smt.constrain_params(%tm2, %tn2) : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%m2: !smt.int, %n2: !smt.int):
      %acc = smt.declare_fun "acc_bytes" : !smt.int
      %one = smt.int.constant 1
      %rows = smt.int.add %m2, %one
      %reg_bytes = smt.int.mul %rows, %n2, %acc
      %reg_limit = smt.int.constant 1984
      %fits = smt.int.cmp le %reg_bytes, %reg_limit
      smt.assert %fits
    }

    // Level 1: one batch, cache tiles over n then k; m is not tiled. The padded C
    // tile is copied back explicitly (see matmul_packed.mlir: folded single-tile loops
    // otherwise fail bufferization).
    %tiled1, %loops1:3 = transform.structured.tile_using_for %matmul tile_sizes [1, 0, %tn1, %tk1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %padded1, %pad1, %copy1 = transform.structured.pad %tiled1 pad_to_multiple_of [%tm2, %tn1, %tk1] {
        padding_dimensions = [1, 2, 3],
        copy_back_op = "linalg.copy"
      } : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)

    // Level 2: register tiles, m-outer (a row panel of A stays in L1 while the
    // packed B streams from L2) or n-outer (a packed B sliver stays in L1).
    %tiled2 = transform.tune.alternatives<"loop_order"> selected_region = 0 attributes {mtune.labels = ["mnk", "nmk"]} -> !transform.any_op {
      %t, %l:3 = transform.structured.tile_using_for %padded1 tile_sizes [0, %tm2, %tn2, %tk2]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }, {
      %t, %l:3 = transform.structured.tile_using_for %padded1 tile_sizes [0, %tm2, %tn2, %tk2] interchange = [0, 2, 1, 3]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }

    // Packing: nofold pads of the register-tile operands, hoisted out of the three
    // level-2 loops.
    %padded2 = transform.tune.alternatives<"pack_a"> selected_region = 0 attributes {mtune.labels = ["no", "yes"]} -> !transform.any_op {
      %p, %pad, %copy = transform.structured.pad %tiled2 {
          padding_dimensions = [1, 2, 3],
          nofold_flags = [0, 1, 0],
          copy_back_op = "none"
        } : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %pad_b = transform.get_producer_of_operand %p[1] : (!transform.any_op) -> !transform.any_op
      %packed_b = transform.structured.hoist_pad %pad_b by 3 loops : (!transform.any_op) -> !transform.any_op
      transform.yield %p : !transform.any_op
    }, {
      %p, %pad, %copy = transform.structured.pad %tiled2 {
          padding_dimensions = [1, 2, 3],
          nofold_flags = [1, 1, 0],
          copy_back_op = "none"
        } : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %pad_b = transform.get_producer_of_operand %p[1] : (!transform.any_op) -> !transform.any_op
      %packed_b = transform.structured.hoist_pad %pad_b by 3 loops : (!transform.any_op) -> !transform.any_op
      %pad_a = transform.get_producer_of_operand %p[0] : (!transform.any_op) -> !transform.any_op
      %packed_a = transform.structured.hoist_pad %pad_a by 3 loops : (!transform.any_op) -> !transform.any_op
      transform.yield %p : !transform.any_op
    }

    // Vectorize the register tile into one vector.contract and every pad (packing
    // copies and edge padding) into vector transfers, then keep the accumulator in
    // registers across the innermost k loop.
    transform.structured.vectorize %padded2 {create_named_contraction} : !transform.any_op
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.linalg.pad_vectorization
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    %contract = transform.structured.match ops{["vector.contract"]} in %func : (!transform.any_op) -> !transform.any_op
    %k_loop = transform.get_parent_op %contract {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %k_loop : !transform.any_op

    // Copies of edge tiles become linalg.copy loops that LLVM vectorizes, rather than
    // calls to the element-by-element runtime memrefCopy.
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op

    transform.tune.alternatives<"contraction_lowering"> selected_region = 0 attributes {mtune.labels = ["outerproduct", "dot"]} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = outerproduct
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = dot
      } : !transform.any_op
    }
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
