// mtune strategy template: a bf16 matmul (f32 accumulation) on Intel AMX tiles, with
// tdpbf16ps: one instruction multiplies a 16 x 32 bf16 tile of A by a 32 x 16 tile
// of B packed in k pairs (VNNI) into a 16 x 16 f32 accumulator tile, 16 times the
// work of AVX512-BF16's vdpbf16ps. Only for CPUs with AMX (mtune.cpu_features) and
// bf16 problems (mtune.element_types). The first choice for a bf16 matmul of a job
// that names no template where a worker has AMX (strategies/template_choice.h).
// mtune-family: matmul, matmul_transpose_a, matmul_transpose_b
//
// Level 1 tiles n and k (tile_n1, tile_k1: divisors of n and k), the loop order of
// a BLAS. Inside, `structured.pack` splits k into pairs: A's tile becomes a view
// [m][k1/2][2] of itself, B's a copy in the VNNI layout [k1/2][n1][2] (its
// linalg.transpose, tiled and vectorized): one copy per cache tile, used by every m
// row. In the transposed layouts an operand packed along the wrong dimension (A [k][m]
// of matmul_transpose_a, B [n][k] of matmul_transpose_b; found by inner_dims_pos) has
// its pack's outer dimensions swapped (`pack_transpose`), so the op is the same
// [m][p][2] x [p][n][2] one in every layout; A is then a copy too, per cache tile,
// made in two steps (mtune-split-pair-transposes, below).
//
// Level 2 tiles the packed op by m2 rows x n2 columns (the block of
// accumulators kept in tile registers); the rows m leaves after whole blocks are
// peeled into a block of their own (rest_m2, derived). After bufferization mtune's
// pass `mtune-vnni-matmul-to-amx` (strategies/amx_matmul.h; MLIR 22 has AMX ops
// but nothing that makes them from linalg) rewrites each block: its accumulators
// are loaded into tiles once, carried through a loop over k in steps of 16 pairs
// (the last step takes what is left), and stored once; tiles have up to 16 rows and
// 16 columns, the last ones take what is left.
//
// Shapes: any m, n a multiple of 16 (the packing copy moves 16 columns at a time),
// k even (pairs); nothing pads. Other shapes have no valid candidate here, and a job
// for one is refused; tune them with matmul_packed.
//
// The 8 tile registers bound the block: a x b accumulator tiles (a = ceil(m2/16)
// row pieces, b = ceil(n2/16) column pieces) plus the held operand tiles of the
// shorter side and one streamed tile: a * b + min(a, b) + 1 <= 8. Tiles of other
// shapes (a last k step of fewer than 16 pairs, rest rows) take registers too: with
// 2 x 2 blocks and k1 = 34, LLVM stopped with "ran out of registers during register
// allocation" (it configures the tile registers once per function, one shape each),
// and the constraint counts them. Where LLVM copes, it spills tiles to the stack
// (37 x 96 x 64 with 2 x 2 blocks and 5 rest rows compiled, with spills); where it
// does run out, the worker reports COMPILE_ERROR with LLVM's message.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.element_types = ["bf16"], mtune.cpu_features = ["amx-tile", "amx-bf16"]} {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    // Cache tiles: divisors of n and k (nothing pads), so every tile is whole. The
    // default is the divisor nearest 256 x 512 (a 256 KiB packed B panel).
    %tn1 = transform.tune.knob<"tile_n1"> = 256 from options = "divisors(n)" -> !transform.param<i64>
    %tk1 = transform.tune.knob<"tile_k1"> = 512 from options = "divisors(k)" -> !transform.param<i64>
    // The block of accumulators: m2 rows x n2 columns (whole 16-column tiles; n2
    // divides n1).
    %tm2 = transform.tune.knob<"tile_m2"> = 32 from options = [16, 32, 48, 64, 80, 96] -> !transform.param<i64>
    %tn2 = transform.tune.knob<"tile_n2"> = 32 from options = [16, 32, 48, 64, 80, 96] -> !transform.param<i64>
    // The rows m % m2 left after the whole blocks: a block of their own, peeled off
    // the m2 loop. Derived: the constraints solve it.
    %rest = transform.tune.knob<"rest_m2"> = 0 from options = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95] {mtune.derived} -> !transform.param<i64>
    // n1 is whole 16-column pieces (the packing copy's) and n2 divides it; k1 is
    // whole k pairs; rest_m2 is what m leaves of whole blocks; the tiles fit the 8
    // tile registers (above); the packed B panel (n1 x k1 bf16) takes at most half
    // of a 2 MiB L2.
    transform.smt.constrain_params(%tn1, %tk1, %tm2, %tn2, %rest) {mtune.rule = "tile_n1 and tile_n2 multiples of 16, tile_n2 divides tile_n1, tile_k1 even, rest_m2 = m mod tile_m2, the AMX tiles in use fit the 8 tile registers, and the bf16 B panel fits 1 MiB"}
        : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%n1: !smt.int, %k1: !smt.int, %m2: !smt.int, %n2: !smt.int, %r: !smt.int):
      %m = smt.declare_fun "m" : !smt.int
      %zero = smt.int.constant 0
      %one = smt.int.constant 1
      %two = smt.int.constant 2
      %fifteen = smt.int.constant 15
      %sixteen = smt.int.constant 16
      %n1_16 = smt.int.mod %n1, %sixteen
      %n1_ok = smt.eq %n1_16, %zero : !smt.int
      %n2_16 = smt.int.mod %n2, %sixteen
      %n2_ok = smt.eq %n2_16, %zero : !smt.int
      %n1_n2 = smt.int.mod %n1, %n2
      %n2_divides = smt.eq %n1_n2, %zero : !smt.int
      %k1_2 = smt.int.mod %k1, %two
      %k1_even = smt.eq %k1_2, %zero : !smt.int
      %m_m2 = smt.int.mod %m, %m2
      %m_ok = smt.eq %m_m2, %r : !smt.int
      %a_up = smt.int.add %m2, %fifteen
      %a = smt.int.div %a_up, %sixteen
      %b_up = smt.int.add %n2, %fifteen
      %b = smt.int.div %b_up, %sixteen
      %accumulators = smt.int.mul %a, %b
      %a_shorter = smt.int.cmp le %a, %b
      %held = smt.ite %a_shorter, %a, %b : !smt.int
      %with_held = smt.int.add %accumulators, %held, %one
      // A last k step of fewer than 16 pairs loads tiles of other shapes: registers
      // of their own for its held and streamed operand tiles.
      %pairs = smt.int.div %k1, %two
      %pairs_16 = smt.int.mod %pairs, %sixteen
      %whole_steps = smt.eq %pairs_16, %zero : !smt.int
      %step_rest = smt.int.add %held, %one
      %rest_tiles = smt.ite %whole_steps, %zero, %step_rest : !smt.int
      // Rest rows of fewer than 16 make the same: b accumulators and one A tile, and
      // one more A tile where they meet a last k step of fewer than 16 pairs.
      %partial_rows = smt.int.mod %r, %sixteen
      %whole_rows = smt.eq %partial_rows, %zero : !smt.int
      %row_rest = smt.int.add %b, %one
      %row_tiles = smt.ite %whole_rows, %zero, %row_rest : !smt.int
      %neither = smt.or %whole_rows, %whole_steps
      %corner_tiles = smt.ite %neither, %zero, %one : !smt.int
      %with_rest = smt.int.add %with_held, %rest_tiles, %row_tiles, %corner_tiles
      %tile_registers = smt.int.constant 8
      %tiles_ok = smt.int.cmp le %with_rest, %tile_registers
      %panel = smt.int.mul %n1, %k1, %two
      %panel_limit = smt.int.constant 1048576
      %panel_ok = smt.int.cmp le %panel, %panel_limit
      %all = smt.and %n1_ok, %n2_ok, %n2_divides, %k1_even, %m_ok, %tiles_ok, %panel_ok
      smt.assert %all
    }
    // Level 1, then k in pairs: A's pack lowers to a view, B's to a pad (of nothing:
    // k1 is even), a view and the VNNI transpose.
    %t1, %l1:2 = transform.structured.tile_using_for %mm tile_sizes [0, %tn1, %tk1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %packed0 = transform.structured.pack %t1 packed_sizes = [0, 0, 2] : (!transform.any_op) -> (!transform.op<"linalg.generic">)
    // The transposed layouts' packs, swapped to [m][p][2] (A packed along its dimension
    // 0, k) and [p][n][2] (B packed along its dimension 1, k); in the other layout
    // these matches are empty and nothing changes.
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
    // Level 2: blocks of accumulators, the whole k of the cache tile each.
    %t2, %l2:2 = transform.structured.tile_using_for %packed tile_sizes [%tm2, %tn2, 0, 0]
      : (!transform.op<"linalg.generic">, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @peel_if_rest failures(propagate) (%l2#0, %rest) : (!transform.any_op, !transform.param<i64>) -> ()
    // Canonicalization folds the identity transpose of an A [m][k]'s pack (it is only
    // viewed in pairs), so that the transposes left are the packing copies.
    %f0 = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f0 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // The packing copies are transposes of two kinds: interleaves of two k rows
    // (permutation [0, 2, 1]: B [k][n] into VNNI), done 16 columns at a time, and
    // transposes of whole pairs ([1, 0, 2]: B [n][k]), done 16 x 16 pairs at a time
    // (as 32-bit elements). A [k][m]'s copy moves pairs across the matrix in one
    // ([2, 0, 1]); mtune-split-pair-transposes makes it one of each (in one, 512^3
    // spent 240 us in it). Measured at 512^3 with the other size: B [k][n] 1495 against
    // 854 GFLOP/s, B [n][k] 1194 against 872. A partial last tile (17 pairs) is
    // vectorized with masks, lowered below.
    %split = transform.apply_registered_pass "mtune-split-pair-transposes" to %f0 : (!transform.any_op) -> !transform.any_op
    %interleaves = transform.structured.match ops{["linalg.transpose"]} attributes{permutation = array<i64: 0, 2, 1>} in %split : (!transform.any_op) -> !transform.any_op
    %it, %il:2 = transform.structured.tile_using_for %interleaves tile_sizes [1, 16, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %it vector_sizes [1, 16, 2] : !transform.any_op
    %pair_transposes = transform.structured.match ops{["linalg.transpose"]} attributes{permutation = array<i64: 1, 0, 2>} in %split : (!transform.any_op) -> !transform.any_op
    %pt, %pl:2 = transform.structured.tile_using_for %pair_transposes tile_sizes [16, 16, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %pt vector_sizes [16, 16, 2] : !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.transfer_permutation_patterns
      // Masked transfers as transfers with a mask operand: mtune-flatten-transfers
      // stopped on the vector.mask regions ("expects only one operation to mask").
      transform.apply_patterns.vector.lower_masked_transfers
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
    %amx = transform.apply_registered_pass "mtune-vnni-matmul-to-amx" to %kf : (!transform.any_op) -> !transform.any_op
    %flat = transform.apply_registered_pass "mtune-flatten-transfers" to %amx : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %flat {
      transform.apply_patterns.vector.lower_transpose lowering_strategy = shuffle_1d
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
  // Peels the last block off the rows loop when m leaves a rest (rest_m2 > 0), so
  // that every block has a static shape; with no rest there is nothing to peel.
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
