// mtune-bench-lookup: what a compiler pays to consume tuned strategies.
//  1. Lookup latency (p50, p99, max) on an exported best-strategy database of
//     --entries entries (default 100,000): exact hits, misses, and the flagged
//     nearest-shape fallback. Goal: p99 of an exact hit <= 50 us.
//  2. Time to apply the dispatching transform library to a module of --ops
//     matmuls (default 100), in-process (what `mtune apply` and the pass plugin
//     do): building the library, parsing it, and the transform interpreter,
//     with every op tuned and with none tuned (matching cost only); once with
//     one op per function, once with ten ops per function (the tuned ones are
//     then outlined into functions of their own first).
// Each figure is from one run on this machine; run it a few times and compare
// medians on a noisy machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/measure_command.h"
#include "db/export.h"
#include "db/strategy_db.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "strategies/apply.h"
#include "strategies/mlir_support.h"
#include "strategies/payload.h"
#include "strategies/problem.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Percentiles {
  double p50, p99, max;
};

Percentiles Summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) { return samples[static_cast<size_t>(q * (samples.size() - 1))]; };
  return {at(0.5), at(0.99), samples.back()};
}

std::string MatmulKey(int m, int n, int k) {
  return absl::StrCat("matmul:m=", m, ",n=", n, ",k=", k, ":f32");
}

