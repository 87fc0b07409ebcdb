# lit configuration for mtune's FileCheck tests: instantiated strategy templates
# must run unchanged in upstream mlir-opt.
import os
import shutil
import lit.formats

config.name = "mtune"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(lit_config.params.get("build_dir", "."), "tests", "lit")
# Longest names first: lit substitutes in order, and %mlir-opt must not eat %mlir-optx.
for tool in ("mlir-runner", "runner_libs", "plugin", "mtune", "mlir-opt", "FileCheck"):
    if tool in lit_config.params:
        config.substitutions.append(("%" + tool, lit_config.params[tool]))
# `not` and friends come with LLVM's tools.
config.environment["PATH"] = os.pathsep.join(
    [lit_config.params.get("llvm_tools_dir", "/usr/lib/llvm-22/bin"), os.environ.get("PATH", "")])
# The interpreter memory checks (interpreter_memory_*.test) run mlir-opt under
# valgrind; deploy/install-deps.sh installs it.
if shutil.which("valgrind"):
    config.available_features.add("valgrind")
