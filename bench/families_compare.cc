// mtune-bench-families: for a suite of problems of every kernel family, gets mtune's
// kernel (template default, tuned in this run, or loaded from a database) and times
// it beside oneDNN and Eigen (and, for three families, hand-written AVX-512 loops of
// its own loop nest) on the same inputs, single-threaded on one pinned core, in
// interleaved rounds; every library's output is first checked against mtune's
// reference. Prints one table (GFLOP/s or GB/s, ratios, fraction of roofline),
// geomeans per family and the goals with met / NOT met. See bench/README.md.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/family_baselines.h"
#include "bench/family_suite.h"
#include "bench/side_by_side.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "proto/mtune.pb.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "worker/affinity.h"
#include "worker/amx.h"
#include "worker/bf16_dot.h"
#include "worker/calibration.h"
#include "worker/jit_kernel.h"
#include "worker/kernel_operands.h"
#include "worker/measure.h"
#include "worker/roofline.h"

namespace mtune::bench {
namespace {

struct Flags {
  std::string problems;
  std::string families;
  int trials = 2;
  uint64_t seed = 0;
  std::string search = "random";
  std::string db;
  int cpu = 1;
  double min_time_s = 0.15;
  double tune_min_time_s = 0.05;
  int rounds = 3;
  int operand_sets = 3;
  std::string json;
  bool onednn_plain_weights = false;
  bool quick_calibration = false;
  bool list = false;
  // NAME=VALUE overrides of the default candidate (--trials 0 only).
  std::vector<std::string> knobs;
  // "NAME=VALUE ..." per --variant: more candidates timed in the same rounds.
  std::vector<std::string> variants;
};

// The yardstick loops of bench/handwritten_kernels.h (three families; "n/a" elsewhere).
constexpr const char* kHandWritten = "handwritten";
constexpr const char* kImplementations[] = {"mtune", "onednn", "eigen", kHandWritten};
// The rows' yardsticks, timed in the same rounds as the implementations: the
// calibration's FMA loop doing a compute-bound row's FLOP count (for a bf16 row on a
// CPU with AMX, its AMX bf16 tile-multiply loop: worker/roofline.h PeakGflopsFor),
// and its copy loop at a bandwidth-bound row's footprint. That row's %roof divides by
// the median (start-up calibration figures would set a moment of the VM's wandering
// clock against medians taken later).
constexpr const char* kPeak = "peak";
// The copy and read yardsticks of a round are the fastest of the loops the worker's
// ceilings are (worker/calibration.h kCopyVariants, kReadStreams), as a kernel may
// store either way and walk several rows at once: "copy", "copy_x4", "copy_streaming",
// "copy_streaming_x8"; "read", "read_x4".
std::string CopyLoopName(const worker::CopyVariant& variant) {
  const int streams = static_cast<int>(variant.streams);
  return absl::StrCat(variant.stores == worker::CopyStores::kStreaming ? "copy_streaming" : "copy",
                      streams > 1 ? absl::StrCat("_x", streams) : "");
}
std::string ReadLoopName(worker::Streams streams) {
  const int count = static_cast<int>(streams);
  return absl::StrCat("read", count > 1 ? absl::StrCat("_x", count) : "");
}
// The loop a timed name stands for; null for any other name.
const worker::CopyVariant* CopyVariantNamed(const std::string& name) {
  for (const worker::CopyVariant& variant : worker::kCopyVariants)
    if (CopyLoopName(variant) == name) return &variant;
  return nullptr;
}
const worker::Streams* ReadStreamsNamed(const std::string& name) {
  for (const worker::Streams& streams : worker::kReadStreams)
    if (ReadLoopName(streams) == name) return &streams;
  return nullptr;
}

// Folds one yardstick loop's per-round times into each round's fastest of its kind
// (GB/s, from the bytes one run moves), noting which loop that was. A loop that could
// not allocate its buffers (0 bytes) takes no part.
void KeepFastestByRound(const std::string& name, double bytes, const std::map<int, double>& by_round_s,
                        std::map<int, double>& fastest_gbps, std::map<int, std::string>& winner) {
  for (const auto& [round, seconds] : by_round_s) {
    if (!(bytes > 0 && seconds > 0)) continue;
    const double gbps = bytes / seconds / 1e9;
    if (auto it = fastest_gbps.find(round); it == fastest_gbps.end() || gbps > it->second) {
      fastest_gbps[round] = gbps;
      winner[round] = name;
    }
  }
}

double MedianOfValues(const std::map<int, double>& by_round) {
  std::vector<double> values;
  for (const auto& [round, value] : by_round) values.push_back(value);
  return Median(values);
}

constexpr int kRepetitionsPerRound = 3;

// What happened to one implementation of one problem before timing.
struct ImplState {
  // "ok", "no template", "no db entry", "n/a", "WRONG", "compile error", ...
  std::string status;
  std::string detail;       // why, or how it computes
  double scaled_error = 0;  // of the verification run
  double median_s = 0;      // median over rounds; 0 = not timed
  std::map<int, double> by_round_s;  // each round's median, keyed by round
};

struct ProblemReport {
  strategies::Problem problem;
  std::optional<BestKernel> best;
  // One per --variant, in flag order (nullopt: it did not resolve; impls says why).
  // Timed as the implementations "variant1", "variant2", ...
  std::vector<std::optional<BestKernel>> variants;
  bool tuned = false;
  TuningStats tuning;
  std::map<std::string, ImplState> impls;
  // The roofline this problem is normalised against.
  worker::RooflinePoint roof;
  // Copy bandwidth at exactly this footprint, timed in its rounds (bandwidth-bound
  // families only): the level's calibrated figure comes from a working set of half
  // the level, which can be far from the problem's. Each round's is the fastest of
  // the copy loops (CopyLoopName); the median over rounds.
  double copy_gbps_at_footprint = 0;
  // And loops that only read the footprint, timed the same way: with the copy they
  // give the stream bandwidth of the row's own reads and writes (worker/roofline.h
  // StreamGbps), which a reduction (reads only, nearly) is held against.
  double read_gbps_at_footprint = 0;
  // How many rounds each copy and read loop was the fastest of its kind in.
  std::map<std::string, int> copy_loop_wins, read_loop_wins;
  // Compute-bound rows: the peak timed in this row's rounds, GFLOP/s (0: not timed),
  // of `peak_loop`: "fma_f32" (the FMA loop), or for bf16 rows the fastest bf16 loop
  // the CPU has, "amx_bf16" (AMX tiles) or "bf16_dot" (AVX512-BF16 dot products), as
  // worker/roofline.h PeakGflopsFor holds bf16 problems against.
  double peak_gflops = 0;
  std::string peak_loop = "fma_f32";
  // Per-round medians of the FMA loop (seconds), and each round's fastest copy and
  // read (GB/s), for ratios paired by round.
  std::map<int, double> peak_by_round_s, copy_gbps_by_round, read_gbps_by_round;
};

// One copy of a problem's operands at its own addresses, and what is bound to it.
// A row's speed can depend on where its operands happen to lie (a depthwise conv whose
// 1.7 MB footprint just misses the L2 ran at 84-137 GB/s from one process to the next,
// with the same kernel): each process gets other physical pages, and so other cache
// sets. Several sets allocated side by side, with rounds cycling through them, keep
// one draw of page placement from deciding a row.
struct OperandSet {
  // The operands, inputs first (empty for set 0, which uses Fixture::ops's buffers).
  std::vector<worker::TypedBuffer> copies;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void*> args;
  // The libraries' outputs and kernels, bound to this set's inputs.
  std::map<std::string, std::unique_ptr<worker::TypedBuffer>> outputs;
  std::map<std::string, std::unique_ptr<FamilyKernel>> baselines;
  // Bandwidth-bound rows' yardstick loops, by name (CopyLoopName, ReadLoopName).
  std::map<std::string, std::unique_ptr<worker::CopyLoop>> copy_loops;
  std::map<std::string, std::unique_ptr<worker::ReadLoop>> read_loops;
};

// Everything the timing loops of one problem touch.
struct Fixture {
  std::unique_ptr<worker::KernelOperands> ops;  // set 0's operands and the reference
  // mtune's kernel and the --variant kernels, by implementation name; a kernel that
  // did not compile or verify is absent.
  std::map<std::string, std::unique_ptr<worker::JitKernel>> kernels;
  // Round r times every implementation on sets[r % sets.size()].
  std::vector<OperandSet> sets;
  worker::FmaLoop fma_loop;
  std::unique_ptr<worker::AmxBf16Loop> amx_loop;  // bf16 rows on a CPU with AMX
  std::unique_ptr<worker::Bf16DotLoop> bf16_dot_loop;  // bf16 rows on one with AVX512-BF16 only
};

const std::vector<worker::TypedBuffer>& BuffersOf(const Fixture& fx, size_t set) {
  return set == 0 ? fx.ops->buffers : fx.sets[set].copies;
}

// What one call of a row does, in the row's unit: compulsory bytes (GB/s rows) or FLOPs.
double WorkPerCall(const ProblemReport& r) {
  return BandwidthBound(r.problem.family) ? r.problem.CompulsoryBytes() : r.problem.Flops();
}

double Figure(const ProblemReport& r, const std::string& impl) {
  auto it = r.impls.find(impl);
  if (it == r.impls.end() || it->second.median_s <= 0) return 0;
  return WorkPerCall(r) / it->second.median_s / 1e9;
}

// `impl`'s figure on each operand set: the median of the rounds that ran on it.
std::vector<double> FigureByOperandSet(const ProblemReport& r, const std::string& impl, int sets) {
  std::vector<double> figures;
  auto it = r.impls.find(impl);
  if (it == r.impls.end() || it->second.median_s <= 0) return figures;
  const double work = WorkPerCall(r);
  for (int set = 0; set < sets; ++set) {
    std::vector<double> seconds;
    for (const auto& [round, s] : it->second.by_round_s)
      if (round % sets == set) seconds.push_back(s);
    figures.push_back(seconds.empty() ? 0 : work / Median(seconds) / 1e9);
  }
  return figures;
}

// A GB/s row's roofline from its median yardsticks: the stream at its footprint (or the
// level's calibrated bandwidth), under the FMA peak timed beside it where the family
// has a compute roof (family_suite.h RoofGbps).
double RoofGbps(const ProblemReport& r) {
  const double fma_seconds = r.peak_gflops > 0 ? r.problem.Flops() / r.peak_gflops / 1e9 : 0;
  return bench::RoofGbps(r.problem, r.roof.level_gbps, fma_seconds);
}

double FractionOfRoofline(const ProblemReport& r, double figure) {
  if (figure <= 0) return 0;
  if (BandwidthBound(r.problem.family)) {
    const double roof = RoofGbps(r);
    return roof > 0 ? figure / roof : 0;
  }
  return r.roof.bound_gflops > 0 ? figure / r.roof.bound_gflops : 0;
}

// Whether a GB/s row's median FMA loop bounds it before its bandwidth does.
bool ComputeBoundRow(const ProblemReport& r) {
  return BandwidthBound(r.problem.family) && RoofGbps(r) < r.roof.level_gbps;
}

std::string Unit(const ProblemReport& r) {
  return BandwidthBound(r.problem.family) ? "GB/s" : "GFLOP/s";
}

// Largest |out - times * want| / (times * scale) over a float output (NaN counts as
// infinite): `times` runs of a kernel that accumulates into a zeroed output.
double ScaledError(const worker::KernelOperands& ops, const worker::TypedBuffer& out,
                   double times = 1) {
  double worst = 0;
  for (int64_t i = 0; i < out.elements(); ++i) {
    const double err =
        std::fabs(out.Get(i) - times * ops.want[i]) / (times * ops.scale[i] + 1e-30);
    if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err;
  }
  return worst;
}

std::string VariantName(size_t index) { return absl::StrCat("variant", index + 1); }

// Compiles `kernel` (mtune's or a --variant's) into fx.kernels[name] and checks its
// output against the reference; on failure `state` says why and nothing is timed.
void CompileAndVerify(const strategies::Problem& problem, const std::optional<BestKernel>& kernel,
                      ImplState& state, Fixture& fx, const std::string& name) {
  if (!kernel) return;
  worker::KernelOperands& ops = *fx.ops;
  auto payload = strategies::MakePayload(problem);
  if (!payload.ok()) {
    state = {"payload error", std::string(payload.status().message())};
    return;
  }
  worker::CompileTimes times;
  worker::CompileFailure failure;
  std::unique_ptr<worker::JitKernel> jit =
      worker::JitKernel::Compile(*payload, kernel->script, &times, &failure);
  if (!jit) {
    state = {StatusName(failure.status), failure.error.substr(0, 300)};
    return;
  }
  ops.ResetOutput();
  jit->Call(fx.sets[0].args);
  int64_t where = -1;
  state.scaled_error = ops.MaxScaledError(&where);
  if (state.scaled_error > ops.tolerance) {
    state.status = "WRONG";
    state.detail = absl::StrFormat("scaled error %.3g > tolerance %.3g at element %d",
                                   state.scaled_error, ops.tolerance, where);
    return;
  }
  // The other sets hold the same values at other addresses: the kernel must give the
  // same answer there too.
  const double fill = ops.output_accumulates ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  for (size_t set = 1; set < fx.sets.size(); ++set) {
    worker::TypedBuffer& out = fx.sets[set].copies.back();
    for (int64_t i = 0; i < out.elements(); ++i) out.Set(i, fill);
    jit->Call(fx.sets[set].args);
    state.scaled_error = std::max(state.scaled_error, ScaledError(ops, out));
    if (state.scaled_error > ops.tolerance) {
      state.status = "WRONG";
      state.detail = absl::StrFormat("scaled error %.3g > tolerance %.3g on operand set %d",
                                     state.scaled_error, ops.tolerance, set + 1);
      return;
    }
  }
  state.status = "ok";
  state.detail = absl::StrCat(kernel->origin, ": ", CompactKnobs(kernel->knobs));
  fx.kernels[name] = std::move(jit);
}

// `library`'s kernel on operand set `set`, run once and checked against the reference
// (twice where the output accumulates); `state` says how it went. Returns whether it is
// right; only then are its kernel and output kept in the set.
bool PrepareBaseline(FamilyLibrary library, const strategies::Problem& p, const FamilyBaselineOptions& options,
                     Fixture& fx, size_t set, ImplState& state) {
  const std::string name(FamilyLibraryName(library));
  const worker::KernelOperands& ops = *fx.ops;
  const std::vector<worker::TypedBuffer>& buffers = BuffersOf(fx, set);
  std::vector<const float*> inputs;
  for (size_t i = 0; i + 1 < buffers.size(); ++i)
    inputs.push_back(static_cast<const float*>(buffers[i].data()));
  auto out = std::make_unique<worker::TypedBuffer>(ops.buffers.back().shape());
  // NaN catches an output element a library never writes; one that accumulates
  // starts from the zeros mtune's reference starts from.
  const double fill = BaselineAccumulates(p) ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < out->elements(); ++i) out->Set(i, fill);
  auto kernel = MakeFamilyKernel(library, p, inputs, static_cast<float*>(out->data()), options);
  if (!kernel.ok()) {
    state = {absl::IsUnimplemented(kernel.status()) ? "n/a" : "error",
             std::string(kernel.status().message())};
    return false;
  }
  if (absl::Status run = (*kernel)->Run(); !run.ok()) {
    state = {"error", std::string(run.message())};
    return false;
  }
  const double error = ScaledError(ops, *out);
  if (BaselineAccumulates(p) && error <= ops.tolerance) {
    // It must add into the output as mtune's kernel does, not overwrite it: a second
    // run doubles it.
    if (absl::Status run = (*kernel)->Run(); !run.ok()) {
      state = {"error", std::string(run.message())};
      return false;
    }
    state.scaled_error = std::max({state.scaled_error, error, ScaledError(ops, *out, 2)});
  } else {
    state.scaled_error = std::max(state.scaled_error, error);
  }
  state.detail = (*kernel)->description();
  if (state.scaled_error > ops.tolerance) {
    // A baseline that computes something else must not be timed as if it did not.
    state.status = "WRONG";
    state.detail = absl::StrFormat("%s: scaled error %.3g > tolerance %.3g%s", state.detail,
                                   state.scaled_error, ops.tolerance,
                                   set == 0 ? "" : absl::StrCat(" on operand set ", set + 1));
    return false;
  }
  state.status = "ok";
  fx.sets[set].outputs[name] = std::move(out);
  fx.sets[set].baselines[name] = *std::move(kernel);
  return true;
}

// Compiles and verifies mtune's kernel (and the --variant ones), prepares and
// verifies each baseline, on every operand set; an implementation that fails is
// left out of the timing with why.
void Prepare(const Flags& flags, ProblemReport& report, Fixture& fx) {
  const strategies::Problem& p = report.problem;
  fx.ops = worker::MakeKernelOperands(p);
  worker::KernelOperands& ops = *fx.ops;
  // Allocated before any is bound, and never resized: args point into descriptors.
  fx.sets.resize(flags.operand_sets);
  for (size_t set = 0; set < fx.sets.size(); ++set) {
    OperandSet& s = fx.sets[set];
    if (set > 0) s.copies = worker::CopyBuffers(ops.buffers);
    for (const worker::TypedBuffer& buffer : BuffersOf(fx, set)) s.descriptors.push_back(buffer.Descriptor());
    for (std::vector<int64_t>& d : s.descriptors) s.args.push_back(d.data());
  }

  CompileAndVerify(p, report.best, report.impls["mtune"], fx, "mtune");
  for (size_t i = 0; i < report.variants.size(); ++i)
    CompileAndVerify(p, report.variants[i], report.impls[VariantName(i)], fx, VariantName(i));

  FamilyBaselineOptions options;
  options.onednn_plain_weights = flags.onednn_plain_weights;
  for (FamilyLibrary library : kAllFamilyLibraries) {
    const std::string name(FamilyLibraryName(library));
    ImplState& state = report.impls[name];
    for (size_t set = 0; set < fx.sets.size(); ++set) {
      if (PrepareBaseline(library, p, options, fx, set, state)) continue;
      for (OperandSet& s : fx.sets) {
        s.baselines.erase(name);
        s.outputs.erase(name);
      }
      break;
    }
  }
  // The reference is no longer needed; large data-movement problems carry 16 bytes of
  // it per output element.
  std::vector<double>().swap(ops.want);
  std::vector<double>().swap(ops.scale);
}

// mtune, the libraries and the --variant kernels of `r`.
std::vector<std::string> ImplementationNames(const ProblemReport& r) {
  std::vector<std::string> names(std::begin(kImplementations), std::end(kImplementations));
  for (size_t i = 0; i < r.variants.size(); ++i) names.push_back(VariantName(i));
  return names;
}

// What one round of `r` times: the implementations, and the FMA peak (compute-bound
// row) or the copy and the read at its footprint (bandwidth-bound row; a depthwise row
// the FMA peak too, its compute roof).
std::vector<std::string> TimedNames(const ProblemReport& r) {
  std::vector<std::string> names = ImplementationNames(r);
  if (BandwidthBound(r.problem.family)) {
    for (const worker::CopyVariant& variant : worker::kCopyVariants) names.push_back(CopyLoopName(variant));
    for (const worker::Streams streams : worker::kReadStreams) names.push_back(ReadLoopName(streams));
    if (HasFmaComputeRoof(r.problem.family)) names.push_back(kPeak);
  } else {
    names.push_back(kPeak);
  }
  return names;
}

std::string BenchmarkName(const ProblemReport& r, int round, const std::string& impl) {
  return absl::StrFormat("%s/round%d/%s", r.problem.Key(), round, impl);
}

// Times every verified implementation of one problem in interleaved rounds.
void TimeProblem(const Flags& flags, ProblemReport& report, Fixture& fx) {
  const double per_repetition_s = flags.min_time_s / kRepetitionsPerRound;
  for (int round = 0; round < flags.rounds; ++round) {
    OperandSet& set = fx.sets[round % fx.sets.size()];
    for (const std::string& impl : TimedNames(report)) {
      const std::string name = BenchmarkName(report, round, impl);
      benchmark::internal::Benchmark* registered = nullptr;
      if (impl == kPeak && report.peak_loop == "amx_bf16") {
        if (!fx.amx_loop) fx.amx_loop = std::make_unique<worker::AmxBf16Loop>();
        worker::AmxBf16Loop* loop = fx.amx_loop.get();
        const double flops = report.problem.Flops();
        registered = benchmark::RegisterBenchmark(name.c_str(), [loop, flops](benchmark::State& state) {
          for (auto _ : state) loop->Run(flops);
        });
      } else if (impl == kPeak && report.peak_loop == "bf16_dot") {
        if (!fx.bf16_dot_loop) fx.bf16_dot_loop = std::make_unique<worker::Bf16DotLoop>();
        worker::Bf16DotLoop* loop = fx.bf16_dot_loop.get();
        const double flops = report.problem.Flops();
        registered = benchmark::RegisterBenchmark(name.c_str(), [loop, flops](benchmark::State& state) {
          for (auto _ : state) loop->Run(flops);
        });
      } else if (impl == kPeak) {
        worker::FmaLoop* loop = &fx.fma_loop;
        // The loop is f32; an f64 FMA does half the lanes, so the row's flops in f64 take
        // as long as twice as many in f32.
        const double flops = report.problem.Flops() *
                             (report.problem.AccumulatorType() == "f64" ? 2.0 : 1.0);
        registered = benchmark::RegisterBenchmark(name.c_str(), [loop, flops](benchmark::State& state) {
          for (auto _ : state) loop->Run(flops);
        });
      } else if (const worker::CopyVariant* copy = CopyVariantNamed(impl)) {
        std::unique_ptr<worker::CopyLoop>& owned = set.copy_loops[impl];
        if (!owned)
          owned = std::make_unique<worker::CopyLoop>(report.problem.FootprintBytes(), copy->stores, copy->streams);
        worker::CopyLoop* loop = owned.get();
        registered = benchmark::RegisterBenchmark(name.c_str(), [loop](benchmark::State& state) {
          for (auto _ : state) loop->Run();
        });
      } else if (const worker::Streams* streams = ReadStreamsNamed(impl)) {
        std::unique_ptr<worker::ReadLoop>& owned = set.read_loops[impl];
        if (!owned) owned = std::make_unique<worker::ReadLoop>(report.problem.FootprintBytes(), *streams);
        worker::ReadLoop* loop = owned.get();
        registered = benchmark::RegisterBenchmark(name.c_str(), [loop](benchmark::State& state) {
          for (auto _ : state) loop->Run();
        });
      } else if (impl == "mtune" || impl.starts_with("variant")) {
        auto it = fx.kernels.find(impl);
        if (it == fx.kernels.end()) continue;
        worker::JitKernel* kernel = it->second.get();
        std::vector<void*>* args = &set.args;
        registered = benchmark::RegisterBenchmark(name.c_str(), [kernel, args](benchmark::State& state) {
          for (auto _ : state) {
            kernel->Call(*args);
            benchmark::ClobberMemory();
          }
        });
      } else {
        auto it = set.baselines.find(impl);
        if (it == set.baselines.end()) continue;
        FamilyKernel* kernel = it->second.get();
        registered = benchmark::RegisterBenchmark(name.c_str(), [kernel](benchmark::State& state) {
          for (auto _ : state) {
            if (absl::Status status = kernel->Run(); !status.ok()) {
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
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  std::map<int, std::string> copy_winner, read_winner;  // each round's fastest loop
  for (const std::string& impl : TimedNames(report)) {
    std::vector<double> round_medians_s;
    std::map<int, double> by_round_s;
    for (int round = 0; round < flags.rounds; ++round) {
      const std::string name = BenchmarkName(report, round, impl);
      if (auto it = reporter.samples().find(name); it != reporter.samples().end() && !it->second.empty()) {
        round_medians_s.push_back(Median(it->second));
        by_round_s[round] = round_medians_s.back();
      } else if (auto err = reporter.errors().find(name); err != reporter.errors().end() &&
                                                        report.impls.contains(impl))
        report.impls[impl] = {"error", err->second};
    }
    if (round_medians_s.empty()) continue;
    if (impl == kPeak) {
      report.peak_gflops = report.problem.Flops() / Median(round_medians_s) / 1e9;
      report.peak_by_round_s = std::move(by_round_s);
      continue;
    }
    if (CopyVariantNamed(impl)) {
      KeepFastestByRound(impl, fx.sets[0].copy_loops.at(impl)->bytes(), by_round_s, report.copy_gbps_by_round,
                         copy_winner);
      continue;
    }
    if (ReadStreamsNamed(impl)) {
      KeepFastestByRound(impl, fx.sets[0].read_loops.at(impl)->bytes(), by_round_s, report.read_gbps_by_round,
                         read_winner);
      continue;
    }
    ImplState& state = report.impls[impl];
    state.median_s = Median(round_medians_s);
    state.by_round_s = std::move(by_round_s);
  }
  for (const auto& [round, name] : copy_winner) ++report.copy_loop_wins[name];
  for (const auto& [round, name] : read_winner) ++report.read_loop_wins[name];
  report.copy_gbps_at_footprint = MedianOfValues(report.copy_gbps_by_round);
  report.read_gbps_at_footprint = MedianOfValues(report.read_gbps_by_round);
}

const std::map<int, double>& RoundsOf(const ProblemReport& r, const std::string& impl) {
  static const std::map<int, double> kNone;
  auto it = r.impls.find(impl);
  return it == r.impls.end() || it->second.median_s <= 0 ? kNone : it->second.by_round_s;
}

// mtune's speed over `impl`'s, paired by round.
double MtuneOver(const ProblemReport& r, const std::string& impl) {
  return PairedSpeedup(RoundsOf(r, "mtune"), RoundsOf(r, impl));
}

// `impl`'s GFLOP/s over the FMA loop's in the same rounds (compute-bound rows). The
// loop did the row's FLOPs (twice as many f32 ones for f64 rows), so the time ratio
// is the fraction.
double FractionOfPeak(const ProblemReport& r, const std::string& impl) {
  return PairedSpeedup(RoundsOf(r, impl), r.peak_by_round_s);
}

// mtune's GB/s of compulsory bytes over the fastest copy's GB/s at the row's
// footprint, paired by round.
double MtuneOverCopy(const ProblemReport& r) {
  std::vector<double> ratios;
  for (const auto& [round, mtune_s] : RoundsOf(r, "mtune")) {
    auto copy = r.copy_gbps_by_round.find(round);
    if (copy != r.copy_gbps_by_round.end() && mtune_s > 0)
      ratios.push_back(r.problem.CompulsoryBytes() / mtune_s / 1e9 / copy->second);
  }
  return ratios.empty() ? 0.0 : Median(ratios);
}

// mtune's GB/s over the stream bandwidth of the row's reads and writes at its
// footprint (worker/roofline.h StreamGbps) from the copy and read loops of the same
// round, paired by round, or over the bytes the FMA loop of that round allows where
// that is lower (depthwise: family_suite.h RoofGbps). The copy's alone where the read
// loop was not timed; equal to MtuneOverCopy for a row that reads what it writes
// (copy, transpose).
double MtuneOverStream(const ProblemReport& r) {
  if (r.read_gbps_by_round.empty()) return MtuneOverCopy(r);
  std::vector<double> ratios;
  for (const auto& [round, mtune_s] : RoundsOf(r, "mtune")) {
    auto copy = r.copy_gbps_by_round.find(round);
    auto reading = r.read_gbps_by_round.find(round);
    if (copy == r.copy_gbps_by_round.end() || reading == r.read_gbps_by_round.end() || !(mtune_s > 0))
      continue;
    const double stream_gbps = worker::StreamGbps(copy->second, reading->second, r.problem);
    auto fma = r.peak_by_round_s.find(round);
    const double roof_gbps =
        bench::RoofGbps(r.problem, stream_gbps, fma == r.peak_by_round_s.end() ? 0 : fma->second);
    ratios.push_back(r.problem.CompulsoryBytes() / mtune_s / 1e9 / roof_gbps);
  }
  return ratios.empty() ? 0.0 : Median(ratios);
}

// mtune's %roof: paired by round where the roof is a loop timed beside the row (the
// copy and read at a GB/s row's footprint; the FMA loop for a compute-bound GFLOP/s row), as
// the goals are; otherwise its figure over the roofline bound. Unpaired, a matmul 512^3
// row once showed 77% in this column while its goal line said 0.84.
double MtuneFractionOfRoofline(const ProblemReport& r) {
  if (BandwidthBound(r.problem.family)) {
    if (r.copy_gbps_at_footprint > 0) return MtuneOverStream(r);
  } else if (r.peak_gflops > 0 && r.roof.bound_gflops >= r.peak_gflops) {
    return FractionOfPeak(r, "mtune");
  }
  return FractionOfRoofline(r, Figure(r, "mtune"));
}

// --- output -------------------------------------------------------------------

std::string Cell(double value, const char* format = "%.2f") {
  return value > 0 ? absl::StrFormat(format, value) : std::string("-");
}

// A figure, or why there is none ("no template", "WRONG", "n/a").
std::string FigureCell(const ProblemReport& r, const std::string& impl) {
  const double figure = Figure(r, impl);
  if (figure > 0) return Cell(figure);
  auto it = r.impls.find(impl);
  if (it == r.impls.end() || it->second.status.empty()) return "-";
  return it->second.status;
}

constexpr const char* kRowFormat = "%-26s %-40s %-7s %11s %11s %11s %7s %7s %6s %5s %8s %8s %8s\n";

void PrintRow(const ProblemReport& r) {
  const double fraction = MtuneFractionOfRoofline(r);
  std::printf(kRowFormat, r.problem.family.c_str(), ShortShape(r.problem).c_str(), Unit(r).c_str(),
              FigureCell(r, "mtune").c_str(), FigureCell(r, "onednn").c_str(),
              FigureCell(r, "eigen").c_str(), Cell(MtuneOver(r, "onednn")).c_str(),
              Cell(MtuneOver(r, "eigen")).c_str(),
              Cell(100 * fraction, "%.1f%%").c_str(), ComputeBoundRow(r) ? "FMA" : r.roof.level.c_str(),
              (Cell(r.peak_gflops) + (r.peak_loop != "fma_f32" && r.peak_gflops > 0 ? "*" : "")).c_str(),
              Cell(r.copy_gbps_at_footprint).c_str(),
              Cell(r.read_gbps_at_footprint).c_str());
}

void PrintGeomean(const std::string& family, const std::vector<const ProblemReport*>& rows) {
  std::vector<double> mt, dnn, eig, mt_dnn, mt_eig, fraction;
  for (const ProblemReport* r : rows) {
    const double m = Figure(*r, "mtune"), d = Figure(*r, "onednn"), e = Figure(*r, "eigen");
    mt.push_back(m);
    dnn.push_back(d);
    eig.push_back(e);
    if (const double ratio = MtuneOver(*r, "onednn"); ratio > 0) mt_dnn.push_back(ratio);
    if (const double ratio = MtuneOver(*r, "eigen"); ratio > 0) mt_eig.push_back(ratio);
    fraction.push_back(MtuneFractionOfRoofline(*r));
  }
  std::printf(kRowFormat, family.c_str(), absl::StrCat("geomean of ", rows.size()).c_str(), Unit(*rows.front()).c_str(),
              Cell(Geomean(mt)).c_str(), Cell(Geomean(dnn)).c_str(), Cell(Geomean(eig)).c_str(),
              Cell(Geomean(mt_dnn)).c_str(), Cell(Geomean(mt_eig)).c_str(),
              Cell(100 * Geomean(fraction), "%.1f%%").c_str(), "", "", "", "");
}

std::vector<GoalRow> GoalRows(const std::vector<ProblemReport>& reports) {
  std::vector<GoalRow> rows;
  for (const ProblemReport& r : reports) {
    // The figures are f32: a bf16 row (against oneDNN's AMX kernels, or
    // against an f32 FMA peak its instructions cannot reach) is no evidence for them.
    if (r.problem.element_type != "f32") continue;
    GoalRow row;
    row.problem = r.problem;
    row.mtune = Figure(r, "mtune");
    row.onednn = Figure(r, "onednn");
    row.fraction_of_roofline = MtuneFractionOfRoofline(r);
    row.copy_gbps_at_footprint = r.copy_gbps_at_footprint;
    row.mtune_over_onednn = MtuneOver(r, "onednn");
    row.fraction_of_peak = FractionOfPeak(r, "mtune");
    row.onednn_fraction_of_peak = FractionOfPeak(r, "onednn");
    row.mtune_over_copy = MtuneOverCopy(r);
    rows.push_back(row);
  }
  return rows;
}

// The --variant kernels, each against mtune's kernel and oneDNN in the same rounds.
void PrintVariants(const Flags& flags, const std::vector<ProblemReport>& reports) {
  if (flags.variants.empty()) return;
  std::printf("\n--variant kernels (the default candidate with these knobs), timed in the same "
              "rounds; var/mt and var/dnn paired by round:\n");
  for (size_t v = 0; v < flags.variants.size(); ++v)
    std::printf("  %s: %s\n", VariantName(v).c_str(), flags.variants[v].c_str());
  constexpr const char* kVariantFormat = "%-26s %-40s %-9s %11s %7s %7s\n";
  std::printf(kVariantFormat, "family", "shape", "variant", "figure", "var/mt", "var/dnn");
  for (const ProblemReport& r : reports) {
    for (size_t v = 0; v < r.variants.size(); ++v) {
      const std::string name = VariantName(v);
      std::printf(kVariantFormat, r.problem.family.c_str(), ShortShape(r.problem).c_str(),
                  name.c_str(), FigureCell(r, name).c_str(),
                  Cell(PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "mtune"))).c_str(),
                  Cell(PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "onednn"))).c_str());
    }
  }
}

// The hand-written loops, where a row has one, against mtune's kernel in the same rounds.
void PrintHandWritten(const std::vector<ProblemReport>& reports) {
  bool any = false;
  for (const ProblemReport& r : reports) any |= Figure(r, kHandWritten) > 0;
  if (!any) return;
  std::printf("\nhand-written AVX-512 loops of mtune's best loop nests (bench/handwritten_kernels.h), "
              "timed in the same rounds; mt/hand paired by round; their %%roof is mtune's over "
              "mt/hand:\n");
  constexpr const char* kFormat = "%-26s %-40s %11s %11s %7s %6s\n";
  std::printf(kFormat, "family", "shape", "mtune", "handwritten", "mt/hand", "%roof");
  for (const ProblemReport& r : reports) {
    if (Figure(r, kHandWritten) <= 0) continue;
    const double mt_over_hand = MtuneOver(r, kHandWritten);
    std::printf(kFormat, r.problem.family.c_str(), ShortShape(r.problem).c_str(),
                FigureCell(r, "mtune").c_str(), FigureCell(r, kHandWritten).c_str(),
                Cell(mt_over_hand).c_str(),
                Cell(mt_over_hand > 0 ? 100 * MtuneFractionOfRoofline(r) / mt_over_hand : 0,
                     "%.1f%%").c_str());
  }
}

void PrintReport(const Flags& flags, const std::vector<ProblemReport>& reports,
                 const mtune::v1::Calibration& calibration, const std::string& cpu_name) {
  // The element types of the rows (the suite is f32; --problems may name others).
  std::set<std::string> types;
  for (const ProblemReport& r : reports) types.insert(r.problem.element_type);
  std::printf("\nmtune vs oneDNN and Eigen, %s, one thread on one pinned core (cpu %d, %s)\n",
              absl::StrJoin(types, ", ").c_str(), flags.cpu, cpu_name.c_str());
  std::printf("peak: timed beside each GFLOP/s and depthwise row (column peak): the FMA loop, or for bf16 rows "
              "the fastest bf16 loop of the CPU, AMX tile multiplies or else AVX512-BF16 dot "
              "products (marked *); start-up calibration (best of 5 short runs) FMA %.2f GFLOP/s",
              calibration.peak_gflops_f32());
  if (const std::string bf16 = worker::Bf16PeakText(calibration); !bf16.empty()) std::printf(", %s", bf16.c_str());
  std::printf("; copy bandwidth");
  for (const auto& level : calibration.bandwidth())
    std::printf(" %s %.1f GB/s", level.level().c_str(), level.gbps());
  std::printf("\nmtune kernel: %s\n",
              !flags.db.empty() ? absl::StrCat("best in ", flags.db).c_str()
              : flags.trials > 0
                  ? absl::StrFormat("tuned here, %d %s trials per problem", flags.trials, flags.search).c_str()
                  : flags.knobs.empty() ? "template default (--trials 0)"
                                       : "template default with --knob overrides (--trials 0)");
  std::printf("each figure: median over %d interleaved rounds of the median of %d timed "
              "repetitions (>= %.2f s per round), round r on operand set r mod %d; GB/s = "
              "compulsory bytes; mt/dnn, mt/eig and the goals' ratios: median over rounds of the "
              "ratio within each round\n\n",
              flags.rounds, kRepetitionsPerRound, flags.min_time_s, flags.operand_sets);
  std::printf(kRowFormat, "family", "shape", "unit", "mtune", "oneDNN", "Eigen", "mt/dnn", "mt/eig",
              "%roof", "level", "peak", "copy@fp", "read@fp");
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ProblemReport*>> by_family;
  for (const ProblemReport& r : reports) {
    if (!by_family.contains(r.problem.family)) order.push_back(r.problem.family);
    by_family[r.problem.family].push_back(&r);
  }
  for (const std::string& family : order) {
    for (const ProblemReport* r : by_family[family]) PrintRow(*r);
    PrintGeomean(family, by_family[family]);
  }
  std::printf("\n%%roof: mtune over the peak (GFLOP/s rows, peak) or, for GB/s rows, "
              "over the bandwidth of the row's own reads and writes at its footprint, in the "
              "level it fits: reads at the speed of a loop that only reads (read@fp), writes "
              "at what a copy (copy@fp) spends beyond its reads (an output accumulated into "
              "only its write-back; worker/roofline.h StreamGbps); all timed in the row's "
              "rounds and paired by round. A depthwise row's FLOPs are multiply-adds: its "
              "roof is the lower of that bandwidth and the bytes the FMA loop timed beside it "
              "(peak) allows, level FMA where that binds. A copy or transpose reads what it "
              "writes, so its yardstick is the copy; copy@fp is the transpose goal's yardstick "
              "too. copy@fp is each round's faster copy, with ordinary or with streaming stores "
              "(a kernel may use either)\n");

  if (flags.operand_sets > 1) {
    std::printf("\nmtune (and --variant kernels) by operand set (round r runs on set r mod %d; "
                "each set is a copy of the operands at addresses of its own):\n", flags.operand_sets);
    for (const ProblemReport& r : reports) {
      for (const std::string& impl : ImplementationNames(r)) {
        if (impl != "mtune" && !impl.starts_with("variant")) continue;
        const std::vector<double> figures = FigureByOperandSet(r, impl, flags.operand_sets);
        if (figures.empty()) continue;
        std::vector<std::string> cells;
        for (double figure : figures) cells.push_back(Cell(figure));
        const auto [low, high] = std::minmax_element(figures.begin(), figures.end());
        std::printf("  %-26s %-40s %-9s %-7s %s%s\n", r.problem.family.c_str(),
                    ShortShape(r.problem).c_str(), impl.c_str(), Unit(r).c_str(),
                    absl::StrJoin(cells, " ").c_str(),
                    *low > 0 ? absl::StrFormat("  (max/min %.2f)", *high / *low).c_str() : "");
      }
    }
  }

  PrintVariants(flags, reports);
  PrintHandWritten(reports);

  std::printf("\ngoals (issue 3, figures to reach; f32 rows only):\n");
  for (const GoalLine& goal : EvaluateGoals(GoalRows(reports)))
    std::printf("  %-68s %-8s %s\n", goal.goal.c_str(), goal.verdict.c_str(), goal.detail.c_str());

  std::printf("\nverification (max scaled error vs mtune's reference) and how each computes:\n");
  for (const ProblemReport& r : reports) {
    for (const std::string& impl : ImplementationNames(r)) {
      const ImplState& s = r.impls.at(impl);
      if (impl == kHandWritten && s.status == "n/a") continue;  // three families only
      std::printf("  %-60s %-8s %-13s %s\n", r.problem.Key().c_str(), impl.c_str(), s.status.c_str(),
                  s.status == "ok" ? absl::StrFormat("err %.2g; %s", s.scaled_error, s.detail).c_str()
                                   : s.detail.c_str());
    }
  }
}

absl::Status WriteJson(const Flags& flags, const std::vector<ProblemReport>& reports,
                       const mtune::v1::Calibration& calibration, const std::string& cpu_name) {
  nlohmann::json root;
  root["cpu"] = flags.cpu;
  root["cpu_name"] = cpu_name;
  // Best of 5 short runs at start-up; compute-bound rows divide by their own
  // peak_gflops, timed in their rounds.
  root["calibrated_peak_gflops_f32"] = calibration.peak_gflops_f32();
  if (calibration.peak_gflops_amx_bf16() > 0)
    root["calibrated_peak_gflops_amx_bf16"] = calibration.peak_gflops_amx_bf16();
  if (calibration.peak_gflops_bf16_dot() > 0)
    root["calibrated_peak_gflops_bf16_dot"] = calibration.peak_gflops_bf16_dot();
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& level : calibration.bandwidth())
    levels.push_back({{"level", level.level()}, {"gbps", level.gbps()},
                      {"capacity_bytes", level.capacity_bytes()}});
  root["bandwidth"] = levels;
  root["rounds"] = flags.rounds;
  root["operand_sets"] = flags.operand_sets;
  root["repetitions_per_round"] = kRepetitionsPerRound;
  root["min_time_s"] = flags.min_time_s;
  root["mtune_source"] = !flags.db.empty() ? flags.db : flags.trials > 0 ? "tuned" : "template_default";
  root["trials"] = flags.trials;
  nlohmann::json problems = nlohmann::json::array();
  for (const ProblemReport& r : reports) {
    nlohmann::json row;
    row["problem"] = r.problem.Key();
    row["family"] = r.problem.family;
    row["shape"] = ShortShape(r.problem);
    row["unit"] = Unit(r);
    row["roofline_level"] = r.roof.level;
    row["roofline_level_gbps"] = r.roof.level_gbps;
    row["roofline_gflops"] = r.roof.bound_gflops;
    if (BandwidthBound(r.problem.family)) {
      row["roofline_gbps"] = RoofGbps(r);
      row["compute_bound"] = ComputeBoundRow(r);
    }
    if (r.copy_gbps_at_footprint > 0) {
      row["copy_gbps_at_footprint"] = r.copy_gbps_at_footprint;
      row["copy_loop_wins"] = r.copy_loop_wins;
      // Kept from session 38's JSON: rounds whose fastest copy had streaming stores.
      int streaming_rounds = 0;
      for (const auto& [name, wins] : r.copy_loop_wins)
        if (name.starts_with("copy_streaming")) streaming_rounds += wins;
      row["copy_streaming_rounds"] = streaming_rounds;
    }
    if (r.read_gbps_at_footprint > 0) {
      row["read_gbps_at_footprint"] = r.read_gbps_at_footprint;
      row["read_loop_wins"] = r.read_loop_wins;
    }
    if (r.peak_gflops > 0) {
      row["peak_gflops"] = r.peak_gflops;
      row["peak_loop"] = r.peak_loop;
    }
    nlohmann::json impls = nlohmann::json::object();
    for (const auto& [name, s] : r.impls) {
      const double figure = Figure(r, name);
      nlohmann::json impl = {{"status", s.status}, {"detail", s.detail},
                             {"verified", s.status == "ok"}, {"scaled_error", s.scaled_error}};
      if (figure > 0) {
        impl["median_s"] = s.median_s;
        impl["figure"] = figure;
        impl["round_medians_s"] = InRoundOrder(s.by_round_s);
        impl["figure_by_operand_set"] = FigureByOperandSet(r, name, flags.operand_sets);
        impl["fraction_of_roofline"] = FractionOfRoofline(r, figure);
        // Paired by round with the FMA loop, as the peak goals read it.
        if (const double peak = FractionOfPeak(r, name); peak > 0) impl["fraction_of_peak"] = peak;
      }
      impls[name] = impl;
    }
    row["implementations"] = impls;
    // Ratios paired by round, as in the printed table.
    for (const char* other : {"onednn", "eigen", kHandWritten})
      if (const double ratio = MtuneOver(r, other); ratio > 0) row[std::string("mtune_over_") + other] = ratio;
    if (r.best) row["best"] = {{"knobs", r.best->knobs}, {"origin", r.best->origin},
                               {"tuned_gflops", r.best->tuned_gflops}};
    for (size_t v = 0; v < r.variants.size(); ++v) {
      if (!r.variants[v]) continue;
      const std::string name = VariantName(v);
      nlohmann::json variant = {{"knobs", r.variants[v]->knobs}, {"flag", flags.variants[v]}};
      if (const double ratio = PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "mtune")); ratio > 0)
        variant["over_mtune"] = ratio;
      if (const double ratio = PairedSpeedup(RoundsOf(r, name), RoundsOf(r, "onednn")); ratio > 0)
        variant["over_onednn"] = ratio;
      row["variants"][name] = variant;
    }
    if (r.tuned)
      row["tuning"] = {{"tried", r.tuning.tried}, {"ok", r.tuning.ok},
                       {"failures", r.tuning.failures}, {"candidate_s", r.tuning.candidate_s}};
    problems.push_back(row);
  }
  root["problems"] = problems;
  nlohmann::json goals = nlohmann::json::array();
  for (const GoalLine& goal : EvaluateGoals(GoalRows(reports)))
    goals.push_back({{"goal", goal.goal}, {"verdict", goal.verdict}, {"detail", goal.detail}});
  root["goals"] = goals;
  std::ofstream out(flags.json);
  out << root.dump(2) << "\n";
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", flags.json));
  return absl::OkStatus();
}

// --- driver -------------------------------------------------------------------

// Fills report.variants: each --variant's knobs over each problem's default candidate.
// A malformed flag is an error; a knob a row's template lacks (or a value outside its
// options) is that row's variant error, as --knob is.
absl::Status ResolveVariants(const Flags& flags, std::vector<ProblemReport>& reports) {
  for (size_t v = 0; v < flags.variants.size(); ++v) {
    auto knobs = ParseKnobList(flags.variants[v]);
    if (!knobs.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("--variant '", flags.variants[v], "': ", knobs.status().message()));
    if (knobs->empty())
      return absl::InvalidArgumentError(
          absl::StrCat("--variant '", flags.variants[v], "': no NAME=VALUE given"));
    for (ProblemReport& r : reports) {
      auto kernel = DefaultKernel(r.problem, *knobs);
      if (kernel.ok()) {
        kernel->origin = absl::StrCat("--variant ", flags.variants[v]);
        r.variants.push_back(*kernel);
      } else {
        r.variants.push_back(std::nullopt);
        r.impls[VariantName(v)] = {"error", std::string(kernel.status().message())};
      }
    }
  }
  return absl::OkStatus();
}

// Fills report.best (and the mtune state when there is no kernel) for every problem.
absl::Status GetMtuneKernels(const Flags& flags, const mtune::v1::Calibration& calibration,
                             std::vector<ProblemReport>& reports) {
  auto no_template = [](ProblemReport& r, const absl::Status& status) {
    r.impls["mtune"] = {"no template", std::string(status.message())};
  };
  if (absl::Status resolved = ResolveVariants(flags, reports); !resolved.ok()) return resolved;
  if (!flags.db.empty()) {
    std::vector<strategies::Problem> problems;
    for (const ProblemReport& r : reports) problems.push_back(r.problem);
    auto best = LoadBestKernels(flags.db, problems);
    if (!best.ok()) return best.status();
    for (size_t i = 0; i < reports.size(); ++i) {
      reports[i].best = (*best)[i];
      if (!reports[i].best) reports[i].impls["mtune"] = {"no db entry", absl::StrCat("no OK result in ", flags.db)};
    }
    return absl::OkStatus();
  }
  // --knob overrides, checked against each problem's template when it is resolved.
  std::map<std::string, std::string> knobs;
  if (!flags.knobs.empty() && flags.trials != 0)
    return absl::InvalidArgumentError("--knob sets the default candidate: it needs --trials 0");
  for (const std::string& knob : flags.knobs) {
    auto parsed = ParseKnobList(knob);
    if (!parsed.ok() || parsed->size() != 1)
      return absl::InvalidArgumentError(absl::StrCat("--knob '", knob, "': want NAME=VALUE"));
    for (const auto& [name, value] : *parsed) knobs[name] = value;
  }
  worker::Measurer measurer;
  TuneOptions options;
  options.trials = flags.trials;
  options.seed = flags.seed;
  options.search = flags.search;
  options.min_time_s = flags.tune_min_time_s;
  for (size_t i = 0; i < reports.size(); ++i) {
    ProblemReport& r = reports[i];
    if (flags.trials == 0) {
      auto kernel = DefaultKernel(r.problem, knobs);
      if (absl::IsNotFound(kernel.status())) {
        no_template(r, kernel.status());
      } else if (!kernel.ok()) {
        r.impls["mtune"] = {"error", std::string(kernel.status().message())};
      } else {
        r.best = *kernel;
      }
      continue;
    }
    std::fprintf(stderr, "[%zu/%zu] tuning %s: %d %s trials\n", i + 1, reports.size(),
                 r.problem.Key().c_str(), flags.trials, flags.search.c_str());
    absl::Status tuned = TuneProblem(r.problem, options, calibration, measurer,
                                     ShortShape(r.problem), r.best, r.tuning);
    if (absl::IsNotFound(tuned)) {
      no_template(r, tuned);
      std::fprintf(stderr, "  no template: the baselines still run\n");
      continue;
    }
    r.tuned = true;
    if (!tuned.ok()) {
      // One family's broken template must not hide the others' figures.
      r.impls["mtune"] = {"error", std::string(tuned.message())};
      continue;
    }
    if (!r.best) r.impls["mtune"] = {"no ok candidate", absl::StrCat(r.tuning.tried, " tried, none OK")};
  }
  return absl::OkStatus();
}

int Run(const Flags& flags) {
  if (flags.list) {
    for (const std::string& key : DefaultSuiteKeys()) std::printf("%s\n", key.c_str());
    return 0;
  }
  auto problems = SelectProblems(flags.problems, flags.families);
  if (!problems.ok()) {
    std::fprintf(stderr, "%s\n", std::string(problems.status().message()).c_str());
    return 2;
  }
  std::vector<ProblemReport> reports;
  for (const strategies::Problem& p : *problems) reports.push_back(ProblemReport{p});

  if (flags.cpu >= 0) {
    if (absl::Status pinned = worker::PinCurrentThreadToCpu(flags.cpu); !pinned.ok()) {
      std::fprintf(stderr, "cannot pin to cpu %d: %s (pick another with --cpu, -1 = no pinning)\n",
                   flags.cpu, std::string(pinned.message()).c_str());
      return 1;
    }
  }
  worker::CalibrationOptions calibration_options;
  if (flags.quick_calibration) {
    calibration_options.fma_time_s = 0.05;
    calibration_options.copy_time_s = 0.02;
    calibration_options.max_working_set_bytes = uint64_t{64} << 20;
  }
  std::vector<std::string> notes;
  std::fprintf(stderr, "calibrating cpu %d...\n", flags.cpu);
  const mtune::v1::Calibration calibration = worker::Calibrate(calibration_options, &notes);
  for (const std::string& note : notes) std::fprintf(stderr, "  calibration: %s\n", note.c_str());
  std::fprintf(stderr, "  FMA peak %.2f GFLOP/s\n", calibration.peak_gflops_f32());
  if (const std::string bf16 = worker::Bf16PeakText(calibration); !bf16.empty())
    std::fprintf(stderr, "  %s\n", bf16.c_str());

  if (absl::Status got = GetMtuneKernels(flags, calibration, reports); !got.ok()) {
    std::fprintf(stderr, "%s\n", got.ToString().c_str());
    return 1;
  }

  bool wrong_baseline = false;
  for (size_t i = 0; i < reports.size(); ++i) {
    ProblemReport& r = reports[i];
    r.roof = worker::ComputeRoofline(calibration, r.problem.Flops(), r.problem.CompulsoryBytes(),
                                     r.problem.FootprintBytes());
    std::fprintf(stderr, "[%zu/%zu] side by side %s\n", i + 1, reports.size(), r.problem.Key().c_str());
    Fixture fixture;
    Prepare(flags, r, fixture);
    for (const char* impl : {"onednn", "eigen", kHandWritten})
      if (r.impls[impl].status == "WRONG") {
        wrong_baseline = true;
        std::fprintf(stderr, "  %s gives a wrong result: %s\n", impl, r.impls[impl].detail.c_str());
      }
    if (r.problem.element_type == "bf16")
      r.peak_loop = calibration.peak_gflops_amx_bf16() > 0   ? "amx_bf16"
                    : calibration.peak_gflops_bf16_dot() > 0 ? "bf16_dot"
                                                             : "fma_f32";
    TimeProblem(flags, r, fixture);
    // A bandwidth-bound row's roof is the stream of its reads and writes at its
    // footprint, from the copy and read loops timed beside it (and, for depthwise, the
    // FMA loop timed beside it: RoofGbps).
    if (r.copy_gbps_at_footprint > 0) {
      r.roof = worker::WithBandwidth(
          r.roof, worker::StreamGbps(r.copy_gbps_at_footprint, r.read_gbps_at_footprint, r.problem),
          r.peak_gflops > 0 ? r.peak_gflops : calibration.peak_gflops_f32(), r.problem.Flops(),
          r.problem.CompulsoryBytes());
    } else if (r.peak_gflops > 0) {
      // The compute roof of this row is the peak timed beside it.
      mtune::v1::Calibration side_by_side = calibration;
      side_by_side.set_peak_gflops_f32(r.peak_gflops);
      r.roof = worker::ComputeRoofline(side_by_side, r.problem.Flops(), r.problem.CompulsoryBytes(),
                                       r.problem.FootprintBytes());
    }
  }

  PrintReport(flags, reports, calibration, worker::JitKernel::HostCpuName());
  if (!flags.json.empty()) {
    if (absl::Status written = WriteJson(flags, reports, calibration, worker::JitKernel::HostCpuName());
        !written.ok()) {
      std::fprintf(stderr, "%s\n", written.ToString().c_str());
      return 1;
    }
  }
  if (wrong_baseline) {
    std::fprintf(stderr, "a baseline computed something other than mtune's reference (see the "
                         "verification list): its figures are left out\n");
    return 3;
  }
  return 0;
}

}  // namespace
}  // namespace mtune::bench

