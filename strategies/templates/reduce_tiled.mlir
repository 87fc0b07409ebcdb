// mtune strategy template: 2-D row or column sum, tiled and vectorized with masks.
// mtune-family: reduce_rows_2d, reduce_cols_2d
//
// `split_reduction` chooses how the reduced dimension is accumulated:
//   none: the reduction is tiled by tile_m x tile_n (loops over m, then n) and each
//     tile is vectorized at exactly that shape into a vector.multi_reduction whose
//     accumulator is the output slice, read and written per tile; masked transfers
//     handle partial edge tiles, so any m, n works. Each tile's reduction is one
//     chain of dependent adds into the output.
//   4, 8, 16, 32 (S): split reduction. The parallel dimension is tiled (tile_m rows
//     for reduce_rows, tile_n columns for reduce_cols; the other tile knob is not
//     used), then `structured.tile_reduction_using_for` tiles the reduced dimension
//     by S: a loop accumulates tile x S independent partial sums (S per row for
//     rows, S rows of tile_n for columns) with plain vector adds, and one final
//     multi_reduction per tile merges them into the output. The loops are peeled
//     (main loop of full tiles, remainder of the partial one) after masked
//     vectorization, so the masks of full tiles fold away and the partial sums are
//     hoisted into registers (loop-carried vectors); only the remainder tiles keep
//     masks and an accumulator buffer. S is a static attribute of
//     tile_reduction_using_for (it takes no !transform.param), hence one region per
//     S rather than a knob. The accumulator takes tile_m x S (rows) or S x tile_n
//     (columns) elements: keep it within the 32 zmm registers (512 floats).
//     `structured.split_reduction` was not used: it needs S to divide the reduced
//     dimension (it reshapes it), so it fails on odd shapes.
// The merging multi-reduction is lowered by the `reduction_lowering` alternative:
// reduce along the innermost vector dimension, or accumulate whole vectors
// elementwise.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %op = transform.structured.match ops{["linalg.reduce"]} in %root : (!transform.any_op) -> !transform.any_op
    %tm = transform.tune.knob<"tile_m"> = 8 from options = [1, 2, 4, 8, 16, 32] -> !transform.param<i64>
    %tn = transform.tune.knob<"tile_n"> = 32 from options = [8, 16, 32, 64, 128] -> !transform.param<i64>
    transform.tune.alternatives<"split_reduction"> selected_region = 0 attributes {mtune.labels = ["none", "4", "8", "16", "32"]} {
      %tiled, %loops:2 = transform.structured.tile_using_for %op tile_sizes [%tm, %tn]
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %tiled vector_sizes [%tm, %tn] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    }, {
      %block = transform.param.constant 64 : i64 -> !transform.param<i64>
      %s = transform.param.constant 4 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 4]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %rloop, %tm, %s, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        %ct, %cblock, %cloop = transform.structured.tile_using_for %c tile_sizes [%block, %tn]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %ct by tile_sizes = [4, 0]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %cloop, %s, %tn, %tn, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      transform.include @hoist_partial_sums failures(propagate) (%root) : (!transform.any_op) -> ()
    }, {
      %block = transform.param.constant 64 : i64 -> !transform.param<i64>
      %s = transform.param.constant 8 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 8]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %rloop, %tm, %s, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        %ct, %cblock, %cloop = transform.structured.tile_using_for %c tile_sizes [%block, %tn]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %ct by tile_sizes = [8, 0]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %cloop, %s, %tn, %tn, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      transform.include @hoist_partial_sums failures(propagate) (%root) : (!transform.any_op) -> ()
    }, {
      %block = transform.param.constant 64 : i64 -> !transform.param<i64>
      %s = transform.param.constant 16 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 16]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %rloop, %tm, %s, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        %ct, %cblock, %cloop = transform.structured.tile_using_for %c tile_sizes [%block, %tn]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %ct by tile_sizes = [16, 0]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %cloop, %s, %tn, %tn, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      transform.include @hoist_partial_sums failures(propagate) (%root) : (!transform.any_op) -> ()
    }, {
      %block = transform.param.constant 64 : i64 -> !transform.param<i64>
      %s = transform.param.constant 32 : i64 -> !transform.param<i64>
      %rows = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 1>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %rows : !transform.any_op {
      ^bb0(%r: !transform.any_op):
        %rt, %rloop = transform.structured.tile_using_for %r tile_sizes [%tm, 0]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %rt by tile_sizes = [0, 32]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %rloop, %tm, %s, %tm, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      %cols = transform.structured.match ops{["linalg.reduce"]} attributes {dimensions = array<i64: 0>} in %root : (!transform.any_op) -> !transform.any_op
      transform.foreach %cols : !transform.any_op {
      ^bb0(%c: !transform.any_op):
        %ct, %cblock, %cloop = transform.structured.tile_using_for %c tile_sizes [%block, %tn]
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        %fill, %part, %merge, %kloop = transform.structured.tile_reduction_using_for %ct by tile_sizes = [32, 0]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @vectorize_and_peel failures(propagate) (%fill, %part, %merge, %kloop, %cloop, %s, %tn, %tn, %s)
          : (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
      }
      transform.include @hoist_partial_sums failures(propagate) (%root) : (!transform.any_op) -> ()
    }
    %bufferized = transform.bufferization.one_shot_bufferize %root {memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %kernel = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    transform.apply_cse to %kernel : !transform.any_op
    // The partial-sum buffers of peeled remainder tiles have static shapes: allocate
    // them once, outside the loops (no-op when there are none).
    transform.bufferization.buffer_loop_hoisting %kernel : !transform.any_op
    transform.tune.alternatives<"reduction_lowering"> selected_region = 0 attributes {mtune.labels = ["innerparallel", "innerreduction"]} {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = innerparallel
      } : !transform.any_op
    }, {
      transform.apply_patterns to %kernel {
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = innerreduction
      } : !transform.any_op
    }
    transform.apply_patterns to %kernel {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
  // Split reduction, after tile_reduction_using_for: the init (fill), the partial
  // accumulation and the merge are vectorized with masks. The partial op iterates
  // acc0 x acc1 (the input tile); the partial-sum tensor always has the split
  // dimension last, so for columns the fill and merge iterate it transposed
  // (merge0 x merge1 = tile_n x S).
  // then the reduction loop and the parallel loop are peeled. A loop whose step
  // divides its range is left whole: loop.peel fails (silenceably) on it, and that
  // failure is suppressed.
  transform.named_sequence @vectorize_and_peel(%fill: !transform.any_op {transform.consumed},
      %part: !transform.any_op {transform.consumed}, %merge: !transform.any_op {transform.consumed},
      %kloop: !transform.any_op {transform.readonly}, %ploop: !transform.any_op {transform.readonly},
      %acc0: !transform.param<i64> {transform.readonly}, %acc1: !transform.param<i64> {transform.readonly},
      %merge0: !transform.param<i64> {transform.readonly}, %merge1: !transform.param<i64> {transform.readonly}) {
    transform.structured.vectorize %fill vector_sizes [%merge0, %merge1] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.structured.vectorize %part vector_sizes [%acc0, %acc1] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.structured.vectorize %merge vector_sizes [%merge0, %merge1] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    %k = transform.cast %kloop : !transform.any_op to !transform.op<"scf.for">
    transform.sequence %k : !transform.op<"scf.for"> failures(suppress) {
    ^bb0(%l: !transform.op<"scf.for">):
      %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    %p = transform.cast %ploop : !transform.any_op to !transform.op<"scf.for">
    transform.sequence %p : !transform.op<"scf.for"> failures(suppress) {
    ^bb0(%l: !transform.op<"scf.for">):
      %main, %rest = transform.loop.peel %l : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
  // Folds the masks of full tiles (their sizes are constants after peeling), then
  // moves each loop's unmasked partial-sum read/write out of it: the partial sums
  // become loop-carried vectors (registers) instead of a buffer read and written
  // every step.
  transform.named_sequence @hoist_partial_sums(%root: !transform.any_op {transform.readonly}) {
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
