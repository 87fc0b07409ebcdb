// mtune-ground-truth: measures every candidate of one (optionally restricted) knob
// space on this machine and writes a ground-truth table (bench/ground_truth_table.h)
// that mtune-bench-search replays. Candidates run in the worker's sandbox process
// (a crash or hang costs one row, not the run), in a seeded random order so that
// slow drifts of a noisy machine spread over the space instead of biasing a region.
// An existing --out file is resumed: rows already there are not measured again.
// `--confirm-top N` then measures the N best candidates again (`--confirm-rounds`
// more times each, in interleaved rounds) and appends those rows: on a noisy
// machine one lucky timing would otherwise make a table's optimum a needle that no
// search can be expected to find (readers take the median of a candidate's rows).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/ground_truth_table.h"
#include "proto/cache_capacity.h"
#include "search/space.h"
#include "server/candidate_space.h"
#include "strategies/candidate.h"
#include "strategies/figure.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "worker/jit_kernel.h"
#include "worker/sandbox.h"

namespace {

using Clock = std::chrono::steady_clock;

int Fail(const std::string& message) {
  fprintf(stderr, "mtune-ground-truth: %s\n", message.c_str());
  return 1;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return std::string(absl::StripAsciiWhitespace(line.substr(line.find(':') + 1)));
  return "unknown";
}

std::string Today() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

// The knobs the constraints fix, which the candidate column holds but the space
// (the free knobs) does not; "none" when the template has none.
std::string DerivedKnobNames(const mtune::strategies::KnobSpace& knobs) {
  std::vector<std::string> names;
  for (const auto& knob : knobs.knobs)
    if (knob.derived) names.push_back(knob.name);
  return names.empty() ? "none" : absl::StrJoin(names, " ");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtune-ground-truth: measure every candidate of a knob space into a table"};
  std::string problem_key, template_name, template_file, out;
  std::vector<std::string> restrictions;
  int cpu = 1;
  double min_time_s = 0.05, time_limit_s = 60;
  uint64_t limit = 0, seed = 1;
  size_t confirm_top = 0;
  int confirm_rounds = 2;
  bool calibrate = true;
  app.add_option("--problem", problem_key, "problem key, e.g. matmul:m=256,n=256,k=256:f32 (required)");
  app.add_option("--template", template_name, "built-in template (default: the family's)");
  app.add_option("--template-file", template_file, "template file instead of a built-in one");
  app.add_option("--restrict", restrictions,
                 "NAME=V1,V2,... keep only these options of a knob (repeatable)");
  app.add_option("--out", out, "table to write, resumed when it exists (required)");
  app.add_option("--cpu", cpu, "core the sandbox pins to (-1: none)")->capture_default_str();
  app.add_option("--min-time", min_time_s, "minimum timed seconds per candidate")->capture_default_str();
  app.add_option("--time-limit", time_limit_s, "seconds per candidate before TIMEOUT")->capture_default_str();
  app.add_option("--limit", limit, "measure at most this many new candidates (0: all)");
  app.add_option("--seed", seed, "seed of the measuring order")->capture_default_str();
  app.add_flag("!--no-calibrate", calibrate, "skip calibration (no roofline figures)");
  app.add_option("--confirm-top", confirm_top,
                 "after the sweep, measure the N best OK candidates again (0: none)")
      ->capture_default_str();
  app.add_option("--confirm-rounds", confirm_rounds,
                 "extra measurements of each confirmed candidate, in interleaved rounds")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  bool sandbox_mode = false;
  int sandbox_cpu = -1;
  app.add_flag("--sandbox", sandbox_mode)->group("");
  app.add_option("--sandbox-cpu", sandbox_cpu)->group("");
  CLI11_PARSE(app, argc, argv);
  if (sandbox_mode)
    return mtune::worker::RunSandboxServer(mtune::worker::kSandboxRequestFd,
                                           mtune::worker::kSandboxResponseFd, sandbox_cpu);
  // Checked here rather than by CLI11 because the sandbox mode above takes neither.
  if (problem_key.empty() || out.empty()) return Fail("--problem and --out are required (see --help)");

  auto problem = mtune::strategies::ParseProblemKey(problem_key);
  if (!problem.ok()) return Fail(std::string(problem.status().message()));
  auto tpl = template_name.empty() ? mtune::strategies::DefaultTemplateFor(problem->family)
                                   : mtune::strategies::FindTemplate(template_name);
  if (!tpl.ok()) return Fail(std::string(tpl.status().message()));
  if (!template_file.empty()) {
    std::ifstream in(template_file);
    if (!in) return Fail("cannot read " + template_file);
    std::stringstream text;
    text << in.rdbuf();
    tpl->text = text.str();
  }
  // Register tiles sized for this host, where the candidates are measured.
  auto registers = mtune::worker::JitKernel::HostVectorRegisters();
  if (!registers.ok()) return Fail(std::string(registers.status().message()));
  auto knobs = mtune::strategies::ExtractKnobSpace(tpl->text, *problem, *registers);
  if (!knobs.ok()) return Fail(std::string(knobs.status().message()));
  const std::string template_digest = mtune::strategies::TemplateDigest(tpl->text);
  for (const std::string& r : restrictions) {
    std::pair<std::string, std::string> kv = absl::StrSplit(r, absl::MaxSplits('=', 1));
    auto knob = std::find_if(knobs->knobs.begin(), knobs->knobs.end(),
                             [&](const auto& k) { return k.name == kv.first; });
    if (knob == knobs->knobs.end()) return Fail("--restrict: no knob '" + kv.first + "'");
    if (knob->derived)
      return Fail("--restrict: knob " + kv.first + " is derived (the constraints fix it); restrict the others");
    std::vector<std::string> keep;
    for (absl::string_view v : absl::StrSplit(kv.second, ',', absl::SkipEmpty())) {
      if (std::find(knob->options.begin(), knob->options.end(), v) == knob->options.end())
        return Fail(absl::StrCat("--restrict: knob ", kv.first, " has no option '", std::string(v), "'"));
      keep.emplace_back(v);
    }
    if (keep.empty()) return Fail("--restrict " + r + ": no options left");
    // Keep template order.
    std::erase_if(knob->options, [&](const std::string& o) {
      return std::find(keep.begin(), keep.end(), o) == keep.end();
    });
  }
  // The table's space is what a search proposes over: the free knobs. Each point is
  // completed with its derived knobs (mtune.derived) before it is measured.
  const mtune::server::CandidateSpace candidates(*std::move(knobs));
  const mtune::search::Space& space = candidates.search_space();
  const uint64_t size = mtune::search::SpaceSize(space);
  if (size > (uint64_t{1} << 24)) return Fail(absl::StrCat("space of ", size, " candidates is too large"));

  // Valid candidates in a seeded random order.
  std::vector<uint64_t> order;
  for (uint64_t i = 0; i < size; ++i)
    if (candidates.Complete(mtune::search::PointAtIndex(space, i))) order.push_back(i);
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);

