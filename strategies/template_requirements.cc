#include "strategies/template_requirements.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Parser/Parser.h"
#include "strategies/mlir_support.h"

namespace mtune::strategies {
namespace {

constexpr char kElementTypesAttr[] = "mtune.element_types";
constexpr char kCpuFeaturesAttr[] = "mtune.cpu_features";

absl::StatusOr<std::vector<std::string>> ReadStrings(mlir::Operation* main, const char* name) {
  std::vector<std::string> values;
  mlir::Attribute attr = main->getAttr(name);
  if (!attr) return values;
  auto array = llvm::dyn_cast<mlir::ArrayAttr>(attr);
  if (!array || array.empty())
    return absl::InvalidArgumentError(absl::StrCat(name, " must be a non-empty array of strings"));
  for (mlir::Attribute entry : array) {
    auto text = llvm::dyn_cast<mlir::StringAttr>(entry);
    if (!text || text.getValue().empty())
      return absl::InvalidArgumentError(absl::StrCat(name, " must be a non-empty array of strings"));
    values.push_back(text.getValue().str());
  }
  return values;
}

}  // namespace

absl::StatusOr<TemplateRequirements> ReadTemplateRequirements(mlir::ModuleOp module) {
  TemplateRequirements requirements;
  mlir::Operation* main = nullptr;
  module->walk([&](mlir::transform::NamedSequenceOp op) {
    if (op.getSymName() == mlir::transform::TransformDialect::kTransformEntryPointSymbolName)
      main = op;
  });
  if (main == nullptr) return requirements;
  auto types = ReadStrings(main, kElementTypesAttr);
  if (!types.ok()) return types.status();
  auto features = ReadStrings(main, kCpuFeaturesAttr);
  if (!features.ok()) return features.status();
  requirements.element_types = *std::move(types);
  requirements.cpu_features = *std::move(features);
  return requirements;
}

absl::StatusOr<TemplateRequirements> ReadTemplateRequirements(absl::string_view template_text) {
  std::unique_ptr<mlir::MLIRContext> context = MakeMlirContext();
  DiagnosticCapture diagnostics(context.get());
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      llvm::StringRef(template_text.data(), template_text.size()), context.get(), "template");
  if (!module)
    return diagnostics.ToStatus(absl::StatusCode::kInvalidArgument, "strategy template does not parse");
  return ReadTemplateRequirements(module.get());
}

absl::Status CheckElementType(const TemplateRequirements& requirements, const Problem& problem) {
  const auto& types = requirements.element_types;
  if (types.empty() || std::find(types.begin(), types.end(), problem.element_type) != types.end())
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("the template tunes ", absl::StrJoin(types, ", "),
                                                 " problems only (", kElementTypesAttr, "), not ",
                                                 problem.element_type));
}

std::vector<std::string> MissingCpuFeatures(const TemplateRequirements& requirements,
                                            absl::string_view host_features) {
  std::vector<std::string> enabled;
  for (absl::string_view f : absl::StrSplit(host_features, ',', absl::SkipEmpty()))
    if (absl::ConsumePrefix(&f, "+")) enabled.emplace_back(f);
  std::vector<std::string> missing;
  for (const std::string& needed : requirements.cpu_features)
    if (std::find(enabled.begin(), enabled.end(), needed) == enabled.end()) missing.push_back(needed);
  return missing;
}

}  // namespace mtune::strategies
