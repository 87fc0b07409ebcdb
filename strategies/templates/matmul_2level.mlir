// mtune strategy template: matmul, two levels of tiling, B packed per cache tile.
// mtune-family: matmul, matmul_transpose_a, matmul_transpose_b
//
// Level 1 tiles (tile_m1, tile_n1, tile_k1) pick the cache blocking; partial tiles
// at the edges are padded with zeros to the static tile shape so that level 2 and
// vectorization always see static shapes (any m, n, k works). The tile of B is
// packed into a contiguous buffer once per (n, k) tile. Level 2 tiles
// (tile_m2, tile_n2, tile_k2) give the register tile (at most 16x32 f32, i.e. the
// 32 zmm registers of AVX-512: larger tiles spill): the vector.contract that
// vectorization makes of it is lowered by the `contraction_lowering` alternative.
// The accumulator tile is hoisted out of the innermost k loop, so it lives in
// registers across the reduction.
//
// Option sets written as strings are expanded per problem by mtune (see
// strategies/knob_space.h): "pow2(LO, HI)" is every power of two in [LO, HI]
// (just LO when HI < LO), where HI may name a problem dimension. `mtune.divides = "X"` declares that a
// knob's value must divide knob X's value; mtune prunes candidates that break it
// before compiling them. The `selected` values are the template's default
// candidate, so this file as is runs in mlir-opt --transform-interpreter.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op

    %tm1 = transform.tune.knob<"tile_m1"> = 64 from options = "pow2(16, m)" -> !transform.param<i64>
    %tn1 = transform.tune.knob<"tile_n1"> = 128 from options = "pow2(32, n)" -> !transform.param<i64>
    %tk1 = transform.tune.knob<"tile_k1"> = 256 from options = "pow2(32, k)" -> !transform.param<i64>
    %tm2 = transform.tune.knob<"tile_m2"> = 8 from options = [2, 4, 8, 16] {mtune.divides = "tile_m1"} -> !transform.param<i64>
    %tn2 = transform.tune.knob<"tile_n2"> = 32 from options = [16, 32] {mtune.divides = "tile_n1"} -> !transform.param<i64>
    %tk2 = transform.tune.knob<"tile_k2"> = 1 from options = [1, 2, 4] {mtune.divides = "tile_k1"} -> !transform.param<i64>

    // Level 1: cache tiles, loops ordered n, k, m so that a tile of B stays put while
    // the m loop sweeps A. Edges are padded to the static tile shape; B's tile is
    // always copied (nofold) into a contiguous buffer, packed once per (n, k) tile:
    // its pad is hoisted out of the m loop.
    %tiled1, %loops1:3 = transform.structured.tile_using_for %matmul tile_sizes [%tm1, %tn1, %tk1] interchange = [1, 2, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %padded, %pad, %copy_back = transform.structured.pad %tiled1 {
        padding_dimensions = [0, 1, 2],
        nofold_flags = [0, 1, 0],
        copy_back_op = "none"
      } : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %pad_b = transform.get_producer_of_operand %padded[1] : (!transform.any_op) -> !transform.any_op
    %packed_b = transform.structured.hoist_pad %pad_b by 1 loops : (!transform.any_op) -> !transform.any_op

    // Level 2: register tiles.
    %tiled2, %loops2:3 = transform.structured.tile_using_for %padded tile_sizes [%tm2, %tn2, %tk2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)

    // Vectorize the register tile into one vector.contract and the pads (packing and
    // edge copies) into vector transfers, then keep the accumulator in registers
    // across the innermost k loop. Only these are vectorized, not the whole function:
    // vectorizing the level-1 tensor.insert_slice would copy the whole C tile through
    // registers once bufferization has made it a copy onto itself.
    transform.structured.vectorize %tiled2 {create_named_contraction} : !transform.any_op
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.linalg.pad_vectorization
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    %contract = transform.structured.match ops{["vector.contract"]} in %func : (!transform.any_op) -> !transform.any_op
    %k_loop = transform.get_parent_op %contract {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %k_loop : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op

    // With bf16 inputs only the outer products: dot leaves the bf16 x bf16 -> f32
    // vector.contract as it is, and the JIT fails on it.
    transform.tune.alternatives<"contraction_lowering"> selected_region = 0 attributes {mtune.labels = ["outerproduct", "dot"], mtune.label_types = {dot = ["f32", "f64"]}} {
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
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
