#include "client/format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

std::string StatusName(mtune::v1::ResultStatus status) {
  std::string name = mtune::v1::ResultStatus_Name(status);
  const std::string prefix = "RESULT_STATUS_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

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
      {"cv", r.timing().cv()},
      {"job_id", best.job_id()},
  };
}

std::string FormatBest(const mtune::v1::BestStrategy& best) {
  const auto& r = best.result();
  return absl::StrFormat(
      "best strategy for %s on %s\n"
      "  template  %s\n"
      "  knobs     %s\n"
      "  speed     %.1f GFLOP/s, %.1f GB/s, median %.3f ms (cv %.1f%%)\n"
      "  roofline  %.2f of %.1f GFLOP/s (footprint fits %s)\n",
      best.problem(), best.target().id(), best.candidate().template_name(),
      best.candidate().canonical_json(), r.gflops(), r.gbps(), r.timing().median_s() * 1e3,
      r.timing().cv() * 100, r.fraction_of_roofline(), r.roofline_gflops(),
      r.roofline_level().empty() ? "?" : r.roofline_level());
}

std::string FormatJobLine(const mtune::v1::Job& job) {
  std::string line = absl::StrFormat("job %d %s: %u/%u trials, %u failed", job.id(),
                                     StateName(job.state()), job.trials_done(), job.trials_total(),
                                     job.trials_failed());
  for (const auto& b : job.best())
    absl::StrAppendFormat(&line, "; %s best %.1f GFLOP/s (%.2f of roofline)", b.problem(),
                          b.result().gflops(), b.result().fraction_of_roofline());
  if (!job.message().empty()) absl::StrAppend(&line, " [", job.message(), "]");
  return line;
}

std::string ProgressBar(uint32_t done, uint32_t total, int width) {
  int filled = total == 0 ? 0 : static_cast<int>(static_cast<double>(width) * done / total);
  if (filled > width) filled = width;
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '.'), "]");
}

std::string FormatResults(const mtune::v1::ListResultsResponse& results) {
  std::string out = absl::StrFormat("%-6s %-34s %-17s %10s %8s %10s  %s\n", "job", "problem",
                                    "status", "GFLOP/s", "roof", "median_ms", "knobs");
  for (const auto& t : results.results()) {
    const auto& r = t.result();
    absl::StrAppendFormat(&out, "%-6d %-34s %-17s %10.1f %8.2f %10.3f  %s\n", t.job_id(),
                          t.problem(), StatusName(r.status()), r.gflops(),
                          r.fraction_of_roofline(), r.timing().median_s() * 1e3,
                          t.candidate().canonical_json());
  }
  return out;
}

std::string FormatWorkers(const mtune::v1::ListWorkersResponse& workers) {
  std::string out = absl::StrFormat("%-24s %-5s %-6s %8s %6s %10s  %s\n", "name", "cpu", "state",
                                    "peak", "tasks", "seen_ago_s", "target");
  for (const auto& w : workers.workers())
    absl::StrAppendFormat(&out, "%-24s %-5d %-6s %8.1f %6u %10.1f  %s\n", w.name(), w.cpu(),
                          w.state(), w.calibration().peak_gflops_f32(), w.tasks_done(),
                          w.last_seen_s_ago(), w.target().id());
  return out;
}

}  // namespace mtune::client
