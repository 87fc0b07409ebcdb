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
  // Start point (proposed right after the default): 16-channel tiles, one zmm of
  // lanes. On the AMD EPYC znver4 host of session 34, whose cores run AVX-512 at half
  // width, the whole 360-candidate space of 114x114x64 3x3
  // (bench/data/depthwise_2d_114x114x64_3x3_f32.csv) had its best candidates at
  // tile_c = 16 (107.7 GFLOP/s, 0.94 of the FMA peak, against 98 for the default's
  // 32), and side by side (`mtune-bench-families --trials 0 --variant tile_c=16`, 7
  // rounds) it ran 58x58 at 1.04x the default and 114x114 at 1.17x.
  // Second start point (session 49), for CPUs without AVX-512: 16 channels by 4 output
  // columns, 8 of AVX2's 16 ymm registers (the default's 8 x 32 tile takes 32). On the
  // AMD EPYC znver3 host (AVX2; `mtune-bench-families --trials 0 --variant "tile_c=16
  // tile_ow=4"`, 3 rounds) it ran 58x58 and 114x114 at 2.2x and 3.2x the default and
  // 1.08x and 1.23x oneDNN (the default: 0.42x and 0.36x; the first point 0.46x, 0.22x).
  // It is also the default where the written one breaks the register constraint below
  // (mtune.fallback_defaults: on AVX2): session 50, same host and tool, it ran 1.28x
  // and 1.55x the nearest tile that fits (8 x 8, which repairing the default gives).
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.start_points = [{tile_c = 16 : i64}, {tile_c = 16 : i64, tile_ow = 4 : i64}],
                  mtune.fallback_defaults = [{tile_c = 16 : i64, tile_ow = 4 : i64}]} {
    %conv = transform.structured.match ops{["linalg.depthwise_conv_2d_nhwc_hwc"]} in %root : (!transform.any_op) -> !transform.any_op

    // tile_ow may also be any divisor of the output width up to 16. The default is 8,
    // or the whole row where it is narrower (mtune.padded_default = min(ow, 8)): a
    // tile wider than its dimension is padded, as a partial tile would be without
    // the split below, and 7x7x64 (3x3, 5-wide rows) ran at 11-12 GFLOP/s with 6- or
    // 8-wide tiles against 192-204 with 5-wide ones. Where ow is wider, 8 stays even
    // if it leaves a rest tile (mtune.rest_default would take a width that leaves
    // none): 64 channels, 3x3, side by side (session 22): ow = 54 ran 0.94x with 6
    // and 0.80x with 9 against 8; ow = 28 1.06x with 7; ow = 15 1.01x with 5.
    %tow = transform.tune.knob<"tile_ow"> = 8 from options = "1, 2, 4, 6, 8, 12, 16, 32, divisors(ow, 16)" {mtune.tiles = "ow", mtune.padded_default = "min(ow, 8)"} -> !transform.param<i64>
    // Channel tiles (the vector lanes): 32, or where that pads more than an eighth
    // min(c, 16): all the channels up to 16 (one more option then), else 16 with the
    // rest split off below. Never all of 17-31 channels: LLVM legalizes a 20- or
    // 24-lane vector through the stack (58x58, 3x3, session 25: 9.6 and 9.9 GFLOP/s
    // with C = 20 and 24 in one tile, 92 and 120 with 16-lane tiles), while 5 to 14
    // lanes are widened to one register (C = 12: 84 GFLOP/s in one tile, 74 as 8 + 4).
    %tc = transform.tune.knob<"tile_c"> = 32 from options = "8, 16, 32, 64, min(c, 16)" {mtune.tiles = "c", mtune.padded_default = "min(c, 16)"} -> !transform.param<i64>
    // The output columns covered by whole tiles of tile_ow (ow rounded down to a
    // multiple of it), and likewise the channels covered by whole tiles of tile_c.
    // As in conv_2d_decomposed, the convolution is split there before tiling, so
    // that a partial last tile is a small op of its own. Without the split the tile
    // sizes are dynamic and every tile is padded, which this build lowers to a heap
    // buffer, a fill and scalar copies per tile: a 58-wide output (60x60x64, 3x3)
    // ran at 8.6 GB/s with 8-wide tiles, 79 with 2-wide ones that divide it.
    // Not free choices (mtune.derived): the constraints fix them.
    %owm = transform.tune.knob<"ow_main"> = 0 from options = "rounddown(ow, 1), rounddown(ow, 2), rounddown(ow, 4), rounddown(ow, 6), rounddown(ow, 8), rounddown(ow, 12), rounddown(ow, 16), rounddown(ow, 32), divisors(ow, 16)" {mtune.derived} -> !transform.param<i64>
    %cm = transform.tune.knob<"c_main"> = 0 from options = "rounddown(c, 1), rounddown(c, 8), rounddown(c, 16), rounddown(c, 32), rounddown(c, 64)" {mtune.derived} -> !transform.param<i64>
    // ow_main = ow - ow mod tile_ow, or ow when that is 0 (a tile wider than ow is
    // one partial tile, padded below); c_main likewise.
    transform.smt.constrain_params(%tow, %owm) {mtune.rule = "ow_main is ow split after its whole tile_ow tiles (all of ow where no whole tile fits)"} : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%t: !smt.int, %main: !smt.int):
      %width = smt.declare_fun "ow" : !smt.int
      %partial = smt.int.mod %width, %t
      %whole = smt.int.sub %width, %partial
      %zero = smt.int.constant 0
      %any_whole = smt.int.cmp gt %whole, %zero
      %split_at = smt.ite %any_whole, %whole, %width : !smt.int
      %main_ok = smt.eq %main, %split_at : !smt.int
      smt.assert %main_ok
    }
    transform.smt.constrain_params(%tc, %cm) {mtune.rule = "c_main is c split after its whole tile_c tiles (all of c where no whole tile fits)"} : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%t: !smt.int, %main: !smt.int):
      %width = smt.declare_fun "c" : !smt.int
      %partial = smt.int.mod %width, %t
      %whole = smt.int.sub %width, %partial
      %zero = smt.int.constant 0
      %any_whole = smt.int.cmp gt %whole, %zero
      %split_at = smt.ite %any_whole, %whole, %width : !smt.int
      %main_ok = smt.eq %main, %split_at : !smt.int
      smt.assert %main_ok
    }
    // The accumulators (tile_ow rows of tile_c channels, each row whole vector
    // registers) take at most half the target's vector registers; the rest hold the
    // filter taps and inputs. Beyond that every tap spills: on the znver4 host of
    // session 34 (AVX-512; the 360-candidate tables bench/data/depthwise_2d_114x114x64
    // and 58x58x128) every tile within 16 zmm ran at 0.59-1.0 of the best (1-wide rows
    // aside), every one beyond at 0.22-0.51; on the znver3 host of session 50 (AVX2,
    // 16 ymm, `mtune-bench-families --trials 0 --variant`) 58x58 and 114x114 ran 8 x 8,
    // 4 x 16 and 2 x 32 (8 ymm) at 3.2-6.0x the default 8 x 32 (32 ymm), 6 x 16 (12)
    // at 2.9-4.4x and 8 x 16 (16) at 1.8-2.8x.
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
    // Whole tiles and partial rests: one to four ops. Rests are one tile wide in
    // their dimension, at their own static width (58 wide with 8-wide tiles: 92 GB/s
    // so, against 60 with the rest tiled, and padded, by tile_ow).
    %ow_parts = transform.structured.split %conv after %owm { dimension = 2 } : !transform.any_op, !transform.param<i64>
    %ow_main, %ow_rest = transform.split_handle %ow_parts {fail_on_payload_too_small = false} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %main_parts = transform.structured.split %ow_main after %cm { dimension = 3 } : !transform.any_op, !transform.param<i64>
    %main_whole, %c_rest = transform.split_handle %main_parts {fail_on_payload_too_small = false} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

    // An outer column strip of strip_ow outputs (0: none). Each output row reads
    // three input rows; across a whole row of a wide image those three rows and the
    // output row overflow the L1, so every input row is fetched from the L2 three
    // times. Inside a strip the rows are short enough to stay in the L1 from one
    // output row to the next: 58x58x64, 3x3, 4 x 16 tiles ran 1.10x faster with
    // 28-wide strips side by side (mtune-bench-families --variant; 30x30x64, whose
    // three input rows and output row fit the L1, needs none), and at 114x114
    // (bound by the L3) strips lost (0.86-0.90x). A strip is whole tiles of tile_ow
    // and divides the whole-tile extent ow_main (a partial strip would make the tile
    // sizes dynamic, see the split above); a strip as wide as ow_main is no strip.
    %strip = transform.tune.knob<"strip_ow"> = 0 from options = "0, 8, 12, 16, 24, 28, 32, 48, 64, divisors(ow, 64)" -> !transform.param<i64>
    transform.smt.constrain_params(%strip, %tow, %owm) {mtune.rule = "a strip (strip_ow > 0) is whole tile_ow tiles, divides ow_main and is narrower than it"} : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%s: !smt.int, %t: !smt.int, %main: !smt.int):
      %zero = smt.int.constant 0
      %one = smt.int.constant 1
      %stripped = smt.distinct %s, %zero : !smt.int
      // (mtune refuses a remainder by 0, and the implication below does not guard it.)
      %width = smt.ite %stripped, %s, %one : !smt.int
      %whole_tiles = smt.int.mod %width, %t
      %tiles_ok = smt.eq %whole_tiles, %zero : !smt.int
      %whole_strips = smt.int.mod %main, %width
      %strips_ok = smt.eq %whole_strips, %zero : !smt.int
      %narrower = smt.int.cmp lt %width, %main
      %ok = smt.and %tiles_ok, %strips_ok, %narrower
      %valid = smt.implies %stripped, %ok
      smt.assert %valid
    }
    %main, %strip_loop = transform.structured.tile_using_for %main_whole tile_sizes [0, 0, %strip, 0, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)

    // n_c_oh_ow is the default: over four 3x3 and 5x5 rows (C = 64 to 256, one with
    // stride 2) it measured 1.10x, 0.96x, 1.10x and 1.41x n_oh_ow_c on a Zen 5 host.
    %main_tiles = transform.tune.alternatives<"loop_order"> selected_region = 1 attributes {mtune.labels = ["n_oh_ow_c", "n_c_oh_ow"]} -> !transform.any_op {
      %t, %l:4 = transform.structured.tile_using_for %main tile_sizes [1, 1, %tow, %tc, 0, 0]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }, {
      %t, %l:4 = transform.structured.tile_using_for %main tile_sizes [1, 1, %tow, %tc, 0, 0] interchange = [0, 3, 1, 2, 4, 5]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }
    // (foreach: tile_using_for with parameter sizes fails on an empty handle.)
    %c_rest_tiles = transform.foreach %c_rest : !transform.any_op -> !transform.any_op {
    ^bb0(%r: !transform.any_op):
      %t, %l:3 = transform.structured.tile_using_for %r tile_sizes [1, 1, %tow, 0, 0, 0]
        : (!transform.any_op, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }
    %ow_rest_tiles = transform.foreach %ow_rest : !transform.any_op -> !transform.any_op {
    ^bb0(%r: !transform.any_op):
      %r_parts = transform.structured.split %r after %cm { dimension = 3 } : !transform.any_op, !transform.param<i64>
      %r_main, %r_rest = transform.split_handle %r_parts {fail_on_payload_too_small = false} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %t, %l:3 = transform.structured.tile_using_for %r_main tile_sizes [1, 1, 0, %tc, 0, 0]
        : (!transform.any_op, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      %corner = transform.foreach %r_rest : !transform.any_op -> !transform.any_op {
      ^bb1(%rr: !transform.any_op):
        %tr, %lr:2 = transform.structured.tile_using_for %rr tile_sizes [1, 1, 0, 0, 0, 0]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tr : !transform.any_op
      }
      %both = transform.merge_handles %t, %corner : !transform.any_op
      transform.yield %both : !transform.any_op
    }
    %tiled = transform.merge_handles %main_tiles, %c_rest_tiles, %ow_rest_tiles : !transform.any_op
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
