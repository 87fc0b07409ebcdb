// Every free knob of every built-in template changes the code it makes for each family
// the template tunes. A knob that leaves the transformed IR unchanged makes each of its
// options another candidate of the same code, compiled and measured again: a copy's
// transpose_lowering (no transpose to lower) once made a copy's space four times its
// size, and reduce_tiled's tile_n, unread by a split row sum, made 192 of its 300
// candidates repeats. Checked on each family's example problem: from the default
// candidate and two seeded random ones, each free knob is moved to another valid
// option and the IR after the transform interpreter is compared. A knob may rightly
// go unread from some candidates (a loop order over a single tile), so it passes when
// one of the three reads it.

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/mlir_support.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"

namespace mtune::strategies {
namespace {

// The payload of `problem` after `script`'s @__transform_main, printed.
absl::StatusOr<std::string> TransformedIr(mlir::MLIRContext& context, const std::string& payload,
                                          const std::string& script) {
  DiagnosticCapture diagnostics(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(payload, &context);
  mlir::OwningOpRef<mlir::ModuleOp> library = mlir::parseSourceString<mlir::ModuleOp>(script, &context);
  if (!module || !library) return diagnostics.ToStatus(absl::StatusCode::kInvalidArgument, "parsing");
  mlir::Operation* entry = mlir::transform::detail::findTransformEntryPoint(
      *module, *library, mlir::transform::TransformDialect::kTransformEntryPointSymbolName);
  if (entry == nullptr) return absl::InvalidArgumentError("no @__transform_main");
  if (mlir::failed(mlir::transform::applyTransformNamedSequence(module->getOperation(), entry, *library,
                                                                mlir::transform::TransformOptions())))
    return diagnostics.ToStatus(absl::StatusCode::kInternal, "applying the script");
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

bool IsFree(const KnobSpec& knob) { return !knob.derived && knob.options.size() > 1; }

// A valid candidate with every free knob drawn at random, or nullopt after many tries.
std::optional<KnobValues> RandomCandidate(const KnobSpace& space, std::mt19937& rng) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    KnobValues values = *DefaultCandidate(space);
    for (const KnobSpec& knob : space.knobs)
      if (IsFree(knob)) values[knob.name] = knob.options[rng() % knob.options.size()];
    if (auto solved = SolveDerivedKnobs(space, values)) return solved;
  }
  return std::nullopt;
}

// `base` with `knob` moved to another option for which a valid candidate exists.
std::optional<KnobValues> Neighbour(const KnobSpace& space, const KnobValues& base, const KnobSpec& knob,
                                    std::mt19937& rng) {
  std::vector<std::string> others;
  for (const std::string& option : knob.options)
    if (option != base.at(knob.name)) others.push_back(option);
  std::shuffle(others.begin(), others.end(), rng);
  for (const std::string& option : others) {
    KnobValues values = base;
    values[knob.name] = option;
    if (auto solved = SolveDerivedKnobs(space, values)) return solved;
  }
  return std::nullopt;
}

class SpaceAudit : public testing::TestWithParam<std::string> {};

TEST_P(SpaceAudit, EveryFreeKnobChangesTheCode) {
  const std::string family = GetParam();
  const FamilyInfo* info = nullptr;
  for (const FamilyInfo& f : Families())
    if (f.name == family) info = &f;
  ASSERT_NE(info, nullptr);
  auto problem = ParseProblemKey(info->example);
  ASSERT_TRUE(problem.ok()) << problem.status();
  auto payload = MakePayload(*problem);
  ASSERT_TRUE(payload.ok()) << payload.status();
  std::unique_ptr<mlir::MLIRContext> context = MakeMlirContext();
  for (const StrategyTemplate& tpl : BuiltinTemplates()) {
    if (!tpl.TunesFamily(family)) continue;
    auto space = ExtractKnobSpace(tpl.text, *problem);
    ASSERT_TRUE(space.ok()) << tpl.name << ": " << space.status();
    std::mt19937 rng(7);
    std::vector<KnobValues> bases;
    if (auto defaults = DefaultCandidate(*space)) bases.push_back(*defaults);
    for (int i = 0; i < 2; ++i)
      if (auto random = RandomCandidate(*space, rng)) bases.push_back(*random);
    ASSERT_FALSE(bases.empty()) << tpl.name << " has no valid candidate for " << info->example;
    auto code = [&](const KnobValues& values) -> absl::StatusOr<std::string> {
      auto script = Instantiate(tpl.text, *problem, values);
      if (!script.ok()) return script.status();
      return TransformedIr(*context, *payload, *script);
    };
    for (const KnobSpec& knob : space->knobs) {
      if (!IsFree(knob)) continue;
      int compared = 0, changed = 0;
      for (const KnobValues& base : bases) {
        std::optional<KnobValues> moved = Neighbour(*space, base, knob, rng);
        if (!moved) continue;
        auto before = code(base), after = code(*moved);
        ASSERT_TRUE(before.ok()) << tpl.name << ": " << before.status();
        ASSERT_TRUE(after.ok()) << tpl.name << ": " << after.status();
        ++compared;
        changed += *before != *after;
      }
      if (compared == 0) continue;  // no other option of it is valid from these bases
      EXPECT_GT(changed, 0) << tpl.name << " on " << info->example << ": knob '" << knob.name
                            << "' left the code unchanged from all " << compared
                            << " candidates; if only some families or some choices of another knob read it,"
                            << " mark it mtune.only_for or mtune.only_with";
    }
  }
}

std::vector<std::string> TunedFamilies() {
  std::vector<std::string> names;
  for (const FamilyInfo& f : Families())
    if (!f.default_template.empty()) names.push_back(f.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Families, SpaceAudit, testing::ValuesIn(TunedFamilies()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace mtune::strategies
