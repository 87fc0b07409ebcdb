// mtune strategy template: 2-D NHWC/HWCF convolution, decomposed to 1-D convolutions
// and vectorized into outer products.
// mtune-family: conv_2d_nhwc_hwcf
//
// Iteration dims are (n, oh, ow, f, kh, kw, c). Level 1 tiles the parallel dims to
// one output row of tile_ow x tile_f (the register tile: tile_ow * tile_f / lanes
// accumulator registers), and the channel reduction into cache tiles of tile_c1
// (a filter block kh x kw x tile_c1 x tile_f stays in L1 across the ow tiles).
// Every level-1 tile has static ow and f extents, because the convolution
// vectorizer needs static shapes and cannot mask non-depthwise convolutions (the
// channel extent may stay dynamic: level 2 tiles it by 1): the op is first split
// where the whole tiles of ow end, so that of a row's ow tiles only the last,
// partial one (an op of its own) is padded with zeros; partial f tiles are padded too.
// Level 2 tiles kh, kw and c by 1, which makes the op a 1-D convolution of one
// filter tap and one channel (`structured.decompose` turns it into
// linalg.conv_1d_nwc_wcf); vectorized, that is one outer product of tile_ow
// inputs by tile_f filter values added into the accumulator tile, which is hoisted
// out of the kh, kw and c loops so that it stays in registers.
//
// Only the conv and the pads are vectorized, never the whole function (vectorizing
// level-1 insert_slices copies whole tiles through registers after bufferization).
// lower_broadcast is left out of the final patterns on purpose: together with
// canonicalization it ping-pongs forever on these loops.
module attributes {transform.with_named_sequence} {
  // Start point (proposed right after the default, see strategies/knob_space.h):
  // 16-wide filter tiles. On the AMD EPYC (znver4) host of session 33, which runs
  // AVX-512 at half width, it ran the five 2-D rows of the families suite at 1.00,
  // 1.01, 1.01, 1.10 and 1.42x the default (9x9x512: 105 against 74 GFLOP/s, 1.02x
  // oneDNN; `mtune-bench-families --trials 0 --variant tile_f=16`), while a 12-trial
  // search of the 3472-candidate 9x9x512 space had missed it (70 GFLOP/s). The
  // default stays 32, measured best on the Intel host of sessions 15-31.
  // Second start point (session 38): the same with 64 channels per reduction chunk.
  // 9x9x512, 7 rounds side by side (`--trials 0 --variant "tile_f=16 tile_c1=N"`):
  // c1 = 16 / 32 / 64 / 128 ran 101.2 / 108.3 / 109.2 / 106.2 GFLOP/s (oneDNN 102.8);
  // two 12-trial suite runs had kept c1 = 16 and read 0.86 and 0.73 of the peak.
  // 16x16x256 and 58x58x64 ran 0.99x-1.01x either way; where C has no 64-channel
  // chunk the point is the first one and is not proposed twice.
  // Third start point (session 49), for CPUs without AVX-512: 16-wide filter tiles of
  // 6 output columns, 12 of AVX2's 16 ymm registers. There the written 8 x 32 tile
  // needs 32 and the register constraint, sized by the target, repairs the default to
  // 8-wide filter tiles (the nearest that fit, one knob changed). On the AMD EPYC
  // znver3 host (AVX2; `mtune-bench-families --trials 0 --variant "tile_f=16
  // tile_ow=6"`, 3 rounds) this point ran the five 2-D rows of the suite at 0.84-1.21x
  // that repaired default (session 50; the spilling 8 x 32 had run 0.36-0.58x oneDNN,
  // the repaired default ran 0.40-1.02x in two runs).
  // Where the written default breaks the register constraint, the default is the
  // first of mtune.fallback_defaults that holds: 16-wide filter tiles (f64 on AVX-512,
  // as the nearest repair had it), else, on AVX2, 4 output columns of them over
  // 64-channel chunks where 4 columns do not pad the row by more than an eighth (else,
  // as at 7 or 14 columns, the nearest repair: 7 x 8, 14 x 8). Session 51, same host
  // and tool, 7 rounds, against the repaired 8 x 8 / 14 x 8 over 16 channels: 58x58x64
  // 1.34x, the strided 57x57x64 1.36x (4 x 16 over 16 channels: 1.21x, 1.11x); the
  // dilated 36x36x32, whose C has no 64-channel chunk, 1.20x. At 14 and 7 columns
  // 4 x 16 ran 0.81x and 0.91x the repaired default.
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.start_points = [{tile_f = 16 : i64}, {tile_f = 16 : i64, tile_c1 = 64 : i64},
                                        {tile_f = 16 : i64, tile_ow = 6 : i64}],
                  mtune.fallback_defaults = [{tile_f = 16 : i64}, {tile_f = 16 : i64, tile_ow = 4 : i64, tile_c1 = 64 : i64}]} {
    %conv = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %root : (!transform.any_op) -> !transform.any_op

    // tile_ow may also be any divisor of the output width up to 16, so that a row is
    // whole tiles with nothing split off or padded: a 7-wide output (7x7x512, 3x3)
    // ran at 106 GFLOP/s with 7 x 32 tiles, 74 with 8 x 32 (one tile padded to 8).
    // The default 8 gives way where its last tile would pad the row by more than an
    // eighth (mtune.padded_default, as matmul_packed's cache tiles): to the whole row
    // when it is at most 16 wide, else to the largest tile of 4 to 16 that pads least.
    // On a Zen 5 host a 7-wide row (9x9x512 input) then ran at 163-217 GFLOP/s against
    // 104 with 8 (its filter streams from L3), and a 14-wide one (16x16x256) at 229-234
    // against 153.
    %tow = transform.tune.knob<"tile_ow"> = 8 from options = "1, 2, 4, 6, 8, 12, 14, 16, divisors(ow, 16)" {mtune.tiles = "ow", mtune.padded_default = "roundup(ow, 1), 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4"} -> !transform.param<i64>
    // F is split where the whole f tiles end (f_main below, as ow is): with every f
    // tile partial, and so padded, F = 48 (30x30x64, 3x3) ran at 0.30 of the FMA peak
    // with 32-wide tiles, 0.47 split (its 16-wide rest padded to 32). A padded rest
    // still costs, so the default 32 gives way where it does not divide F
    // (mtune.rest_default) to the first of 32, 16, 8 that leaves the smallest rest:
    // F = 48 then runs 16-wide tiles at 0.91, F = 24 8-wide ones at 0.46 (0.23 with
    // 32), and F = 100 (a rest of 4 whatever the width) keeps 32: 160 GFLOP/s, where
    // the 8 that pads least ran at 97 (one --variant run). An F-wide tile of 24 lanes
    // ran at 0.03: not an option.
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
    %tc1 = transform.tune.knob<"tile_c1"> = 16 from options = "pow2(8, c)" -> !transform.param<i64>
    // The output columns covered by whole tiles of tile_ow (ow rounded down to a
    // multiple of it). The convolution is split there before tiling, so that a partial
    // last tile is a small op of its own instead of a reason to pad every tile (the
    // tile sizes are then dynamic): padded, each tile copies its input window, and a
    // 6 x 64 tile measured 128 GFLOP/s on a width of 56 against 188 on a width of 54,
    // which it divides (172 on 56 once split).
    // Not a free choice (mtune.derived): the constraints fix it.
    %owm = transform.tune.knob<"ow_main"> = 0 from options = "rounddown(ow, 1), rounddown(ow, 2), rounddown(ow, 4), rounddown(ow, 6), rounddown(ow, 8), rounddown(ow, 12), rounddown(ow, 14), rounddown(ow, 16)" {mtune.derived} -> !transform.param<i64>

    // The accumulator tile (tile_ow x tile_f), one row of filter values and, where an
    // FMA cannot broadcast from memory, the broadcast input fit the target's vector
    // registers: (tile_ow + 1) * tile_f * acc_bytes + broadcast_registers * register
    // bytes <= registers * register bytes (32 * 64 on AVX-512, whose FMAs broadcast
    // from memory; 16 * 32 on AVX2, one of them for the broadcast).
    // On AVX2 7 x 16 (14 accumulators, 2 filter registers and the broadcast: 17)
    // spills two accumulators on every step (LLVM 22, znver3): on 9x9x512, where the
    // output is 7 wide, it ran at 0.45x the 7 x 8 that replaces it (session 51).
    // Larger tiles spill on every filter tap (an f64 8x32 tile ran at 0.41 of the f64
    // peak); the best measured f32 candidates (8x32, 4x64, 6x64) fit with a register
    // to spare for the broadcast input. At the limit, 7 x 64 (28 accumulators, 4
    // filter registers) spills one register per tap and still beats 7 x 32 where the
    // output is 7 wide: 9x9x512, nine alternating `mtune measure` runs (session 25),
    // median 146 against 138 GFLOP/s, faster in 7 of 9 (the limit was 31 * 64 before);
    // f64 7 x 32 against 7 x 16 there: 46-57 against 40-51, faster in 4 of 4.
    // ow_main = ow - ow mod tile_ow, or ow when that is 0 (a tile wider than ow is
    // one partial tile, padded below, as before the split existed).
    transform.smt.constrain_params(%tow, %tf, %owm) {mtune.rule = "(tile_ow + 1) x tile_f accumulators and, without AVX-512's broadcasting FMAs, the broadcast input fit the vector registers (32 zmm of AVX-512, 16 ymm of AVX2); ow_main is ow split after its whole tile_ow tiles (all of ow where none fits)"} : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%ow: !smt.int, %f: !smt.int, %main: !smt.int):
      %acc = smt.declare_fun "acc_bytes" : !smt.int
      %one = smt.int.constant 1
      %rows = smt.int.add %ow, %one
      %reg_bytes = smt.int.mul %rows, %f, %acc
      %vregs = smt.declare_fun "vector_registers" : !smt.int
      %vbytes = smt.declare_fun "vector_bytes" : !smt.int
      %reg_limit = smt.int.mul %vregs, %vbytes
      %broadcasts = smt.declare_fun "broadcast_registers" : !smt.int
      %broadcast_bytes = smt.int.mul %broadcasts, %vbytes
      %tile_bytes = smt.int.add %reg_bytes, %broadcast_bytes
      %fits = smt.int.cmp le %tile_bytes, %reg_limit
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
    %ow_parts = transform.structured.split %conv after %owm { dimension = 2 } : !transform.any_op, !transform.param<i64>
    // Then each part where the whole f tiles end: up to four ops, of which only the
    // rests have a partial tile (padded below).
    %parts = transform.foreach %ow_parts : !transform.any_op -> !transform.any_op {
    ^bb0(%part: !transform.any_op):
      %f_parts = transform.structured.split %part after %fm { dimension = 3 } : !transform.any_op, !transform.param<i64>
      transform.yield %f_parts : !transform.any_op
    }

    // Level 1: output row tiles and channel cache tiles; `loop_order` puts the f
    // loop innermost (an input window is reused by every f tile), outermost (a
    // filter block kh x kw x C x tile_f is reused by the whole image), or outermost
    // with the channel cache tiles next (f_c_n_oh_ow: one filter block kh x kw x
    // tile_c1 x tile_f, small enough for L1, serves every output tile of the image,
    // whose accumulators are then loaded and stored once per channel tile). With many
    // channels only the last keeps the filter in cache: at 14x14x256 (3x3, F = 256)
    // a 14 x 32 tile ran at 76 and 83 GFLOP/s in the first two orders, 160-167 in
    // the third with tile_c1 = 8-64 (83 with tile_c1 = 256, the whole filter again).
    // The fourth (c_f_n_oh_ow) swaps the channel and f tiles: one channel tile's
    // filter rows for all of F (tile_c1 rows of F contiguous values per tap) are then
    // read in order, one f tile after the other, which the hardware prefetches, where
    // the third reads tile_f values out of every F: at 7x7x512, whose 9.4 MiB filter
    // comes from L3 once per call, 7 x 32 tiles ran at 120-134 GFLOP/s against
    // 100-107 in the third (tile_c1 = 8-32), and at 14x14x256 about level (164-174).
    // The third with tile_c1 = 16 (a 3x3 filter block of 18 KiB) and the default
    // 8 x 32 tile measured 0.72x oneDNN (geomean) over the five 2-D rows of
    // mtune-bench-families (C = 32 to 512) where the first order with tile_c1 = 64
    // measured 0.56x; only the strided row lost (0.73x against 0.84x). The default is
    // the fourth: against the third, with every other knob at its default, it ran
    // 1.00x-1.05x on the four rows with C <= 256 and 1.20x at 9x9x512 (161 against
    // 134 GFLOP/s), side by side on an Intel Xeon (session 28).
    // Packing the filter (a nofold pad of operand 1, hoisted out of the pixel loops,
    // as matmul_packed packs B) was tried and left out, since it never won. On an
    // Intel Xeon (2 MiB L2) at 7x7x512 it made f_n_oh_ow 1.6x faster (61 -> 98
    // GFLOP/s; its 590 KiB filter slice, 2 KiB strided, thrashes a few L2 sets in
    // place). It left the filter-block orders level or slower: 105-127 against
    // 111-140 at 7x7x512, and 154-172 against 166-173 at 14x14x256. Packing the
    // input window as well changed nothing. Those orders read the filter once per
    // call, so they are bound by streaming it from L3, not by where it lands.
    %tiled1 = transform.foreach %parts : !transform.any_op -> !transform.any_op {
    ^bb0(%part: !transform.any_op):
      %t = transform.tune.alternatives<"loop_order"> selected_region = 3 attributes {mtune.labels = ["n_oh_ow_f", "f_n_oh_ow", "f_c_n_oh_ow", "c_f_n_oh_ow"]} -> !transform.any_op {
        %tp, %l:5 = transform.structured.tile_using_for %part tile_sizes [1, 1, %tow, %tf, 0, 0, %tc1]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }, {
        %tp, %l:5 = transform.structured.tile_using_for %part tile_sizes [1, 1, %tow, %tf, 0, 0, %tc1] interchange = [3, 0, 1, 2, 4, 5, 6]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }, {
        %tp, %l:5 = transform.structured.tile_using_for %part tile_sizes [1, 1, %tow, %tf, 0, 0, %tc1] interchange = [3, 6, 0, 1, 2, 4, 5]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }, {
        %tp, %l:5 = transform.structured.tile_using_for %part tile_sizes [1, 1, %tow, %tf, 0, 0, %tc1] interchange = [6, 3, 0, 1, 2, 4, 5]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.yield %tp : !transform.any_op
      }
      transform.yield %t : !transform.any_op
    }

    // Partial tiles are padded with zeros to tile_ow x tile_f (tiles stay unpadded when
    // the sizes divide; after the split above, only the rest's one ow tile is partial
    // in ow). Peeling the loops instead was tried: canonicalizing the peeled loops
    // (needed for static remainder shapes) loses the transform handles, which
    // splitting the op does not. The output tile is copied back explicitly: when
    // every parallel loop has one tile (one output row whose f fits one tile) they
    // fold away, and the channel loop would then yield a slice of the padded tile,
    // which bufferization rejects ("Yield operand is not equivalent to the
    // corresponding iter bbArg"; h = 3, kh = 3, f = 17 failed so). For tiles that
    // are not padded the copy is one of a buffer onto itself, which is erased.
    %padded, %pad1, %copy1 = transform.structured.pad %tiled1 {
        padding_dimensions = [2, 3],
        copy_back_op = "linalg.copy"
      } : (!transform.any_op)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)

    // Level 2: one filter tap and one channel per step, in the order `reduction_order`.
    %tiled2 = transform.tune.alternatives<"reduction_order"> selected_region = 0 attributes {mtune.labels = ["kh_kw_c", "c_kh_kw"]} -> !transform.any_op {
      %t, %l:3 = transform.structured.tile_using_for %padded tile_sizes [0, 0, 0, 0, 1, 1, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }, {
      %t, %l:3 = transform.structured.tile_using_for %padded tile_sizes [0, 0, 0, 0, 1, 1, 1] interchange = [0, 1, 2, 3, 6, 4, 5]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }
    %conv1d = transform.structured.decompose %tiled2 : (!transform.any_op) -> !transform.any_op
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
    %contract = transform.structured.match ops{["vector.contract"]} in %func : (!transform.any_op) -> !transform.any_op
    %loop3 = transform.get_parent_op %contract {op_name = "scf.for", deduplicate} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loop3 : !transform.any_op
    %loop2 = transform.get_parent_op %loop3 {op_name = "scf.for", deduplicate} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loop2 : !transform.any_op
    %loop1 = transform.get_parent_op %loop2 {op_name = "scf.for", deduplicate} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loop1 : !transform.any_op

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
