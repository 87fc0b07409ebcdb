// mtune strategy template: 2-D copy and transpose, tiled and vectorized with masks.
// mtune-family: copy_2d, transpose_2d
//
// The op is tiled by tile_r x tile_c (loops over rows, then columns) and each tile is
// vectorized at exactly that shape; masked transfers, padding or peeling (`edge_tiles`)
// handle partial tiles at the edges, so any m, n works. A transpose tile becomes a vector.transpose, lowered
// by the `transpose_lowering` alternative, and transfers become one vector per row.
// Rows and columns are those of the op's iteration
// space, i.e. of the output (linalg.transpose iterates over its output). Transposes
// are first blocked (block_r x block_c blocks around the tiles), and beyond the L2
// the output can be written with non-temporal stores (`nt_stores`).
//
// Start point: streaming stores, tried right after the default wherever the
// constraint allows them. A copy starts without them (they lose while its footprint
// fits the L3, which the template cannot see) and gains beyond it: 2048x4096 (64
// MiB) 1.35x, 4096x4096 1.26x its default, 1024x2048 (16 MiB) 0.81x, in one run. For
// a transpose it is the default itself wherever it is allowed.
// Second start point, transposes only (for a copy it is the first): the default's
// 512 x 64 blocks with streaming stores and prefetches, their column loops unrolled
// by 2. Beyond the L3 that ran at 1.20x and 1.22x the default (2048x4096: 33.8 GB/s,
// the copy beside it about 51; 4096x4096: 31.5), inside it at 0.94-1.01x (512x1024,
// 1024^2), and unblocked (within the L2, where blocks are ruled out) unrolling lost
// (256x512 0.83x, 64x4096 0.72x), so the default does not unroll
// (mtune-bench-families --trials 0 --rounds 7 --variant, session 42). The default's
// 512 x 64 blocks with prefetches against the 512 x 32 blocks without them that were
// the default until then: 2048x4096 1.45x, 4096x4096 1.39x, 1024^2 1.23x, 512x1024
// 1.15x.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.start_points = [{nt_stores = 1 : i64},
                                        {nt_stores = 1 : i64, block_c = 64 : i64, unroll_c = "2", prefetch_ahead = 2 : i64}]} {
    // 1-row tiles for copies only (`mtune.option_families`): a transpose with 1-row
    // tiles never finishes in the interpreter, masked included, once the tiles divide
    // the shape (transpose 64x64 with 1x8 tiles ran past 30 s, 1024x1024 past 60 s and
    // 8 GB, on any edge_tiles/lowering). A copy is fastest one row at a time, one read
    // and one write stream (`mtune.default_for`: 1 x 64 tiles). Against its 16 x 16
    // tiles, in one run: 1024x2048 2.35x, 1024x1024 2.28x, 2048x4096 1.12x.
    %tr = transform.tune.knob<"tile_r"> = 16 from options = [1, 2, 4, 8, 16] {mtune.option_families = {"1" = ["copy_2d"]}, mtune.default_for = {copy_2d = 1 : i64}} -> !transform.param<i64>
    %tc = transform.tune.knob<"tile_c"> = 16 from options = [8, 16, 32, 64] {mtune.default_for = {copy_2d = 64 : i64}} -> !transform.param<i64>
    // Transposes only: an outer level of blocks, block_r x block_c (0: that dimension
    // is not blocked), each tiled by tile_r x tile_c. A 16x16 tile reads 16 input
    // rows and writes 16 output rows; unblocked, a band of output rows reads one line
    // from every input row (2048 pages for 2048x4096), so a line costs a TLB miss
    // and no prefetcher helps. In a block_r x 32 block the tiles read 32 input rows
    // as 32 sequential streams of block_r elements and write whole lines of block_r
    // output rows (measured on 2048x4096 with nt_stores: 14 GB/s with 512x32 blocks,
    // 6 with 512x64; unblocked without them 5; 1024^2: 19.5 against 14). Copies are never
    // blocked (both sides are sequential already; blocks only shorten the streams):
    // `mtune.only_for` makes these knobs a single option 0 for copies, so that a copy's
    // space holds no duplicate candidates.
    %br = transform.tune.knob<"block_r"> = 512 from options = [0, 256, 512, 1024] {mtune.only_for = ["transpose_2d"], mtune.otherwise = 0 : i64} -> !transform.param<i64>
    %bc = transform.tune.knob<"block_c"> = 64 from options = [0, 16, 32, 64] {mtune.only_for = ["transpose_2d"], mtune.otherwise = 0 : i64} -> !transform.param<i64>
    // Non-temporal stores (1): the tiles are written with streaming stores that
    // bypass the caches (no read-for-ownership of the lines they overwrite), after
    // the transfers are lowered to 1-D vector.store ops here.
    // The stores carry `alignment = 32`: every store of a full tile row starts at a
    // multiple of tile_c (>= 8) elements of a row whose length is a multiple of 8
    // elements in a buffer aligned to 64 bytes (mtune's operands), so LLVM emits
    // aligned vmovntps/pd; without that it scalarizes them to movnti (11 GB/s
    // against 15.5 on 2048x4096). The constraint asks more, m and n multiples of 16:
    // rows that start on a cache line, so that the stores of a block fill whole
    // lines; a streaming store to part of a line is slow (transpose 1000x1048, rows
    // of 4000 bytes, peeled tiles: 6.7 GB/s with them, 13.7 padded without). Only
    // once the footprint (input plus output) exceeds the L2 (2 MiB per core here),
    // where a cached output would not stay anyway: transpose 256x512 (1 MiB) ran
    // 33 GB/s with them against 56 without; 512x1024 (4 MiB) 26.6 against 19.0;
    // 1024^2 20.1 against 18.2. A copy starts from regular stores
    // (`mtune.default_for`; see the start point at the top for why and for the
    // figures). Blocks along columns pay off only beyond the L2 too (256x512: 50
    // GB/s with 512x32 blocks, 57 without), so the same footprint bound applies to
    // block_c: the default candidate of a smaller problem is unblocked along columns
    // and without streaming stores.
    %nt = transform.tune.knob<"nt_stores"> = 1 from options = [0, 1] {mtune.default_for = {copy_2d = 0 : i64}} -> !transform.param<i64>
    transform.smt.constrain_params(%nt, %bc) {mtune.rule = "nt_stores only where input plus output reach 4 MiB and m, n are multiples of 16; column blocks (block_c > 0) only from 4 MiB"} : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%v: !smt.int, %c: !smt.int):
      %m = smt.declare_fun "m" : !smt.int
      %n = smt.declare_fun "n" : !smt.int
      %elem = smt.declare_fun "elem_bytes" : !smt.int
      %zero = smt.int.constant 0
      %two = smt.int.constant 2
      %sixteen = smt.int.constant 16
      %bytes = smt.int.mul %m, %n, %elem, %two
      %limit = smt.int.constant 4194304
      %big = smt.int.cmp ge %bytes, %limit
      %m_rem = smt.int.mod %m, %sixteen
      %n_rem = smt.int.mod %n, %sixteen
      %m_ok = smt.eq %m_rem, %zero : !smt.int
      %n_ok = smt.eq %n_rem, %zero : !smt.int
      %nt_ok = smt.and %big, %m_ok, %n_ok
      %nt_on = smt.distinct %v, %zero : !smt.int
      %nt_valid = smt.implies %nt_on, %nt_ok
      %blocked = smt.distinct %c, %zero : !smt.int
      %blocks_valid = smt.implies %blocked, %big
      %all = smt.and %nt_valid, %blocks_valid
      smt.assert %all
    }
    // Tile order (transposes): 0 walks each row of tiles in order; 1 visits tile
    // (r, c) at row (r + c) mod rows instead (mtune's `mtune-rotate-tiles` pass, at
    // the end; libMtunePlugin.so gives it to mlir-opt), so that consecutive tiles
    // read and write lines of different cache sets. Where rows are a power of two
    // bytes apart, a column of tiles maps to the same two L1 sets: transpose
    // 256x512 f32 (input rows of 2 KiB) ran at 0.47x the copy bandwidth at its
    // footprint where 264x520 ran at 1.02x, and rotated at 1.44x its unrotated
    // speed (128x256 1.15x, 64x4096 1.30x; 1024^2 and 2048x4096, blocked, level).
    // Only with whole row tiles (n a multiple of tile_r): the size of a partial row
    // tile, rotated, changes from one inner iteration to the next, and 255x511 ran
    // at 0.45x of unrotated (padded edges); partial column tiles do not move, and
    // 264x512 ran at 1.76x. Declared last, so that a default broken by partial row
    // tiles gives up the rotation rather than its tile size.
    %rot = transform.tune.knob<"rotate_tiles"> = 1 from options = [0, 1] {mtune.only_for = ["transpose_2d"], mtune.otherwise = 0 : i64} -> !transform.param<i64>
    transform.smt.constrain_params(%tr, %rot) {mtune.rule = "rotate_tiles only where tile_r divides n"} : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%r: !smt.int, %on: !smt.int):
      %n = smt.declare_fun "n" : !smt.int
      %zero = smt.int.constant 0
      %r_rest = smt.int.mod %n, %r
      %whole_rows = smt.eq %r_rest, %zero : !smt.int
      %rotated = smt.distinct %on, %zero : !smt.int
      %valid = smt.implies %rotated, %whole_rows
      smt.assert %valid
    }
    // Whether any tile is partial (1): a tile that does not divide its dimension of the
    // output, or a block narrower than the dimension that the tile does not divide.
    // Without one, `edge_tiles` has nothing to act on and its three choices make the
    // same code (256x512 with 4 x 32 tiles: masked and peeled the same IR, padded
    // the same up to folded subviews), so `mtune.only_with` on it holds it at its
    // default and a round shape's space has no triplicate candidates. Not a free
    // choice (mtune.derived): the constraint fixes it.
    %partial = transform.tune.knob<"partial_tiles"> = 0 from options = [0, 1] {mtune.derived} -> !transform.param<i64>
    transform.smt.constrain_params(%tr, %tc, %br, %bc, %partial) {mtune.rule = "partial_tiles is 1 exactly when a tile or a block leaves a partial tile"}
        : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%r: !smt.int, %c: !smt.int, %block_r: !smt.int, %block_c: !smt.int, %p: !smt.int):
      %rows = smt.declare_fun "out_rows" : !smt.int
      %cols = smt.declare_fun "out_cols" : !smt.int
      %zero = smt.int.constant 0
      %one = smt.int.constant 1
      %r_rest = smt.int.mod %rows, %r
      %c_rest = smt.int.mod %cols, %c
      %r_partial = smt.distinct %r_rest, %zero : !smt.int
      %c_partial = smt.distinct %c_rest, %zero : !smt.int
      %br_on = smt.distinct %block_r, %zero : !smt.int
      %br_narrower = smt.int.cmp lt %block_r, %rows
      %br_rest = smt.int.mod %block_r, %r
      %br_cut = smt.distinct %br_rest, %zero : !smt.int
      %br_partial = smt.and %br_on, %br_narrower, %br_cut
      %bc_on = smt.distinct %block_c, %zero : !smt.int
      %bc_narrower = smt.int.cmp lt %block_c, %cols
      %bc_rest = smt.int.mod %block_c, %c
      %bc_cut = smt.distinct %bc_rest, %zero : !smt.int
      %bc_partial = smt.and %bc_on, %bc_narrower, %bc_cut
      %any = smt.or %r_partial, %c_partial, %br_partial, %bc_partial
      %flagged = smt.eq %p, %one : !smt.int
      %agree = smt.eq %any, %flagged : !smt.bool
      smt.assert %agree
    }
    // Software prefetch (transposes): each step of the loop over rows of tiles
    // prefetches into the L2 what the tiles prefetch_ahead steps later read (mtune's
    // `mtune-prefetch-reads` pass, at the end; libMtunePlugin.so gives it to
    // mlir-opt). 0: none. A block of 64 output columns reads 64 input rows side by
    // side, which the hardware prefetchers do not follow: on 2048x4096 (64 MiB with
    // its output) 512 x 64 blocks ran at 23.6 GB/s without it and 32.9 with 2 steps
    // ahead (1.4x; the copy beside them 50.6), and 1.03x within the L3 (1024^2). Only
    // where input plus output reach 4 MiB (below that the reads come from the caches),
    // on whole tiles (with partial ones it changed nothing: 2047x4095, whose rows
    // also rule out streaming stores, ran at 10.6-11.0 GB/s with it and 10.3-10.7
    // without, padded or peeled) and with more than one row of tiles (else the loop
    // folds away and there is nothing ahead). Declared after the tile and block knobs,
    // so that a default the constraint breaks gives up the prefetch rather than those.
    %pf = transform.tune.knob<"prefetch_ahead"> = 2 from options = [0, 2, 4, 8] {mtune.only_for = ["transpose_2d"], mtune.otherwise = 0 : i64} -> !transform.param<i64>
    transform.smt.constrain_params(%pf, %tr, %partial) {mtune.rule = "prefetch_ahead only where input plus output reach 4 MiB, on whole tiles, with more than one row of tiles"}
        : (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%ahead: !smt.int, %r: !smt.int, %p: !smt.int):
      %m = smt.declare_fun "m" : !smt.int
      %n = smt.declare_fun "n" : !smt.int
      %rows = smt.declare_fun "out_rows" : !smt.int
      %elem = smt.declare_fun "elem_bytes" : !smt.int
      %zero = smt.int.constant 0
      %two = smt.int.constant 2
      %bytes = smt.int.mul %m, %n, %elem, %two
      %limit = smt.int.constant 4194304
      %big = smt.int.cmp ge %bytes, %limit
      %whole = smt.eq %p, %zero : !smt.int
      %several = smt.int.cmp gt %rows, %r
      %ok = smt.and %big, %whole, %several
      %on = smt.distinct %ahead, %zero : !smt.int
      %valid = smt.implies %on, %ok
      smt.assert %valid
    }
    %copies = transform.structured.match ops{["linalg.copy"]} in %root : (!transform.any_op) -> !transform.any_op
    %transposes = transform.structured.match ops{["linalg.transpose"]} in %root : (!transform.any_op) -> !transform.any_op
    // (foreach: tile_using_for with parameter sizes fails on an empty handle.)
    %copy_tiles = transform.foreach %copies : !transform.any_op -> !transform.any_op {
    ^bb0(%c: !transform.any_op):
      %t, %l:2 = transform.structured.tile_using_for %c tile_sizes [%tr, %tc]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.yield %t : !transform.any_op
    }
    %transpose_tiles = transform.foreach %transposes : !transform.any_op -> !transform.any_op {
    ^bb0(%x: !transform.any_op):
      %b, %bl:2 = transform.structured.tile_using_for %x tile_sizes [%br, %bc]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      %t, %l:2 = transform.structured.tile_using_for %b tile_sizes [%tr, %tc]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      // A transpose's tiles are independent, so `rotate_tiles` may visit them in any
      // order: the row loop says so (a discardable attribute, dropped when
      // lowered, and with the loop itself where it has one iteration).
      transform.annotate %l#0 "mtune.rotatable_tiles" : !transform.any_op
      transform.annotate %l#0 "mtune.prefetch_ahead" = %pf : !transform.any_op, !transform.param<i64>
      transform.yield %t : !transform.any_op
    }
    %tiled = transform.merge_handles %copy_tiles, %transpose_tiles : !transform.any_op
    // Partial tiles at the edges: masked transfers, or zero padding of the tile to its
    // static shape. Padding keeps a transpose tile an unmasked permuted read, which
    // becomes a vector.transpose the `transpose_lowering` choice applies to; with
    // masks the permutation is lowered element by element whatever that choice.
    // 1-row tiles (copies) are masked whatever this choice (see the regions), and
    // without partial tiles there is nothing to mask, pad or peel, so `mtune.only_with`
    // holds it at its default for both: no duplicate candidates.
    transform.tune.alternatives<"edge_tiles"> selected_region = 1 attributes {mtune.labels = ["masked", "padded", "peeled"], mtune.only_with = {tile_r = [2, 4, 8, 16], partial_tiles = [1]}} {
      transform.structured.vectorize %tiled vector_sizes [%tr, %tc] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    }, {
      // Padded; with tile_r = 1 the tiles are masked instead: an unmasked 1-row
      // transpose tile makes the final pattern set loop (see `peeled` below; transpose
      // 37x45 with 1x8 padded tiles ran past 120 s). Each branch is a sequence that
      // stops at a failed check, nested in one that suppresses that failure.
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      transform.sequence %root : !transform.any_op failures(suppress) {
      ^bb0(%r: !transform.any_op):
        transform.sequence %r : !transform.any_op failures(propagate) {
        ^bb1(%r2: !transform.any_op):
          transform.match.param.cmpi gt %tr, %one : !transform.param<i64>
          %padded, %pad, %copy = transform.structured.pad %tiled pad_to_multiple_of [%tr, %tc] {
              padding_dimensions = [0, 1], copy_back_op = "none"
            } : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
          transform.structured.vectorize %padded : !transform.any_op
          %func = transform.structured.match ops{["func.func"]} in %r2 : (!transform.any_op) -> !transform.any_op
          transform.apply_patterns to %func {
            transform.apply_patterns.linalg.pad_vectorization
            transform.apply_patterns.canonicalization
            transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
          } : !transform.any_op
        }
      }
      transform.sequence %root : !transform.any_op failures(suppress) {
      ^bb0(%r: !transform.any_op):
        transform.sequence %r : !transform.any_op failures(propagate) {
        ^bb1(%r2: !transform.any_op):
          transform.match.param.cmpi le %tr, %one : !transform.param<i64>
          transform.structured.vectorize %tiled vector_sizes [%tr, %tc] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
        }
      }
    }, {
      // Peeled: masked vectorization first (explicit vector sizes, so the dynamic
      // tile shapes need no canonicalization before it), then each tile loop is
      // split into a main loop of full tiles and a remainder loop of the partial
      // one (columns first, then rows: the row remainder gets both column loops).
      // In the main loops the tile sizes become constants, so the canonicalization
      // after bufferization folds their masks to all-true and removes them: full
      // tiles are plain (and, for a transpose, permuted) transfers; only remainder
      // tiles keep masks. (Canonicalizing here instead fails: it folds
      // single-iteration loops that the tiling loop handles still track.) A loop whose
      // step divides its range is not peeled (loop.peel fails silenceably on it, and
      // that failure is suppressed).
      //
      // Not with tile_r = 1: an unmasked 1-row transpose tile becomes a unit-dim
      // shape_cast on which the final pattern set (lower_shape_cast with
      // canonicalization) never converges (the interpreter ran past 120 s and 16 GB
      // on transpose 37x45). The cmpi check fails for tile_r = 1, which skips the
      // peeling (failure suppressed): those candidates are the masked ones.
      // The loops come from the tile, not from %loops: a use of %loops here would keep
      // those handles alive through the other regions, and the padded region's
      // canonicalization (which folds single-iteration loops) would then fail to
      // update them.
      %col_loop = transform.get_parent_op %tiled {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
      %row_loop = transform.get_parent_op %col_loop {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
      transform.structured.vectorize %tiled vector_sizes [%tr, %tc] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      // (A sequence that propagates failures inside one that suppresses them: a
      // suppressing sequence goes on after a failed op.)
      transform.sequence %root : !transform.any_op failures(suppress) {
      ^bb0(%unused: !transform.any_op):
        transform.sequence %unused : !transform.any_op failures(propagate) {
        ^bb1(%unused2: !transform.any_op):
          transform.match.param.cmpi gt %tr, %one : !transform.param<i64>
          %cols = transform.cast %col_loop : !transform.any_op to !transform.op<"scf.for">
          transform.sequence %cols : !transform.op<"scf.for"> failures(suppress) {
          ^bb0(%l: !transform.op<"scf.for">):
            %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
          }
          %rows = transform.cast %row_loop : !transform.any_op to !transform.op<"scf.for">
          transform.sequence %rows : !transform.op<"scf.for"> failures(suppress) {
          ^bb0(%l: !transform.op<"scf.for">):
            %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
          }
        }
      }
    }
    // Unrolling of vector ops to a target shape. The target shape is the tile
    // (tile_r x tile_c: every vector op of a full tile has exactly that shape); the
    // loops over column tiles (the nearest loops around the tiles' transfer_writes:
    // with peeled tiles, main and remainder loops alike) are unrolled by U, so U such
    // ops and their transfers are independent in one iteration: register-level
    // tiling followed by `transform.loop.unroll` (a trip count that U does not divide
    // gets an epilogue loop). MLIR 22 has no transform op for the vector dialect's
    // own unroll patterns (vector::populateVectorUnrollPatterns takes a C++
    // native-shape callback); lower_transfer and lower_shape_cast below then split
    // each n-D op into 1-D rows, which LLVM splits into 512-bit registers.
    // Not with tile_r = 1 (unroll_c is then a no-op): unrolled 1-row transpose tiles
    // get static, unmasked and hit the non-converging pattern set described at
    // `peeled` (transpose 37x45, tile 1x8, U = 4 hung with every edge_tiles choice).
    // So `mtune.only_with` holds it at 1 for 1-row tiles (copies; a 1 x 64 tile is
    // four 512-bit loads and stores already).
    transform.tune.alternatives<"unroll_c"> selected_region = 0 attributes {mtune.labels = ["1", "2", "4"], mtune.only_with = {tile_r = [2, 4, 8, 16]}} {
    }, {
      transform.include @unroll_column_loops_by_2 failures(propagate) (%root, %tr) : (!transform.any_op, !transform.param<i64>) -> ()
    }, {
      transform.include @unroll_column_loops_by_4 failures(propagate) (%root, %tr) : (!transform.any_op, !transform.param<i64>) -> ()
    }
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    // Folds the constant masks of peeled full tiles (no change to the IR of masked
    // or padded tiles: checked on 1024^2, 37x45, 1023x1025).
    transform.apply_patterns to %kernel {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // A transpose tile is vectorized into a transfer_read with a permutation map;
    // make that an explicit vector.transpose first, or no transpose lowering applies.
    // A copy has no transpose to lower: one option for it (`mtune.only_for`), not
    // four candidates of the same code.
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.tune.alternatives<"transpose_lowering"> selected_region = 2 attributes {mtune.labels = ["shuffle_1d", "eltwise", "shuffle_16x16", "avx2"], mtune.only_for = ["transpose_2d"], mtune.otherwise = "shuffle_16x16"} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = shuffle_1d
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = eltwise
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = shuffle_16x16
      } : !transform.any_op
    }, {
      // x86's AVX2-specialized 8x8 (and 4x8) shuffles; other shapes fall back to eltwise.
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_transpose lowering_strategy = eltwise avx2_lowering_strategy = true
      } : !transform.any_op
    }
    // Transfers become one vector per row. Rank 2 was an alternative until session 26:
    // it turned in-bounds 2-D transfers of a tile into 2-D vector.load / vector.store
    // on a strided memref, which MLIR 22's LLVM conversion cannot lower (the JIT then
    // fails on an unrealized_conversion_cast), and where it had no such transfer it made
    // the same code as rank 1. Of 33 sampled candidates of transposes and copies, 29
    // made 2-D loads and 4 the same code; two 40-trial model jobs on a 1024^2
    // transpose lost 9 and 17 of their trials to it.
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
    } : !transform.any_op
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.include @nontemporal_stores failures(propagate) (%kernel, %nt) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.include @rotate_tiles failures(propagate) (%kernel, %rot) : (!transform.any_op, !transform.param<i64>) -> ()
    // After the rotation, so that prefetches follow the rotated tile order (the
    // rotation consumed %kernel's handle).
    %rotated_kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.include @prefetch_reads failures(propagate) (%rotated_kernel, %pf) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
  // rotate_tiles = 1: runs mtune-rotate-tiles on the kernel (a sequence that
  // propagates failures, so a failed check skips it, inside one that suppresses that
  // failure). That also suppresses a failure of the pass, but not its error
  // diagnostic: mlir-opt prints it, and mtune's worker records the candidate as
  // invalid for it.
  transform.named_sequence @rotate_tiles(%kernel: !transform.any_op {transform.consumed},
      %rot: !transform.param<i64> {transform.readonly}) {
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    transform.sequence %kernel : !transform.any_op failures(suppress) {
    ^bb0(%k: !transform.any_op):
      transform.sequence %k : !transform.any_op failures(propagate) {
      ^bb1(%k2: !transform.any_op):
        transform.match.param.cmpi eq %rot, %one : !transform.param<i64>
        %rotated = transform.apply_registered_pass "mtune-rotate-tiles" to %k2 : (!transform.any_op) -> !transform.any_op
      }
    }
    transform.yield
  }
  // prefetch_ahead > 0: runs mtune-prefetch-reads on the kernel (skipped, the same
  // way as @rotate_tiles, for 0).
  transform.named_sequence @prefetch_reads(%kernel: !transform.any_op {transform.consumed},
      %pf: !transform.param<i64> {transform.readonly}) {
    %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
    transform.sequence %kernel : !transform.any_op failures(suppress) {
    ^bb0(%k: !transform.any_op):
      transform.sequence %k : !transform.any_op failures(propagate) {
      ^bb1(%k2: !transform.any_op):
        transform.match.param.cmpi gt %pf, %zero : !transform.param<i64>
        %prefetched = transform.apply_registered_pass "mtune-prefetch-reads" to %k2 : (!transform.any_op) -> !transform.any_op
        // The pass recomputes each read's later address on its own.
        transform.apply_cse to %prefetched : !transform.any_op
      }
    }
    transform.yield
  }
  // unroll_c = 2: unrolls the loops around the tiles' transfer_writes when tile_r > 1
  // (a sequence that propagates failures, so a failed check skips the unrolling,
  // inside one that suppresses the failure).
  transform.named_sequence @unroll_column_loops_by_2(%root: !transform.any_op {transform.readonly},
      %tr: !transform.param<i64> {transform.readonly}) {
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    transform.sequence %root : !transform.any_op failures(suppress) {
    ^bb0(%r: !transform.any_op):
      transform.sequence %r : !transform.any_op failures(propagate) {
      ^bb1(%r2: !transform.any_op):
        transform.match.param.cmpi gt %tr, %one : !transform.param<i64>
        %writes = transform.structured.match ops{["vector.transfer_write"]} in %r2 : (!transform.any_op) -> !transform.any_op
        %col_loops = transform.get_parent_op %writes {op_name = "scf.for", deduplicate} : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %col_loops {factor = 2} : !transform.any_op
      }
    }
    transform.yield
  }
  // unroll_c = 4: unrolls the loops around the tiles' transfer_writes when tile_r > 1
  // (a sequence that propagates failures, so a failed check skips the unrolling,
  // inside one that suppresses the failure).
  transform.named_sequence @unroll_column_loops_by_4(%root: !transform.any_op {transform.readonly},
      %tr: !transform.param<i64> {transform.readonly}) {
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    transform.sequence %root : !transform.any_op failures(suppress) {
    ^bb0(%r: !transform.any_op):
      transform.sequence %r : !transform.any_op failures(propagate) {
      ^bb1(%r2: !transform.any_op):
        transform.match.param.cmpi gt %tr, %one : !transform.param<i64>
        %writes = transform.structured.match ops{["vector.transfer_write"]} in %r2 : (!transform.any_op) -> !transform.any_op
        %col_loops = transform.get_parent_op %writes {op_name = "scf.for", deduplicate} : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %col_loops {factor = 4} : !transform.any_op
      }
    }
    transform.yield
  }
  // nt_stores = 1: lowers the transfers to 1-D vector.store ops (in-bounds rows of
  // full tiles; partial rows stay masked transfers) and marks those stores
  // non-temporal with 32-byte alignment (see the knob for why that holds), except
  // stores of a row stored as loaded (copies). A
  // sequence that propagates failures, so a failed check skips it, inside one that
  // suppresses the failure.
  transform.named_sequence @nontemporal_stores(%kernel: !transform.any_op {transform.readonly},
      %nt: !transform.param<i64> {transform.readonly}) {
    %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
    transform.sequence %kernel : !transform.any_op failures(suppress) {
    ^bb0(%k: !transform.any_op):
      transform.sequence %k : !transform.any_op failures(propagate) {
      ^bb1(%k2: !transform.any_op):
        transform.match.param.cmpi gt %nt, %zero : !transform.param<i64>
        // Permutation maps first, as the convert-vector-to-scf pass does: unrolled
        // directly, a masked permuted transfer_read (masked edge tiles of a
        // transpose) was lowered wrongly (transpose 1000x1048 gave wrong results
        // and crashes).
        transform.apply_patterns to %k2 {
          transform.apply_patterns.vector.transfer_permutation_patterns
        } : !transform.any_op
        transform.apply_patterns to %k2 {
          transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
        } : !transform.any_op
        transform.apply_patterns to %k2 {
          transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
          transform.apply_patterns.canonicalization
        } : !transform.any_op
        %stores = transform.structured.match ops{["vector.store"]} in %k2 : (!transform.any_op) -> !transform.any_op
        %true = transform.param.constant true -> !transform.any_param
        transform.annotate %stores "nontemporal" = %true : !transform.any_op, !transform.any_param
        %align = transform.param.constant 32 : i64 -> !transform.any_param
        transform.annotate %stores "alignment" = %align : !transform.any_op, !transform.any_param
      }
    }
    transform.yield
  }
}