int Fail(const absl::Status& status) {
  fprintf(stderr, "mtune-bench-lookup: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune-bench-lookup: lookup latency and library application time"};
  int entries = 100000, lookups = 20000, ops = 100, script_bytes = 2048, targets = 4;
  std::string dir = std::filesystem::temp_directory_path() / "mtune-bench-lookup";
  app.add_option("--entries", entries, "entries in the exported database")->capture_default_str();
  app.add_option("--lookups", lookups, "timed lookups per kind")->capture_default_str();
  app.add_option("--script-bytes", script_bytes, "bytes of script per entry")
      ->capture_default_str();
  app.add_option("--targets", targets, "targets the entries are spread over")
      ->capture_default_str();
  app.add_option("--ops", ops, "one-matmul functions in the module the library is applied to")
      ->capture_default_str();
  app.add_option("--dir", dir, "scratch directory")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);

  // --- 1. lookup latency --------------------------------------------------------
  // Shapes on a grid, spread over targets: what a year of tuning a model zoo
  // could leave behind.
  std::vector<mtune::db::ExportedStrategy> rows;
  rows.reserve(entries);
  const std::string script(script_bytes, 'x');
  std::vector<std::pair<std::string, std::string>> keys;
  for (int i = 0; rows.size() < static_cast<size_t>(entries); ++i) {
    const int m = 16 + 16 * (i % 64), n = 16 + 16 * ((i / 64) % 64), k = 16 + 16 * (i / 4096);
    const std::string target = absl::StrCat("cpu:x86_64-pc-linux-gnu:cpu", i % targets);
    mtune::db::ExportedStrategy& row = rows.emplace_back();
    row.problem = MatmulKey(m, n, k);
    row.family = "matmul";
    row.target_id = target;
    row.target_triple = "x86_64-pc-linux-gnu";
    row.target_cpu = absl::StrCat("cpu", i % targets);
    row.template_name = "matmul_packed";
    row.knobs_json = R"({"tile_m1":64,"tile_n1":128})";
    row.candidate_hash = "0123456789abcdef";
    row.script = script;
    row.gflops = 100 + i % 50;
    row.mtune_version = "0.1.0";
    row.mlir_version = "22.1.8";
    keys.emplace_back(row.problem, target);
  }
  const std::string db_path = dir + "/best.sqlite";
  auto start = Clock::now();
  auto written = mtune::db::WriteExportedDb(rows, db_path, mtune::db::ExistingFile::kReplace);
  if (!written.ok()) return Fail(written.status());
  printf("database: %d entries over %d targets, %d-byte scripts, %.1f MB, written in %.2f s\n",
         entries, targets, script_bytes, std::filesystem::file_size(db_path) / 1e6,
         Seconds(Clock::now() - start));
  rows.clear();

  start = Clock::now();
  auto db = mtune::db::StrategyDb::Open(db_path, {"22.1.8"});
  if (!db.ok()) return Fail(db.status());
  printf("open: %.1f us\n", Seconds(Clock::now() - start) * 1e6);

  std::mt19937_64 random(1);
  auto time_lookups = [&](const char* what, auto make_query, mtune::db::Fallback fallback,
                          bool expect_ok) -> bool {
    std::vector<double> samples;
    samples.reserve(lookups);
    for (int i = 0; i < lookups; ++i) {
      auto [problem, target] = make_query();
      const auto t0 = Clock::now();
      auto answer = (*db)->Lookup(problem, target, fallback);
      const auto t1 = Clock::now();
      if (answer.ok() != expect_ok) {
        fprintf(stderr, "unexpected answer for %s on %s: %s\n", problem.c_str(), target.c_str(),
                answer.ok() ? "found" : std::string(answer.status().message()).c_str());
        return false;
      }
      samples.push_back(Seconds(t1 - t0) * 1e6);
    }
    const Percentiles p = Summarize(samples);
    printf("%-34s p50 %7.2f us   p99 %7.2f us   max %8.1f us   (%d lookups)\n", what, p.p50,
           p.p99, p.max, lookups);
    return true;
  };
  auto random_hit = [&] { return keys[random() % keys.size()]; };
  auto random_miss = [&] {
    auto [problem, target] = keys[random() % keys.size()];
    return std::make_pair(MatmulKey(17 + 16 * (random() % 64), 17, 17), target);
  };
  if (!time_lookups("exact hit", random_hit, mtune::db::Fallback::kExactOnly, true)) return 1;
  if (!time_lookups("miss (NotFound)", random_miss, mtune::db::Fallback::kExactOnly, false))
    return 1;
  if (!time_lookups("nearest-shape fallback", random_miss, mtune::db::Fallback::kNearestShape,
                    true))
    return 1;

  // --- 2. applying the library to a module ----------------------------------------
  // Real scripts: the default candidate of each shape, instantiated.
  std::vector<mtune::strategies::LibraryEntry> tuned, elsewhere;
  // The same ops twice: one per function (as outlined kernels), and ten per
  // function (as compilers leave them: tuned ops are outlined by the library).
  std::string module_text, shared_text;
  constexpr int kOpsPerSharedFunction = 10;
  std::vector<std::string> shared_params, shared_body, shared_types, shared_results;
  const std::string target = mtune::strategies::HostCpuTargetId();
  for (int i = 0; i < ops; ++i) {
    const int m = 32 + 8 * (i % 10), n = 32 + 8 * (i / 10 % 10), k = 64;
    const std::string key = MatmulKey(m, n, k);
    mtune::client::MeasureRequest request;
    request.problem = key;
    auto resolved = mtune::client::ResolveCandidate(request);
    if (!resolved.ok()) return Fail(resolved.status());
    tuned.push_back({key, target, resolved->script});
    // Same scripts under keys no op of the module has: only the matching runs.
    elsewhere.push_back({MatmulKey(m, n, k + 1), target, resolved->script});
    auto problem = mtune::strategies::ParseProblemKey(key);
    if (!problem.ok()) return Fail(problem.status());
    auto payload = mtune::strategies::MakePayload(*problem);
    if (!payload.ok()) return Fail(payload.status());
    std::string function = *payload;
    const std::string from = absl::StrCat("@", mtune::strategies::kPayloadFunction, "(");
    function.replace(function.find(from), from.size(), absl::StrCat("@kernel_", i, "("));
    module_text += function;

    const std::string a = absl::StrCat("tensor<", m, "x", k, "xf32>"),
                      b = absl::StrCat("tensor<", k, "x", n, "xf32>"),
                      c = absl::StrCat("tensor<", m, "x", n, "xf32>");
    shared_params.push_back(absl::StrCat("%a", i, ": ", a, ", %b", i, ": ", b, ", %c", i, ": ", c));
    shared_body.push_back(absl::StrCat("  %r", i, " = linalg.matmul ins(%a", i, ", %b", i, " : ", a,
                                       ", ", b, ") outs(%c", i, " : ", c, ") -> ", c, "\n"));
    shared_types.push_back(c);
    shared_results.push_back(absl::StrCat("%r", i));
    if (shared_body.size() == kOpsPerSharedFunction || i + 1 == ops) {
      absl::StrAppend(&shared_text, "func.func @group_", i / kOpsPerSharedFunction, "(",
                      absl::StrJoin(shared_params, ", "), ") -> (",
                      absl::StrJoin(shared_types, ", "), ") {\n",
                      absl::StrJoin(shared_body, ""), "  return ",
                      absl::StrJoin(shared_results, ", "), " : ",
                      absl::StrJoin(shared_types, ", "), "\n}\n");
      shared_params.clear();
      shared_body.clear();
      shared_types.clear();
      shared_results.clear();
    }
  }
  auto context = mtune::strategies::MakeMlirContext();
  struct Case {
    const char* name;
    const std::vector<mtune::strategies::LibraryEntry>* entries;
    const std::string* text;
  };
  for (const Case& c : {Case{"every op tuned", &tuned, &module_text},
                        Case{"no op tuned", &elsewhere, &module_text},
                        Case{"shared, all tuned", &tuned, &shared_text},
                        Case{"shared, none tuned", &elsewhere, &shared_text}}) {
    const char* name = c.name;
    const auto* entries_used = c.entries;
    auto module = mlir::parseSourceString<mlir::ModuleOp>(*c.text, context.get());
    if (!module) return Fail(absl::InternalError("the bench module does not parse"));
    const auto t0 = Clock::now();
    auto library = mtune::strategies::PrepareLibrary(*entries_used, target, context.get());
    if (!library.ok()) return Fail(library.status());
    const auto t1 = Clock::now();
    auto outcomes = mtune::strategies::ApplyLibrary(*module, *library);
    if (!outcomes.ok()) return Fail(outcomes.status());
    const auto t2 = Clock::now();
    int applied = 0;
    for (const auto& o : *outcomes) applied += o.kind == mtune::strategies::OpOutcome::Kind::kTuned;
    int outlined = 0;
    for (const auto& o : *outcomes) outlined += o.outlined;
    printf("apply library, %d-op module, %-18s build+parse %6.1f ms   interpret %7.1f ms   "
           "(%d ops tuned, %d of them outlined)\n",
           ops, name, Seconds(t1 - t0) * 1e3, Seconds(t2 - t1) * 1e3, applied, outlined);
  }
  std::filesystem::remove(db_path);
  return 0;
}
