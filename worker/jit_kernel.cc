#include "worker/jit_kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "strategies/mlir_support.h"
#include "strategies/template_policy.h"
#include "strategies/template_requirements.h"
#include "strategies/payload.h"
#include "worker/amx.h"
#include "worker/timing.h"

namespace mtune::worker {
namespace {

using Clock = std::chrono::steady_clock;

// Allocations of generated code (memref.alloc lowers to malloc / aligned_alloc).
// A failure calls the process's new-handler, as operator new would: in the
// sandbox that ends the child as out of memory, where a null pointer would
// otherwise surface later as an unexplained SIGSEGV. Without a handler, as before.
void* KernelMalloc(size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr && bytes != 0) {
    if (std::new_handler handler = std::get_new_handler()) handler();
  }
  return p;
}
void* KernelAlignedAlloc(size_t alignment, size_t bytes) {
  void* p = std::aligned_alloc(alignment, bytes);
  if (p == nullptr && bytes != 0) {
    if (std::new_handler handler = std::get_new_handler()) handler();
  }
  return p;
}

// From transformed payload (vectors, memrefs, scf loops) to the LLVM dialect.
// Unrolled transfer lowering keeps allocas out of hot loops (see MLIR22-NOTES);
// the deallocation pipeline frees the buffers that padding allocates per tile.
// x86vector ops (a strategy may make AVX512-BF16 dot products, see
// strategies/templates/matmul_bf16_vnni.mlir) and AMX ops (matmul_bf16_amx.mlir)
// lower with the vector dialect. AMX tiles carried through a loop become block
// arguments of cf branches, whose conversion needs the AMX type conversion:
// convert-to-llvm restricted to cf and amx has it, where convert-cf-to-llvm fails
// ("failed to legalize operation 'cf.br'").
constexpr char kLoweringPipeline[] =
    "buffer-deallocation-pipeline,"
    "func.func(convert-vector-to-scf{full-unroll=true},convert-linalg-to-loops),"
    "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
    "convert-vector-to-llvm{enable-x86vector=true enable-amx=true},finalize-memref-to-llvm,"
    "convert-math-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,"
    "convert-to-llvm{filter-dialects=cf,amx},convert-ub-to-llvm,"
    "reconcile-unrealized-casts";

void InitializeNativeTargetOnce() {
  static const bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Some vector lowerings (x86's AVX2 transpose) emit inline assembly, which the
    // JIT can only assemble with the target's asm parser.
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)done;
}

}  // namespace

JitKernel::~JitKernel() = default;

void JitKernel::Call(const std::vector<void*>& d) const {
  // The C interface takes one pointer per operand; the arity is the payload's.
  switch (d.size()) {
    case 1: return reinterpret_cast<void (*)(void*)>(fn_)(d[0]);
    case 2: return reinterpret_cast<void (*)(void*, void*)>(fn_)(d[0], d[1]);
    case 3: return reinterpret_cast<void (*)(void*, void*, void*)>(fn_)(d[0], d[1], d[2]);
    case 4: return reinterpret_cast<void (*)(void*, void*, void*, void*)>(fn_)(d[0], d[1], d[2], d[3]);
    default: std::abort();  // no payload has more operands
  }
}

std::string JitKernel::HostCpuName() { return llvm::sys::getHostCPUName().str(); }

std::string JitKernel::HostTriple() { return llvm::sys::getProcessTriple(); }

std::string JitKernel::HostFeatures() {
  std::vector<std::string> enabled;
  for (const auto& feature : llvm::sys::getHostCPUFeatures())
    if (feature.second) enabled.push_back("+" + feature.first().str());
  std::sort(enabled.begin(), enabled.end());
  return absl::StrJoin(enabled, ",");
}

absl::StatusOr<strategies::VectorRegisters> JitKernel::HostVectorRegisters() {
  return strategies::VectorRegistersOf(HostFeatures());
}

