// A user template that would write the payload IR to the worker's output.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %t = transform.tune.knob<"tile"> = 8 from options = [4, 8] -> !transform.param<i64>
    transform.print %root {name = "payload"} : !transform.any_op
    transform.yield
  }
}
