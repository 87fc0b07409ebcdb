// mtune strategy template: 1-D NWC/WCF convolution vectorized into outer products.
// mtune-family: conv_1d_nwc_wcf
//
// The 1-D sibling of conv_2d_decomposed (read that file's comment). Iteration dims
// are (n, ow, f, kw, c). Level 1 tiles the parallel dims to tile_ow x tile_f (the
// register tile) and the channel reduction into cache tiles of tile_c1; every tile
// gets static ow and f extents (the convolution vectorizer needs static shapes and
// cannot mask non-depthwise convolutions): the op is first split where the whole ow
// tiles end (ow_main, as in conv_2d_decomposed), so only the last, partial ow tile is
// padded with zeros, and partial f tiles are. Level 2 tiles kw and c
// by 1: vectorized, each step is one outer product of tile_ow inputs by tile_f
// filter values into the accumulator tile, hoisted out of the kw and c loops.
//
// lower_broadcast is left out of the final patterns on purpose: together with
// canonicalization it ping-pongs forever on these loops.
module attributes {transform.with_named_sequence} {
  // Start point (proposed right after the default, see strategies/knob_space.h), for
  // CPUs without AVX-512: 16-wide filter tiles of 6 output columns, 12 of AVX2's 16 ymm
  // registers. There the written 8 x 32 tile needs 32, and the register constraint,
  // sized by the target, repairs the default to 8-wide filter tiles. On the AMD EPYC
  // znver3 host (AVX2; `mtune-bench-families --trials 0 --variant "tile_f=16
  // tile_ow=6"`, 3 rounds) this point ran the three 1-D rows of the suite at
  // 1.16-1.46x that repaired default and 0.83-1.15x oneDNN (session 50; the spilling
  // 8 x 32 had run 0.41-0.45x oneDNN in session 49). So it is also the default where
  // the written one breaks the register constraint and 16-wide filter tiles alone do
  // not mend it (mtune.fallback_defaults: on AVX2; f64 on AVX-512 keeps 8 x 16, as the
  // nearest repair had it); session 51, same host and tool, 5 rounds: 1.18-1.21x the
  // repaired 8 x 8 on all three rows (4 x 16: 0.96-1.15x).
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.start_points = [{tile_f = 16 : i64, tile_ow = 6 : i64}],
                  mtune.fallback_defaults = [{tile_f = 16 : i64}, {tile_f = 16 : i64, tile_ow = 6 : i64}]} {
    %conv = transform.structured.match ops{["linalg.conv_1d_nwc_wcf"]} in %root : (!transform.any_op) -> !transform.any_op

    // tile_ow may also be any divisor of the output width up to 16 (a row of whole
    // tiles), and its default gives way where it would pad the row by more than an
    // eighth (both as in conv_2d_decomposed).
    %tow = transform.tune.knob<"tile_ow"> = 8 from options = "1, 2, 4, 6, 8, 12, 14, 16, divisors(ow, 16)" {mtune.tiles = "ow", mtune.padded_default = "roundup(ow, 1), 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4"} -> !transform.param<i64>
    // F is split where the whole f tiles end (f_main below), and tile_f's default
    // leaves the smallest rest of F, both as in conv_2d_decomposed: with every f tile
    // partial, and so padded, F = 48 (258-wide, 64 channels, kw = 3) ran at 0.35 of the
    // FMA peak with 32-wide tiles; split, with 16-wide ones, at 0.85-0.87. F = 100
    // (200-wide) keeps 32: 130 GFLOP/s, where the 8 that pads least ran at 83.
    // No 48: a 48-lane vector (3 zmm) is legalized by LLVM through the stack, one
    // shuffle at a time (a 7 x 48 tile's kernel: 5681 lines of assembly, 2882 stack
    // accesses, against 337 and 45 for 7 x 32), and every tile_f = 48 candidate ran at
    // 2-10 GFLOP/s on an Intel Xeon (4032-candidate exhaustive job at 9x9x512; 3.5-4.0
    // against 118-197 with 32 at 9x9x512, 16x16x96 and the 1-D 1026 x 64 -> 96): a
    // fifth of the space spent on nothing. Widths are powers of two from here on.
    %tf = transform.tune.knob<"tile_f"> = 32 from options = [8, 16, 32, 64] {mtune.tiles = "f", mtune.rest_default = "32, 16, 8"} -> !transform.param<i64>
    // The output channels covered by whole tiles of tile_f (F rounded down to a
    // multiple of it, or F when that is 0). Not a free choice (mtune.derived).
    %fm = transform.tune.knob<"f_main"> = 0 from options = "rounddown(f, 1), rounddown(f, 8), rounddown(f, 16), rounddown(f, 32), rounddown(f, 64)" {mtune.derived} -> !transform.param<i64>
    transform.smt.constrain_params(%tf, %fm) {mtune.rule = "f_main is f split after its whole tile_f tiles (all of f where no whole tile fits)"} : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%t: !smt.int, %main: !smt.int):
      %width = smt.declare_fun "f" : !smt.int
      %partial = smt.int.mod %width, %t
      %whole = smt.int.sub %width, %partial
      %zero = smt.int.constant 0
      %any_whole = smt.int.cmp gt %whole, %zero
      %split_at = smt.ite %any_whole, %whole, %width : !smt.int
      %main_ok = smt.eq %main, %split_at : !smt.int
      smt.assert %main_ok
    }
    %tc1 = transform.tune.knob<"tile_c1"> = 64 from options = "pow2(8, c)" -> !transform.param<i64>
    // The output columns covered by whole tiles of tile_ow, where the conv is split
    // (see conv_2d_decomposed): padded instead, every tile of an odd width copies its
    // input window (the default 8 x 32 ran at ~0.65x of itself on a width of 998
    // against 1000). Derived: the constraints fix it.
    %owm = transform.tune.knob<"ow_main"> = 0 from options = "rounddown(ow, 1), rounddown(ow, 2), rounddown(ow, 4), rounddown(ow, 6), rounddown(ow, 8), rounddown(ow, 12), rounddown(ow, 14), rounddown(ow, 16)" {mtune.derived} -> !transform.param<i64>

    // The accumulator tile (tile_ow x tile_f) plus one row of filter values and one
    // broadcast input fit the target's vector registers, as in matmul_packed:
    // (tile_ow + 1) * tile_f * acc_bytes <= (registers - 1) * register bytes (31 * 64
    // on AVX-512, 15 * 32 on AVX2). Larger tiles spill on every
    // filter tap (an f64 8x32 tile ran at 0.41 of the f64 peak); the best measured
    // f32 candidates (8x32, 4x64, 6x64) all fit.
    // ow_main = ow - ow mod tile_ow, or ow when that is 0 (as in conv_2d_decomposed).
    transform.smt.constrain_params(%tow, %tf, %owm) {mtune.rule = "(tile_ow + 1) x tile_f accumulators fit all vector registers but one (31 zmm of AVX-512, 15 ymm of AVX2); ow_main is ow split after its whole tile_ow tiles (all of ow where none fits)"} : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%ow: !smt.int, %f: !smt.int, %main: !smt.int):
      %acc = smt.declare_fun "acc_bytes" : !smt.int
      %one = smt.int.constant 1
      %rows = smt.int.add %ow, %one
      %reg_bytes = smt.int.mul %rows, %f, %acc
      %vregs = smt.declare_fun "vector_registers" : !smt.int
      %vbytes = smt.declare_fun "vector_bytes" : !smt.int
      %spare = smt.int.sub %vregs, %one
      %reg_limit = smt.int.mul %spare, %vbytes
      %fits = smt.int.cmp le %reg_bytes, %reg_limit
      smt.assert %fits
      %width = smt.declare_fun "ow" : !smt.int
      %partial = smt.int.mod %width, %ow
      %whole = smt.int.sub %width, %partial
      %zero = smt.int.constant 0
      %any_whole = smt.int.cmp gt %whole, %zero
      %split_at = smt.ite %any_whole, %whole, %width : !smt.int
      %main_ok = smt.eq %main, %split_at : !smt.int
      smt.assert %main_ok
    }

    // The whole tiles of ow and the partial rest: one op, or two when there is a rest
    // (each is tiled below, so no handle has to be split or may be empty).
    %ow_parts = transform.structured.split %conv after %owm { dimension = 1 } : !transform.any_op, !transform.param<i64>
    // Then each part where the whole f tiles end: up to four ops, of which only the
    // rests have a partial tile (padded below).
    %parts = transform.foreach %ow_parts : !transform.any_op -> !transform.any_op {
    ^bb0(%part: !transform.any_op):
      %f_parts = transform.structured.split %part after %fm { dimension = 2 } : !transform.any_op, !transform.param<i64>
      transform.yield %f_parts : !transform.any_op
    }

    // Level 1: output row tiles and channel cache tiles; `loop_order` puts the f
    // loop innermost (an input window is reused by every f tile), outermost (a
    // filter block is reused by the whole image), or outermost with the channel
    // cache tiles next (f_c_n_ow: a kw x tile_c1 x tile_f filter block stays in L1
    // across the image), or the channel tiles outermost (c_f_n_ow: a channel tile's
    // filter rows are read in order; see conv_2d_decomposed).
    %tiled1 = transform.foreach %parts : !transform.any_op -> !transform.any_op {
    ^bb0(%part: !transform.any_op):
      %t = transform.tune.alternatives<"loop_order"> selected_region = 0 attributes {mtune.labels = ["n_ow_f", "f_n_ow", "f_c_n_ow", "c_f_n_ow"]} -> !transform.any_op {
        %tp, %l:4 = transform.structured.tile_using_for %part tile_sizes [1, %tow, %tf, 0, %tc1]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }, {
        %tp, %l:4 = transform.structured.tile_using_for %part tile_sizes [1, %tow, %tf, 0, %tc1] interchange = [2, 0, 1, 3, 4]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }, {
        %tp, %l:4 = transform.structured.tile_using_for %part tile_sizes [1, %tow, %tf, 0, %tc1] interchange = [2, 4, 0, 1, 3]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }, {
        %tp, %l:4 = transform.structured.tile_using_for %part tile_sizes [1, %tow, %tf, 0, %tc1] interchange = [4, 2, 0, 1, 3]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }
      transform.yield %t : !transform.any_op
    }
    // Partial tiles padded, the output tile copied back (see conv_2d_decomposed: when
    // n and the f tiles are single tiles and the ow loop of a part has one tile, the
    // channel loop would yield a slice of the padded tile, which failed bufferization).
    %padded, %pad1, %copy1 = transform.structured.pad %tiled1 {
        padding_dimensions = [1, 2],
        copy_back_op = "linalg.copy"
      } : (!transform.any_op)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)

    // Level 2: one filter tap and one channel per step, in the order `reduction_order`.
    %tiled2 = transform.tune.alternatives<"reduction_order"> selected_region = 0 attributes {mtune.labels = ["kw_c", "c_kw"]} -> !transform.any_op {
      %t, %l:2 = transform.structured.tile_using_for %padded tile_sizes [0, 0, 0, 1, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }, {
      %t, %l:2 = transform.structured.tile_using_for %padded tile_sizes [0, 0, 0, 1, 1] interchange = [0, 1, 2, 4, 3]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }
    transform.structured.vectorize %tiled2 : !transform.any_op

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
    %contract = transform.structured.match ops{["vector.contract"]} in %func : (!transform.any_op) -> !transform.any_op
    %loop3 = transform.get_parent_op %contract {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loop3 : !transform.any_op
    %loop2 = transform.get_parent_op %loop3 {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loop2 : !transform.any_op

    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    // The contraction of one step: a sequence of outer products, or elementwise
    // broadcast-multiply-adds (both end as vector FMAs; they differ in the shuffles
    // and extracts around them).
    transform.tune.alternatives<"contraction_lowering"> selected_region = 0 attributes {mtune.labels = ["outerproduct", "parallelarith"]} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = outerproduct
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = parallelarith
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
