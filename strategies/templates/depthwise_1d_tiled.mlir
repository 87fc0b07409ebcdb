// mtune strategy template: 1-D NWC depthwise convolution, tiled and vectorized.
// mtune-family: depthwise_conv_1d_nwc_wc
//
// Iteration dims are (n, ow, c, kw). The op is tiled to tile_ow x tile_c outputs
// (channels are the vector lanes) with the whole filter width kw in one tile, and
// padded with zeros to static ow and c extents (the convolution vectorizer needs
// static shapes). Vectorized, a tile is one read of its input window, kw x tile_ow
// vector FMAs into the accumulators, and one write. `loop_order` walks channels
// innermost (neighbouring tiles share nothing, but the filter slice changes) or
// output positions innermost (the filter slice of a channel tile stays in
// registers/L1 while the input window slides).
module attributes {transform.with_named_sequence} {
  // Start point (proposed right after the default, see strategies/knob_space.h), for
  // CPUs without AVX-512: 16 channels by 4 output positions, 8 of AVX2's 16 ymm
  // registers (the default's tile takes 32). On the AMD EPYC znver3 host of session 49
  // (AVX2; `mtune-bench-families --trials 0 --variant "tile_c=16 tile_ow=4"`, 3 rounds)
  // it ran w=2050 c=64 at 2.1x the default. It is also the default where the written
  // one breaks the register constraint below (mtune.fallback_defaults: on AVX2);
  // session 50, same host and tool: 1.15x the nearest tile that fits (8 x 8).
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.start_points = [{tile_c = 16 : i64, tile_ow = 4 : i64}],
                  mtune.fallback_defaults = [{tile_c = 16 : i64, tile_ow = 4 : i64}]} {
    %conv = transform.structured.match ops{["linalg.depthwise_conv_1d_nwc_wc"]} in %root : (!transform.any_op) -> !transform.any_op

    // tile_ow may also be any divisor of the output width up to 16, and the default 8
    // gives way where its last tile would pad the row by more than an eighth
    // (mtune.padded_default) to the first of 8, 7, 6, 5, 4 that pads least: partial
    // tiles make the tile sizes dynamic and every tile padded (ow = 996: 8-wide tiles
    // ran at 182 GB/s, 4-wide ones that divide it at 261).
    %tow = transform.tune.knob<"tile_ow"> = 8 from options = "1, 2, 4, 6, 8, 12, 16, 32, divisors(ow, 16)" {mtune.tiles = "ow", mtune.padded_default = "8, 7, 6, 5, 4"} -> !transform.param<i64>
    // Channel tiles (the vector lanes): 32, or where its last tile would pad the
    // channels by more than an eighth, the first of 32, 16, 8 that pads least. A
    // partial channel tile makes every tile padded (as for ow above): w = 1026, 3
    // taps, session 25, two alternating `mtune measure` runs of 32 and the new
    // default: C = 24 122-124 -> 161 GB/s (8), C = 40 91-92 -> 161 (8), C = 100
    // 116-117 -> 130-131 (8); C = 37 64 -> 99 (8, three runs); C = 48 133 -> 162 (16,
    // one run); C = 20 lost, 98 -> 85-87 (8).
    %tc = transform.tune.knob<"tile_c"> = 32 from options = [8, 16, 32, 64] {mtune.tiles = "c", mtune.padded_default = "32, 16, 8"} -> !transform.param<i64>
    // The accumulators (tile_ow rows of tile_c channels, each row whole vector
    // registers) take at most half the target's vector registers; the rest hold the
    // filter taps and inputs. Beyond that every tap spills: on the znver4 host of
    // session 34 the 2-D template's tables showed it on AVX-512 (depthwise_2d_decomposed
    // says how), and on the znver3 host of session 50 (AVX2, 16 ymm, `mtune-bench-families
    // --trials 0 --variant`) w=2050 c=64 ran 8 x 8, 4 x 16 and 2 x 32 (8 ymm) at
    // 1.8-2.1x the default 8 x 32 (32 ymm), 6 x 16 (12) at 1.5x and 8 x 16 (16) at 1.4x.
    transform.smt.constrain_params(%tow, %tc) {mtune.rule = "tile_ow x tile_c accumulators take at most half the vector registers (16 zmm of AVX-512, 8 ymm of AVX2)"} : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%rows: !smt.int, %lanes: !smt.int):
      %acc = smt.declare_fun "acc_bytes" : !smt.int
      %vregs = smt.declare_fun "vector_registers" : !smt.int
      %vbytes = smt.declare_fun "vector_bytes" : !smt.int
      %one = smt.int.constant 1
      %two = smt.int.constant 2
      %row_bytes = smt.int.mul %lanes, %acc
      %round_up = smt.int.sub %vbytes, %one
      %row_padded = smt.int.add %row_bytes, %round_up
      %row_registers = smt.int.div %row_padded, %vbytes
      %twice = smt.int.mul %rows, %row_registers, %two
      %fits = smt.int.cmp le %twice, %vregs
      smt.assert %fits
    }

    %tiled = transform.tune.alternatives<"loop_order"> selected_region = 0 attributes {mtune.labels = ["n_ow_c", "n_c_ow"]} -> !transform.any_op {
      %t, %l:3 = transform.structured.tile_using_for %conv tile_sizes [1, %tow, %tc, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }, {
      %t, %l:3 = transform.structured.tile_using_for %conv tile_sizes [1, %tow, %tc, 0] interchange = [0, 2, 1, 3]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }
    %padded, %pad, %copy = transform.structured.pad %tiled {
        padding_dimensions = [1, 2],
        copy_back_op = "none"
      } : (!transform.any_op)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %padded : !transform.any_op

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
