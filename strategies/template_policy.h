// What a strategy template may contain. Templates are code that workers run (in
// the transform interpreter, with every MLIR pass registered), so a template
// from outside the build (`mtune measure --template-file`, a script a worker
// receives) is accepted only when:
//   - it is at most kMaxTemplateBytes long, and its brackets nest at most
//     kMaxTemplateNesting deep (MLIR's parser recurses per level: 100,000 nested
//     `[` in a 200 KB template overflowed the stack);
//   - every op belongs to an allowed dialect: `builtin` (the module) and
//     `transform` with its extensions (tune knobs and alternatives, structured,
//     loop, bufferization, vector/tensor patterns, ...), and `smt` only inside
//     `transform.smt.constrain_params` (knob constraints mtune evaluates);
//   - it holds none of the transform ops that reach beyond the payload:
//     `transform.apply_registered_pass` (runs any registered pass, some of which
//     write files; the exceptions are mtune's own `mtune-rotate-tiles` and
//     `mtune-flatten-transfers`, without options), `transform.print` (writes to
//     the worker's output);
//   - it holds no `dense_resource` or `distinct` attribute (MLIR renames a
//     resource whose name the context already holds, and makes a new distinct
//     attribute on every parse, so such a template is not the same each time it
//     is parsed);
//   - every `transform.named_sequence` has a body (a declaration would be
//     resolved from an external transform library), and every symbol an op
//     refers to (`transform.include`, `foreach_match`, ...) is a sequence
//     defined in the template itself.
// Every template mtune ships passes; tests/template_policy_test.cc holds the
// rejected cases.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/BuiltinOps.h"

namespace mtune::strategies {

// Largest template text accepted, bytes (mtune's own templates are ~10 KB).
inline constexpr size_t kMaxTemplateBytes = 1 << 20;

// OK when `module` follows the policy above; InvalidArgument naming the first
// offending op and its location otherwise.
absl::Status CheckTemplatePolicy(mlir::ModuleOp module);

// Deepest nesting of (), [] and {} accepted in a template (mtune's own nest about
// 10 deep).
inline constexpr int kMaxTemplateNesting = 256;

// InvalidArgument when `text` is longer than kMaxTemplateBytes or its brackets nest
// deeper than kMaxTemplateNesting: checked before any parsing.
absl::Status CheckTemplateText(absl::string_view text);

}  // namespace mtune::strategies
