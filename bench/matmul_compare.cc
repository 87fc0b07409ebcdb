// mtune-bench-matmul: tunes (or loads the tuned best for) cubic f32 matmuls and
// measures the best kernel beside oneDNN, Eigen and OpenBLAS, single-threaded on one
// pinned core, in the same run, as GFLOP/s and as ratios (also to the measured FMA
// peak). Also reports what one tuning candidate costs (compile + verify + measure).
//
// Tuning runs in-process with worker::Measurer, without the worker's sandbox: a
// candidate whose generated code crashes takes the whole benchmark down. That is
// acceptable for a benchmark (the coordinator + workers are the robust path; use
// --db to compare what they found).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "bench/baselines.h"
#include "bench/l1_micro_kernel.h"
#include "bench/side_by_side.h"
#include "client/measure_command.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "proto/enum_words.h"
#include "proto/mtune.pb.h"
#include "strategies/candidate.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "worker/affinity.h"
#include "worker/calibration.h"
#include "worker/jit_kernel.h"
#include "worker/measure.h"
#include "worker/operands.h"

namespace mtune::bench {
namespace {

struct Flags {
  std::string shapes = "256,512,1024";
  int trials = 24;
  uint64_t seed = 0;
  std::string search = "random";
  std::string db;
  int cpu = 1;
  double min_time_s = 0.3;
  double tune_min_time_s = 0.1;
  int rounds = 3;
  std::string json;
  // A given candidate instead of tuning: template file and/or knob overrides.
  std::string template_file;
  std::vector<std::string> knobs;
  // More candidates of the default template ("NAME=VALUE NAME=VALUE ..."), timed in
  // the same interleaved rounds as the main kernel and the libraries.
  std::vector<std::string> variants;
};

// What the side-by-side compares, in the order each round runs them (then the
// --variant kernels). "fma_peak" is the calibration's FMA loop doing the shape's FLOP
// count, timed in the same rounds: the %peak columns are paired with it by round.
// "l1_ukernel" is the yardstick of bench/l1_micro_kernel.h (not timed without AVX-512).
constexpr const char* kImplementations[] = {"mtune", "onednn", "eigen", "openblas", "fma_peak",
                                            "l1_ukernel"};
constexpr const char* kFmaPeak = "fma_peak";
// The yardstick of bench/l1_micro_kernel.h: an 8 x 32 register-tile loop on L1-resident
// operands, doing the shape's FLOP count.
constexpr const char* kL1MicroKernel = "l1_ukernel";

// Timed repetitions per (round, implementation); their median is the round's figure.
constexpr int kRepetitionsPerRound = 3;

struct ShapeReport {
  int64_t size = 0;
  strategies::Problem problem;
  std::optional<BestKernel> best;
  // --variant kernels, in flag order; implementation names "variant1", "variant2", ...
  std::vector<BestKernel> variants;
  bool tuned = false;
  TuningStats tuning;
  // Median over rounds of each round's median, seconds per call; absent = not measured.
  std::map<std::string, double> median_s;
  // Each round's median, seconds per call, keyed by round (ratios are paired by round).
  std::map<std::string, std::map<int, double>> by_round_s;
  std::vector<std::string> notes;
};

absl::StatusOr<std::vector<int64_t>> ParseShapes(const std::string& text) {
  std::vector<int64_t> sizes;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size <= 0)
      return absl::InvalidArgumentError(
          absl::StrCat("--shapes: '", part, "' is not a positive size (want e.g. 256,512,1024)"));
    sizes.push_back(size);
  }
  if (sizes.empty()) return absl::InvalidArgumentError("--shapes: no sizes given");
  return sizes;
}

// --- tuning ------------------------------------------------------------------

// Seeded search (--search) over the default template, as the coordinator plans it.
absl::Status Tune(const Flags& flags, const mtune::v1::Calibration& calibration,
                  worker::Measurer& measurer, ShapeReport& report) {
  TuneOptions options;
  options.trials = flags.trials;
  options.seed = flags.seed;
  options.search = flags.search;
  options.min_time_s = flags.tune_min_time_s;
  report.tuned = true;
  return TuneProblem(report.problem, options, calibration, measurer,
                     absl::StrCat(report.size, "^3"), report.best, report.tuning);
}

