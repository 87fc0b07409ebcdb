#include "client/format.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "proto/enum_words.h"
#include "strategies/figure.h"
#include "worker/roofline.h"

namespace mtune::client {
namespace {

std::string StateName(mtune::v1::JobState state) {
  switch (state) {
    case mtune::v1::JOB_STATE_RUNNING: return "running";
    case mtune::v1::JOB_STATE_SUCCEEDED: return "succeeded";
    case mtune::v1::JOB_STATE_CANCELLED: return "cancelled";
    case mtune::v1::JOB_STATE_FAILED: return "failed";
    default: return "unknown";
  }
}

// The width of a table's problem column: `minimum`, or the longest key of `rows`
// (convolution keys run to 80 characters).
template <typename Rows>
int ProblemColumnWidth(const Rows& rows, int minimum) {
  int width = minimum;
  for (const auto& row : rows) width = std::max(width, static_cast<int>(row.problem().size()));
  return width;
}

// Whether a problem's results are shown in GB/s rather than GFLOP/s (a transpose or
// a copy has no arithmetic: strategies/figure.h). A key this build does not know is
// shown in GFLOP/s.
bool InGbps(const std::string& problem_key) {
  auto problem = strategies::ParseProblemKey(problem_key);
  return problem.ok() && strategies::MeasuredInGbps(*problem);
}

// "152.9 GFLOP/s" or "61.3 GB/s": the figure a problem's results are compared by.
std::string FigureText(const std::string& problem_key, const mtune::v1::Result& r) {
  return InGbps(problem_key) ? absl::StrFormat("%.1f GB/s", r.gbps())
                             : absl::StrFormat("%.1f GFLOP/s", r.gflops());
}

}  // namespace

// A kernel's time: "12.514 ms", or "0.214 us" below a millisecond (copies and
// transposes of a few KiB run in under a microsecond).
std::string DurationText(double seconds) {
  return seconds >= 1e-3 ? absl::StrFormat("%.3f ms", seconds * 1e3)
                         : absl::StrFormat("%.3f us", seconds * 1e6);
}

// What the roofline fraction is of: the GFLOP/s bound, or for a kernel that moves
// data only, the copy bandwidth at its footprint (worker/roofline.h). A fresh result
// of a bandwidth-bound problem inside the caches also says which bandwidth bounds it
// (stored results do not keep it).
std::string RooflineText(const std::string& problem_key, const mtune::v1::Result& r) {
  const std::string level = r.roofline_level().empty() ? "?" : r.roofline_level();
  if (InGbps(problem_key)) {
    // A stored result has no roofline_gbps (no column in the store): gbps / fraction.
    const double yardstick = r.roofline_gbps() > 0 ? r.roofline_gbps()
                             : r.fraction_of_roofline() > 0 ? r.gbps() / r.fraction_of_roofline()
                                                            : 0.0;
    return absl::StrFormat("%.2f of the copy bandwidth at its footprint, %.1f GB/s (fits %s)",
                           r.fraction_of_roofline(), yardstick, level);
  }
  if (r.has_footprint_bandwidth() && r.roofline_gbps() > 0)
    return absl::StrFormat(
        "%.2f of %.1f GFLOP/s: %.1f GB/s of its reads and writes at its footprint (copy %.1f, "
        "read %.1f GB/s there; fits %s)",
        r.fraction_of_roofline(), r.roofline_gflops(), r.roofline_gbps(), r.footprint_bandwidth().gbps(),
        r.footprint_bandwidth().read_gbps(), level);
  return absl::StrFormat("%.2f of %.1f GFLOP/s (footprint fits %s)", r.fraction_of_roofline(),
                         r.roofline_gflops(), level);
}

nlohmann::json BestToJson(const mtune::v1::BestStrategy& best) {
  const auto& r = best.result();
  nlohmann::json knobs = nlohmann::json::parse(best.candidate().canonical_json(), nullptr, false);
  return {
      {"problem", best.problem()},
      {"target", best.target().id()},
      {"template", best.candidate().template_name()},
      {"candidate_hash", best.candidate().hash()},
      {"knobs", knobs.is_discarded() ? nlohmann::json::object() : knobs},
      {"script", best.script()},
      {"gflops", r.gflops()},
      {"gbps", r.gbps()},
      {"fraction_of_roofline", r.fraction_of_roofline()},
      {"roofline_gflops", r.roofline_gflops()},
      {"roofline_level", r.roofline_level()},
      {"median_s", r.timing().median_s()},
      {"min_s", r.timing().min_s()},
      {"p25_s", r.timing().p25_s()},
      {"p75_s", r.timing().p75_s()},
      {"cv", r.timing().cv()},
      {"calls_per_sample", r.timing().calls_per_sample()},
      {"job_id", best.job_id()},
      {"measurements", best.measurements()},
      {"other_template_text", best.other_template_text()},
  };
}

std::string FormatBest(const mtune::v1::BestStrategy& best) {
  const auto& r = best.result();
  return absl::StrFormat(
      "best strategy for %s on %s\n"
      "  template  %s\n"
      "  knobs     %s\n"
      "  speed     %.1f GFLOP/s, %.1f GB/s, median %s (cv %.1f%%)\n"
      "  roofline  %s\n",
      best.problem(), best.target().id(), best.candidate().template_name(),
      best.candidate().canonical_json(), r.gflops(), r.gbps(), DurationText(r.timing().median_s()),
      r.timing().cv() * 100, RooflineText(best.problem(), r)) +
         (best.other_template_text()
              // Confirmation would refuse it: only a new job measures its knobs again.
              ? absl::StrFormat("  note      measured with another text of template %s than the "
                                "coordinator's (another mtune build): `mtune submit --problem %s` "
                                "measures its knobs with today's text first\n",
                                best.candidate().template_name(), best.problem())
              : std::string()) +
         (best.measurements() > 1
              ? absl::StrFormat("  measured  %u times; the figures above are their median\n",
                                best.measurements())
          : best.measurements() == 1 && !best.other_template_text()
              // One timing may be a fast minute of a shared host: say how to check it.
              ? absl::StrFormat("  measured  once (`mtune confirm --problem %s` measures the best "
                                "few again)\n",
                                best.problem())
              : std::string());
}

std::string FormatJobLine(const mtune::v1::Job& job) {
  // A confirmation job's best is the best of its re-measurements, not a search's.
  std::string line = absl::StrFormat("job %d%s %s: %u/%u trials, %u failed", job.id(),
                                     job.spec().confirm_top() > 0 ? " (confirmation)" : "",
                                     StateName(job.state()), job.trials_done(), job.trials_total(),
                                     job.trials_failed());
  for (const auto& b : job.best())
    absl::StrAppendFormat(&line, "; %s best %s (%.2f of roofline)", b.problem(),
                          FigureText(b.problem(), b.result()), b.result().fraction_of_roofline());
  if (!job.message().empty()) absl::StrAppend(&line, " [", job.message(), "]");
  return line;
}

std::string FormatJobs(const mtune::v1::ListJobsResponse& jobs) {
  if (jobs.jobs().empty()) return "no jobs\n";
  constexpr const char* kRow = "%-6s %-10s %-11s %-7s %-10s %-16s  %s\n";
  std::string out = absl::StrFormat(kRow, "job", "state", "trials", "failed", "search",
                                    "created (UTC)", "problems");
  for (const mtune::v1::Job& job : jobs.jobs()) {
    const auto& problems = job.spec().problems();
    std::string what = problems.empty() ? "-" : problems[0];
    if (problems.size() > 1) absl::StrAppend(&what, " and ", problems.size() - 1, " more");
    if (job.spec().confirm_top() > 0) absl::StrAppend(&what, " (confirmation)");
    absl::StrAppendFormat(
        &out, kRow, absl::StrCat(job.id()), StateName(job.state()),
        absl::StrFormat("%u/%u", job.trials_done(), job.trials_total()), absl::StrCat(job.trials_failed()),
        job.spec().search().empty() ? "-" : job.spec().search(),
        absl::FormatTime("%Y-%m-%d %H:%M", absl::FromUnixSeconds(job.created_unix_s()), absl::UTCTimeZone()),
        what);
  }
  return out;
}

std::string FitToWidth(const std::string& line, size_t width) {
  if (line.size() <= width) return line;
  if (width <= 3) return line.substr(0, width);
  return line.substr(0, width - 3) + "...";
}

bool NewProgressStep(uint32_t last_done, uint32_t done, uint32_t total, uint32_t steps) {
  if (total == 0 || steps == 0) return done != last_done;
  auto step = [&](uint32_t d) { return static_cast<uint64_t>(std::min(d, total)) * steps / total; };
  return step(done) != step(last_done);
}

std::string ProgressBar(uint32_t done, uint32_t total, int width) {
  int filled = total == 0 ? 0 : static_cast<int>(static_cast<double>(width) * done / total);
  if (filled > width) filled = width;
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '.'), "]");
}

