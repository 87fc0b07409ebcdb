// mtune strategy template: 2-D row or column sum, tiled and vectorized with masks.
// mtune-family: reduce_rows_2d, reduce_cols_2d
//
// `split_reduction` chooses how a row sum accumulates its reduced dimension (n):
//   none: the reduction is tiled by tile_m x tile_n (loops over m, then n) and each
//     tile is vectorized at exactly that shape into a vector.multi_reduction whose
//     accumulator is the output slice, read and written per tile; masked transfers
//     handle partial edge tiles, so any m, n works. Every tile ends in a horizontal
//     reduction into a chain of dependent adds through the output.
//   4, 8, 16, 32 (S; the default is 32): split reduction. Rows are tiled by tile_m
//     (tile_n is not used), then `structured.tile_reduction_using_for` tiles n by S:
//     a loop accumulates tile_m x S independent partial sums with plain vector adds,
//     and one multi_reduction per row tile merges them into the output. The loops
//     are peeled after masked vectorization (main loop of full tiles, remainder of
//     the partial one), so the masks of full tiles fold away and the partial sums
//     are hoisted into registers (a loop-carried vector); only remainder tiles keep
//     masks and a partial-sum buffer, allocated once outside the loops. S is a static
//     attribute of tile_reduction_using_for (it takes no !transform.param), hence
//     one region per S rather than an integer knob. `structured.split_reduction` was
//     not used: it needs S to divide n (it reshapes the dimension), so it fails on
//     odd shapes. Side by side (interleaved `mtune measure` rounds, medians) split 8
//     ran reduce_rows at 30 / 30 / 140 / 28 GB/s for 1024^2 / 1023x1025 / 256x512 /
//     2048x4096, where none ran 21 / 13 / 27 / 22. 4 rows split by 32 with the
//     merge's horizontal sums as shuffle trees (innerreduction, below), ran at 1.74 /
//     1.54 / 0.89 / 1.05 / 1.01x the default before it (8 rows split by 8,
//     innerparallel) on 256x512 / 2048x4096 / 1023x1025 / 4096x64 / 64x4096 in one
//     `mtune-bench-families --variant` run; 256x512 went from 0.52 to 0.92 of the
//     copy bandwidth at its footprint. Split by 32 is still the default; its rows
//     are now 1-row tiles in 4 bands (`bands`, below). A split wider than the row
//     (`mtune.splits`) is no option: the whole row would be one masked partial tile
//     (8192x8 split by 32 ran at 10 GB/s, by 8 at 53; 4096x3 at 5 by 32, not split
//     at 42).
//   A column sum (reduce_cols) is already accumulated by rows of vectors with no
//     horizontal reduction, and the same split (tile n, split m by S, walking each
//     column strip down every row) measured slower (1023x1025: 21 vs 30 GB/s;
//     256x512: 146 vs 171), so column sums only have `none` (`mtune.only_for`); the
//     split regions tile and vectorize a column sum exactly as `none` does, should a
//     script select one for it.
// The multi-reductions are lowered by the `reduction_lowering` alternative: reduce
// along the innermost vector dimension (one horizontal sum per row: innerreduction),
// or accumulate whole vectors elementwise (innerparallel: the row tile is transposed
// first). Column sums reduce an outer dimension, which innerreduction would transpose
// (0.2-0.36x of innerparallel), so they only have innerparallel.
module attributes {transform.with_named_sequence} {
  // Start points (proposed right after the default, see strategies/knob_space.h): a
  // column sum takes 1-row tiles as one more trial, and prefetches 2 steps ahead
  // (where its input reaches 4 MiB; see prefetch_ahead) as another; a row sum (whose
  // default already has 1-row tiles) takes them without bands, the best unbanded row
  // sum measured.
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.start_points = [{tile_m = 1 : i64}, {bands = 1 : i64}, {prefetch_ahead = 2 : i64}]} {
    %sum = transform.structured.match ops{["linalg.reduce"]} in %root : (!transform.any_op) -> !transform.any_op
    // Bands (row sums): the rows are split into B bands of m / B rows (a forall of B
    // iterations here), and after bufferization the band loop is unrolled and jammed
    // into the loops it holds, so each step sums the same rows of every band side by
    // side. Each band is one long run of memory, so the kernel reads B far-apart
    // streams at once (as the read ceiling's several-stream loop does) where tile_m
    // rows read tile_m streams that end every row. B must divide m: a partial band
    // would give the jammed loops bounds that differ from band to band (where 4 does
    // not divide m, the default falls to 2 bands or none).
    // Row sums default to 4 bands of 1-row tiles (split by 32). In one
    // `mtune-bench-families --variant "bands=4 tile_m=1"` run (7 rounds, AMD EPYC
    // znver4, session 40) that ran 0.99 / 0.98 / 1.08 / 1.20 / 1.23x the unbanded
    // 4-row default on 256x512 / 64x4096 / 1024^2 / 2048x4096 / 4096^2; 2 bands of 2
    // rows, 4 of 2 and 8 of 1 were slower beyond the L2 (0.91-1.14x). In a second run
    // (1024^2 / 2048x4096 / 4096^2) the unbanded tiles of 8, 4 and 1 rows ran at
    // 0.66-0.91x the 4 bands of 1 row, 4 bands of 2 rows at 0.74-0.95x. Without
    // bands 1-row tiles are still better than 4 (1.42 / 1.41 / 1.11 / 0.94x on
    // 255x512 / 1023x1025 / 2047x4096 / 37x45), where the last row tile is partial.
    %bands = transform.tune.knob<"bands"> = 4 from options = [1, 2, 4, 8] {mtune.only_for = ["reduce_rows_2d"], mtune.otherwise = 1} -> !transform.param<i64>
    transform.smt.constrain_params(%bands) {mtune.rule = "bands divide m"} : (!transform.param<i64>) -> () {
    ^bb0(%b: !smt.int):
      %m = smt.declare_fun "m" : !smt.int
      %zero = smt.int.constant 0
      %rem = smt.int.mod %m, %b
      %whole = smt.eq %rem, %zero : !smt.int
      smt.assert %whole
    }
    %band, %band_forall = transform.structured.tile_using_forall %sum num_threads [%bands, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // One band is no band: canonicalization folds the forall of one iteration away.
    %payload_func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %payload_func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %op = transform.structured.match ops{["linalg.reduce"]} in %root : (!transform.any_op) -> !transform.any_op
    // Row sums start from 1-row tiles (see bands), column sums from 8 rows (4 ran
    // 2048x4096 at 0.57x): one `mtune-bench-families --variant` run.
    %tm = transform.tune.knob<"tile_m"> = 8 from options = [1, 2, 4, 8, 16, 32] {mtune.default_for = {reduce_rows_2d = 1 : i64}} -> !transform.param<i64>
    // tile_n is read only without a split (a split row tile spans the whole row):
    // with a split it stays at its default, so that one code is one candidate.
    %tn = transform.tune.knob<"tile_n"> = 32 from options = [8, 16, 32, 64, 128] {mtune.only_with = {split_reduction = ["none"]}} -> !transform.param<i64>
    // Software prefetch (column sums): each step of the loop over rows of tiles
    // prefetches into the L2 the lines the tiles prefetch_ahead steps (of tile_m
    // rows) later read (mtune's `mtune-prefetch-reads` pass, at the end;
    // libMtunePlugin.so gives it to mlir-opt). 0: none. A tile reads tile_m rows
    // 16 KiB apart (4096 columns) side by side, which the hardware prefetchers follow
    // poorly once the input is out of the L3. Against the same default tiles without
    // it (mtune-bench-families --trials 0 --rounds 7 --variant, 32 MiB L3): 2 steps
    // ahead ran 2048x4096 (32 MiB) at 1.28x, 4096x2048 1.43x, 4096^2 1.30x; 16 MiB
    // (2048^2, 1024x4096) 0.95x; 4 and 8 MiB 0.82-0.85x. The template cannot see the
    // L3, so the default is without it and a start point tries 2 steps ahead. Only
    // where the input reaches 4 MiB (below that it is read from the caches) and with
    // more than one row of tiles (else the loop folds away).
    %pf = transform.tune.knob<"prefetch_ahead"> = 0 from options = [0, 2, 4, 8] {mtune.only_for = ["reduce_cols_2d"], mtune.otherwise = 0 : i64} -> !transform.param<i64>
    transform.smt.constrain_params(%pf, %tm) {mtune.rule = "prefetch_ahead only where the input reaches 4 MiB, with more than one row of tiles"}
        : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%ahead: !smt.int, %r: !smt.int):
      %m = smt.declare_fun "m" : !smt.int
      %n = smt.declare_fun "n" : !smt.int
      %elem = smt.declare_fun "elem_bytes" : !smt.int
      %zero = smt.int.constant 0
      %bytes = smt.int.mul %m, %n, %elem
      %limit = smt.int.constant 4194304
      %big = smt.int.cmp ge %bytes, %limit
      %several = smt.int.cmp gt %m, %r
      %ok = smt.and %big, %several
      %on = smt.distinct %ahead, %zero : !smt.int
      %valid = smt.implies %on, %ok
      smt.assert %valid
    }
    transform.tune.alternatives<"split_reduction"> selected_region = 4 attributes {mtune.labels = ["none", "4", "8", "16", "32"], mtune.only_for = ["reduce_rows_2d"], mtune.otherwise = "none", mtune.splits = "n"} {
      transform.include @tile_and_vectorize failures(propagate) (%op, %tm, %tn, %pf)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    }, {
      %s = transform.param.constant 4 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 4]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @split_rows failures(propagate) (%root, %fill, %part, %merge, %kloop, %rloop, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        transform.include @tile_and_vectorize failures(propagate) (%c, %tm, %tn, %pf)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
    }, {
      %s = transform.param.constant 8 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 8]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @split_rows failures(propagate) (%root, %fill, %part, %merge, %kloop, %rloop, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        transform.include @tile_and_vectorize failures(propagate) (%c, %tm, %tn, %pf)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
    }, {
      %s = transform.param.constant 16 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 16]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @split_rows failures(propagate) (%root, %fill, %part, %merge, %kloop, %rloop, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        transform.include @tile_and_vectorize failures(propagate) (%c, %tm, %tn, %pf)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
    }, {
      %s = transform.param.constant 32 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 32]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @split_rows failures(propagate) (%root, %fill, %part, %merge, %kloop, %rloop, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        transform.include @tile_and_vectorize failures(propagate) (%c, %tm, %tn, %pf)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
    }
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    // The partial-sum buffers of peeled remainder tiles have static shapes: allocate
    // them once, outside the loops (no-op when there are none).
    transform.bufferization.buffer_loop_hoisting %kernel : !transform.any_op
    // With bands, the band forall becomes a loop of B iterations, jammed into the
    // loops inside it (the factor is capped at the trip count, B). Jamming needs
    // their bounds defined outside it: canonicalization first moves the constants
    // out (and drops the buffers that bufferization threads through the loops).
    // Without bands there is no forall, none of this runs, and those candidates'
    // code is unchanged.
    %band_foralls = transform.structured.match ops{["scf.forall"]} in %kernel : (!transform.any_op) -> !transform.any_op
    transform.foreach %band_foralls : !transform.any_op {
    ^bb0(%band_forall_buffers: !transform.any_op):
      %band_loop = transform.loop.forall_to_for %band_forall_buffers : (!transform.any_op) -> !transform.any_op
      %func = transform.get_parent_op %band_loop {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
      transform.apply_patterns to %func {
        transform.apply_patterns.canonicalization
      } : !transform.any_op
      transform.loop.unroll_and_jam %band_loop {factor = 8 : i64} : !transform.any_op
    }
    transform.tune.alternatives<"reduction_lowering"> selected_region = 1 attributes {mtune.labels = ["innerparallel", "innerreduction"], mtune.only_for = ["reduce_rows_2d"], mtune.otherwise = "innerparallel"} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = innerparallel
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = innerreduction
      } : !transform.any_op
      // Each row's horizontal sum becomes a vector.reduction, which lowers to an
      // ordered chain of scalar adds (16 dependent adds per 16 lanes) unless it may
      // be reassociated. A split already sums a row in another order than the
      // payload's, so a shuffle tree is a liberty of the same kind (for `none` it is
      // the only one); the verification's tolerance for sums covers both.
      %reductions = transform.structured.match ops{["vector.reduction"]} in %kernel : (!transform.any_op) -> !transform.any_op
      %reassoc = transform.param.constant #arith.fastmath<reassoc> -> !transform.any_param
      transform.annotate %reductions "fastmath" = %reassoc : !transform.any_op, !transform.any_param
    }
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.include @prefetch_reads failures(propagate) (%kernel, %pf) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
  // prefetch_ahead > 0: runs mtune-prefetch-reads on the kernel, then CSE (the pass
  // recomputes each read's later address on its own); a sequence that propagates
  // failures, so that a failed check skips it, inside one that suppresses that
  // failure (not the pass's error diagnostic: the worker records it).
  transform.named_sequence @prefetch_reads(%kernel: !transform.any_op {transform.consumed},
      %pf: !transform.param<i64> {transform.readonly}) {
    %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
    transform.sequence %kernel : !transform.any_op failures(suppress) {
    ^bb0(%k: !transform.any_op):
      transform.sequence %k : !transform.any_op failures(propagate) {
      ^bb1(%k2: !transform.any_op):
        transform.match.param.cmpi gt %pf, %zero : !transform.param<i64>
        %prefetched = transform.apply_registered_pass "mtune-prefetch-reads" to %k2 : (!transform.any_op) -> !transform.any_op
        transform.apply_cse to %prefetched : !transform.any_op
      }
    }
    transform.yield
  }
  // No split: tile by tile_m x tile_n and vectorize each tile at that shape into a
  // multi_reduction accumulating into the output slice (masked partial tiles). The
  // loop over rows of tiles carries prefetch_ahead for mtune-prefetch-reads.
  transform.named_sequence @tile_and_vectorize(%op: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly}, %tn: !transform.param<i64> {transform.readonly},
      %pf: !transform.param<i64> {transform.readonly}) {
    %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %loops#0 "mtune.prefetch_ahead" = %pf : !transform.any_op, !transform.param<i64>
    transform.structured.vectorize %tiled vector_sizes [%tm, %tn] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.yield
  }
  // Row split, after tile_reduction_using_for: the init (fill), the partial
  // accumulation and the merge (all iterating tile_m x S) are vectorized with masks,
  // then the reduction loop and the row loop are peeled (a loop whose step divides
  // its range is left whole: loop.peel fails silenceably on it, suppressed here).
  // Canonicalization then folds the masks of full tiles (their sizes are constants
  // after peeling) and the partial sums' unmasked read/write are hoisted out of each
  // loop: they become loop-carried vectors (registers), not a buffer read and
  // written every step.
  transform.named_sequence @split_rows(%root: !transform.any_op {transform.readonly},
      %fill: !transform.any_op {transform.consumed}, %part: !transform.any_op {transform.consumed},
      %merge: !transform.any_op {transform.consumed}, %kloop: !transform.any_op {transform.readonly},
      %rloop: !transform.any_op {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly}, %s: !transform.param<i64> {transform.readonly}) {
    transform.structured.vectorize %fill vector_sizes [%tm, %s] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.structured.vectorize %part vector_sizes [%tm, %s] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.structured.vectorize %merge vector_sizes [%tm, %s] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %k = transform.cast %kloop : !transform.any_op to !transform.op<"scf.for">
    transform.sequence %k : !transform.op<"scf.for"> failures(suppress) {
    ^bb0(%l: !transform.op<"scf.for">):
      %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    %r = transform.cast %rloop : !transform.any_op to !transform.op<"scf.for">
    transform.sequence %r : !transform.op<"scf.for"> failures(suppress) {
    ^bb0(%l: !transform.op<"scf.for">):
      %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %func : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %func : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
