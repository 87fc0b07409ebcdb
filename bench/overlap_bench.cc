// mtune-bench-overlap: what overlapping compilation with measurement buys a worker,
// and what it costs the timings. Side by side in one run, on the same candidates:
//
//  1. Throughput: the same N candidates through the worker's pipeline
//     (worker/pipeline.h) sequentially (compile, verify, time on the measuring
//     core, one after another) and overlapped (the next candidates compile on the
//     compile cores while one is timed), alternating passes so that a drifting
//     machine load hits both; candidates per second per worker, and whether both
//     modes gave every candidate the same status.
//  2. Disturbance: one kernel timed R times on the measuring core with nothing
//     else of ours running ("quiet") and R times while other candidates compile
//     on the compile cores throughout the timing ("busy"), rounds interleaved.
//     The difference of the two medians is set against the kernel's own
//     run-to-run spread (p25-p75 of the quiet rounds' medians).
//
// Figures, not goals: nothing here asserts a number. On a shared machine other
// processes disturb both columns alike; say so when quoting them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "search/space.h"
#include "strategies/candidate.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "worker/affinity.h"
#include "worker/overlap_mode.h"
#include "worker/pipeline.h"
#include "worker/jit_kernel.h"
#include "worker/sandbox.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace v1 = mtune::v1;

