// mtune strategy template: a bf16 matmul (f32 accumulation) through the AVX512-BF16
// dot product, vdpbf16ps, which multiplies pairs of bf16 values along k and adds
// both products to one f32 lane. Only for CPUs with avx512bf16 (mtune.cpu_features:
// workers without it report COMPILE_ERROR for every candidate, since LLVM cannot
// select the instruction there and would stop the process) and bf16 problems
// (mtune.element_types). The choice for a bf16 matmul of a job that names no
// template where no worker has AMX but one has avx512bf16, and for shapes AMX's
// 16-column tiles do not fit (strategies/template_choice.h); elsewhere
// matmul_packed, the family's default, widens bf16 to f32 inside its loop instead.
// On the Intel Xeon host of sessions 23-30 (AVX512-BF16 and AMX), tuned with 24
// model trials each (session 30, `mtune-bench-families --db`, 5 rounds):
// 256^3, 512^3, 1024^3 and 128x3072x768 ran at 114-121 GFLOP/s, 1.06-1.43x
// matmul_packed tuned the same way (86-106), and 0.09-0.15x oneDNN, whose bf16
// matmul uses AMX there (770-1370 GFLOP/s). On CPUs with AMX, tune bf16 matmuls with
// matmul_bf16_amx instead (session 31: 1.10-1.26x oneDNN there).
// mtune-family: matmul, matmul_transpose_a, matmul_transpose_b
//
// Level 1 tiles n and k (tile_n1, tile_k1: divisors of n and k), the loop order of a
// BLAS. Inside, `structured.pack` splits k into pairs: A's tile becomes a view
// [m][k1/2][2] of itself, B's a copy in the VNNI layout [k1/2][n1][2] (its
// linalg.transpose, tiled 1 x 16 and vectorized): one copy per cache tile, used by
// every m row. Level 2 tiles the packed op by m2 rows x n2 columns x one k pair, then
// splits that register tile into 1 x 16 tiles whose loops are unrolled, so each
// vectorizes to a contraction of one pair of A by a 16-column, 2-deep sliver of B:
// exactly what x86vector's `vector_contract_to_packed_type_dot_product` rewrites
// into one vdpbf16ps (after `reduction_to_contract` and `fold_arith_extension` made
// it a bf16 x bf16 -> f32 contraction). The m2 x n2/16 accumulators are hoisted out
// of the k loop; `mtune-flatten-transfers` then reads each B sliver with one 64-byte
// load (without it, 16 reads of 2 elements: 44.9 against 110 GFLOP/s at 512^3).
// The inner loop is n2/16 loads, m2 broadcasts and m2 x n2/16 dot products per pair.
//
// Layouts: all three. In matmul_transpose_a/b the pack of A [k][m] or B [n][k] is
// swapped into AB's layouts with `pack_transpose` (as matmul_bf16_amx does), so
// the register tiles are the same; the copies are made fast as there (see the
// packing copies below). At 256^3 on the AMD EPYC (znver4) host of session 32, the
// template defaults ran AB / AᵀB / ABᵀ at 231 / 203 / 210 GFLOP/s, 0.87-0.98 of the
// AVX512-BF16 dot-product peak (234).
//
// Shapes: any m (the rows m % tile_m2 left after the whole register tiles are peeled
// into a loop of their own, with a register tile of that many rows: rest_m2, derived),
// any n, any k of at least 3. An n that is not a multiple of 16 is first padded with
// zero columns to n_padded (B's extra columns and C's; C is copied back): on the AMD
// EPYC znver4 host of session 33, 127x255x513 ran at 180-189 GFLOP/s so, against 208
// for 127x256x513 and 73 for matmul_packed (the choice for such shapes before),
// alternating `mtune measure` runs. Where n is already n_padded the pad is nothing:
// the kernel is the same as without it. An even k is cut into whole pairs (k1
// even): nothing pads. An odd k has only odd cache tiles, each padded with one zero
// pair element: the pack of A becomes a copy (with a zero column) instead of a view,
// B's copy gets a zero row (session 32; every candidate of 37x96x67 in the three
// layouts and of 20x32x255 verified). Padding the whole matmul instead (session 29)
// ran the pads as scalar copies: 127x255x513 at 41 GFLOP/s against matmul_packed's
// 79. A k below 3 has no valid candidate here: a job naming this template for one
// is refused, and one naming none gets matmul_packed.
//
// On that host a loop of vdpbf16ps on registers alone peaks at 123 GFLOP/s, half the
// f32 FMA peak (246): bf16 through this path cannot pass the f32 kernels there. On
// AMD's Zen 4 it peaks at twice the f32 FMA peak. Since session 32 the calibration
// measures that loop, and bf16 problems on CPUs without AMX are held against it.
module attributes {transform.with_named_sequence} {
  // Start point (proposed right after the default): the whole of k as one cache tile.
  // An odd k then pads one pair element once instead of once per tile: on the znver4
  // host of session 34 (`mtune-bench-families --trials 0 --variant`, 5 rounds)
  // 127x255x513 ran at 1.05x the default's three 171-deep tiles in AB and AᵀB (1.00x
  // in ABᵀ); at 512^3 and 128x1000x512 it ran as the default, at 1024^3 0.92x.
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.element_types = ["bf16"], mtune.cpu_features = ["avx512bf16"],
                  mtune.start_points = [{tile_k1 = "roundup(k, 1)"}]} {
    %op = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // The columns the kernel computes: n rounded up to a multiple of 16, 32 or 64 (one
    // option where these agree: n = 512 has only 512, n = 255 only 256). The default
    // is the one the written tiles need least changed for (strategies/default_candidate.h):
    // n = 1000 gets 1024, whose cache tiles hold 32- and 64-column register tiles, where
    // 1008's (odd multiples of 16) hold only 16 (185-189 against 143 GFLOP/s); n = 40
    // gets 64, one 64-column cache tile.
    %np = transform.tune.knob<"n_padded"> = 16 from options = "roundup(n, 16), roundup(n, 32), roundup(n, 64)" -> !transform.param<i64>
    // n padded with zero columns to that (nothing where it is n).
    %mm, %n_pads, %n_copy_back = transform.structured.pad %op pad_to_multiple_of [%np] {
        padding_dimensions = [1],
        copy_back_op = "linalg.copy"
      } : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // Cache tiles: divisors of the padded n and of k, so every tile is whole. The
    // default is the divisor nearest 256 x 256 (a 128 KiB packed B panel).
    %tn1 = transform.tune.knob<"tile_n1"> = 256 from options = "divisors(roundup(n, 16)), divisors(roundup(n, 32)), divisors(roundup(n, 64))" -> !transform.param<i64>
    %tk1 = transform.tune.knob<"tile_k1"> = 256 from options = "divisors(k)" -> !transform.param<i64>
    // The register tile: m2 rows x n2 columns of f32 accumulators (n2/16 zmm per row).
    // @unroll_register_tile has one case per option.
    %tm2 = transform.tune.knob<"tile_m2"> = 8 from options = [4, 6, 8, 10, 12, 14] -> !transform.param<i64>
    %tn2 = transform.tune.knob<"tile_n2"> = 32 from options = [16, 32, 64] -> !transform.param<i64>
    // The rows m % m2 left after the whole register tiles, handled by peeling the last
    // tile off the m2 loop into a loop of its own with a tile of that many rows.
    // Derived: the constraints solve it.
    %rest = transform.tune.knob<"rest_m2"> = 0 from options = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] {mtune.derived} -> !transform.param<i64>
    // n1 is whole 16-column pieces (the packing copy moves 16 columns of two k rows at
    // a time: one 64-byte row of the packed panel; 32 at a time measured the same,
    // 115.7-119.9 against 116.9-119.9 GFLOP/s at 512^3 in alternating runs) and whole
    // register tiles; k1 is whole k pairs where k is even (an odd k has odd tiles
    // only, padded), at least two of them (with one, the k loop folds away under
    // canonicalization and the handle the accumulators are hoisted with is lost:
    // the candidate failed to apply); rest_m2
    // is what m leaves of whole register tiles. The accumulators, one zmm of B per 16
    // columns and one broadcast of A fit the 32 zmm registers: (m2 + 1) * n2 / 16
    // <= 31. The packed B panel (n1 x k1 bf16) takes at most half of this machine
    // family's 2 MiB L2.
    transform.smt.constrain_params(%tn1, %tk1, %tm2, %tn2, %rest, %np) {mtune.rule = "tile_n1 a multiple of 16 that divides the padded n, tile_n2 divides tile_n1, tile_k1 at least 3 and even unless k is odd, rest_m2 = m mod tile_m2, (tile_m2 + 1) x tile_n2 f32 accumulators fit 31 zmm, and the bf16 B panel fits 1 MiB"}
        : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%n1: !smt.int, %k1: !smt.int, %m2: !smt.int, %n2: !smt.int, %r: !smt.int, %npad: !smt.int):
      %m = smt.declare_fun "m" : !smt.int
      %zero = smt.int.constant 0
      %one = smt.int.constant 1
      %two = smt.int.constant 2
      %sixteen = smt.int.constant 16
      %n1_16 = smt.int.mod %n1, %sixteen
      %n1_ok = smt.eq %n1_16, %zero : !smt.int
      %n1_n2 = smt.int.mod %n1, %n2
      %n2_ok = smt.eq %n1_n2, %zero : !smt.int
      %k = smt.declare_fun "k" : !smt.int
      %k1_2 = smt.int.mod %k1, %two
      %k1_even = smt.eq %k1_2, %zero : !smt.int
      %k_2 = smt.int.mod %k, %two
      %k_odd = smt.eq %k_2, %one : !smt.int
      %k1_whole = smt.or %k1_even, %k_odd
      %three = smt.int.constant 3
      %k1_pairs = smt.int.cmp ge %k1, %three
      %k1_ok = smt.and %k1_whole, %k1_pairs
      %m_m2 = smt.int.mod %m, %m2
      %m_ok = smt.eq %m_m2, %r : !smt.int
      %rows = smt.int.add %m2, %one
      %regs = smt.int.mul %rows, %n2
      %reg_limit = smt.int.constant 496
      %regs_ok = smt.int.cmp le %regs, %reg_limit
      %panel = smt.int.mul %n1, %k1, %two
      %panel_limit = smt.int.constant 1048576
      %panel_ok = smt.int.cmp le %panel, %panel_limit
      %np_n1 = smt.int.mod %npad, %n1
      %n1_divides = smt.eq %np_n1, %zero : !smt.int
      %all = smt.and %n1_ok, %n1_divides, %n2_ok, %k1_ok, %m_ok, %regs_ok, %panel_ok
      smt.assert %all
    }
    // Level 1, then k in pairs: A's pack lowers to a view, B's to a pad (of nothing
    // where k1 is even), a view and the VNNI transpose; an odd k1 pads both by one.
    %t1, %l1:2 = transform.structured.tile_using_for %mm tile_sizes [0, %tn1, %tk1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %packed0 = transform.structured.pack %t1 packed_sizes = [0, 0, 2] : (!transform.any_op) -> (!transform.op<"linalg.generic">)
    // The transposed layouts' packs, swapped to [m][p][2] (A packed along its dimension
    // 0, k) and [p][n][2] (B packed along its dimension 1, k), the layouts of AB's; in
    // AB these matches are empty and nothing changes.
    %a_pack = transform.get_producer_of_operand %packed0[0] : (!transform.op<"linalg.generic">) -> !transform.any_op
    %b_pack = transform.get_producer_of_operand %packed0[1] : (!transform.op<"linalg.generic">) -> !transform.any_op
    %a_k_outer = transform.structured.match ops{["linalg.pack"]} attributes{inner_dims_pos = array<i64: 0>} in %a_pack : (!transform.any_op) -> !transform.op<"linalg.pack">
    %b_k_inner = transform.structured.match ops{["linalg.pack"]} attributes{inner_dims_pos = array<i64: 1>} in %b_pack : (!transform.any_op) -> !transform.op<"linalg.pack">
    %fp = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %k_misplaced = transform.merge_handles %a_k_outer, %b_k_inner : !transform.op<"linalg.pack">
    transform.foreach %k_misplaced : !transform.op<"linalg.pack"> {
    ^bb0(%p: !transform.op<"linalg.pack">):
      %g = transform.structured.match ops{["linalg.generic"]} in %fp : (!transform.any_op) -> !transform.op<"linalg.generic">
      %pg, %pp, %pu = transform.structured.pack_transpose %p with_compute_op(%g) outer_perm = [1, 0]
        : (!transform.op<"linalg.pack">, !transform.op<"linalg.generic">) -> (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">, !transform.any_op)
    }
    %packed = transform.structured.match ops{["linalg.generic"]} in %fp : (!transform.any_op) -> !transform.op<"linalg.generic">
    %packs = transform.structured.match ops{["linalg.pack"]} in %root : (!transform.any_op) -> !transform.op<"linalg.pack">
    transform.foreach %packs : !transform.op<"linalg.pack"> {
    ^bb0(%p: !transform.op<"linalg.pack">):
      %pad, %expand, %transpose = transform.structured.lower_pack %p : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    }
    // Level 2: register tiles, one k pair per step of the innermost loop.
    %t2, %l2:3 = transform.structured.tile_using_for %packed tile_sizes [%tm2, %tn2, 1, 0]
      : (!transform.op<"linalg.generic">, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    // The k-pair loop is found again by this mark after peeling (which clones it for
    // the rest rows and invalidates the handles inside the m2 loop).
    transform.annotate %l2#2 "mtune.k_pairs" : !transform.any_op
    transform.include @peel_if_rest failures(propagate) (%l2#0, %rest) : (!transform.any_op, !transform.param<i64>) -> ()
    %f0 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiles = transform.structured.match ops{["linalg.generic"]} in %f0 : (!transform.any_op) -> !transform.any_op
    transform.include @split_register_tile failures(propagate) (%tiles) : (!transform.any_op) -> ()
    transform.include @unroll_register_tile failures(propagate) (%f0, %tm2, %tn2, %rest)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.apply_patterns to %f0 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // The 1 x 16 accumulator tiles out of the k loop, as tensor slices first, then
    // (after vectorization) as vectors.
    %k_loops = transform.structured.match attributes{"mtune.k_pairs"} in %f0 : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %k_loops : !transform.any_op
    %gens = transform.structured.match ops{["linalg.generic"]} in %f0 : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %gens : !transform.any_op
    // The packing copies, as in matmul_bf16_amx: interleaves of two k rows ([0, 2, 1]:
    // B [k][n] into VNNI), 16 columns at a time, and transposes of whole pairs ([1, 0,
    // 2]: B [n][k]), 8 x 4 pairs at a time; mtune-split-pair-transposes makes A
    // [k][m]'s copy ([2, 0, 1]) one of each. The pair tile was measured on the AMD
    // EPYC host of session 32 (template defaults, `mtune measure`, two alternating
    // runs; 16 x 16 as in matmul_bf16_amx against 8 x 4): transpose_b 512^3 213-216
    // against 223-227 GFLOP/s, transpose_a 512^3 196-199 against 204-212,
    // transpose_b 128x3072x768 162-166 against 191-197 (8 x 8 and 4 x 4 close behind,
    // 16 x 4 as slow as 16 x 16 there).
    %fs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %split = transform.apply_registered_pass "mtune-split-pair-transposes" to %fs : (!transform.any_op) -> !transform.any_op
    %interleaves = transform.structured.match ops{["linalg.transpose"]} attributes{permutation = array<i64: 0, 2, 1>} in %split : (!transform.any_op) -> !transform.any_op
    %it, %il:2 = transform.structured.tile_using_for %interleaves tile_sizes [1, 16, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %it vector_sizes [1, 16, 2] : !transform.any_op
    %pair_transposes = transform.structured.match ops{["linalg.transpose"]} attributes{permutation = array<i64: 1, 0, 2>} in %split : (!transform.any_op) -> !transform.any_op
    %pt, %pl:2 = transform.structured.tile_using_for %pair_transposes tile_sizes [8, 4, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %pt vector_sizes [8, 4, 2] : !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.transfer_permutation_patterns
      // A partial last tile of pairs (m or k1 / 2 not a multiple of 16) is masked.
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    // Each 1 x 16 tile's multiply-add of widened bf16 becomes a bf16 x bf16 -> f32
    // vector.contract, which x86vector's pattern below turns into vdpbf16ps.
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.fold_arith_extension
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    %k_loops_v = transform.structured.match attributes{"mtune.k_pairs"} in %f : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %k_loops_v : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.x86vector.vector_contract_to_packed_type_dot_product
      // The hoisted accumulators' reads and writes go straight to the C tile: left as
      // slices, one-shot bufferization copied each of the 16 into a buffer of its own
      // and back around the k loop (16 mallocs, copies and frees per register tile).
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // CSE merges the identical subviews of C that level 1 left, so their copies onto
    // themselves fold away.
    %b = transform.bufferization.one_shot_bufferize %root {bufferize_function_boundaries = false, memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kf = transform.structured.match ops{["func.func"]} in %b : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kf : !transform.any_op
    transform.apply_patterns to %kf {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %flat = transform.apply_registered_pass "mtune-flatten-transfers" to %kf : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %flat {
      transform.apply_patterns.vector.lower_transpose lowering_strategy = shuffle_1d
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
  // Splits a register tile into 1 x 16 tiles and marks the two loops over them for
  // @unroll_register_tile. A sequence of its own, so that no handle to those loops
  // (or to ops in them) outlives it: `loop.unroll` erases a loop it unrolls fully
  // without telling the interpreter, and a handle still mapped to it then made the
  // interpreter's next handle-invalidation check read freed memory (SIGSEGV in
  // about one compile in ten, from TransformState::recordOpHandleInvalidation).
  transform.named_sequence @split_register_tile(%tile: !transform.any_op {transform.consumed}) {
    // Each tile (the whole ones' and, when peeled, the rest rows'), one by one.
    %t, %l:2 = transform.structured.tile_using_for %tile tile_sizes [1, 16, 0, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %l#0 "mtune.register_rows" : !transform.any_op
    transform.annotate %l#1 "mtune.register_columns" : !transform.any_op
    transform.yield
  }
  // Unrolls the loops over the 1 x 16 tiles of each register tile (marked by their
  // attributes) fully: the columns first, then the rows of the peeled rest tile (the
  // second rows loop, after the whole tiles'), then the whole tiles' rows.
  // `loop.unroll` unrolls an scf.for only by a factor that divides its trip count (a
  // larger one leaves it as it is), and the factor is an attribute, so there is one
  // case per size; each case is a sequence that propagates a failed size check,
  // inside one that suppresses it. A 16-column tile has one column: its loop folds
  // away.
  transform.named_sequence @unroll_register_tile(%func: !transform.any_op {transform.readonly},
      %m2: !transform.param<i64> {transform.readonly}, %n2: !transform.param<i64> {transform.readonly},
      %rest: !transform.param<i64> {transform.readonly}) {
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 32 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %n2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_columns"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 2} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 64 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %n2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_columns"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 4} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 1 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 1} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 2 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 2} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 3 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 3} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 4 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 4} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 5 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 5} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 6 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 6} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 7 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 7} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 8 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 8} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 9 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 9} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 10 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 10} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 11 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 11} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 12 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 12} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 13 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rest, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        %whole, %last = transform.split_handle %loops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.loop.unroll %last {factor = 13} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 4 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %m2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 4} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 6 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %m2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 6} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 8 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %m2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 8} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 10 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %m2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 10} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 12 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %m2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 12} : !transform.any_op
      }
    }
    transform.sequence %func : !transform.any_op failures(suppress) {
    ^bb0(%f: !transform.any_op):
      transform.sequence %f : !transform.any_op failures(propagate) {
      ^bb1(%f2: !transform.any_op):
        %size = transform.param.constant 14 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %m2, %size : !transform.param<i64>
        %loops = transform.structured.match attributes{"mtune.register_rows"} in %f2 : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %loops {factor = 14} : !transform.any_op
      }
    }
    transform.yield
  }
  // rest_m2 > 0: peels the rest rows off the m2 loop (`loop.peel` fails on a loop its
  // step divides, hence the check), as matmul_packed's @peel_if.
  transform.named_sequence @peel_if_rest(%loop: !transform.any_op {transform.readonly},
      %rest: !transform.param<i64> {transform.readonly}) {
    %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
    transform.sequence %loop : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      transform.sequence %l : !transform.any_op failures(propagate) {
      ^bb1(%l2: !transform.any_op):
        transform.match.param.cmpi ne %rest, %zero : !transform.param<i64>
        %for = transform.cast %l2 : !transform.any_op to !transform.op<"scf.for">
        %main, %rest_loop = transform.loop.peel %for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
    }
    transform.yield
  }
}
