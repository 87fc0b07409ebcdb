// mtune-bench-families: for a suite of problems of every kernel family, gets mtune's
// kernel (template default, tuned in this run, or loaded from a database) and times
// it beside oneDNN and Eigen (and, for three families, hand-written AVX-512 loops of
// its own loop nest) on the same inputs, single-threaded on one pinned core, in
// interleaved rounds; every library's output is first checked against mtune's
// reference. Prints one table (GFLOP/s or GB/s, ratios, fraction of roofline),
// geomeans per family and the goals with met / NOT met (families_report.cc).
// See bench/README.md.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/families_report.h"
#include "bench/family_baselines.h"
#include "bench/family_suite.h"
#include "bench/side_by_side.h"
#include "benchmark/benchmark.h"
#include "proto/enum_words.h"
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

namespace mtune::bench::families {
namespace {


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
    state = {mtune::v1::StatusWord(failure.status), failure.error.substr(0, 300)};
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
}  // namespace mtune::bench::families

int main(int argc, char** argv) {
  mtune::bench::families::Flags flags;
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
  const int code = mtune::bench::families::Run(flags);
  benchmark::Shutdown();
  return code;
}