std::string FormatResults(const mtune::v1::ListResultsResponse& results) {
  const int key_width = ProblemColumnWidth(results.results(), 34);
  std::string out =
      absl::StrFormat("%-6s %-*s %-17s %10s %8s %8s %12s  %s\n", "job", key_width, "problem",
                      "status", "GFLOP/s", "GB/s", "roof", "median", "knobs");
  for (const auto& t : results.results()) {
    const auto& r = t.result();
    absl::StrAppendFormat(&out, "%-6d %-*s %-17s %10.1f %8.1f %8.2f %12s  %s\n", t.job_id(),
                          key_width, t.problem(), mtune::v1::StatusWord(r.status()), r.gflops(),
                          r.gbps(), r.fraction_of_roofline(), DurationText(r.timing().median_s()),
                          t.candidate().canonical_json());
  }
  return out;
}

std::string FormatWorkers(const mtune::v1::ListWorkersResponse& workers) {
  std::string out = absl::StrFormat("%-24s %-5s %-6s %8s %6s %10s  %s\n", "name", "cpu", "state",
                                    "peak", "tasks", "seen_ago_s", "target");
  for (const auto& w : workers.workers()) {
    absl::StrAppendFormat(&out, "%-24s %-5d %-6s %8.1f %6u %10.1f  %s\n", w.name(), w.cpu(),
                          w.state(), w.calibration().peak_gflops_f32(), w.tasks_done(),
                          w.last_seen_s_ago(), w.target().id());
    if (const std::string bf16_peak = worker::Bf16PeakText(w.calibration()); !bf16_peak.empty())
      absl::StrAppend(&out, "    ", bf16_peak, " (the peak of bf16 problems)\n");
    // The memory ceilings of its rooflines, per level: copy, and read where measured.
    if (w.calibration().bandwidth().empty()) continue;
    out += "    GB/s copy / read:";
    bool streaming = false, several_streams = false;
    // " x8" where the fastest loop walked 8 streams side by side (0: not recorded, 1: one).
    auto streams = [&several_streams](uint32_t count) {
      several_streams |= count > 1;
      return count > 1 ? absl::StrCat("x", count) : std::string();
    };
    for (const auto& level : w.calibration().bandwidth()) {
      absl::StrAppendFormat(&out, "  %s %.1f%s%s", level.level(), level.gbps(),
                            level.streaming_stores() ? "*" : "", streams(level.copy_streams()));
      if (level.read_gbps() > 0)
        absl::StrAppendFormat(&out, " / %.1f%s", level.read_gbps(), streams(level.read_streams()));
      streaming |= level.streaming_stores();
    }
    out += "\n";
    if (streaming) out += "    (* copied faster with streaming stores than with ordinary ones)\n";
    if (several_streams) out += "    (xN: faster over N streams side by side than over one)\n";
  }
  return out;
}

