// mtune strategy template: matmul with B (and optionally A) packed in register-tile
// layout, the structure of BLAS-like libraries.
// mtune-family: matmul, matmul_transpose_a, matmul_transpose_b, batch_matmul
//
// Level 1 tiles n and k (tile_n1, tile_k1), then m (tile_m1) inside them: the loop
// order of a BLAS, where one packed B panel (k1 x n1, in L2) serves every m block
// and one A block (m1 x k1) serves every register tile of the panel. The level-1 tile
// is padded with zeros so that every dimension is a multiple of its cache tile (m of
// tile_m1, n of tile_n1, k of tile_k1): level 2 and vectorization always see static
// shapes, for any m, n, k, and edge tiles cost one copy per cache tile, not per k step.
// Level 2 tiles (tile_m2, tile_n2, tile_k2) give the register tile (its accumulators
// within the 32 zmm registers of AVX-512), with the m/n loop order of `loop_order`.
//
// Packing: the level-2 operand of B is padded with nofold and that pad is hoisted out
// of the three level-2 loops and the m1 loop, which turns it into one contiguous
// buffer per (n, k) cache tile laid out as [n1/n2][k1/k2][k2][n2]: the innermost loop
// then walks B with unit stride (no cache-set conflicts or TLB misses from B's row
// stride), and the buffer is written once and reused for all of m. `pack_a` does the
// same for A per (n, k, m) cache tile ([m1/m2][k1/k2][m2][k2]): the register tile's
// broadcasts then come from one contiguous block instead of m2 rows a whole row
// stride apart. With tile_k2 >= 8 the packing copies move rows of k2 elements as
// vectors; with tile_k2 = 1 they gather A one element at a time. `pack_a = only`
// packs A and leaves B in place (where few rows of A use B, packing it costs more
// than it saves).
//
// Only the level-2 matmul and the pads are vectorized (not the whole function):
// vectorizing the level-1 tensor.insert_slice would copy the whole C tile through
// registers after bufferization made it a copy onto itself. The accumulator tile is
// hoisted out of the innermost k loop, so it stays in registers across the reduction.
//
// Option sets written as strings are expanded per problem by mtune (see
// strategies/knob_space.h): each cache tile may also be its whole dimension rounded
// up a little (roundup), so that an odd size such as 513x257x129 is one tile in n and
// k padded by a few percent, instead of several tiles each padded and copied, or the
// whole dimension exactly (roundup(X, 1)), with the partial register tiles of m and n
// peeled (peel_m2, peel_n2): then C is not padded, so not copied in and out, and A and
// B are read by the packing copies directly (a level-1 pad in k alone folds into
// those reads).
// Constraints between knobs are upstream `transform.smt.constrain_params` ops: mtune evaluates them per problem and prunes
// candidates that break them before any compile (see strategies/param_constraint.h),
// and removes them from the instantiated script. The `selected` values are the
// template's default candidate: the whole of n = 512 as one B panel (so A is packed
// once), m blocks of 128, an 8 x 32 register tile. Side by side at 512^3 it measured
// 0.90-1.07x oneDNN where m1 = n1 = 256 measured 0.87x (paired per round, medians of
// 7 and 11 rounds on the noisy VM); a 12 x 32 peeled tile measured about the same.

