// A user template whose sequence would be resolved from an external library.
module attributes {transform.with_named_sequence} {
  transform.named_sequence private @from_elsewhere(%op: !transform.any_op {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    transform.include @from_elsewhere failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }
}