  std::set<uint64_t> done;
  const bool resuming = access(out.c_str(), F_OK) == 0;
  if (resuming) {
    auto table = mtune::bench::ReadGroundTruth(out);
    if (!table.ok()) return Fail(std::string(table.status().message()));
    if (mtune::bench::FormatSpace(table->space) != mtune::bench::FormatSpace(space))
      return Fail(out + " holds another knob space; remove it or choose another --out");
    for (const auto& row : table->rows) done.insert(row.index);
  }
  std::ofstream file(out, std::ios::app);
  if (!file) return Fail("cannot write " + out);

  mtune::worker::Sandbox sandbox({"/proc/self/exe", "--sandbox", "--sandbox-cpu", std::to_string(cpu)});
  mtune::v1::Calibration calibration;
  if (calibrate) {
    auto c = sandbox.Calibrate();
    if (!c.ok()) return Fail(std::string(c.status().message()));
    calibration = *c;
  }
  if (!resuming) {
    // What the transpose estimate sizes working sets against (replay_table.h).
    const int64_t l2_bytes = mtune::v1::CacheCapacityBytes(calibration, "L2");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    file << "# mtune ground-truth table v1\n"
         << "# problem: " << problem->Key() << "\n"
         << "# template: " << tpl->name << (template_file.empty() ? "" : " (file " + template_file + ")") << "\n"
         << "# template_hash: " << template_digest << "\n"
         << "# restrict: " << absl::StrJoin(restrictions, " ") << "\n"
         << "# knobs: " << mtune::bench::FormatSpace(space) << "\n"
         << "# derived_knobs: " << DerivedKnobNames(candidates.knobs()) << "\n"
         << "# valid_candidates: " << order.size() << "\n"
         << "# machine: " << CpuModel() << " (host " << host << ", " << sysconf(_SC_NPROCESSORS_ONLN) << " cpus)\n"
         << "# peak_gflops_f32: " << calibration.peak_gflops_f32() << "\n"
         << "# vector_registers: " << registers->count << "x" << registers->bytes << "\n"
         << (l2_bytes > 0 ? absl::StrCat("# l2_bytes: ", l2_bytes, "\n") : "")
         << (mtune::strategies::MeasuredInGbps(*problem)
                 ? "# figure: GB/s of compulsory traffic in the gflops column (no arithmetic)\n"
                 : "")
         << "# date: " << Today() << "\n"
         << "# timing: min_time_s=" << min_time_s << " time_limit_s=" << time_limit_s << " cpu=" << cpu << "\n"
         << mtune::bench::kGroundTruthColumns << "\n";
    file.flush();
  }
  const size_t todo = std::count_if(order.begin(), order.end(), [&](uint64_t i) { return !done.contains(i); });
  const size_t goal = limit == 0 ? todo : std::min<size_t>(todo, limit);
  fprintf(stderr, "mtune-ground-truth: %s: %zu valid candidates of %llu, %zu already measured, measuring %zu\n",
          problem->Key().c_str(), order.size(), static_cast<unsigned long long>(size), done.size(), goal);
  // Measures one candidate in the sandbox and appends its row; false (after saying
  // why) when the sandbox itself fails.
  auto measure = [&](uint64_t index) -> bool {
    // Every index in `order` has a completion.
    const auto values = candidates.Complete(mtune::search::PointAtIndex(space, index));
    mtune::v1::SandboxRequest request;
    auto* task = request.mutable_measure();
    task->set_problem(problem->Key());
    *task->mutable_candidate() = mtune::strategies::MakeCandidate(tpl->name, template_digest, *values);
    auto script = mtune::strategies::Instantiate(tpl->text, *problem, *values, *registers);
    mtune::bench::GroundTruthRow row;
    row.index = index;
    row.candidate_json = task->candidate().canonical_json();
    if (!script.ok()) {
      row.status = "INVALID_CANDIDATE";
    } else {
      task->set_script(*script);
      task->set_time_limit_s(time_limit_s);
      task->set_min_measure_s(min_time_s);
      *request.mutable_calibration() = calibration;
      auto response = sandbox.Call(request, time_limit_s);
      if (!response.ok()) {
        Fail(std::string(response.status().message()));
        return false;
      }
      const auto& r = response->result();
      row.status = mtune::v1::ResultStatus_Name(r.status()).substr(strlen("RESULT_STATUS_"));
      row.median_s = r.timing().median_s();
      // What searches maximize: GFLOP/s, or GB/s for a transpose or a copy.
      row.gflops = mtune::strategies::FigureOf(*problem, r);
      row.compile_s = r.compile_s();
    }
    file << mtune::bench::FormatRow(row) << "\n";
    file.flush();
    return true;
  };
  const auto start = Clock::now();
  size_t measured = 0;
  for (uint64_t index : order) {
    if (measured == goal) break;
    if (done.contains(index)) continue;
    if (!measure(index)) return 1;
    ++measured;
    if (measured % 10 == 0 || measured == goal) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      fprintf(stderr, "mtune-ground-truth: %zu/%zu measured, %.0f s elapsed, ~%.0f s left\n", measured,
              goal, elapsed, elapsed / measured * (goal - measured));
    }
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (measured > 0)
    fprintf(stderr, "mtune-ground-truth: %zu candidates in %.0f s: %.2f candidates per second (one sandbox)\n",
            measured, elapsed, measured / elapsed);
  if (confirm_top == 0) return 0;
  if (measured < goal || (limit != 0 && goal < todo))
    return Fail("--confirm-top needs the whole space measured first (drop --limit or resume)");