// --- loading a tuned best --------------------------------------------------------

// Fills report.best for every shape the file has an OK result for.
absl::Status LoadBest(const std::string& path, std::vector<ShapeReport>& reports) {
  std::vector<strategies::Problem> problems;
  for (const ShapeReport& report : reports) problems.push_back(report.problem);
  auto best = LoadBestKernels(path, problems);
  if (!best.ok()) return best.status();
  for (size_t i = 0; i < reports.size(); ++i) reports[i].best = (*best)[i];
  return absl::OkStatus();
}

// --- a given candidate ---------------------------------------------------------

// Resolves --template-file / --knob for every shape (knobs not given keep the
// template's defaults), so a strategy can be compared with the libraries as is.
absl::Status UseGivenCandidate(const Flags& flags, std::vector<ShapeReport>& reports) {
  client::MeasureRequest request;
  request.template_file = flags.template_file;
  for (const std::string& knob : flags.knobs) {
    std::pair<std::string, std::string> kv = absl::StrSplit(knob, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty())
      return absl::InvalidArgumentError(absl::StrCat("--knob '", knob, "': want NAME=VALUE"));
    request.knobs[kv.first] = kv.second;
  }
  for (ShapeReport& report : reports) {
    request.problem = report.problem.Key();
    auto resolved = client::ResolveCandidate(request);
    if (!resolved.ok()) return resolved.status();
    report.best = BestKernel{resolved->script, strategies::ValuesOf(resolved->candidate), 0,
                             absl::StrCat("given on the command line (template ",
                                          resolved->candidate.template_name(), ")")};
  }
  return absl::OkStatus();
}

// Resolves every --variant for every shape: the default template's valid default
// candidate with the variant's knobs, as `mtune measure --knob` resolves them.
absl::Status ResolveVariants(const Flags& flags, std::vector<ShapeReport>& reports) {
  for (const std::string& variant : flags.variants) {
    auto knobs = ParseKnobList(variant);
    if (!knobs.ok())
      return absl::InvalidArgumentError(absl::StrCat("--variant: ", knobs.status().message()));
    for (ShapeReport& report : reports) {
      auto kernel = DefaultKernel(report.problem, *knobs);
      if (!kernel.ok())
        return absl::InvalidArgumentError(absl::StrCat("--variant '", variant, "' for ",
                                                       report.problem.Key(), ": ",
                                                       kernel.status().message()));
      kernel->origin = absl::StrCat("--variant ", variant);
      report.variants.push_back(*std::move(kernel));
    }
  }
  return absl::OkStatus();
}

// --- side by side -------------------------------------------------------------

// Everything one shape's timing loops touch; lives until the benchmarks have run.
struct ShapeFixture {
  std::unique_ptr<worker::MatmulOperands> ops;
  std::unique_ptr<worker::AlignedBuffer> baseline_c;
  std::unique_ptr<worker::JitKernel> kernel;
  worker::FmaLoop fma_loop;
  L1MicroKernelLoop l1_micro_kernel;
  // One per --variant (null: did not compile or gave a wrong result).
  std::vector<std::unique_ptr<worker::JitKernel>> variant_kernels;
  worker::MemRef2D a, b, c;
};

std::string VariantName(size_t index) { return absl::StrCat("variant", index + 1); }

// The implementations one round of a shape times, in order.
std::vector<std::string> Implementations(const ShapeReport& report) {
  std::vector<std::string> names(std::begin(kImplementations), std::end(kImplementations));
  for (size_t i = 0; i < report.variants.size(); ++i) names.push_back(VariantName(i));
  return names;
}

std::string BenchmarkName(int64_t size, int round, absl::string_view impl) {
  return absl::StrFormat("%d^3/round%d/%s", size, round, impl);
}

