// mtune-bench-conv: tunes convolution problems (conv 1-D/2-D, depthwise 1-D/2-D) with
// a seeded random search over each family's default template, then times the best
// candidate and oneDNN's convolution primitive side by side, interleaved round by
// round on one pinned core, and prints medians, the ratio to oneDNN and the fraction
// of the measured FMA peak and of the roofline. See bench/README.md.
//
// Tuning and timing run in-process with worker::Measurer (no sandbox): a candidate
// that crashes takes the bench down, which is acceptable for a bench, not a worker.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/conv_baselines.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "worker/affinity.h"
#include "worker/calibration.h"
#include "worker/measure.h"

namespace mtune::bench {
namespace {

struct Flags {
  std::vector<std::string> problems = {
      "conv_2d_nhwc_hwcf:n=1,h=58,w=58,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32",
      "conv_1d_nwc_wcf:n=1,w=258,c=64,kw=3,f=64,sw=1,dw=1:f32",
      "depthwise_conv_2d_nhwc_hwc:n=1,h=58,w=58,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32"};
  int trials = 12;
  int seed = 1;
  int rounds = 5;
  int cpu = 0;
  double min_time_s = 0.2;
  std::vector<std::string> knobs;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

std::string Describe(const strategies::KnobValues& values) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : values) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<ConvShape> ShapeOf(const strategies::Problem& p) {
  ConvShape s;
  const std::string& family = p.family;
  s.depthwise = family.rfind("depthwise", 0) == 0;
  s.one_d = family.find("_1d_") != std::string::npos;
  if (family.find("conv") == std::string::npos)
    return absl::InvalidArgumentError(absl::StrCat(family, " is not a convolution family"));
  s.n = p.Dim("n");
  s.w = p.Dim("w");
  s.c = p.Dim("c");
  s.kw = p.Dim("kw");
  s.sw = p.Dim("sw");
  s.dw = p.Dim("dw");
  s.f = s.depthwise ? s.c : p.Dim("f");
  if (!s.one_d) {
    s.h = p.Dim("h");
    s.kh = p.Dim("kh");
    s.sh = p.Dim("sh");
    s.dh = p.Dim("dh");
  }
  s.f64 = p.element_type == "f64";
  return s;
}

mtune::v1::Task TaskFor(const strategies::Problem& problem, const std::string& script,
                        double min_time_s) {
  mtune::v1::Task task;
  task.set_problem(problem.Key());
  task.set_script(script);
  task.set_min_measure_s(min_time_s);
  return task;
}

struct Best {
  std::string script;
  strategies::KnobValues values;
  double gflops = 0;
};

// Default candidate first, then distinct random ones that satisfy the constraints.
absl::StatusOr<Best> Tune(const Flags& flags, const strategies::Problem& problem,
                          const mtune::v1::Calibration& calibration, worker::Measurer& measurer) {
  auto tpl = strategies::DefaultTemplateFor(problem.family);
  if (!tpl.ok()) return tpl.status();
  auto space = strategies::ExtractKnobSpace(tpl->text, problem);
  if (!space.ok()) return space.status();
  // The default candidate as `mtune measure` takes it (see default_candidate.h);
  // --knob overrides apply to the template's own values.
  strategies::KnobValues defaults = flags.knobs.empty()
      ? strategies::DefaultCandidate(*space).value_or(strategies::NearestDefaults(*space))
      : strategies::NearestDefaults(*space);
  for (const std::string& knob : flags.knobs) {
    std::vector<std::string> kv = absl::StrSplit(knob, absl::MaxSplits('=', 1));
    if (kv.size() != 2) return absl::InvalidArgumentError("--knob wants NAME=VALUE: " + knob);
    defaults[kv[0]] = kv[1];
  }
  if (absl::Status s = space->Check(defaults); !s.ok()) return s;
  std::mt19937 rng(flags.seed);
  std::set<strategies::KnobValues> seen;
  Best best;
  for (int trial = 0, attempts = 0; trial < flags.trials && attempts < 100 * flags.trials;
       ++attempts) {
    strategies::KnobValues values = defaults;
    if (trial > 0)
      for (const auto& k : space->knobs)
        values[k.name] =
            k.options[std::uniform_int_distribution<size_t>(0, k.options.size() - 1)(rng)];
    if (!space->SatisfiesConstraints(values) || !seen.insert(values).second) continue;
    ++trial;
    auto script = strategies::Instantiate(tpl->text, problem, values);
    if (!script.ok()) return script.status();
    auto result = measurer.Measure(TaskFor(problem, *script, 0.05), calibration);
    const bool ok = result.status() == mtune::v1::RESULT_STATUS_OK;
    std::fprintf(stderr, "  %2d %-10s %8.2f GFLOP/s compile %.2f s  %s%s\n", trial,
                 ok ? "ok" : mtune::v1::ResultStatus_Name(result.status()).c_str(),
                 ok ? result.gflops() : 0.0, result.compile_s(), Describe(values).c_str(),
                 ok ? "" : (" " + result.error().substr(0, 200)).c_str());
    if (ok && result.gflops() > best.gflops) best = Best{*script, values, result.gflops()};
  }
  if (best.script.empty()) return absl::InternalError("no candidate verified");
  return best;
}

int Run(const Flags& flags) {
  if (flags.cpu >= 0) {
    if (absl::Status pinned = worker::PinCurrentThreadToCpu(flags.cpu); !pinned.ok()) {
      std::fprintf(stderr, "cannot pin to cpu %d: %s\n", flags.cpu,
                   std::string(pinned.message()).c_str());
      return 1;
    }
  }
  std::vector<std::string> notes;
  std::fprintf(stderr, "calibrating...\n");
  const mtune::v1::Calibration calibration = worker::Calibrate(worker::CalibrationOptions{}, &notes);
  const double peak = calibration.peak_gflops_f32();
  std::fprintf(stderr, "  FMA peak %.2f GFLOP/s f32\n", peak);
  worker::Measurer measurer;
  for (const auto& level : calibration.bandwidth())
    std::fprintf(stderr, "  %s copy bandwidth %.1f GB/s\n", level.level().c_str(), level.gbps());
  std::printf("measured FMA peak %.1f GFLOP/s f32 (f64: half)\n", peak);
  std::printf("%-80s %9s %8s %9s %7s %7s %7s  %s\n", "problem", "mtune", "GB/s", "oneDNN",
              "ratio", "%peak", "%roof", "best candidate");
  int failures = 0;
  for (const std::string& key : flags.problems) {
    auto problem = strategies::ParseProblemKey(key);
    if (!problem.ok()) {
      std::fprintf(stderr, "%s\n", problem.status().ToString().c_str());
      return 2;
    }
    auto shape = ShapeOf(*problem);
    if (!shape.ok()) {
      std::fprintf(stderr, "%s\n", shape.status().ToString().c_str());
      return 2;
    }
    std::fprintf(stderr, "tuning %s (%d candidates)\n", problem->Key().c_str(), flags.trials);
    auto best = Tune(flags, *problem, calibration, measurer);
    if (!best.ok()) {
      std::fprintf(stderr, "  %s\n", best.status().ToString().c_str());
      ++failures;
      continue;
    }
    // Interleaved rounds: both sides see the same machine noise.
    std::vector<double> mtune_s, onednn_s;
    double roofline_fraction = 0;
    std::string onednn_error;
    for (int round = 0; round < flags.rounds; ++round) {
      auto result = measurer.Measure(TaskFor(*problem, best->script, flags.min_time_s), calibration);
      if (result.status() == mtune::v1::RESULT_STATUS_OK) {
        mtune_s.push_back(result.timing().median_s());
        roofline_fraction = result.fraction_of_roofline();
      }
      auto dnn = TimeOneDnnConvolution(*shape, flags.min_time_s);
      if (dnn.ok()) onednn_s.push_back(*dnn);
      else onednn_error = std::string(dnn.status().message());
    }
    const double flops = problem->Flops();
    const double mt = mtune_s.empty() ? 0 : flops / Median(mtune_s) / 1e9;
    const double dn = onednn_s.empty() ? 0 : flops / Median(onednn_s) / 1e9;
    const double type_peak = problem->element_type == "f64" ? peak / 2 : peak;
    const double gbps =
        mtune_s.empty() ? 0 : problem->CompulsoryBytes() / Median(mtune_s) / 1e9;
    std::printf("%-80s %9.2f %8.1f %9.2f %7.2f %6.1f%% %6.1f%%  %s\n", problem->Key().c_str(), mt,
                gbps, dn,
                dn > 0 ? mt / dn : 0.0, type_peak > 0 ? 100 * mt / type_peak : 0.0,
                100 * roofline_fraction, Describe(best->values).c_str());
    if (!onednn_error.empty()) std::printf("  oneDNN: %s\n", onednn_error.c_str());
    std::fflush(stdout);
  }
  std::printf("GFLOP/s are medians over %d interleaved rounds of %.2f s each, single thread.\n",
              flags.rounds, flags.min_time_s);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace mtune::bench

int main(int argc, char** argv) {
  mtune::bench::Flags flags;
  CLI::App app{
      "Tunes convolution problems with a seeded random search over each family's default "
      "template and times the best beside oneDNN's convolution primitive, single-threaded, "
      "interleaved on one pinned core."};
  app.add_option("--problems", flags.problems, "problem keys (conv and depthwise families)")
      ->delimiter(';')
      ->capture_default_str();
  app.add_option("--trials", flags.trials, "candidates per problem (the default one first)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", flags.seed, "seed of the random search")->capture_default_str();
  app.add_option("--rounds", flags.rounds, "interleaved side-by-side rounds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--min-time", flags.min_time_s, "seconds of timed calls per round and side")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--cpu", flags.cpu, "CPU to pin to (-1: no pinning)")->capture_default_str();
  app.add_option("--knob", flags.knobs,
                 "NAME=VALUE (repeatable): overrides of the first (default) candidate");
  CLI11_PARSE(app, argc, argv);
  return mtune::bench::Run(flags);
}