int main(int argc, char** argv) {
  mtune::bench::Flags flags;
  CLI::App app{
      "Compares mtune's kernel for every kernel family with oneDNN and Eigen, single-threaded on "
      "one pinned core, in one run: GFLOP/s or GB/s, ratios, fraction of roofline, the issue's "
      "goals; on AVX-512 CPUs also hand-written loops of mtune's best depthwise 2-D and conv 2-D "
      "nests (bench/handwritten_kernels.h). Every library's output is verified against mtune's "
      "reference first."};
  app.add_option("--problems", flags.problems,
                 "comma-separated problem keys (default: the built-in suite, see --list)");
  app.add_option("--families", flags.families, "comma-separated families to keep (default: all)");
  app.add_flag("--list", flags.list, "print the default suite's keys and exit");
  app.add_option("--trials", flags.trials,
                 "candidates tuned per problem in this run; 0 = the template's default candidate")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--search", flags.search, "search algorithm for tuning (random, model, ...)")
      ->capture_default_str();
  app.add_option("--seed", flags.seed, "seed of the search")->capture_default_str();
  auto* db = app.add_option("--db", flags.db,
                            "instead of tuning, take the best script per problem from this "
                            "exported best-strategy database or coordinator store");
  app.add_option("--cpu", flags.cpu, "CPU the measuring thread is pinned to (-1: no pinning)")
      ->capture_default_str();
  app.add_option("--min-time", flags.min_time_s,
                 "seconds of timed calls per implementation per round")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--tune-min-time", flags.tune_min_time_s, "seconds of timed calls per tuning candidate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--rounds", flags.rounds, "interleaved rounds per problem")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--operand-sets", flags.operand_sets,
                 "copies of each problem's operands, allocated side by side; round r runs "
                 "every implementation on copy r mod N, so no one draw of page placement "
                 "decides a row (1: one set, as before session 22)")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--json", flags.json, "also write the results as JSON to this file");
  app.add_flag("--onednn-plain-weights", flags.onednn_plain_weights,
               "give oneDNN convolutions the plain HWCF weights (hwio/wio) instead of letting "
               "them pick a layout (reordered once, untimed)");
  app.add_flag("--quick-calibration", flags.quick_calibration,
               "a short, less precise calibration (for smoke tests)");
  auto* knob = app.add_option("--knob", flags.knobs,
                              "NAME=VALUE (repeatable): with --trials 0, the default candidate with "
                              "these knobs changed, for every problem (a knob its template lacks is "
                              "an error in that row); compare two candidates across runs by their "
                              "mt/dnn ratios");
  app.add_option("--variant", flags.variants,
                 "\"NAME=VALUE NAME=VALUE ...\" (repeatable): also time the default candidate with "
                 "these knobs in the same rounds, for every problem, shown as variant1, variant2, "
                 "... against mtune's kernel and oneDNN (a knob a row's template lacks is an "
                 "error in that row)");
  db->excludes(app.get_option("--trials"));
  db->excludes(knob);
  CLI11_PARSE(app, argc, argv);

  char program[] = "mtune-bench-families";
  char* benchmark_argv[] = {program, nullptr};
  int benchmark_argc = 1;
  benchmark::Initialize(&benchmark_argc, benchmark_argv);
  const int code = mtune::bench::Run(flags);
  benchmark::Shutdown();
  return code;
}
