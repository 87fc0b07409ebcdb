// How the CLI shows jobs, results and best strategies: tables, JSON, progress.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "proto/mtune.pb.h"

namespace mtune::client {

// JSON of a best strategy: problem, target, template, knobs (object), script and figures.
nlohmann::json BestToJson(const mtune::v1::BestStrategy& best);

// A kernel's median time: "12.514 ms", or in microseconds below a millisecond.
std::string DurationText(double seconds);

// "0.66 of 103.6 GFLOP/s (footprint fits L2)", or for a problem without arithmetic
// (transpose, copy) "0.66 of the copy bandwidth at its footprint, 93.0 GB/s (fits L2)";
// a fresh result of a reduction or depthwise conv inside the caches also names the
// bandwidth of its reads and writes that bounds it.
std::string RooflineText(const std::string& problem_key, const mtune::v1::Result& result);

// A few human-readable lines about a best strategy.
std::string FormatBest(const mtune::v1::BestStrategy& best);

// One line: state, trials, failures and best so far.
std::string FormatJobLine(const mtune::v1::Job& job);

// A table of jobs as listed (newest first): id, state, trials, search, when it was
// created (UTC) and its problems; "no jobs" when there are none.
std::string FormatJobs(const mtune::v1::ListJobsResponse& jobs);

// `line` cut to `width` columns, ending in "..." when cut (a progress line redrawn in
// place with \r must not wrap: the lines it wrapped onto would stay on the screen).
std::string FitToWidth(const std::string& line, size_t width);

// Whether a progress report at `done` of `total` trials starts a new step of
// `steps` (tenths by default) since one at `last_done`: how often a progress line is
// written where it cannot be redrawn in place (a log), instead of once per trial.
bool NewProgressStep(uint32_t last_done, uint32_t done, uint32_t total, uint32_t steps = 10);

// A progress bar of `width` cells for done/total.
std::string ProgressBar(uint32_t done, uint32_t total, int width = 30);

// A table of trials, best first.
std::string FormatResults(const mtune::v1::ListResultsResponse& results);

// Per problem of a job: trials done and planned, failures, best so far (and the
// trial that found it), why it stopped; empty for a job without progress rows.
std::string FormatProgress(const mtune::v1::Job& job);

// One line per problem: the template it is tuned with and, where the job named none,
// why that one (JobSpec.problem_templates, ProblemProgress.template_reason). Empty
// for a coordinator that does not send them.
std::string FormatTemplates(const mtune::v1::Job& job);

// `mtune explain`: per problem, a text chart of best-so-far GFLOP/s (GB/s for a
// problem without arithmetic) against trial
// (each trial's own figure as '.', the best-so-far line as '*'), then the trials
// that improved the best and the trials to reach 95% and 99% of the final best.
std::string FormatConvergence(const mtune::v1::ConvergenceResponse& convergence, int width = 60,
                              int height = 12);

// A table of workers.
std::string FormatWorkers(const mtune::v1::ListWorkersResponse& workers);

// JSON of the workers (`mtune workers --json`): an array of {name, cpu, state,
// current_task_id, last_seen_s_ago, tasks_done, target {id, kind, triple, cpu,
// features}, calibration {peak_gflops_f32, peak_gflops_bf16_dot, peak_gflops_amx_bf16,
// peaks_measured_unix_s (when the worker last timed the peaks; 0: a worker before
// session 56), duration_s, bandwidth [{level, gbps, read_gbps, streaming_stores,
// copy_streams, read_streams, working_set_bytes, capacity_bytes}]}}.
nlohmann::json WorkersToJson(const mtune::v1::ListWorkersResponse& workers);

}  // namespace mtune::client