  // The N best OK candidates by their figures so far; each is measured again until
  // it has 1 + confirm_rounds rows (a resumed confirmation goes on where it stopped).
  file.close();
  auto table = mtune::bench::ReadGroundTruth(out);
  if (!table.ok()) return Fail(std::string(table.status().message()));
  std::vector<const mtune::bench::GroundTruthRow*> ok;
  for (const auto& row : table->rows)
    if (row.status == "OK") ok.push_back(&row);
  std::stable_sort(ok.begin(), ok.end(), [](const auto* a, const auto* b) { return a->gflops > b->gflops; });
  ok.resize(std::min(ok.size(), confirm_top));
  file.open(out, std::ios::app);
  if (!file) return Fail("cannot write " + out);
  size_t pending = 0;
  for (const auto* row : ok) pending += std::max(0, 1 + confirm_rounds - row->measurements);
  if (pending == 0) return 0;
  file << "# confirm: the " << ok.size() << " best candidates measured " << confirm_rounds
       << " more times, in rounds; a candidate's figures are the medians of its rows (" << Today() << ")\n";
  fprintf(stderr, "mtune-ground-truth: confirming the %zu best candidates: %zu more measurements\n", ok.size(),
          pending);
  size_t confirmed = 0;
  for (int round = 1; round <= confirm_rounds; ++round) {
    for (const auto* row : ok) {
      if (row->measurements > round) continue;
      if (!measure(row->index)) return 1;
      if (++confirmed % 10 == 0 || confirmed == pending)
        fprintf(stderr, "mtune-ground-truth: %zu/%zu confirming measurements\n", confirmed, pending);
    }
  }
  return 0;
}