module attributes {transform.with_named_sequence} {
  // Start point (proposed right after the default, see strategies/knob_space.h): k
  // tiles of 128, k2 = 1, A read in place. On a Zen 5 host (48 KiB L1, 1 MiB L2) it ran
  // 1.07-1.13x the default at 512^3 and 1024^3 (1.0x oneDNN) and was the best of 96-160
  // tuned trials there; on the Intel host of the 512^3 table it measured 0.92x of the
  // default (166 against 180 GFLOP/s), which is why it is not the default.
  // A second start point: A packed, B read in place (pack_a = only), k tiles of 128.
  // On the AMD EPYC znver4 host of session 33 (`mtune-bench-families --trials 0
  // --variant`, 5 rounds) it ran 64x512x1024 at 1.08-1.09x the default (112 GFLOP/s,
  // 0.99x oneDNN, where 12-trial searches had stopped at 0.91-0.92x), 256^3 and 512^3
  // at 1.02-1.03x and matmul_transpose_a 512^3 at 0.98-1.06x, but 1024^3 at 0.95x and
  // 127x255x513 (whose k keeps the default's 520-wide tile) at 0.64x. Where B is
  // stored transposed it has no `only`, and keeps the default's packing.
  // A third: the whole of m and of k as one cache tile (roundup(X, 1): nothing padded
  // in m or k, so A is read in place and each C tile is loaded and stored once), B
  // packed in 128-column panels, k2 = 1. It was the best of 1800 measured candidates
  // of 127x255x513 on the Zen 5 host (bench/data/matmul_127x255x513_f32.csv, with a 4
  // x 64 register tile). On the znver4 host of session 34 (`mtune-bench-families
  // --trials 0 --variant`, 5-7 rounds) it ran 127x255x513 at 1.04-1.06x what 12
  // model trials had found (0.98-0.99x oneDNN, where they reached 0.93-0.94x) and
  // 1.02-1.13x the default on 256^3, 512^3, 64x512x1024, matmul_transpose_a 512^3 and
  // matmul_transpose_b 127x255x513 and 512^3. Where the whole of m and k makes an A
  // block over the 1 MiB bound (1024^3), the point breaks a constraint and is not
  // proposed; where 128 columns pad n by over an eighth, it keeps the default's n1.
  // On CPUs without AVX-512 the default's 8 x 32 register tile (32 of AVX2's 16 ymm
  // registers for its accumulators alone) spills on every k step: the register
  // constraint below, sized by the target's registers, rules it out there, and the
  // default candidate becomes the nearest tile that fits, 6 x 16 (12 registers, two
  // of B, a broadcast of A). On the AMD EPYC znver3 host of session 49
  // (`mtune-bench-matmul --knob tile_m2=8 --variant "tile_m2=6 tile_n2=16"`, 5 rounds)
  // 6 x 16 ran 256^3, 512^3 and 1024^3 at 0.72-0.87 of the FMA peak and 1.01-1.60x
  // oneDNN, 2.6-3.0x the spilling 8 x 32 (0.28-0.29 of the peak).
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.start_points = [{tile_k1 = 128 : i64, tile_k2 = 1 : i64, pack_a = "no"},
                                        {tile_k1 = 128 : i64, pack_a = "only"},
                                        {tile_m1 = "roundup(m, 1)", tile_n1 = 128 : i64, tile_k1 = "roundup(k, 1)", tile_k2 = 1 : i64, pack_a = "no"}]} {
    // A batch matmul is tiled by one batch, and each batch's tile becomes a plain 2-D
    // linalg.matmul (generalized, its unit batch dimension folded into rank-reducing
    // slices, named again); what follows tunes that matmul inside the batch loop. The
    // generic matched is the tile's: a strategy runs on a function holding its op
    // alone (the exported library outlines an op that shares its function).
    %batched = transform.structured.match ops{["linalg.batch_matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %batched : !transform.any_op {
    ^bb0(%one_batch_op: !transform.any_op):
      %batch_tile, %batch_loop = transform.structured.tile_using_for %one_batch_op tile_sizes [1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      %batch_generic = transform.structured.generalize %batch_tile : (!transform.any_op) -> !transform.any_op
      %batch_func = transform.get_parent_op %batch_loop {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
      transform.apply_patterns to %batch_func {
        transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      } : !transform.any_op
      %one_batch = transform.structured.match ops{["linalg.generic"]} in %batch_func : (!transform.any_op) -> !transform.any_op
      %named = transform.structured.specialize %one_batch : (!transform.any_op) -> !transform.any_op
    }
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op

    // Defaults for odd shapes: a cache tile that would pad its dimension by more than an
    // eighth gives way to the whole dimension (m, n: nothing padded, the partial register
    // tiles peeled, C used in place) or, for k, to k rounded up to 8 (a pad in k alone
    // folds into the packing reads and keeps k2 = 8). 513x257x129 then defaults to
    // m1 = 513, n1 = 257, k1 = 136 instead of 640 x 288 x 144 worth of work.
    %tm1 = transform.tune.knob<"tile_m1"> = 128 from options = "32, 48, 64, 96, 128, 192, 256, 384, 512, roundup(m, 8), roundup(m, 1)" {mtune.tiles = "m", mtune.padded_default = "roundup(m, 1)"} -> !transform.param<i64>
    %tn1 = transform.tune.knob<"tile_n1"> = 512 from options = "32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096, roundup(n, 32), roundup(n, 16), roundup(n, 1)" {mtune.tiles = "n", mtune.padded_default = "roundup(n, 1)"} -> !transform.param<i64>
    %tk1 = transform.tune.knob<"tile_k1"> = 512 from options = "32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096, roundup(k, 16), roundup(k, 8), roundup(k, 1)" {mtune.tiles = "k", mtune.padded_default = "roundup(k, 8)"} -> !transform.param<i64>
    %tm2 = transform.tune.knob<"tile_m2"> = 8 from options = [4, 6, 8, 12, 16] -> !transform.param<i64>
    // 8 columns only where they are a cache line (the constraints): f64.
    %tn2 = transform.tune.knob<"tile_n2"> = 32 from options = [8, 16, 32, 64] -> !transform.param<i64>
    // Whether the m2 loop ends in a partial register tile that is peeled off into a
    // loop of its own (1), so that every tile keeps a static shape: a 12 x 32 tile,
    // with 24 accumulators, then serves an m block of 256 as 21 tiles and 4 rows.
    // Not a free choice (mtune.derived): the constraints make it 1 exactly when m2 does
    // not divide m1.
    %peel = transform.tune.knob<"peel_m2"> = 0 from options = [0, 1] {mtune.derived} -> !transform.param<i64>
    // Whether the cache tiles pad C (1: m or n is not a multiple of its cache tile), so
    // that the padded C tile must be copied back; when they do not (0), that copy is
    // an identity on C and is dropped. Kept, it made bufferization copy the whole C
    // tile out and back once per k tile whenever one n tile covers n: at 512^3 with
    // tile_k1 = 256, two 1 MiB round trips, and the n-outer order measured 0.79x of
    // itself without them. Derived, like peel_m2.
    %cpad = transform.tune.knob<"copy_back_c"> = 0 from options = [0, 1] {mtune.derived} -> !transform.param<i64>
    // The same peeling for the n2 loop (1 exactly when n2 does not divide n1), so that
    // a cache tile may be the whole of an odd n: 513x257x129 with exact cache tiles
    // (m1 = 513, n1 = 257, k1 = 129, k2 = 1, A not packed) pads nothing, copies no C
    // tile, and measured 0.99x oneDNN where padding to 520 x 288 x 144 measured 0.70x
    // (paired rounds). The peeled tile is n1 % n2 columns wide; only a power of two is
    // allowed: at 127x255x513, n1 = 255 (a 31-wide tile) measured 0.58x of n1 = 256.
    %peeln = transform.tune.knob<"peel_n2"> = 0 from options = [0, 1] {mtune.derived} -> !transform.param<i64>
    // B stored transposed (matmul_transpose_b): a k2 of 4 or more makes B's packing a
    // transposing copy that measured 4x slower (27 against 112 GFLOP/s at 512^3), so
    // k2 is 1 there; for the other layouts the default packs A with k2 = 8.
    %tk2 = transform.tune.knob<"tile_k2"> = 8 from options = [1, 2, 4, 8, 16] {mtune.only_for = ["matmul", "matmul_transpose_a", "batch_matmul"], mtune.otherwise = 1 : i64} -> !transform.param<i64>

    // Register tiles divide the k cache tile, and the n one up to a peeled power-of-two
    // remainder (peel_n2). The accumulator tile plus one row of B
    // and one broadcast of A fit the target's vector registers (vector_registers.h):
    // (m2 + 1) * n2 * acc_bytes <= (registers - 1) * register bytes, on AVX-512 31 * 64
    // (8x32 or 12x32 or 6x64 f32, 8x16 f64), on AVX2 15 * 32 (4x16 or 6x16 f32, 6x8
    // f64); beyond that the k loop spills on every step, which measured 0.43 of peak
    // for an f64 8x32 tile against 0.60 for 8x16. A row of the tile is at least a cache
    // line (tile_n2 * acc_bytes >= 64): 8 columns are a tile for f64 (which on AVX2 has
    // no other), not for f32. On the AVX2 host of session 50 (`mtune-bench-matmul
    // --variant`, 3 rounds) f32 8 x 8 and 12 x 8 ran 256^3-1024^3 at 0.70-0.91x and
    // 0.76-0.83x of 6 x 16. The packed B panel takes at most half of
    // the 2 MiB per-core L2 of this machine family, and so does the A block. An m
    // block that is not a whole number of register tiles has its last tile peeled
    // (peel_m2 = 1 then, 0 otherwise). Padding a dimension to a multiple of its cache
    // tile may add at most a quarter of it (4 * padded <= 5 * dim), except for tiles of up to
    // 48, so that a small dimension always has a choice: 513x257x129 padded to
    // 768x512x512 by the default tiles did 6x the useful work, at 0.15x oneDNN.
    transform.smt.constrain_params(%tm1, %tn1, %tk1, %tm2, %tn2, %tk2, %peel, %cpad, %peeln) {mtune.rule = "tile_k2 divides tile_k1; peel_m2 = 1 exactly when tile_m2 does not divide tile_m1, peel_n2 likewise for n, whose rest must then be 1, 2, 4, 8 or 16; (tile_m2 + 1) x tile_n2 accumulators fit all vector registers but one (31 zmm of AVX-512, 15 ymm of AVX2) and a row of tile_n2 is at least 64 bytes; the A and B panels fit 1 MiB each; a cache tile pads its dimension by at most a quarter unless it is at most 48; copy_back_c = 1 exactly when m or n is not whole cache tiles"}
        : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%m1: !smt.int, %n1: !smt.int, %k1: !smt.int, %m2: !smt.int, %n2: !smt.int, %k2: !smt.int, %pm: !smt.int, %pc: !smt.int, %pn: !smt.int):
      %m = smt.declare_fun "m" : !smt.int
      %n = smt.declare_fun "n" : !smt.int
      %k = smt.declare_fun "k" : !smt.int
      %elem = smt.declare_fun "elem_bytes" : !smt.int
      %acc = smt.declare_fun "acc_bytes" : !smt.int
      %zero = smt.int.constant 0
      %n_rem = smt.int.mod %n1, %n2
      %n_divides = smt.eq %n_rem, %zero : !smt.int
      %k_rem = smt.int.mod %k1, %k2
      %k_divides = smt.eq %k_rem, %zero : !smt.int
      %one = smt.int.constant 1
      %rows = smt.int.add %m2, %one
      %reg_bytes = smt.int.mul %rows, %n2, %acc
      %vregs = smt.declare_fun "vector_registers" : !smt.int
      %vbytes = smt.declare_fun "vector_bytes" : !smt.int
      %spare = smt.int.sub %vregs, %one
      %reg_limit = smt.int.mul %spare, %vbytes
      %acc_fits = smt.int.cmp le %reg_bytes, %reg_limit
      %row_bytes = smt.int.mul %n2, %acc
      %line = smt.int.constant 64
      %row_fills = smt.int.cmp ge %row_bytes, %line
      %panel_bytes = smt.int.mul %n1, %k1, %elem
      %panel_limit = smt.int.constant 1048576
      %panel_fits = smt.int.cmp le %panel_bytes, %panel_limit
      %a_bytes = smt.int.mul %m1, %k1, %elem
      %a_fits = smt.int.cmp le %a_bytes, %panel_limit
      %m_rem = smt.int.mod %m1, %m2
      %m_divides = smt.eq %m_rem, %zero : !smt.int
      // padded d = d + (tile - d mod tile) mod tile, per dimension.
      %four = smt.int.constant 4
      %five = smt.int.constant 5
      %small_tile = smt.int.constant 48
      %m_mod = smt.int.mod %m, %m1
      %m_gap = smt.int.sub %m1, %m_mod
      %m_pad = smt.int.mod %m_gap, %m1
      %m_padded = smt.int.add %m, %m_pad
      %m_padded4 = smt.int.mul %four, %m_padded
      %m_5 = smt.int.mul %five, %m
      %m_waste_ok = smt.int.cmp le %m_padded4, %m_5
      %m1_small = smt.int.cmp le %m1, %small_tile
      %m_ok = smt.or %m_waste_ok, %m1_small
      %n_mod = smt.int.mod %n, %n1
      %n_gap = smt.int.sub %n1, %n_mod
      %n_pad = smt.int.mod %n_gap, %n1
      %n_padded = smt.int.add %n, %n_pad
      %n_padded4 = smt.int.mul %four, %n_padded
      %n_5 = smt.int.mul %five, %n
      %n_waste_ok = smt.int.cmp le %n_padded4, %n_5
      %n1_small = smt.int.cmp le %n1, %small_tile
      %n_ok = smt.or %n_waste_ok, %n1_small
      %k_mod = smt.int.mod %k, %k1
      %k_gap = smt.int.sub %k1, %k_mod
      %k_pad = smt.int.mod %k_gap, %k1
      %k_padded = smt.int.add %k, %k_pad
      %k_padded4 = smt.int.mul %four, %k_padded
      %k_5 = smt.int.mul %five, %k
      %k_waste_ok = smt.int.cmp le %k_padded4, %k_5
      %k1_small = smt.int.cmp le %k1, %small_tile
      %k_ok = smt.or %k_waste_ok, %k1_small
      %peeled = smt.eq %pm, %one : !smt.int
      %peel_iff_partial = smt.xor %m_divides, %peeled
      // C is padded exactly when m or n is not a whole number of cache tiles.
      %m_whole = smt.eq %m_mod, %zero : !smt.int
      %n_whole = smt.eq %n_mod, %zero : !smt.int
      %c_whole = smt.and %m_whole, %n_whole
      %copied = smt.eq %pc, %one : !smt.int
      %copy_iff_padded = smt.xor %c_whole, %copied
      %npeeled = smt.eq %pn, %one : !smt.int
      %peeln_iff_partial = smt.xor %n_divides, %npeeled
      %two = smt.int.constant 2
      %eight = smt.int.constant 8
      %sixteen = smt.int.constant 16
      %n_rem1 = smt.eq %n_rem, %one : !smt.int
      %n_rem2 = smt.eq %n_rem, %two : !smt.int
      %n_rem4 = smt.eq %n_rem, %four : !smt.int
      %n_rem8 = smt.eq %n_rem, %eight : !smt.int
      %n_rem16 = smt.eq %n_rem, %sixteen : !smt.int
      %n_rem_ok = smt.or %n_divides, %n_rem1, %n_rem2, %n_rem4, %n_rem8, %n_rem16
      %all = smt.and %peeln_iff_partial, %n_rem_ok, %k_divides, %acc_fits, %row_fills, %panel_fits, %a_fits, %peel_iff_partial, %m_ok, %n_ok, %k_ok, %copy_iff_padded
      smt.assert %all
    }

    // Level 1: cache tiles over n then k, padded to whole cache tiles, then m blocks
    // inside them. A padded C tile is copied back explicitly: when one n tile covers
    // n, its loop folds away and the k loop would yield a slice of the padded buffer,
    // which bufferization rejects ("Yield operand is not equivalent to the
    // corresponding iter bbArg"; m=100, n=128, k=512 failed so). When C is not padded
    // the copy is dropped (copy_back_c).
    %tiled_nk, %loops_nk:2 = transform.structured.tile_using_for %matmul tile_sizes [0, %tn1, %tk1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %padded_nk, %pad1, %copy1 = transform.structured.pad %tiled_nk pad_to_multiple_of [%tm1, %tn1, %tk1] {
        padding_dimensions = [0, 1, 2],
        copy_back_op = "linalg.copy"
      } : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @drop_copy_unless failures(propagate) (%copy1, %cpad) : (!transform.any_op, !transform.param<i64>) -> ()
    %padded1, %loop_m1 = transform.structured.tile_using_for %padded_nk tile_sizes [%tm1, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // Fold the B slice the m1 tiling takes (the whole padded panel, an identity
    // slice): B's level-2 pad then reads a value defined outside the m1 loop and can
    // be hoisted out of it. Folding only (no patterns), so nothing else changes.
    %func1 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func1 {
    } : !transform.any_op

    // Level 2: register tiles, m-outer (a row panel of A stays in L1 while the
    // packed B streams from L2) or n-outer (a packed B sliver stays in L1).
    transform.tune.alternatives<"loop_order"> selected_region = 0 attributes {mtune.labels = ["mnk", "nmk"]} {
      %t, %l:3 = transform.structured.tile_using_for %padded1 tile_sizes [%tm2, %tn2, %tk2]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_if failures(propagate) (%l#1, %peeln) : (!transform.any_op, !transform.param<i64>) -> ()
      transform.include @peel_if failures(propagate) (%l#0, %peel) : (!transform.any_op, !transform.param<i64>) -> ()
    }, {
      %t, %l:3 = transform.structured.tile_using_for %padded1 tile_sizes [%tm2, %tn2, %tk2] interchange = [1, 0, 2]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.include @peel_if failures(propagate) (%l#1, %peel) : (!transform.any_op, !transform.param<i64>) -> ()
      transform.include @peel_if failures(propagate) (%l#0, %peeln) : (!transform.any_op, !transform.param<i64>) -> ()
    }
    // The register-tile matmuls: the tiled one and, when peeled, its partial tiles (up
    // to four with both loops peeled; the only linalg.matmul ops left, and peeling
    // invalidated the handles tiling returned).
    %tiled2 = transform.structured.match ops{["linalg.matmul"]} in %func1 : (!transform.any_op) -> !transform.any_op

    // Packing: nofold pads of the register-tile operands, hoisted out of the three
    // level-2 loops (and, for B, the m1 loop). pack_a = "no" packs B only, "yes" A and
    // B, "only" A only: B is then read in place, which pays where B is large and used
    // by few rows of A (64x512x1024: packing B's 2 MiB served 64 rows; 1.15x with
    // tile_k1 = 128, paired runs of the two kernels). Not for matmul_transpose_b, whose
    // B is stored transposed (in place, the register tile would gather it).
    %padded2 = transform.tune.alternatives<"pack_a"> selected_region = 1 attributes {mtune.labels = ["no", "yes", "only"], mtune.label_families = {only = ["matmul", "matmul_transpose_a", "batch_matmul"]}} -> !transform.any_op {
      %p, %pad, %copy = transform.structured.pad %tiled2 {
          padding_dimensions = [0, 1, 2],
          nofold_flags = [0, 1, 0],
          copy_back_op = "none"
        } : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %pad_b = transform.get_producer_of_operand %p[1] : (!transform.any_op) -> !transform.any_op
      %packed_b = transform.structured.hoist_pad %pad_b by 4 loops : (!transform.any_op) -> !transform.any_op
      transform.yield %p : !transform.any_op
    }, {
      %p, %pad, %copy = transform.structured.pad %tiled2 {
          padding_dimensions = [0, 1, 2],
          nofold_flags = [1, 1, 0],
          copy_back_op = "none"
        } : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %pad_b = transform.get_producer_of_operand %p[1] : (!transform.any_op) -> !transform.any_op
      %packed_b = transform.structured.hoist_pad %pad_b by 4 loops : (!transform.any_op) -> !transform.any_op
      %pad_a = transform.get_producer_of_operand %p[0] : (!transform.any_op) -> !transform.any_op
      %packed_a = transform.structured.hoist_pad %pad_a by 3 loops : (!transform.any_op) -> !transform.any_op
      transform.yield %p : !transform.any_op
    }, {
      // Whole register tiles need no padding of B, so its pad folds away.
      %p, %pad, %copy = transform.structured.pad %tiled2 {
          padding_dimensions = [0, 1, 2],
          nofold_flags = [1, 0, 0],
          copy_back_op = "none"
        } : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %pad_a = transform.get_producer_of_operand %p[0] : (!transform.any_op) -> !transform.any_op
      %packed_a = transform.structured.hoist_pad %pad_a by 3 loops : (!transform.any_op) -> !transform.any_op
      transform.yield %p : !transform.any_op
    }

    // The partial register tile peeled off the m2 loop (peel_m2) packs the same B
    // panel as the full ones: one packing loop nest for both. One peeled off the n2
    // loop (peel_n2) packs its own narrow B sliver. Folding first (no patterns): it
    // moves the constants hoisting left inside the packing loops up to the function,
    // without which CSE saw two different nests for matmul_transpose_b in the n-outer
    // order and B was packed twice, into two buffers (512^3, 12 x 32 tiles, m1 = 32:
    // 144-154 GFLOP/s, against 178-183 with one, three alternating runs, session 25).
    transform.apply_patterns to %func1 {
    } : !transform.any_op
    transform.apply_cse to %func1 : !transform.any_op

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
    // A matmul whose whole k is one register tile (k <= 8 with k1 = k2 = 8) has no loop
    // around its contraction: nothing to hoist (the default of matmul:m=9,n=16,k=6
    // failed to apply, "could not find a parent op", before allow_empty_results).
    %contract = transform.structured.match ops{["vector.contract"]} in %func : (!transform.any_op) -> !transform.any_op
    %k_loop = transform.get_parent_op %contract {op_name = "scf.for", allow_empty_results} : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %k_loop : !transform.any_op

    // Copies of edge tiles become linalg.copy loops that LLVM vectorizes, rather than
    // calls to the element-by-element runtime memrefCopy.
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op

    // The register-tile contraction: a sum of outer products (broadcast A, FMA rows of
    // B), dot products along k, LLVM's matrix-multiply intrinsic, or elementwise
    // arithmetic over the parallel dimensions. With bf16 inputs only the outer
    // products: the other three leave the bf16 x bf16 -> f32 vector.contract as it is,
    // and the JIT fails on it (every candidate of a 21-trial random job that drew
    // them, 12 of 21).
    transform.tune.alternatives<"contraction_lowering"> selected_region = 0 attributes {mtune.labels = ["outerproduct", "dot", "matmulintrinsics", "parallelarith"], mtune.label_types = {dot = ["f32", "f64"], matmulintrinsics = ["f32", "f64"], parallelarith = ["f32", "f64"]}} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = outerproduct
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = dot
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_contraction lowering_strategy = llvmintr
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
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    // Canonicalization on its own: in one set with the lowerings above it never
    // converged on a peeled one-row register tile (m1 % m2 = 1, vector<1xf32>
    // operands; the interpreter ran until killed at 19 GiB).
    transform.apply_patterns to %kernel {
      transform.apply_patterns.canonicalization
    } : !transform.any_op

    transform.yield
  }
  // peel_m2 = 1: peels the partial last register tile off the m2 loop (`loop.peel`
  // fails on a loop its step divides, hence the check). A sequence that propagates
  // failures, so a failed check skips the peeling, inside one that suppresses it.
  transform.named_sequence @peel_if(%loop: !transform.any_op {transform.readonly},
      %peel: !transform.param<i64> {transform.readonly}) {
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    transform.sequence %loop : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      transform.sequence %l : !transform.any_op failures(propagate) {
      ^bb1(%l2: !transform.any_op):
        transform.match.param.cmpi eq %peel, %one : !transform.param<i64>
        %for = transform.cast %l2 : !transform.any_op to !transform.op<"scf.for">
        %main, %rest = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
    }
    transform.yield
  }
  // copy_back_c = 0: C is not padded, so the copy back is an identity on C. As a
  // linalg.generic it is erased by canonicalization (upstream folds identity generics
  // on tensors); a linalg.copy is not, and then bufferization copies C out and back.
  transform.named_sequence @drop_copy_unless(%copy: !transform.any_op {transform.consumed},
      %copied: !transform.param<i64> {transform.readonly}) {
    %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
    transform.sequence %copy : !transform.any_op failures(suppress) {
    ^bb0(%c: !transform.any_op):
      transform.sequence %c : !transform.any_op failures(propagate) {
      ^bb1(%c2: !transform.any_op):
        transform.match.param.cmpi eq %copied, %zero : !transform.param<i64>
        %generic = transform.structured.generalize %c2 : (!transform.any_op) -> !transform.any_op
      }
    }
    transform.yield
  }
}