nlohmann::json WorkersToJson(const mtune::v1::ListWorkersResponse& workers) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& w : workers.workers()) {
    const mtune::v1::Calibration& c = w.calibration();
    nlohmann::json levels = nlohmann::json::array();
    for (const auto& level : c.bandwidth())
      levels.push_back({{"level", level.level()},
                        {"gbps", level.gbps()},
                        {"read_gbps", level.read_gbps()},
                        {"streaming_stores", level.streaming_stores()},
                        {"copy_streams", level.copy_streams()},
                        {"read_streams", level.read_streams()},
                        {"working_set_bytes", level.working_set_bytes()},
                        {"capacity_bytes", level.capacity_bytes()}});
    out.push_back({{"name", w.name()},
                   {"cpu", w.cpu()},
                   {"state", w.state()},
                   {"current_task_id", w.current_task_id()},
                   {"last_seen_s_ago", w.last_seen_s_ago()},
                   {"tasks_done", w.tasks_done()},
                   {"target",
                    {{"id", w.target().id()},
                     {"kind", w.target().kind()},
                     {"triple", w.target().triple()},
                     {"cpu", w.target().cpu()},
                     {"features", w.target().features()}}},
                   {"calibration",
                    {{"peak_gflops_f32", c.peak_gflops_f32()},
                     {"peak_gflops_bf16_dot", c.peak_gflops_bf16_dot()},
                     {"peak_gflops_amx_bf16", c.peak_gflops_amx_bf16()},
                     {"peaks_measured_unix_s", c.peaks_measured_unix_s()},
                     {"duration_s", c.duration_s()},
                     {"bandwidth", levels}}}});
  }
  return out;
}