std::unique_ptr<JitKernel> JitKernel::Compile(const std::string& payload,
                                              const std::string& script, CompileTimes* times,
                                              CompileFailure* failure) {
  using mtune::v1::RESULT_STATUS_COMPILE_ERROR;
  using mtune::v1::RESULT_STATUS_INVALID_CANDIDATE;
  InitializeNativeTargetOnce();
  auto fail = [&](mtune::v1::ResultStatus status, std::string error) {
    failure->status = status;
    failure->error = std::move(error);
    return nullptr;
  };
  std::unique_ptr<JitKernel> kernel(new JitKernel);
  kernel->context_ = strategies::MakeMlirContext();
  mlir::MLIRContext* context = kernel->context_.get();
  strategies::DiagnosticCapture diagnostics(context);

  if (absl::Status checked = strategies::CheckTemplateText(script); !checked.ok())
    return fail(RESULT_STATUS_INVALID_CANDIDATE, std::string(checked.message()));
  auto start = Clock::now();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(payload, context, "payload");
  if (!module)
    return fail(RESULT_STATUS_COMPILE_ERROR, "payload does not parse:\n" + diagnostics.text());
  auto transform_module = mlir::parseSourceString<mlir::ModuleOp>(script, context, "strategy");
  if (!transform_module)
    return fail(RESULT_STATUS_INVALID_CANDIDATE, "strategy does not parse:\n" + diagnostics.text());
  // The script came over the network: it runs only if it is a plain transform
  // script (no passes, files, output or external sequences), whoever sent it.
  if (absl::Status allowed = strategies::CheckTemplatePolicy(transform_module.get());
      !allowed.ok())
    return fail(RESULT_STATUS_INVALID_CANDIDATE, std::string(allowed.message()));
  auto requirements = strategies::ReadTemplateRequirements(transform_module.get());
  if (!requirements.ok())
    return fail(RESULT_STATUS_INVALID_CANDIDATE, std::string(requirements.status().message()));
  // Checked before any code is generated: LLVM stops the process (a fatal error, not
  // a diagnostic) when it meets an instruction the CPU lacks.
  if (auto missing = strategies::MissingCpuFeatures(*requirements, HostFeatures()); !missing.empty())
    return fail(RESULT_STATUS_COMPILE_ERROR,
                absl::StrCat("the strategy needs the CPU features ", absl::StrJoin(missing, ", "),
                             " (mtune.cpu_features), which this CPU (", HostCpuName(), ") lacks"));
  // Linux hands out AMX tile state only to a process that asks for it; without it,
  // the first tile instruction raises SIGILL.
  if (std::find(requirements->cpu_features.begin(), requirements->cpu_features.end(), "amx-tile") !=
      requirements->cpu_features.end())
    if (absl::Status granted = RequestAmxState(); !granted.ok())
      return fail(RESULT_STATUS_COMPILE_ERROR,
                  absl::StrCat("the strategy uses AMX tiles, but ", granted.message()));
  times->parse_s = SecondsSince(start);

  start = Clock::now();
  mlir::Operation* entry = mlir::transform::detail::findTransformEntryPoint(
      *module, *transform_module, mlir::transform::TransformDialect::kTransformEntryPointSymbolName);
  if (entry == nullptr)
    return fail(RESULT_STATUS_INVALID_CANDIDATE, "strategy has no @__transform_main:\n" +
                                                     diagnostics.text());
  if (mlir::failed(mlir::transform::applyTransformNamedSequence(
          module->getOperation(), entry, *transform_module, mlir::transform::TransformOptions())))
    return fail(RESULT_STATUS_INVALID_CANDIDATE,
                "the strategy failed to apply:\n" + diagnostics.text());
  // An error the script went on after (a suppressed pass failure) would leave a
  // kernel other than the candidate's, measured under its name.
  if (diagnostics.has_error())
    return fail(RESULT_STATUS_INVALID_CANDIDATE,
                "the strategy reported an error while applying:\n" + diagnostics.text());
  times->transform_s = SecondsSince(start);

  start = Clock::now();
  mlir::PassManager pm(context);
  std::string pipeline_errors;
  llvm::raw_string_ostream pipeline_os(pipeline_errors);
  if (mlir::failed(mlir::parsePassPipeline(kLoweringPipeline, pm, pipeline_os)))
    return fail(RESULT_STATUS_COMPILE_ERROR, "bad lowering pipeline: " + pipeline_errors);
  if (mlir::failed(pm.run(*module)))
    return fail(RESULT_STATUS_COMPILE_ERROR, "lowering to LLVM failed:\n" + diagnostics.text());
  times->lower_s = SecondsSince(start);

  start = Clock::now();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return fail(RESULT_STATUS_COMPILE_ERROR, llvm::toString(builder.takeError()));
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = builder->createTargetMachine();
  if (!tm) return fail(RESULT_STATUS_COMPILE_ERROR, llvm::toString(tm.takeError()));
  auto transformer = mlir::makeOptimizingTransformer(3, 0, tm->get());
  // LLVM reports some code generation failures as error diagnostics (the register
  // allocator's "ran out of registers", which AMX code with tiles of too many shapes
  // meets), and without a handler it prints them and exits the process. Captured
  // instead, and the candidate is a COMPILE_ERROR.
  auto build_module = [&kernel](mlir::Operation* op, llvm::LLVMContext& llvm_context) {
    llvm_context.setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo* info, void* errors) {
          if (info->getSeverity() != llvm::DS_Error) return;
          llvm::raw_string_ostream os(*static_cast<std::string*>(errors));
          llvm::DiagnosticPrinterRawOStream printer(os);
          info->print(printer);
          os << "\n";
        },
        &kernel->codegen_errors_);
    return mlir::translateModuleToLLVMIR(op, llvm_context);
  };
  mlir::ExecutionEngineOptions options;
  options.llvmModuleBuilder = build_module;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // No GDB or perf registration: thousands of candidates would leave jitdump files behind.
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto engine = mlir::ExecutionEngine::create(*module, options, std::move(*tm));
  if (!engine)
    return fail(RESULT_STATUS_COMPILE_ERROR, "JIT failed: " + llvm::toString(engine.takeError()) +
                                                 "\n" + diagnostics.text());
  kernel->engine_ = std::move(*engine);
  // Strided copies (tile packing) lower to a call of MLIR's runtime memrefCopy.
  kernel->engine_->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("memrefCopy")] = {llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
                                       llvm::JITSymbolFlags::Exported};
    symbols[interner("malloc")] = {llvm::orc::ExecutorAddr::fromPtr(&KernelMalloc),
                                   llvm::JITSymbolFlags::Exported};
    symbols[interner("aligned_alloc")] = {llvm::orc::ExecutorAddr::fromPtr(&KernelAlignedAlloc),
                                          llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  auto symbol = kernel->engine_->lookup(absl::StrCat("_mlir_ciface_", strategies::kPayloadFunction));
  if (!symbol)
    return fail(RESULT_STATUS_COMPILE_ERROR, "kernel symbol not found: " +
                                                 llvm::toString(symbol.takeError()));
  // Code is generated on lookup: an error then means the code is not what was asked.
  if (!kernel->codegen_errors_.empty())
    return fail(RESULT_STATUS_COMPILE_ERROR,
                "LLVM's code generation failed: " + kernel->codegen_errors_);
  kernel->fn_ = reinterpret_cast<Fn>(*symbol);
  times->jit_s = SecondsSince(start);
  return kernel;
}

}  // namespace mtune::worker
