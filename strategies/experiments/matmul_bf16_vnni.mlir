// Experiment, not a built-in template (session 29): a bf16 matmul through the
// AVX512-BF16 dot product (vdpbf16ps), for `mtune measure --template-file` on
// CPUs with avx512bf16. k is packed by 2 (structured.pack: A becomes a view,
// B a VNNI copy [k/2][n][2]); 8 x 32 register tiles are split into 1 x 16 tiles
// whose loops are unrolled, so each vectorizes to the 1x1x2 by 1x16x2 contraction
// x86vector's pattern rewrites into one dot product, and the 16 accumulators are
// hoisted out of the k loop; mtune-flatten-transfers then reads each B tile with
// one 64-byte load. Shapes: m a multiple of 8, n of 32, k even (nothing pads).
// Measured on the Intel Xeon host (vdpbf16ps peaks at 123 GFLOP/s there, half the
// f32 FMA peak; a register-only loop of it): 512^3 110.8 GFLOP/s against 81.7 for
// matmul_packed's default (bf16 widened to f32 in the loop), 256^3 104 against 84;
// 1024^3 78 against 81 (no cache tiles yet). Not a template: no knobs, no edge
// handling, no CPU-feature gate (without avx512bf16 LLVM cannot select the dot
// product: llc -mcpu=skylake-avx512 stops with a fatal error, "Do not know how to
// split this operator's operand!", which would end the measuring process).
// Padding the whole matmul first (structured.pad to multiples of 8, 32 and 2, C
// copied back) verified on 37x45x67, but its pads ran as scalar copies: 127x255x513
// at 41 GFLOP/s against the default's 79. Cache tiles (the packed op tiled by
// [0, 256, 128, 0] before the register tiles) took 1024^3 to 95-99 GFLOP/s
// (1.13-1.20x the default in alternating runs) and 512^3 to 102, but do not apply where 256 and 128 k pairs do not
// divide n and k (40x96x34: the strategy failed to apply); a template would make
// them knobs.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %packed = transform.structured.pack %mm packed_sizes = [0, 0, 2] : (!transform.any_op) -> (!transform.op<"linalg.generic">)
    %packs = transform.structured.match ops{["linalg.pack"]} in %root : (!transform.any_op) -> !transform.op<"linalg.pack">
    transform.foreach %packs : !transform.op<"linalg.pack"> {
    ^bb0(%p: !transform.op<"linalg.pack">):
      %pad, %expand, %transpose = transform.structured.lower_pack %p : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    }
    %t1, %l1:3 = transform.structured.tile_using_for %packed tile_sizes [8, 32, 1, 0] : (!transform.op<"linalg.generic">) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %l2:2 = transform.structured.tile_using_for %t1 tile_sizes [1, 16, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.loop.unroll %l2#1 {factor = 2} : !transform.any_op
    transform.loop.unroll %l2#0 {factor = 8} : !transform.any_op
    %f0 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f0 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %l1#2 : !transform.any_op
    %gens = transform.structured.match ops{["linalg.generic"]} in %f0 : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %gens : !transform.any_op
    // The B packing copy, two k rows of 32 columns interleaved at a time.
    %tp = transform.structured.match ops{["linalg.transpose"]} in %root : (!transform.any_op) -> !transform.any_op
    %tpt, %tpl:2 = transform.structured.tile_using_for %tp tile_sizes [1, 32, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %tpt : !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.fold_arith_extension
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %l1#2 : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.x86vector.vector_contract_to_packed_type_dot_product
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %b = transform.bufferization.one_shot_bufferize %root {bufferize_function_boundaries = false} : (!transform.any_op) -> !transform.any_op
    %kf = transform.structured.match ops{["func.func"]} in %b : (!transform.any_op) -> !transform.any_op
    %flat = transform.apply_registered_pass "mtune-flatten-transfers" to %kf : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %flat {
      transform.apply_patterns.vector.lower_transpose lowering_strategy = shuffle_1d
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