std::string FormatProgress(const mtune::v1::Job& job) {
  if (job.progress().empty()) return "";
  const int key_width = ProblemColumnWidth(job.progress(), 40);
  std::string out = absl::StrFormat("  %-*s %13s %7s %24s  %s\n", key_width, "problem", "trials",
                                    "failed", "best (trial)", "stopped");
  for (const auto& p : job.progress()) {
    const std::string trials = p.trials_planned() > 0
                                   ? absl::StrCat(p.trials_done(), "/", p.trials_planned())
                                   : absl::StrCat(p.trials_done());
    // A coordinator older than best_figure sends GFLOP/s only.
    const bool has_figure = !p.unit().empty();
    const double figure = has_figure ? p.best_figure() : p.best_gflops();
    const std::string best =
        figure > 0 ? absl::StrFormat("%.1f %s (#%u)", figure, has_figure ? p.unit() : "GFLOP/s",
                                     p.best_trial())
                   : std::string("-");
    std::string note = p.stopped();
    if (p.warm_start_seeds() > 0)
      note = absl::StrCat(note, note.empty() ? "" : "; ", p.warm_start_seeds(), " warm-start seeds");
    if (p.warm_start_prior() > 0)
      note = absl::StrCat(note, note.empty() ? "" : "; ", "model prior: ", p.warm_start_prior(),
                          " stored results of nearest problems");
    if (p.estimated_start()) {
      const char* start = job.spec().search() == "genetic"
                              ? "genetic's first generation is the kernel estimate's best candidates"
                          : p.warm_start_prior() > 0 ? "the kernel estimate weighs the model's first batch"
                                                     : "model starts from the kernel estimate's best candidates";
      note = absl::StrCat(note, note.empty() ? "" : "; ", start);
    }
    if (!p.waiting_for().empty())
      note = absl::StrCat(note, note.empty() ? "" : "; ", "waiting for ", p.waiting_for());
    out += absl::StrFormat("  %-*s %13s %7u %24s  %s\n", key_width, p.problem(), trials,
                           p.trials_failed(), best, note);
  }
  return out;
}