absl::StatusOr<GemmLibrary> LibraryNamed(absl::string_view name) {
  for (GemmLibrary library : kAllGemmLibraries)
    if (GemmLibraryName(library) == std::string_view(name.data(), name.size())) return library;
  return absl::InvalidArgumentError(absl::StrCat("unknown library ", name));
}

// Compiles `kernel` and checks it on the fixture's operands against the reference;
// null (with a note naming `what`) when it does not compile or gives a wrong result.
std::unique_ptr<worker::JitKernel> CompileVerified(const BestKernel& kernel, const std::string& what,
                                                   ShapeReport& report, ShapeFixture& fixture) {
  auto payload = strategies::MakePayload(report.problem);
  if (!payload.ok()) {
    report.notes.push_back(absl::StrCat(what, ": ", payload.status().ToString()));
    return nullptr;
  }
  worker::CompileTimes times;
  worker::CompileFailure failure;
  std::unique_ptr<worker::JitKernel> jit =
      worker::JitKernel::Compile(*payload, kernel.script, &times, &failure);
  if (!jit) {
    report.notes.push_back(absl::StrCat(what, " script does not compile here (",
                                        mtune::v1::StatusWord(failure.status), "): ",
                                        failure.error.substr(0, 200)));
    return nullptr;
  }
  worker::MatmulOperands& ops = *fixture.ops;
  std::memset(ops.c.data(), 0, ops.c.size() * sizeof(float));
  jit->Call(&fixture.a, &fixture.b, &fixture.c);
  int64_t where = -1;
  const double error = worker::MaxScaledError(ops, &where);
  if (!(error <= worker::ToleranceForF32(ops.k))) {
    report.notes.push_back(
        absl::StrFormat("%s kernel gives a wrong result here (scaled error %.3g)", what, error));
    return nullptr;
  }
  return jit;
}