int Fail(const std::string& message) {
  fprintf(stderr, "mtune-bench-overlap: %s\n", message.c_str());
  return 1;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Linear-interpolated quantile of `v` (copied, sorted), q in [0, 1].
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

double Cv(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return std::sqrt(var / (v.size() - 1)) / mean;
}

struct Pass {
  double seconds = 0;
  std::vector<v1::ResultStatus> statuses;
  double compile_s = 0;  // summed over the candidates
  double rest_s = 0;     // summed verify + timing + set-up (total_s - compile_s)
  int overlapped = 0;    // candidates compiled while another was timed
};

// Runs `tasks` through `pipeline`, timed.
Pass RunPass(mtune::worker::Pipeline& pipeline, const std::vector<v1::Task>& tasks) {
  Pass pass;
  size_t next = 0;
  mtune::worker::PipelineCallbacks callbacks;
  callbacks.next = [&]() -> std::optional<mtune::worker::PipelineTask> {
    if (next == tasks.size()) return std::nullopt;
    return mtune::worker::PipelineTask{tasks[next++], ""};
  };
  callbacks.done = [&](const v1::Task&, const v1::Result& result, int64_t overlapped_with) {
    pass.overlapped += overlapped_with != 0;
    pass.statuses.push_back(result.status());
    pass.compile_s += result.compile_s();
    pass.rest_s += result.total_s() - result.compile_s();
  };
  const auto start = Clock::now();
  pipeline.Run(callbacks);
  pass.seconds = Seconds(start);
  return pass;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mtune-bench-overlap: candidates per second per worker with and without overlapping "
      "compilation with measurement, and one kernel's timing with and without concurrent "
      "compilation against its own run-to-run spread"};
  std::string problem_key = "matmul:m=256,n=256,k=256:f32";
  int cpu = 0, candidates = 16, passes = 2, rounds = 10, prefetch = 1;
  uint64_t seed = 1;
  double min_time_s = 0.1, time_limit_s = 60;
  std::string compile_cpus_text;
  app.add_option("--problem", problem_key, "problem key; its family's default template")
      ->capture_default_str();
  app.add_option("--cpu", cpu, "measuring core")->capture_default_str();
  app.add_option("--compile-cpus", compile_cpus_text,
                 "cores to compile on (default: every other core this process may use)");
  app.add_option("--candidates", candidates, "candidates per throughput pass (seeded random)")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  app.add_option("--passes", passes, "throughput passes per mode, alternating")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--rounds", rounds, "timings of the one kernel per condition, interleaved")
      ->check(CLI::Range(3, 1000))
      ->capture_default_str();
  app.add_option("--prefetch", prefetch, "candidates compiled ahead when overlapped")
      ->check(CLI::Range(1, 7))
      ->capture_default_str();
  app.add_option("--min-time", min_time_s, "minimum timed seconds per candidate")
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the candidate sample")->capture_default_str();
  // Internal: the sandbox children.
  bool sandbox_mode = false;
  int sandbox_cpu = -1;
  std::string sandbox_compile_cpus;
  app.add_flag("--sandbox", sandbox_mode)->group("");
  app.add_option("--sandbox-cpu", sandbox_cpu)->group("");
  app.add_option("--sandbox-compile-cpus", sandbox_compile_cpus)->group("");
  CLI11_PARSE(app, argc, argv);
  if (sandbox_mode) {
    std::vector<int> compile_cpus;
    if (!sandbox_compile_cpus.empty()) compile_cpus = *mtune::worker::ParseCpuList(sandbox_compile_cpus);
    return mtune::worker::RunSandboxServer(mtune::worker::kSandboxRequestFd,
                                           mtune::worker::kSandboxResponseFd, sandbox_cpu, 0, "",
                                           compile_cpus);
  }

  std::vector<int> requested;
  if (!compile_cpus_text.empty()) {
    auto parsed = mtune::worker::ParseCpuList(compile_cpus_text);
    if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
    requested = *parsed;
  }
  auto mode = mtune::worker::ChooseOverlap(cpu, false, requested);
  if (!mode.ok()) return Fail(std::string(mode.status().message()));
  if (mode->compile_cpus.empty()) return Fail("nothing to compare: " + mode->description);
  const std::string compile_cpus = absl::StrJoin(mode->compile_cpus, ",");
  const std::vector<std::string> sequential_argv = {"/proc/self/exe", "--sandbox", "--sandbox-cpu",
                                                    std::to_string(cpu)};
  std::vector<std::string> overlapped_argv = sequential_argv;
  overlapped_argv.insert(overlapped_argv.end(), {"--sandbox-compile-cpus", compile_cpus});

  // Candidates: the template default first, then a seeded random sample of valid ones.
  auto problem = mtune::strategies::ParseProblemKey(problem_key);
  if (!problem.ok()) return Fail(problem.status().ToString());
  auto tpl = mtune::strategies::DefaultTemplateFor(problem->family);
  if (!tpl.ok()) return Fail(tpl.status().ToString());
  // Register tiles sized for this host, where the candidates are measured.
  auto registers = mtune::worker::JitKernel::HostVectorRegisters();
  if (!registers.ok()) return Fail(std::string(registers.status().message()));
  auto knobs = mtune::strategies::ExtractKnobSpace(tpl->text, *problem, *registers);
  if (!knobs.ok()) return Fail(knobs.status().ToString());
  const std::string template_digest = mtune::strategies::TemplateDigest(tpl->text);
  mtune::search::Space space;
  for (const auto& k : knobs->knobs) space.knobs.push_back({k.name, k.options});
  const uint64_t size = mtune::search::SpaceSize(space);
  std::vector<mtune::strategies::KnobValues> picked;
  if (auto defaults = knobs->Defaults(); defaults && knobs->SatisfiesConstraints(*defaults))
    picked.push_back(*defaults);
  std::mt19937_64 rng(seed);
  for (int tries = 0; picked.size() < static_cast<size_t>(candidates) && tries < 100000; ++tries) {
    auto values = mtune::search::ValuesFromPoint(space, mtune::search::PointAtIndex(space, rng() % size));
    if (values.ok() && knobs->SatisfiesConstraints(*values)) picked.push_back(*values);
  }
  std::vector<v1::Task> tasks;
  for (const auto& values : picked) {
    auto script = mtune::strategies::Instantiate(tpl->text, *problem, values, *registers);
    if (!script.ok()) continue;
    v1::Task task;
    task.set_task_id(tasks.size() + 1);
    task.set_problem(problem->Key());
    *task.mutable_candidate() = mtune::strategies::MakeCandidate(tpl->name, template_digest, values);
    task.set_script(*script);
    task.set_time_limit_s(time_limit_s);
    task.set_min_measure_s(min_time_s);
    tasks.push_back(std::move(task));
  }
  if (tasks.size() < 2) return Fail("fewer than 2 candidates instantiate");
  printf("mtune-bench-overlap: %s, template %s, %zu candidates, timing on cpu %d, compiling on "
         "cpus %s, prefetch %d, min time %.3g s\n",
         problem->Key().c_str(), tpl->name.c_str(), tasks.size(), cpu, compile_cpus.c_str(),
         prefetch, min_time_s);
  printf("machine: %ld cpus online; other processes on them disturb both modes alike\n\n",
         sysconf(_SC_NPROCESSORS_ONLN));

  // --- 1. Throughput ---
  std::vector<double> sequential_rates, overlapped_rates;
  std::vector<v1::ResultStatus> sequential_statuses, overlapped_statuses;
  size_t status_mismatches = 0;
  // The pipelines' sandbox children start (load MLIR) once, in an untimed warm-up
  // pass, as a long-running worker's have. No calibration, so no peaks timed again
  // (0.6 s of the measuring core each) inside the passes that are timed.
  mtune::worker::Pipeline sequential_pipeline(
      mtune::worker::PipelineOptions{.sandbox_argv = sequential_argv, .prefetch = 0, .peaks_max_age_s = 0},
      v1::Calibration());
  mtune::worker::Pipeline overlapped_pipeline(
      mtune::worker::PipelineOptions{.sandbox_argv = overlapped_argv, .prefetch = prefetch, .peaks_max_age_s = 0},
      v1::Calibration());
  const std::vector<v1::Task> warmup(tasks.begin(),
                                     tasks.begin() + std::min<size_t>(tasks.size(), prefetch + 1));
  (void)RunPass(sequential_pipeline, warmup);
  (void)RunPass(overlapped_pipeline, warmup);
  printf("%-6s %-12s %10s %14s %16s %20s %12s\n", "pass", "mode", "seconds", "candidates/s",
         "compile s/cand", "verify+time s/cand", "overlapped");
  for (int p = 0; p < passes; ++p) {
    for (int overlapped = 0; overlapped < 2; ++overlapped) {
      // Alternate which mode goes first, so that a trend in the load hits both.
      const bool run_overlapped = (overlapped + p) % 2 == 1;
      Pass pass = RunPass(run_overlapped ? overlapped_pipeline : sequential_pipeline, tasks);
      const double rate = tasks.size() / pass.seconds;
      (run_overlapped ? overlapped_rates : sequential_rates).push_back(rate);
      (run_overlapped ? overlapped_statuses : sequential_statuses) = pass.statuses;
      printf("%-6d %-12s %10.2f %14.3f %16.3f %20.3f %9d/%zu\n", p + 1,
             run_overlapped ? "overlapped" : "sequential", pass.seconds, rate,
             pass.compile_s / tasks.size(), pass.rest_s / tasks.size(), pass.overlapped,
             tasks.size());
      fflush(stdout);
    }
    for (size_t i = 0; i < tasks.size(); ++i)
      if (i >= sequential_statuses.size() || i >= overlapped_statuses.size() ||
          sequential_statuses[i] != overlapped_statuses[i])
        ++status_mismatches;
  }
  const double seq_rate = Quantile(sequential_rates, 0.5), ovl_rate = Quantile(overlapped_rates, 0.5);
  printf("\ncandidates/s per worker (median of %d passes): sequential %.3f, overlapped %.3f, "
         "ratio %.2fx\n",
         passes, seq_rate, ovl_rate, ovl_rate / seq_rate);
  printf("statuses differing between the modes (per candidate, per pass): %zu\n\n",
         status_mismatches);

  // --- 2. Disturbance of one kernel's timing ---
  // The kernel: the first candidate (the template default) in an overlapped child,
  // compiled on the compile cores and timed on the measuring core, as the worker
  // does. The disturber: another child compiling the other candidates on the
  // compile cores in a loop, throughout each "busy" timing.
  mtune::worker::Sandbox measured(overlapped_argv), disturber(overlapped_argv);
  std::mutex mu;
  std::condition_variable cv;
  bool busy = false, compiling = false, quit = false;
  int compiles = 0;
  std::thread disturb([&] {
    size_t next = 1;
    std::unique_lock lock(mu);
    while (true) {
      cv.wait(lock, [&] { return quit || busy; });
      if (quit) return;
      compiling = true;
      lock.unlock();
      v1::SandboxRequest request;
      *request.mutable_compile() = tasks[next];
      next = next + 1 < tasks.size() ? next + 1 : 1;
      (void)disturber.Call(request, time_limit_s);
      lock.lock();
      ++compiles;
      compiling = false;
      cv.notify_all();
    }
  });
  // Warm both children (MLIR loaded, first compile done) outside the rounds.
  {
    v1::SandboxRequest request;
    *request.mutable_compile() = tasks[1];
    (void)disturber.Call(request, time_limit_s);
  }
  std::vector<double> quiet, noisy, quiet_cv, noisy_cv;
  int busy_compiles = 0;
  for (int r = 0; r < 2 * rounds; ++r) {
    const bool with_compiles = (r % 2) == (r / 2 % 2);  // Q B B Q Q B ...: no order bias
    v1::SandboxRequest compile;
    *compile.mutable_compile() = tasks[0];
    auto compiled = measured.Call(compile, time_limit_s);
    if (!compiled.ok() || !compiled->compiled())
      return Fail("the measured kernel did not compile: " +
                  (compiled.ok() ? compiled->result().error() : compiled.status().ToString()));
    int before = 0;
    if (with_compiles) {
      std::unique_lock lock(mu);
      before = compiles;
      busy = true;
      cv.notify_all();
      // Timing starts once a compile is under way.
      cv.wait(lock, [&] { return compiling; });
    }
    v1::SandboxRequest measure;
    measure.set_measure_compiled(true);
    auto result = measured.Call(measure, time_limit_s);
    if (with_compiles) {
      std::unique_lock lock(mu);
      busy = false;
      // The compile under way is counted; the next quiet round waits for it.
      cv.wait(lock, [&] { return !compiling; });
      busy_compiles += compiles - before;
    }
    if (!result.ok() || result->result().status() != v1::RESULT_STATUS_OK)
      return Fail("timing the kernel failed: " +
                  (result.ok() ? result->result().error() : result.status().ToString()));
    (with_compiles ? noisy : quiet).push_back(result->result().timing().median_s());
    (with_compiles ? noisy_cv : quiet_cv).push_back(result->result().timing().cv());
  }
  {
    std::lock_guard lock(mu);
    quit = true;
    cv.notify_all();
  }
  disturb.join();

  const double q50 = Quantile(quiet, 0.5), q25 = Quantile(quiet, 0.25), q75 = Quantile(quiet, 0.75);
  const double b50 = Quantile(noisy, 0.5), b25 = Quantile(noisy, 0.25), b75 = Quantile(noisy, 0.75);
  const double spread = q75 - q25;
  const double diff = std::fabs(b50 - q50);
  printf("one kernel (%s), %d rounds each, seconds per call (median of each round's median):\n",
         tasks[0].candidate().canonical_json().c_str(), rounds);
  printf("  %-28s median %.4g ms  p25-p75 %.4g-%.4g ms  cv of rounds %.2f%%  median in-round cv %.2f%%\n",
         "quiet (no compile running)", q50 * 1e3, q25 * 1e3, q75 * 1e3, 100 * Cv(quiet),
         100 * Quantile(quiet_cv, 0.5));
  printf("  %-28s median %.4g ms  p25-p75 %.4g-%.4g ms  cv of rounds %.2f%%  median in-round cv %.2f%%\n",
         "busy (compiling throughout)", b50 * 1e3, b25 * 1e3, b75 * 1e3, 100 * Cv(noisy),
         100 * Quantile(noisy_cv, 0.5));
  printf("  compiles on cpus %s during the busy timings: %d (%.1f per round)\n", compile_cpus.c_str(),
         busy_compiles, static_cast<double>(busy_compiles) / rounds);
  printf("  |busy - quiet| = %.4g ms (%.2f%% of quiet); quiet run-to-run spread p75-p25 = %.4g ms "
         "(%.2f%%): %s\n",
         diff * 1e3, 100 * diff / q50, spread * 1e3, 100 * spread / q50,
         diff < spread ? "within the spread" : "LARGER than the spread");

  // --- 3. The other direction: a compile's time alone and while a kernel is timed ---
  // Overlap pays only if the compile cores run as fast while the measuring core
  // times. On a VM whose two vCPUs share a physical core (or a host that is
  // oversubscribed) they do not, and this shows it.
  std::vector<double> alone_s, beside_s;
  for (int r = 0; r < rounds; ++r) {
    const v1::Task& other = tasks[1 + r % (tasks.size() - 1)];
    v1::SandboxRequest compile_other;
    *compile_other.mutable_compile() = other;
    auto t0 = Clock::now();
    auto alone = disturber.Call(compile_other, time_limit_s);
    if (alone.ok() && alone->compiled()) alone_s.push_back(Seconds(t0));
    // A timing long enough to cover the compile.
    v1::Task long_timing = tasks[0];
    long_timing.set_min_measure_s(std::max(1.0, 10 * alone_s.back()));
    v1::SandboxRequest compile;
    *compile.mutable_compile() = long_timing;
    if (auto c = measured.Call(compile, time_limit_s); !c.ok() || !c->compiled()) continue;
    std::atomic<bool> timing_done{false};
    std::thread timer([&] {
      v1::SandboxRequest measure;
      measure.set_measure_compiled(true);
      (void)measured.Call(measure, time_limit_s);
      timing_done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past verification
    t0 = Clock::now();
    auto beside = disturber.Call(compile_other, time_limit_s);
    const double took = Seconds(t0);
    const bool covered = !timing_done;
    timer.join();
    if (beside.ok() && beside->compiled() && covered) beside_s.push_back(took);
  }
  if (!alone_s.empty() && !beside_s.empty()) {
    const double a50 = Quantile(alone_s, 0.5), b50c = Quantile(beside_s, 0.5);
    printf("\none compile on cpus %s (median of %zu / %zu rounds): alone %.3f s (p25-p75 "
           "%.3f-%.3f), while cpu %d times a kernel %.3f s (p25-p75 %.3f-%.3f): %.2fx\n",
           compile_cpus.c_str(), alone_s.size(), beside_s.size(), a50, Quantile(alone_s, 0.25),
           Quantile(alone_s, 0.75), cpu, b50c, Quantile(beside_s, 0.25), Quantile(beside_s, 0.75),
           b50c / a50);
  }
  return 0;
}