std::string FormatTemplates(const mtune::v1::Job& job) {
  const auto& spec = job.spec();
  if (spec.problem_templates_size() != spec.problems_size()) return "";
  std::map<std::string, std::string> reasons;
  for (const auto& p : job.progress()) reasons[p.problem()] = p.template_reason();
  const int key_width = ProblemColumnWidth(job.progress(), 40);
  std::string out;
  for (int i = 0; i < spec.problems_size(); ++i) {
    absl::StrAppendFormat(&out, "  %-*s template %s", key_width, spec.problems(i), spec.problem_templates(i));
    if (const std::string& why = reasons[spec.problems(i)]; !why.empty()) absl::StrAppend(&out, " (", why, ")");
    if (spec.problem_registers_size() == spec.problems_size())
      absl::StrAppendFormat(&out, "; register tiles for %u vector registers of %u bytes",
                            spec.problem_registers(i).count(), spec.problem_registers(i).bytes());
    out += "\n";
  }
  return out;
}

std::string FormatConvergence(const mtune::v1::ConvergenceResponse& convergence, int width,
                              int height) {
  std::string out;
  for (const auto& problem : convergence.problems()) {
    // GFLOP/s, or GB/s for a problem without arithmetic; a coordinator older than
    // `figures` sends GFLOP/s only.
    const bool has_figures = !problem.unit().empty();
    const auto& values = has_figures ? problem.figures() : problem.gflops();
    const std::string unit = has_figures ? problem.unit() : "GFLOP/s";
    const int n = values.size();
    out += absl::StrFormat("%s: %d trials\n", problem.problem(), n);
    std::vector<double> best(n);
    double top = 0;
    for (int i = 0; i < n; ++i) {
      top = std::max(top, values[i]);
      best[i] = top;
    }
    if (top <= 0) {
      out += "  no successful trial yet\n\n";
      continue;
    }
    const int cols = std::max(1, std::min(width, n));
    std::vector<std::string> grid(height, std::string(cols, ' '));
    auto row_of = [&](double v) {
      return height - 1 - static_cast<int>(std::lround(v / top * (height - 1)));
    };
    for (int i = 0; i < n; ++i) {
      const int col = static_cast<int>(static_cast<int64_t>(i) * cols / n);
      if (values[i] > 0 && grid[row_of(values[i])][col] == ' ')
        grid[row_of(values[i])][col] = '.';
    }
    for (int col = 0; col < cols; ++col) {
      // The best so far at the last trial of the column.
      const int last = std::min(n - 1, static_cast<int>((static_cast<int64_t>(col + 1) * n - 1) / cols));
      if (best[last] > 0) grid[row_of(best[last])][col] = '*';
    }
    for (int r = 0; r < height; ++r) {
      const double value = top * (height - 1 - r) / (height - 1);
      out += absl::StrFormat("  %8.1f |%s\n", value, grid[r]);
    }
    out += absl::StrFormat("  %8s +%s\n", unit, std::string(cols, '-'));
    const std::string last_label = absl::StrCat(n);
    out += absl::StrFormat("  %8s  1%s%s  (trial)\n", "",
                           std::string(std::max<int>(1, cols - 1 - last_label.size()), ' '),
                           last_label);
    std::string improvements;
    double seen = 0;
    for (int i = 0; i < n; ++i) {
      if (values[i] > seen) {
        seen = values[i];
        improvements += absl::StrFormat(" #%d:%.1f", i + 1, seen);
      }
    }
    out += "  improvements" + improvements + "\n";
    auto reach = [&](double fraction) {
      for (int i = 0; i < n; ++i)
        if (best[i] >= fraction * top) return i + 1;
      return n;
    };
    out += absl::StrFormat("  95%% of the best at trial %d, 99%% at trial %d, best %.1f %s\n\n",
                           reach(0.95), reach(0.99), top, unit);
  }
  return out;
}

}  // namespace mtune::client