// Compiles and verifies the best kernel on fresh operands, then registers every
// (round, implementation) of the shape, interleaved so that noise from the shared
// machine falls on all four alike.
absl::Status RegisterShape(const Flags& flags, ShapeReport& report, ShapeFixture& fixture) {
  const int n = static_cast<int>(report.size);
  fixture.ops = worker::MakeMatmulOperands(report.problem);
  worker::MatmulOperands& ops = *fixture.ops;
  fixture.a = ops.a.AsMatrix(ops.m, ops.k);
  fixture.b = ops.b.AsMatrix(ops.k, ops.n);
  fixture.c = ops.c.AsMatrix(ops.m, ops.n);
  fixture.baseline_c = std::make_unique<worker::AlignedBuffer>(static_cast<size_t>(n) * n);

  if (report.best) fixture.kernel = CompileVerified(*report.best, "best", report, fixture);
  for (size_t i = 0; i < report.variants.size(); ++i)
    fixture.variant_kernels.push_back(
        CompileVerified(report.variants[i], VariantName(i), report, fixture));

  // mtune's kernels by implementation name (null: not compiled or wrong); the other
  // names are libraries.
  std::map<std::string, worker::JitKernel*> mtune_kernels = {{"mtune", fixture.kernel.get()}};
  for (size_t i = 0; i < fixture.variant_kernels.size(); ++i)
    mtune_kernels[VariantName(i)] = fixture.variant_kernels[i].get();

  const double per_repetition_s = flags.min_time_s / kRepetitionsPerRound;
  for (int round = 0; round < flags.rounds; ++round) {
    for (const std::string& impl : Implementations(report)) {
      const std::string name = BenchmarkName(report.size, round, impl);
      benchmark::internal::Benchmark* registered = nullptr;
      if (impl == kFmaPeak) {
        worker::FmaLoop* loop = &fixture.fma_loop;
        const double flops = report.problem.Flops();
        registered = benchmark::RegisterBenchmark(name.c_str(), [loop, flops](benchmark::State& state) {
          for (auto _ : state) loop->Run(flops);
        });
      } else if (impl == kL1MicroKernel) {
        L1MicroKernelLoop* loop = &fixture.l1_micro_kernel;
        if (!loop->available()) continue;
        const double flops = report.problem.Flops();
        registered = benchmark::RegisterBenchmark(name.c_str(), [loop, flops](benchmark::State& state) {
          for (auto _ : state) loop->Run(flops);
        });
      } else if (auto it = mtune_kernels.find(impl); it != mtune_kernels.end()) {
        worker::JitKernel* kernel = it->second;
        if (kernel == nullptr) continue;
        ShapeFixture* f = &fixture;
        registered = benchmark::RegisterBenchmark(name.c_str(), [f, kernel](benchmark::State& state) {
          for (auto _ : state) {
            kernel->Call(&f->a, &f->b, &f->c);
            benchmark::ClobberMemory();
          }
        });
      } else {
        auto library = LibraryNamed(impl);
        if (!library.ok()) return library.status();
        const float* a = ops.a.data();
        const float* b = ops.b.data();
        float* c = fixture.baseline_c->data();
        registered = benchmark::RegisterBenchmark(
            name.c_str(), [lib = *library, n, a, b, c](benchmark::State& state) {
              for (auto _ : state) {
                absl::Status status = RunSgemm(lib, n, n, n, a, b, c);
                if (!status.ok()) {
                  state.SkipWithError(std::string(status.message()).c_str());
                  break;
                }
                benchmark::ClobberMemory();
              }
            });
      }
      registered->Repetitions(kRepetitionsPerRound)
          ->MinTime(per_repetition_s)
          ->MinWarmUpTime(std::min(0.05, per_repetition_s))
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  return absl::OkStatus();
}

void CollectTimes(const Flags& flags, const CollectingReporter& reporter, ShapeReport& report) {
  for (const std::string& impl : Implementations(report)) {
    std::vector<double> round_medians;
    for (int round = 0; round < flags.rounds; ++round) {
      const std::string name = BenchmarkName(report.size, round, impl);
      auto it = reporter.samples().find(name);
      if (it != reporter.samples().end() && !it->second.empty()) {
        round_medians.push_back(Median(it->second));
        report.by_round_s[impl][round] = round_medians.back();
      } else if (auto err = reporter.errors().find(name); err != reporter.errors().end() && round == 0)
        report.notes.push_back(absl::StrCat(impl, ": ", err->second));
    }
    if (round_medians.empty()) continue;
    report.median_s[impl] = Median(round_medians);
  }
}

// --- output -------------------------------------------------------------------

std::string Cell(double value, const char* format) {
  return value > 0 ? absl::StrFormat(format, value) : std::string("-");
}

// GFLOP/s of `impl` in `report` from its median time; 0 when it was not measured.
double MedianGflops(const ShapeReport& report, const std::string& impl) {
  auto it = report.median_s.find(impl);
  return it == report.median_s.end() || it->second <= 0
             ? 0.0
             : report.problem.Flops() / it->second / 1e9;
}

// How many times faster `impl` ran than `other`, paired by round (see PairedSpeedup
// in bench/side_by_side.h); 0 when either was not timed.
double PairedSpeedup(const ShapeReport& report, const std::string& impl,
                     const std::string& other) {
  auto a = report.by_round_s.find(impl), b = report.by_round_s.find(other);
  if (a == report.by_round_s.end() || b == report.by_round_s.end()) return 0.0;
  return mtune::bench::PairedSpeedup(a->second, b->second);
}

void PrintTable(const std::vector<ShapeReport>& reports, double calibrated_peak_gflops,
                const std::string& fma_isa, const Flags& flags, const std::string& cpu_name) {
  std::printf("\nmtune vs single-threaded sgemm libraries, f32, one pinned core (cpu %d, %s)\n",
              flags.cpu, cpu_name.c_str());
  std::printf("FMA peak (%s): %%peak divides by the FMA loop timed in the same rounds (column "
              "'FMA pk'); the start-up calibration (best of 5 short runs) gave %.2f GFLOP/s\n",
              fma_isa.c_str(), calibrated_peak_gflops);
  std::printf("GFLOP/s: median over %d interleaved rounds of the median of %d timed "
              "repetitions (>= %.2f s each round); ratios and %%peak: median over rounds of "
              "the ratio within each round\n\n",
              flags.rounds, kRepetitionsPerRound, flags.min_time_s);
  std::printf("%-6s %8s %6s %8s | %8s %6s | %8s %6s | %8s %6s | %s\n", "shape", "mtune", "%peak",
              "FMA pk", "oneDNN", "mt/dnn", "Eigen", "mt/eig", "OpenBLAS", "mt/obl", "best knobs");
  std::printf("%-6s %8s %6s %8s | %8s %6s | %8s %6s | %8s %6s |\n", "", "GFLOP/s", "", "GFLOP/s",
              "GFLOP/s", "", "GFLOP/s", "", "GFLOP/s", "");
  for (const ShapeReport& report : reports) {
    auto gflops = [&](const char* impl) { return MedianGflops(report, impl); };
    const double mt = gflops("mtune");
    auto ratio = [&](const char* other) { return PairedSpeedup(report, "mtune", other); };
    const double dnn = gflops("onednn"), eig = gflops("eigen"), obl = gflops("openblas");
    const double peak = gflops(kFmaPeak);
    std::printf("%-6s %8s %6s %8s | %8s %6s | %8s %6s | %8s %6s | %s\n",
                absl::StrCat(report.size, "^3").c_str(), Cell(mt, "%.2f").c_str(),
                Cell(100 * ratio(kFmaPeak), "%.1f%%").c_str(), Cell(peak, "%.2f").c_str(),
                Cell(dnn, "%.2f").c_str(), Cell(ratio("onednn"), "%.2f").c_str(),
                Cell(eig, "%.2f").c_str(), Cell(ratio("eigen"), "%.2f").c_str(),
                Cell(obl, "%.2f").c_str(), Cell(ratio("openblas"), "%.2f").c_str(),
                report.best ? CompactKnobs(report.best->knobs).c_str() : "(no tuned kernel)");
  }

  bool any_yardstick = false;
  for (const ShapeReport& report : reports) any_yardstick |= report.median_s.contains(kL1MicroKernel);
  if (any_yardstick) {
    std::printf("\nyardstick: an 8x32 AVX-512 register-tile loop on L1-resident operands "
                "(bench/l1_micro_kernel.h), timed in the same rounds: what a matmul reaches "
                "when nothing outside its innermost loop costs anything\n");
    std::printf("%-6s %8s %12s %12s %12s\n", "shape", "GFLOP/s", "%FMA peak", "mtune/it",
                "oneDNN/it");
    for (const ShapeReport& report : reports) {
      if (!report.median_s.contains(kL1MicroKernel)) continue;
      std::printf("%-6s %8s %12s %12s %12s\n", absl::StrCat(report.size, "^3").c_str(),
                  Cell(MedianGflops(report, kL1MicroKernel), "%.2f").c_str(),
                  Cell(100 * PairedSpeedup(report, kL1MicroKernel, kFmaPeak), "%.1f%%").c_str(),
                  Cell(PairedSpeedup(report, "mtune", kL1MicroKernel), "%.2f").c_str(),
                  Cell(PairedSpeedup(report, "onednn", kL1MicroKernel), "%.2f").c_str());
    }
  }

  bool any_variants = false;
  for (const ShapeReport& report : reports) any_variants |= !report.variants.empty();
  if (any_variants) {
    std::printf("\n--variant kernels, timed in the same rounds (GFLOP/s, and over oneDNN and "
                "over the main mtune kernel)\n");
    std::printf("%-6s %-9s %8s %6s %6s %6s | %s\n", "shape", "variant", "GFLOP/s", "%peak",
                "/dnn", "/mtune", "knobs");
    for (const ShapeReport& report : reports) {
      auto gflops = [&](const std::string& impl) { return MedianGflops(report, impl); };
      for (size_t i = 0; i < report.variants.size(); ++i) {
        const std::string name = VariantName(i);
        const double v = gflops(name);
        std::printf("%-6s %-9s %8s %6s %6s %6s | %s\n", absl::StrCat(report.size, "^3").c_str(),
                    name.c_str(), Cell(v, "%.2f").c_str(),
                    Cell(100 * PairedSpeedup(report, name, kFmaPeak), "%.1f%%").c_str(),
                    Cell(PairedSpeedup(report, name, "onednn"), "%.2f").c_str(),
                    Cell(PairedSpeedup(report, name, "mtune"), "%.2f").c_str(),
                    CompactKnobs(report.variants[i].knobs).c_str());
      }
    }
  }

  bool any_tuned = false;
  for (const ShapeReport& report : reports) any_tuned |= report.tuned;
  if (any_tuned) {
    std::printf("\ntuning (%s search, seed %llu; per candidate: instantiate + compile + "
                "verify + measure >= %.2f s, wall time)\n",
                flags.search.c_str(), static_cast<unsigned long long>(flags.seed),
                flags.tune_min_time_s);
    std::printf("%-6s %6s %4s %10s %10s %10s  %s\n", "shape", "tried", "ok", "median s",
                "p90 s", "best GF/s", "failures");
    for (const ShapeReport& report : reports) {
      if (!report.tuned) continue;
      std::vector<std::string> failures;
      for (const auto& [status, count] : report.tuning.failures)
        failures.push_back(absl::StrCat(status, " ", count));
      std::printf("%-6s %6d %4d %10.3f %10.3f %10s  %s\n", absl::StrCat(report.size, "^3").c_str(),
                  report.tuning.tried, report.tuning.ok, Median(report.tuning.candidate_s),
                  Percentile(report.tuning.candidate_s, 0.9),
                  Cell(report.best ? report.best->tuned_gflops : 0, "%.2f").c_str(),
                  failures.empty() ? "-" : absl::StrJoin(failures, ", ").c_str());
    }
    for (const ShapeReport& report : reports) {
      if (report.tuned && report.size == 512 && !report.tuning.candidate_s.empty()) {
        const double median = Median(report.tuning.candidate_s);
        std::printf("512^3 median time per candidate: %.3f s (goal <= 1 s: %s)\n", median,
                    median <= 1.0 ? "met" : "NOT met");
      }
    }
  }

  std::printf("\n");
  for (const ShapeReport& report : reports) {
    if (report.best) std::printf("%lld^3 kernel: %s\n", static_cast<long long>(report.size),
                                 report.best->origin.c_str());
    for (const std::string& note : report.notes)
      std::printf("%lld^3 note: %s\n", static_cast<long long>(report.size), note.c_str());
  }
}

absl::Status WriteJson(const std::string& path, const std::vector<ShapeReport>& reports,
                       const mtune::v1::Calibration& calibration, const std::string& fma_isa,
                       const Flags& flags, const std::string& cpu_name) {
  nlohmann::json root;
  root["cpu"] = flags.cpu;
  root["cpu_name"] = cpu_name;
  root["fma_isa"] = fma_isa;
  // Best of 5 short runs at start-up; each shape's fma_peak implementation is the FMA
  // loop timed in the same rounds that its mtune_fraction_of_peak is paired with.
  root["calibrated_peak_gflops_f32"] = calibration.peak_gflops_f32();
  root["rounds"] = flags.rounds;
  root["repetitions_per_round"] = kRepetitionsPerRound;
  root["min_time_s"] = flags.min_time_s;
  root["source"] = flags.db.empty() ? "tuned" : flags.db;
  nlohmann::json shapes = nlohmann::json::array();
  for (const ShapeReport& report : reports) {
    nlohmann::json shape;
    shape["size"] = report.size;
    shape["problem"] = report.problem.Key();
    const double flops = report.problem.Flops();
    nlohmann::json impls = nlohmann::json::object();
    for (const auto& [impl, seconds] : report.median_s) {
      impls[impl] = {{"median_s", seconds},
                     {"gflops", flops / seconds / 1e9},
                     {"round_medians_s", InRoundOrder(report.by_round_s.at(impl))}};
    }
    shape["implementations"] = impls;
    if (report.median_s.contains("mtune")) {
      const double mt = report.median_s.at("mtune");
      // Ratios are paired within rounds, as in the printed table.
      if (const double fraction = PairedSpeedup(report, "mtune", kFmaPeak); fraction > 0)
        shape["mtune_fraction_of_peak"] = fraction;
      shape["mtune_fraction_of_calibrated_peak"] = flops / mt / 1e9 / calibration.peak_gflops_f32();
      for (const auto& impl_seconds : report.median_s)
        if (const std::string& impl = impl_seconds.first; impl != "mtune" && impl != kFmaPeak)
          shape["mtune_over_" + impl] = PairedSpeedup(report, "mtune", impl);
    }
    if (report.best) {
      shape["best"] = {{"knobs", report.best->knobs},
                       {"tuned_gflops", report.best->tuned_gflops},
                       {"origin", report.best->origin}};
    }
    if (report.tuned) {
      shape["tuning"] = {{"tried", report.tuning.tried},
                         {"ok", report.tuning.ok},
                         {"failures", report.tuning.failures},
                         {"candidate_s", report.tuning.candidate_s},
                         {"median_candidate_s", Median(report.tuning.candidate_s)},
                         {"p90_candidate_s", Percentile(report.tuning.candidate_s, 0.9)}};
    }
    nlohmann::json variants = nlohmann::json::array();
    for (size_t i = 0; i < report.variants.size(); ++i)
      variants.push_back({{"name", VariantName(i)}, {"knobs", report.variants[i].knobs}});
    shape["variants"] = variants;
    shape["notes"] = report.notes;
    shapes.push_back(shape);
  }
  root["shapes"] = shapes;
  std::ofstream out(path);
  out << root.dump(2) << "\n";
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

int Run(const Flags& flags) {
  auto sizes = ParseShapes(flags.shapes);
  if (!sizes.ok()) {
    std::fprintf(stderr, "%s\n", std::string(sizes.status().message()).c_str());
    return 2;
  }
  std::vector<ShapeReport> reports;
  for (int64_t size : *sizes) {
    auto problem = strategies::ParseProblemKey(
        absl::StrFormat("matmul:m=%d,n=%d,k=%d:f32", size, size, size));
    if (!problem.ok()) {
      std::fprintf(stderr, "%s\n", problem.status().ToString().c_str());
      return 2;
    }
    ShapeReport report;
    report.size = size;
    report.problem = *problem;
    reports.push_back(std::move(report));
  }

  if (flags.cpu >= 0) {
    if (absl::Status pinned = worker::PinCurrentThreadToCpu(flags.cpu); !pinned.ok()) {
      std::fprintf(stderr, "cannot pin to cpu %d: %s (pick another with --cpu, -1 = no pinning)\n",
                   flags.cpu, std::string(pinned.message()).c_str());
      return 1;
    }
  }
  std::vector<std::string> calibration_notes;
  std::fprintf(stderr, "calibrating cpu %d...\n", flags.cpu);
  const mtune::v1::Calibration calibration =
      worker::Calibrate(worker::CalibrationOptions{}, &calibration_notes);
  const std::string fma_isa = worker::FmaIsa();
  for (const std::string& note : calibration_notes) std::fprintf(stderr, "  calibration: %s\n", note.c_str());
  std::fprintf(stderr, "  FMA peak %.2f GFLOP/s (%s)\n", calibration.peak_gflops_f32(), fma_isa.c_str());

  if (!flags.template_file.empty() || !flags.knobs.empty()) {
    if (absl::Status given = UseGivenCandidate(flags, reports); !given.ok()) {
      std::fprintf(stderr, "%s\n", given.ToString().c_str());
      return 2;
    }
  } else if (!flags.db.empty()) {
    if (absl::Status loaded = LoadBest(flags.db, reports); !loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.ToString().c_str());
      return 1;
    }
  } else {
    worker::Measurer measurer;
    for (ShapeReport& report : reports) {
      std::fprintf(stderr, "tuning %s: %d candidates\n", report.problem.Key().c_str(), flags.trials);
      if (absl::Status tuned = Tune(flags, calibration, measurer, report); !tuned.ok()) {
        std::fprintf(stderr, "tuning %s failed: %s\n", report.problem.Key().c_str(),
                     tuned.ToString().c_str());
        return 1;
      }
    }
  }

  if (absl::Status variants = ResolveVariants(flags, reports); !variants.ok()) {
    std::fprintf(stderr, "%s\n", variants.ToString().c_str());
    return 2;
  }

  // Fixtures are kept until every registered benchmark has run.
  std::vector<std::unique_ptr<ShapeFixture>> fixtures;
  for (ShapeReport& report : reports) {
    fixtures.push_back(std::make_unique<ShapeFixture>());
    if (absl::Status registered = RegisterShape(flags, report, *fixtures.back()); !registered.ok()) {
      std::fprintf(stderr, "%s\n", registered.ToString().c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "side by side (%d rounds):\n", flags.rounds);
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  for (ShapeReport& report : reports) CollectTimes(flags, reporter, report);

  const std::string cpu_name = worker::JitKernel::HostCpuName();
  PrintTable(reports, calibration.peak_gflops_f32(), fma_isa, flags, cpu_name);
  if (!flags.json.empty()) {
    if (absl::Status written = WriteJson(flags.json, reports, calibration, fma_isa, flags, cpu_name);
        !written.ok()) {
      std::fprintf(stderr, "%s\n", written.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace mtune::bench

int main(int argc, char** argv) {
  mtune::bench::Flags flags;
  CLI::App app{
      "Tunes (or loads the tuned best for) cubic f32 matmuls and times each beside oneDNN, "
      "Eigen and OpenBLAS, single-threaded on one pinned core, plus the measured FMA peak."};
  app.add_option("--shapes", flags.shapes, "cubic sizes, comma-separated")->capture_default_str();
  app.add_option("--trials", flags.trials, "candidates tuned per shape")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--search", flags.search, "search algorithm for tuning (random, model, ...)")
      ->capture_default_str();
  app.add_option("--seed", flags.seed, "seed of the search")->capture_default_str();
  auto* db_option = app.add_option("--db", flags.db,
                 "instead of tuning, take the best script per shape from this coordinator "
                 "store or exported best-strategy database");
  app.add_option("--cpu", flags.cpu, "CPU the measuring thread is pinned to (-1: no pinning)")
      ->capture_default_str();
  app.add_option("--min-time", flags.min_time_s,
                 "seconds of timed calls per side-by-side measurement (one round of one library)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--tune-min-time", flags.tune_min_time_s,
                 "seconds of timed calls per tuning candidate (the coordinator's default)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--rounds", flags.rounds, "interleaved side-by-side rounds per shape")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--json", flags.json, "also write the results as JSON to this file");
  auto* template_file = app.add_option(
      "--template-file", flags.template_file,
      "instead of tuning, compare this template's candidate (defaults + --knob) per shape");
  auto* knobs = app.add_option("--knob", flags.knobs,
                               "NAME=VALUE (repeatable): instead of tuning, compare the default "
                               "template's candidate with these knobs per shape");
  app.add_option("--variant", flags.variants,
                 "\"NAME=VALUE NAME=VALUE ...\" (repeatable): also time this candidate of the "
                 "default template (its valid default with these knobs) in the same rounds, "
                 "shown as variant1, variant2, ... under the table");
  template_file->excludes(db_option);
  knobs->excludes(db_option);
  CLI11_PARSE(app, argc, argv);

  // Google Benchmark only times the loops; its own flags are not exposed.
  char program[] = "mtune-bench-matmul";
  char* benchmark_argv[] = {program, nullptr};
  int benchmark_argc = 1;
  benchmark::Initialize(&benchmark_argc, benchmark_argv);
  const int code = mtune::bench::Run(flags);
  benchmark::Shutdown();
  return code;
}
