#include "db/store.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "db/clock.h"
#include "db/schema.h"
#include "nlohmann/json.hpp"

namespace mtune::db {
namespace {

namespace v1 = ::mtune::v1;

// The SQL spells these values as literals (so the partial index on OK results
// is usable); make sure they still mean what the SQL assumes.
static_assert(v1::RESULT_STATUS_OK == 1, "SQL uses status = 1 for OK results");
static_assert(v1::JOB_STATE_RUNNING == 1, "SQL uses state = 1 for running jobs");

// ---------------------------------------------------------------------------
// SQL
// ---------------------------------------------------------------------------

constexpr char kInsertJobSql[] =
    "INSERT INTO jobs (template_name, search, trials, seed, state, created_unix_s, time_budget_s, "
    "patience, warm_start, allocation, confirm_top, estimate_l2_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
constexpr char kInsertProblemSql[] =
    "INSERT INTO problems (key, family) VALUES (?, ?) ON CONFLICT (key) DO NOTHING";
constexpr char kInsertJobProblemSql[] =
    "INSERT INTO job_problems (job_id, problem, position, trials_total, template_name, vector_registers, "
    "vector_bytes) VALUES (?, ?, ?, ?, ?, ?, ?)";
constexpr char kFinishRunningJobSql[] =
    "UPDATE jobs SET state = ?, message = ?, finished_unix_s = ? WHERE id = ? AND state = 1";
constexpr char kSelectJobStateSql[] = "SELECT state FROM jobs WHERE id = ?";
constexpr char kSelectJobSql[] = R"sql(
SELECT j.template_name, j.search, j.trials, j.seed, j.state, j.message,
       j.created_unix_s, j.finished_unix_s,
       (SELECT COALESCE(SUM(jp.trials_total), 0) FROM job_problems jp WHERE jp.job_id = j.id),
       (SELECT count(*) FROM results r WHERE r.job_id = j.id),
       (SELECT count(*) FROM results r WHERE r.job_id = j.id AND r.status <> 1),
       j.time_budget_s, j.patience, j.warm_start, j.allocation, j.confirm_top, j.estimate_l2_bytes
FROM jobs j
WHERE j.id = ?)sql";
constexpr char kSelectJobProblemsSql[] =
    "SELECT problem, template_name, vector_registers, vector_bytes FROM job_problems WHERE job_id = ? "
    "ORDER BY position";
constexpr char kSelectJobIdsSql[] = "SELECT id FROM jobs ORDER BY id";
constexpr char kSelectJobIdsInStateSql[] = "SELECT id FROM jobs WHERE state = ? ORDER BY id";

constexpr char kUpsertTargetSql[] = R"sql(
INSERT INTO targets (id, kind, triple, cpu, features, calibration, updated_unix_s)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
  kind = excluded.kind, triple = excluded.triple, cpu = excluded.cpu,
  features = excluded.features, calibration = excluded.calibration,
  updated_unix_s = excluded.updated_unix_s)sql";
constexpr char kSelectTargetSql[] =
    "SELECT kind, triple, cpu, features, calibration FROM targets WHERE id = ?";

constexpr char kCheckResultRefsSql[] = R"sql(
SELECT (SELECT count(*) FROM jobs WHERE id = ?1),
       (SELECT count(*) FROM job_problems WHERE job_id = ?1 AND problem = ?2),
       (SELECT count(*) FROM targets WHERE id = ?3))sql";
constexpr char kInsertCandidateSql[] =
    "INSERT INTO candidates (hash, template_name, canonical_json, script) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (hash) DO NOTHING";
constexpr char kSelectCandidateSql[] =
    "SELECT template_name, canonical_json FROM candidates WHERE hash = ?";
constexpr char kInsertResultSql[] = R"sql(
INSERT INTO results (
  job_id, problem, target_id, candidate_hash, worker_name, status, error,
  median_s, p25_s, p75_s, min_s, cv, repetitions, warmup, calls_per_sample,
  gflops, gbps, roofline_gflops, roofline_level, fraction_of_roofline,
  compile_s, verify_s, max_rel_error, total_s, created_unix_s)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (job_id, problem, candidate_hash) DO NOTHING)sql";
constexpr char kHasResultSql[] =
    "SELECT count(*) FROM results WHERE job_id = ? AND problem = ? AND candidate_hash = ?";
constexpr char kResultHashesSql[] =
    "SELECT candidate_hash FROM results WHERE job_id = ? AND problem = ? ORDER BY id";

// Columns every trial-reading query selects first, in the order of TrialColumn;
// best-strategy queries append kBestExtraColumns. `r` = results, `c` =
// candidates, `t` = targets. A macro because SQL text is assembled at compile time.
#define MTUNE_DB_TRIAL_COLUMNS                                                           \
  "r.job_id, r.problem, r.target_id, r.candidate_hash, r.worker_name, r.status, r.error, " \
  "r.median_s, r.p25_s, r.p75_s, r.min_s, r.cv, r.repetitions, r.warmup, "                \
  "r.calls_per_sample, "                                                                   \
  "r.gflops, r.gbps, r.roofline_gflops, r.roofline_level, r.fraction_of_roofline, "       \
  "r.compile_s, r.verify_s, r.max_rel_error, r.total_s, r.created_unix_s, "               \
  "c.template_name, c.canonical_json"
#define MTUNE_DB_BEST_COLUMNS                                                         \
  MTUNE_DB_TRIAL_COLUMNS ", c.script, t.kind, t.triple, t.cpu, t.features,"              \
  " (SELECT COUNT(*) FROM results x WHERE x.problem = r.problem"                         \
  " AND x.target_id = r.target_id AND x.candidate_hash = r.candidate_hash AND x.status = 1)"

enum TrialColumn {
  kJobId,
  kProblem,
  kTargetId,
  kCandidateHash,
  kWorkerName,
  kStatus,
  kError,
  kMedianS,
  kP25S,
  kP75S,
  kMinS,
  kCv,
  kRepetitions,
  kWarmup,
  kCallsPerSample,
  kGflops,
  kGbps,
  kRooflineGflops,
  kRooflineLevel,
  kFractionOfRoofline,
  kCompileS,
  kVerifyS,
  kMaxRelError,
  kTotalS,
  kCreatedUnixS,
  kTemplateName,
  kCanonicalJson,
  // Best-strategy queries only.
  kScript,
  kTargetKind,
  kTargetTriple,
  kTargetCpu,
  kTargetFeatures,
  kMeasurements,
};

// ?1 job (0 = any), ?2 problem ('' = any), ?3 limit (-1 = all). Failures sort
// after every OK result regardless of the (meaningless) gflops they carry. GB/s
// orders the results of problems without arithmetic (0 GFLOP/s: transpose, copy).
constexpr char kListResultsSql[] =
    "SELECT " MTUNE_DB_TRIAL_COLUMNS
    " FROM results r JOIN candidates c ON c.hash = r.candidate_hash"
    " WHERE (?1 = 0 OR r.job_id = ?1) AND (?2 = '' OR r.problem = ?2)"
    " ORDER BY r.status <> 1, CASE WHEN r.status = 1 THEN r.gflops END DESC,"
    " CASE WHEN r.status = 1 THEN r.gbps END DESC, r.id"
    " LIMIT ?3";

// The ranking that defines "best", repeated in each best query. A candidate measured
// more than once (a warm start re-proposes the stored bests of a problem, so later
// jobs measure them again) counts with its median result, the lower one of an even
// count: on a host whose speed drifts from minute to minute, one fast minute must not
// decide the best for good (a matmul's stored 192.6 GFLOP/s measured 163.7 when its
// next job re-proposed it, and 150-152 in the bench). Among those per-candidate
// medians: highest GFLOP/s, then lowest median time (what ranks a transpose or a
// copy, whose GFLOP/s are 0), then the earliest result (stable answers). A
// candidate's median is by GFLOP/s, then GB/s for the same reason. `SCOPE` selects
// the results `b` of one problem (and target, or job); MTUNE_DB_CANDIDATE_MEDIANS
// yields each candidate's median result `m`, best first, and MTUNE_DB_BEST_RESULT_ID
// the id of the first.
#define MTUNE_DB_CANDIDATE_MEDIANS(SCOPE)                                                 \
  "(SELECT b.id, b.gflops, b.median_s,"                                                  \
  " ROW_NUMBER() OVER (PARTITION BY b.candidate_hash, b.target_id"                       \
  " ORDER BY b.gflops, b.gbps, b.id) AS position,"                                       \
  " COUNT(*) OVER (PARTITION BY b.candidate_hash, b.target_id) AS measured"              \
  " FROM results b WHERE " SCOPE " AND b.status = 1) m"                                  \
  " WHERE m.position = (m.measured + 1) / 2"                                             \
  " ORDER BY m.gflops DESC, m.median_s, m.id"
#define MTUNE_DB_BEST_RESULT_ID(SCOPE) \
  "(SELECT m.id FROM " MTUNE_DB_CANDIDATE_MEDIANS(SCOPE) " LIMIT 1)"

// ?1 problem, ?2 limit (-1 = all): one row per (candidate, target), its median
// result, best first by the ranking above.
constexpr char kRankedCandidatesSql[] =
    "SELECT " MTUNE_DB_TRIAL_COLUMNS
    " FROM (SELECT m.id FROM " MTUNE_DB_CANDIDATE_MEDIANS("b.problem = ?1") " LIMIT ?2) ranked"
    " JOIN results r ON r.id = ranked.id JOIN candidates c ON c.hash = r.candidate_hash"
    " ORDER BY r.gflops DESC, r.median_s, r.id";

constexpr char kBestForProblemSql[] =
    "SELECT " MTUNE_DB_BEST_COLUMNS
    " FROM results r JOIN candidates c ON c.hash = r.candidate_hash"
    " JOIN targets t ON t.id = r.target_id"
    " WHERE r.id = " MTUNE_DB_BEST_RESULT_ID("b.problem = ?");
constexpr char kBestForProblemOnTargetSql[] =
    "SELECT " MTUNE_DB_BEST_COLUMNS
    " FROM results r JOIN candidates c ON c.hash = r.candidate_hash"
    " JOIN targets t ON t.id = r.target_id"
    " WHERE r.id = " MTUNE_DB_BEST_RESULT_ID("b.problem = ? AND b.target_id = ?");
// Best per problem within one job, in the job's problem order (a job measures a
// candidate once, so this is its fastest result).
constexpr char kBestPerJobProblemSql[] =
    "SELECT " MTUNE_DB_BEST_COLUMNS
    " FROM job_problems jp"
    " JOIN results r ON r.id = "
    MTUNE_DB_BEST_RESULT_ID("b.job_id = jp.job_id AND b.problem = jp.problem")
    " JOIN candidates c ON c.hash = r.candidate_hash"
    " JOIN targets t ON t.id = r.target_id"
    " WHERE jp.job_id = ? ORDER BY jp.position";
// Best per (problem, target) over everything stored.
constexpr char kAllBestSql[] =
    "SELECT " MTUNE_DB_BEST_COLUMNS
    " FROM (SELECT DISTINCT problem, target_id FROM results WHERE status = 1) k"
    " JOIN results r ON r.id = "
    MTUNE_DB_BEST_RESULT_ID("b.problem = k.problem AND b.target_id = k.target_id")
    " JOIN candidates c ON c.hash = r.candidate_hash"
    " JOIN targets t ON t.id = r.target_id"
    " ORDER BY r.problem, r.target_id";

#undef MTUNE_DB_BEST_RESULT_ID
#undef MTUNE_DB_CANDIDATE_MEDIANS
#undef MTUNE_DB_BEST_COLUMNS
#undef MTUNE_DB_TRIAL_COLUMNS

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

// Candidate.hash is 16 lowercase hex digits; one spelling only, or the same
// candidate could be stored twice under "ABC..." and "abc...".
bool IsCandidateHash(std::string_view hash) {
  if (hash.size() != 16) return false;
  for (char ch : hash) {
    if (!absl::ascii_isdigit(ch) && !(ch >= 'a' && ch <= 'f')) return false;
  }
  return true;
}

// Rebuilds Candidate.knobs from the canonical JSON, the stored source of truth.
// Strings keep their text; numbers and other values use their JSON spelling
// ("64"), which is the KnobValue canonical text.
absl::StatusOr<std::vector<v1::KnobValue>> KnobsFromJson(const std::string& canonical_json) {
  const nlohmann::json parsed =
      nlohmann::json::parse(canonical_json, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("candidate canonical_json is not a JSON object: ", canonical_json));
  }
  std::vector<v1::KnobValue> knobs;
  for (const auto& [name, value] : parsed.items()) {  // std::map order: sorted by name
    v1::KnobValue& knob = knobs.emplace_back();
    knob.set_name(name);
    knob.set_value(value.is_string() ? value.get<std::string>() : value.dump());
  }
  return knobs;
}

absl::StatusOr<v1::TrialResult> ReadTrial(const Statement& row) {
  v1::TrialResult trial;
  trial.set_job_id(row.ColumnInt64(kJobId));
  trial.set_problem(row.ColumnText(kProblem));
  trial.set_target_id(row.ColumnText(kTargetId));
  trial.set_worker_name(row.ColumnText(kWorkerName));
  trial.set_created_unix_s(row.ColumnInt64(kCreatedUnixS));

  v1::Candidate& candidate = *trial.mutable_candidate();
  candidate.set_hash(row.ColumnText(kCandidateHash));
  candidate.set_template_name(row.ColumnText(kTemplateName));
  candidate.set_canonical_json(row.ColumnText(kCanonicalJson));
  absl::StatusOr<std::vector<v1::KnobValue>> knobs = KnobsFromJson(candidate.canonical_json());
  if (!knobs.ok()) {
    return absl::DataLossError(absl::StrCat("stored candidate ", candidate.hash(), ": ",
                                            knobs.status().message()));
  }
  for (v1::KnobValue& knob : *knobs) *candidate.add_knobs() = std::move(knob);

  v1::Result& result = *trial.mutable_result();
  result.set_status(static_cast<v1::ResultStatus>(row.ColumnInt64(kStatus)));
  result.set_error(row.ColumnText(kError));
  v1::Timing& timing = *result.mutable_timing();
  timing.set_median_s(row.ColumnDouble(kMedianS));
  timing.set_p25_s(row.ColumnDouble(kP25S));
  timing.set_p75_s(row.ColumnDouble(kP75S));
  timing.set_min_s(row.ColumnDouble(kMinS));
  timing.set_cv(row.ColumnDouble(kCv));
  timing.set_repetitions(static_cast<uint32_t>(row.ColumnInt64(kRepetitions)));
  timing.set_warmup(static_cast<uint32_t>(row.ColumnInt64(kWarmup)));
  timing.set_calls_per_sample(static_cast<uint32_t>(row.ColumnInt64(kCallsPerSample)));
  result.set_gflops(row.ColumnDouble(kGflops));
  result.set_gbps(row.ColumnDouble(kGbps));
  result.set_roofline_gflops(row.ColumnDouble(kRooflineGflops));
  result.set_roofline_level(row.ColumnText(kRooflineLevel));
  result.set_fraction_of_roofline(row.ColumnDouble(kFractionOfRoofline));
  result.set_compile_s(row.ColumnDouble(kCompileS));
  result.set_verify_s(row.ColumnDouble(kVerifyS));
  result.set_max_rel_error(row.ColumnDouble(kMaxRelError));
  result.set_total_s(row.ColumnDouble(kTotalS));
  return trial;
}

absl::StatusOr<v1::BestStrategy> ReadBest(const Statement& row) {
  absl::StatusOr<v1::TrialResult> trial = ReadTrial(row);
  if (!trial.ok()) return trial.status();
  v1::BestStrategy best;
  best.set_problem(trial->problem());
  best.set_job_id(trial->job_id());
  *best.mutable_candidate() = std::move(*trial->mutable_candidate());
  *best.mutable_result() = std::move(*trial->mutable_result());
  best.set_script(row.ColumnText(kScript));
  v1::Target& target = *best.mutable_target();
  target.set_id(trial->target_id());
  target.set_kind(row.ColumnText(kTargetKind));
  target.set_triple(row.ColumnText(kTargetTriple));
  target.set_cpu(row.ColumnText(kTargetCpu));
  target.set_features(row.ColumnText(kTargetFeatures));
  best.set_measurements(static_cast<uint32_t>(row.ColumnInt64(kMeasurements)));
  return best;
}

// Steps a best-strategy query to the end.
absl::StatusOr<std::vector<v1::BestStrategy>> ReadAllBest(const StatementLease& statement) {
  std::vector<v1::BestStrategy> rows;
  while (true) {
    absl::StatusOr<bool> has_row = statement->Step();
    if (!has_row.ok()) return has_row.status();
    if (!*has_row) return rows;
    absl::StatusOr<v1::BestStrategy> best = ReadBest(*statement);
    if (!best.ok()) return best.status();
    rows.push_back(std::move(*best));
  }
}

absl::Status ValidateTrial(const v1::TrialResult& trial) {
  if (trial.job_id() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("result has invalid job id ", trial.job_id()));
  }
  if (trial.problem().empty()) return absl::InvalidArgumentError("result has no problem");
  if (trial.target_id().empty()) return absl::InvalidArgumentError("result has no target id");
  const v1::Candidate& candidate = trial.candidate();
  if (!IsCandidateHash(candidate.hash())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "candidate hash '", candidate.hash(), "' is not 16 lowercase hex digits"));
  }
  if (candidate.template_name().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("candidate ", candidate.hash(), " has no template name"));
  }
  if (absl::Status status = KnobsFromJson(candidate.canonical_json()).status(); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("candidate ", candidate.hash(), ": ", status.message()));
  }
  if (trial.result().status() == v1::RESULT_STATUS_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("result for candidate ", candidate.hash(), " has no status"));
  }
  return absl::OkStatus();
}

// Reads a single-integer row.
absl::StatusOr<int64_t> StepInt(const StatementLease& statement) {
  absl::StatusOr<bool> row = statement->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError("query returned no row");
  return statement->ColumnInt64(0);
}

// Every row of a bound trial-reading statement (MTUNE_DB_TRIAL_COLUMNS), in order.
absl::StatusOr<std::vector<v1::TrialResult>> ReadTrials(Statement& select) {
  std::vector<v1::TrialResult> trials;
  while (true) {
    absl::StatusOr<bool> row = select.Step();
    if (!row.ok()) return row.status();
    if (!*row) return trials;
    absl::StatusOr<v1::TrialResult> trial = ReadTrial(select);
    if (!trial.ok()) return trial.status();
    trials.push_back(std::move(*trial));
  }
}

}  // namespace

std::string_view ProblemFamily(std::string_view problem_key) {
  return problem_key.substr(0, problem_key.find(':'));
}

// ---------------------------------------------------------------------------
// Open
// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      Connection::Open(path, Connection::Mode::kReadWriteCreate);
  if (!connection.ok()) return connection.status();
  Connection& db = **connection;
  // Per connection and off by default in SQLite; the schema relies on it.
  if (absl::Status status = db.Exec("PRAGMA foreign_keys = ON"); !status.ok()) return status;
  // Migrate before switching to WAL: the journal mode is stored in the file,
  // and a file that turns out not to be ours must be left as it was.
  if (absl::Status status = Migrate(db, StoreSchema()); !status.ok()) return status;
  {
    // WAL lets offline readers (the `mtune` CLI) query while the coordinator writes.
    absl::StatusOr<StatementLease> wal = db.Prepare("PRAGMA journal_mode = WAL");
    if (!wal.ok()) return wal.status();
    absl::StatusOr<bool> row = (*wal)->Step();
    if (!row.ok()) return row.status();
    const std::string mode = *row ? (*wal)->ColumnText(0) : "";
    if (mode != "wal" && !(path == ":memory:" && mode == "memory")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot switch ", path, " to WAL journal mode (got '", mode,
          "'); is it on a file system without shared memory, such as NFS?"));
    }
  }
  // NORMAL instead of FULL: in WAL mode a committed transaction still survives
  // a crash of this process (it is in the WAL file, which the OS holds); only an
  // OS crash or power loss can lose the last few transactions, and never
  // corrupts the file. Results are re-measurable, the fsync per commit is not free.
  if (absl::Status status = db.Exec("PRAGMA synchronous = NORMAL"); !status.ok()) return status;
  return std::unique_ptr<Store>(new Store(std::move(*connection), path));
}

Store::~Store() = default;

// ---------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------

absl::StatusOr<int64_t> Store::CreateJob(
    const v1::JobSpec& spec,
    const std::vector<std::pair<std::string, uint32_t>>& problems_with_trials_total) {
  if (problems_with_trials_total.empty()) {
    return absl::InvalidArgumentError("a job needs at least one problem");
  }
  std::set<std::string_view> seen;
  for (const auto& [problem, trials_total] : problems_with_trials_total) {
    if (ProblemFamily(problem).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("problem key '", problem, "' has no op family"));
    }
    if (!seen.insert(problem).second) {
      return absl::InvalidArgumentError(absl::StrCat("problem '", problem, "' listed twice"));
    }
  }
  if (!spec.problems().empty()) {
    bool same = spec.problems_size() == static_cast<int>(problems_with_trials_total.size());
    for (int i = 0; same && i < spec.problems_size(); ++i) {
      same = spec.problems(i) == problems_with_trials_total[i].first;
    }
    if (!same) {
      return absl::InvalidArgumentError(
          "JobSpec.problems differs from the problem list given with trial totals");
    }
  }
  if (spec.problem_templates_size() != 0 &&
      spec.problem_templates_size() != static_cast<int>(problems_with_trials_total.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "JobSpec.problem_templates names ", spec.problem_templates_size(), " templates for ",
        problems_with_trials_total.size(), " problems"));
  }
  if (spec.problem_registers_size() != 0 &&
      spec.problem_registers_size() != static_cast<int>(problems_with_trials_total.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "JobSpec.problem_registers gives ", spec.problem_registers_size(), " register files for ",
        problems_with_trials_total.size(), " problems"));
  }

  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<Transaction> transaction =
      Transaction::Begin(*connection_, Transaction::Kind::kImmediate);
  if (!transaction.ok()) return transaction.status();
  {
    absl::StatusOr<StatementLease> insert = connection_->Prepare(kInsertJobSql);
    if (!insert.ok()) return insert.status();
    (*insert)->BindAll(spec.template_name(), spec.search(), spec.trials(),
                       static_cast<int64_t>(spec.seed()),  // same bits; read back as uint64
                       static_cast<int>(v1::JOB_STATE_RUNNING), NowUnixSeconds(), spec.time_budget_s(),
                       spec.patience(), spec.warm_start() ? 1 : 0, spec.allocation(), spec.confirm_top(),
                       static_cast<int64_t>(spec.estimate_l2_bytes()));
    if (absl::Status status = (*insert)->Run(); !status.ok()) return status;
  }
  const int64_t job_id = connection_->LastInsertRowId();
  for (size_t position = 0; position < problems_with_trials_total.size(); ++position) {
    const auto& [problem, trials_total] = problems_with_trials_total[position];
    absl::StatusOr<StatementLease> insert_problem = connection_->Prepare(kInsertProblemSql);
    if (!insert_problem.ok()) return insert_problem.status();
    (*insert_problem)->BindAll(problem, ProblemFamily(problem));
    if (absl::Status status = (*insert_problem)->Run(); !status.ok()) return status;

    absl::StatusOr<StatementLease> insert_link = connection_->Prepare(kInsertJobProblemSql);
    if (!insert_link.ok()) return insert_link.status();
    const v1::VectorRegisterFile registers = spec.problem_registers_size() == 0
                                                 ? v1::VectorRegisterFile()
                                                 : spec.problem_registers(static_cast<int>(position));
    (*insert_link)->BindAll(job_id, problem, static_cast<int64_t>(position), trials_total,
                            spec.problem_templates_size() == 0
                                ? std::string()
                                : spec.problem_templates(static_cast<int>(position)),
                            static_cast<int64_t>(registers.count()), static_cast<int64_t>(registers.bytes()));
    if (absl::Status status = (*insert_link)->Run(); !status.ok()) return status;
  }
  if (absl::Status status = transaction->Commit(); !status.ok()) return status;
  return job_id;
}

absl::Status Store::FinishJob(int64_t job_id, v1::JobState state, const std::string& message) {
  if (state != v1::JOB_STATE_SUCCEEDED && state != v1::JOB_STATE_CANCELLED &&
      state != v1::JOB_STATE_FAILED) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot finish job ", job_id, " in state ", v1::JobState_Name(state)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> update = connection_->Prepare(kFinishRunningJobSql);
  if (!update.ok()) return update.status();
  (*update)->BindAll(static_cast<int>(state), message, NowUnixSeconds(), job_id);
  if (absl::Status status = (*update)->Run(); !status.ok()) return status;
  if (connection_->Changes() == 1) return absl::OkStatus();

  // Nothing updated: say whether the job is missing or already over.
  absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectJobStateSql);
  if (!select.ok()) return select.status();
  (*select)->BindAll(job_id);
  absl::StatusOr<bool> row = (*select)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("job ", job_id, " does not exist"));
  const auto current = static_cast<v1::JobState>((*select)->ColumnInt64(0));
  return absl::FailedPreconditionError(
      absl::StrCat("job ", job_id, " has already ended (", v1::JobState_Name(current), ")"));
}

absl::StatusOr<v1::Job> Store::GetJob(int64_t job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  // One read transaction: counters and best rows from the same snapshot.
  absl::StatusOr<Transaction> transaction =
      Transaction::Begin(*connection_, Transaction::Kind::kDeferred);
  if (!transaction.ok()) return transaction.status();

  v1::Job job;
  job.set_id(job_id);
  {
    absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectJobSql);
    if (!select.ok()) return select.status();
    (*select)->BindAll(job_id);
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::NotFoundError(absl::StrCat("job ", job_id, " does not exist"));
    const Statement& r = **select;
    v1::JobSpec& spec = *job.mutable_spec();
    spec.set_template_name(r.ColumnText(0));
    spec.set_search(r.ColumnText(1));
    spec.set_trials(static_cast<uint32_t>(r.ColumnInt64(2)));
    spec.set_seed(static_cast<uint64_t>(r.ColumnInt64(3)));
    job.set_state(static_cast<v1::JobState>(r.ColumnInt64(4)));
    job.set_message(r.ColumnText(5));
    job.set_created_unix_s(r.ColumnInt64(6));
    job.set_finished_unix_s(r.ColumnInt64(7));
    job.set_trials_total(static_cast<uint32_t>(r.ColumnInt64(8)));
    job.set_trials_done(static_cast<uint32_t>(r.ColumnInt64(9)));
    job.set_trials_failed(static_cast<uint32_t>(r.ColumnInt64(10)));
    spec.set_time_budget_s(r.ColumnDouble(11));
    spec.set_patience(static_cast<uint32_t>(r.ColumnInt64(12)));
    spec.set_warm_start(r.ColumnInt64(13) != 0);
    spec.set_allocation(r.ColumnText(14));
    spec.set_confirm_top(static_cast<uint32_t>(r.ColumnInt64(15)));
    spec.set_estimate_l2_bytes(static_cast<uint64_t>(r.ColumnInt64(16)));
  }
  {
    absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectJobProblemsSql);
    if (!select.ok()) return select.status();
    (*select)->BindAll(job_id);
    std::vector<std::string> templates;
    std::vector<v1::VectorRegisterFile> registers;
    while (true) {
      absl::StatusOr<bool> row = (*select)->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      job.mutable_spec()->add_problems((*select)->ColumnText(0));
      templates.push_back((*select)->ColumnText(1));
      registers.emplace_back().set_count(static_cast<uint32_t>((*select)->ColumnInt64(2)));
      registers.back().set_bytes(static_cast<uint32_t>((*select)->ColumnInt64(3)));
    }
    // A job stored before the templates were (schema v3) reads back without them, and
    // one stored before the register files were (v5) without those.
    if (std::none_of(templates.begin(), templates.end(), [](const std::string& t) { return t.empty(); }))
      for (std::string& t : templates) job.mutable_spec()->add_problem_templates(std::move(t));
    if (std::none_of(registers.begin(), registers.end(),
                     [](const v1::VectorRegisterFile& r) { return r.count() == 0 || r.bytes() == 0; }))
      for (const v1::VectorRegisterFile& r : registers) *job.mutable_spec()->add_problem_registers() = r;
  }
  {
    absl::StatusOr<StatementLease> select = connection_->Prepare(kBestPerJobProblemSql);
    if (!select.ok()) return select.status();
    (*select)->BindAll(job_id);
    absl::StatusOr<std::vector<v1::BestStrategy>> best = ReadAllBest(*select);
    if (!best.ok()) return best.status();
    for (v1::BestStrategy& entry : *best) *job.add_best() = std::move(entry);
  }
  if (absl::Status status = transaction->Commit(); !status.ok()) return status;
  return job;
}

absl::StatusOr<std::vector<int64_t>> Store::ListJobIds(std::optional<v1::JobState> only_state) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select =
      connection_->Prepare(only_state.has_value() ? kSelectJobIdsInStateSql : kSelectJobIdsSql);
  if (!select.ok()) return select.status();
  if (only_state.has_value()) (*select)->BindAll(static_cast<int>(*only_state));
  std::vector<int64_t> ids;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return ids;
    ids.push_back((*select)->ColumnInt64(0));
  }
}

// ---------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------

absl::Status Store::UpsertTarget(const v1::Target& target, const v1::Calibration& calibration) {
  if (target.id().empty()) return absl::InvalidArgumentError("target has no id");
  std::string calibration_bytes;
  if (!calibration.SerializeToString(&calibration_bytes)) {
    return absl::InternalError(absl::StrCat("cannot serialize calibration of ", target.id()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> upsert = connection_->Prepare(kUpsertTargetSql);
  if (!upsert.ok()) return upsert.status();
  (*upsert)->BindAll(target.id(), target.kind(), target.triple(), target.cpu(),
                     target.features());
  (*upsert)->BindBlob(6, calibration_bytes);
  (*upsert)->BindInt64(7, NowUnixSeconds());
  return (*upsert)->Run();
}

absl::StatusOr<std::pair<v1::Target, v1::Calibration>> Store::GetTarget(
    const std::string& target_id) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectTargetSql);
  if (!select.ok()) return select.status();
  (*select)->BindAll(target_id);
  absl::StatusOr<bool> row = (*select)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("target '", target_id, "' is not known"));
  std::pair<v1::Target, v1::Calibration> stored;
  v1::Target& target = stored.first;
  target.set_id(target_id);
  target.set_kind((*select)->ColumnText(0));
  target.set_triple((*select)->ColumnText(1));
  target.set_cpu((*select)->ColumnText(2));
  target.set_features((*select)->ColumnText(3));
  if (!stored.second.ParseFromString((*select)->ColumnBlob(4))) {
    return absl::DataLossError(
        absl::StrCat("stored calibration of target '", target_id, "' does not parse"));
  }
  return stored;
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

namespace {
// Group commit gathering (see Store::group_gathered_): a writer that finds the
// previous group began less than kGatherIfBusy ago waits up to kGatherWait, or
// until kGatherMax trials wait, before it begins its transaction.
constexpr std::chrono::microseconds kGatherIfBusy{2000};
constexpr std::chrono::microseconds kGatherWait{1000};
constexpr size_t kGatherMax = 32;
}  // namespace

absl::StatusOr<bool> Store::InsertResult(const v1::TrialResult& trial, const std::string& script) {
  if (absl::Status status = ValidateTrial(trial); !status.ok()) return status;
  PendingInsert mine{TrialToStore{&trial, &script}};
  std::unique_lock<std::mutex> group(group_mu_);
  group_pending_.push_back(&mine);
  if (group_gathering_ && group_pending_.size() >= kGatherMax) group_gathered_.notify_one();
  while (!mine.done) {
    if (group_writing_) {
      // Another thread is committing (or gathering); ours goes into the next
      // group (or is in this one, and `done` tells when it has committed).
      group_done_.wait(group);
      continue;
    }
    group_writing_ = true;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_group_begin_ < kGatherIfBusy && group_pending_.size() < kGatherMax) {
      group_gathering_ = true;
      group_gathered_.wait_until(group, now + kGatherWait,
                                 [&] { return group_pending_.size() >= kGatherMax; });
      group_gathering_ = false;
    }
    last_group_begin_ = std::chrono::steady_clock::now();
    std::vector<PendingInsert*> batch;
    batch.swap(group_pending_);
    group.unlock();
    {
      std::lock_guard<std::mutex> lock(mu_);
      CommitGroupLocked(batch);
    }
    group.lock();
    for (PendingInsert* pending : batch) pending->done = true;
    ++group_stats_.transactions;
    group_stats_.trials += batch.size();
    group_writing_ = false;
    group_done_.notify_all();
  }
  return std::move(mine.outcome);
}

Store::GroupCommitStats Store::group_commit_stats() {
  std::lock_guard<std::mutex> group(group_mu_);
  return group_stats_;
}

std::vector<absl::StatusOr<bool>> Store::InsertResults(const std::vector<TrialToStore>& trials) {
  std::vector<PendingInsert> pending;
  pending.reserve(trials.size());
  std::vector<PendingInsert*> batch;
  for (const TrialToStore& item : trials) {
    pending.push_back(PendingInsert{item});
    if (absl::Status status = ValidateTrial(*item.trial); !status.ok())
      pending.back().outcome = status;
    else
      batch.push_back(&pending.back());
  }
  if (!batch.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    CommitGroupLocked(batch);
  }
  std::vector<absl::StatusOr<bool>> outcomes;
  for (PendingInsert& p : pending) outcomes.push_back(std::move(p.outcome));
  return outcomes;
}

void Store::CommitGroupLocked(const std::vector<PendingInsert*>& batch) {
  auto fail_all = [&](const absl::Status& status) {
    for (PendingInsert* pending : batch) pending->outcome = status;
  };
  absl::StatusOr<Transaction> transaction =
      Transaction::Begin(*connection_, Transaction::Kind::kImmediate);
  if (!transaction.ok()) return fail_all(transaction.status());
  // A savepoint per trial: a trial that fails half-way leaves nothing behind
  // and does not take the rest of its group down with it. A group of one
  // needs none: the transaction itself is rolled back on failure.
  const bool savepoints = batch.size() > 1;
  for (PendingInsert* pending_ptr : batch) {
    PendingInsert& pending = *pending_ptr;
    if (savepoints) {
      if (absl::Status status = connection_->Run("SAVEPOINT trial"); !status.ok())
        return fail_all(status);
    }
    pending.outcome = InsertResultLocked(*pending.item.trial, *pending.item.script);
    if (pending.outcome.ok()) {
      if (!savepoints) continue;
      if (absl::Status status = connection_->Run("RELEASE trial"); !status.ok())
        return fail_all(status);
      continue;
    }
    if (!savepoints) return;  // the transaction's destructor rolls it back
    // Some errors (SQLITE_FULL, SQLITE_IOERR) roll the whole transaction back:
    // then the trials before this one are lost too.
    if (!connection_->InTransaction()) {
      const absl::Status lost = pending.outcome.status();
      return fail_all(absl::Status(
          lost.code(), absl::StrCat("the group's transaction was rolled back: ", lost.message())));
    }
    absl::Status undo = connection_->Run("ROLLBACK TO trial");
    if (undo.ok()) undo = connection_->Run("RELEASE trial");
    if (!undo.ok()) return fail_all(undo);
  }
  if (absl::Status status = transaction->Commit(); !status.ok()) return fail_all(status);
}

absl::StatusOr<bool> Store::InsertResultLocked(const v1::TrialResult& trial,
                                               const std::string& script) {
  const v1::Candidate& candidate = trial.candidate();
  // Foreign keys would reject these too, but only as "FOREIGN KEY constraint
  // failed"; checking first names the missing row. Jobs, their problems and
  // targets are never deleted, so a check that passed once is remembered.
  std::pair<int64_t, std::string> job_problem(trial.job_id(), trial.problem());
  if (!known_job_problems_.contains(job_problem) || !known_targets_.contains(trial.target_id())) {
    absl::StatusOr<StatementLease> check = connection_->Prepare(kCheckResultRefsSql);
    if (!check.ok()) return check.status();
    (*check)->BindAll(trial.job_id(), trial.problem(), trial.target_id());
    absl::StatusOr<bool> row = (*check)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::InternalError("reference check returned no row");
    if ((*check)->ColumnInt64(0) == 0) {
      return absl::NotFoundError(absl::StrCat("job ", trial.job_id(), " does not exist"));
    }
    if ((*check)->ColumnInt64(1) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "problem '", trial.problem(), "' is not part of job ", trial.job_id()));
    }
    if ((*check)->ColumnInt64(2) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "target '", trial.target_id(), "' is not registered; UpsertTarget it first"));
    }
    known_job_problems_.insert(std::move(job_problem));
    known_targets_.insert(trial.target_id());
  }
  {
    absl::StatusOr<StatementLease> insert = connection_->Prepare(kInsertCandidateSql);
    if (!insert.ok()) return insert.status();
    (*insert)->BindAll(candidate.hash(), candidate.template_name(), candidate.canonical_json(),
                       script);
    if (absl::Status status = (*insert)->Run(); !status.ok()) return status;
  }
  if (connection_->Changes() == 0) {
    // Known hash: it must name the same candidate, or results of two different
    // candidates would be merged under one identity.
    absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectCandidateSql);
    if (!select.ok()) return select.status();
    (*select)->BindAll(candidate.hash());
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (*row && ((*select)->ColumnText(0) != candidate.template_name() ||
                 (*select)->ColumnText(1) != candidate.canonical_json())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "candidate hash ", candidate.hash(), " is stored for ", (*select)->ColumnText(0), " ",
          (*select)->ColumnText(1), " but reported for ", candidate.template_name(), " ",
          candidate.canonical_json()));
    }
  }
  bool inserted = false;
  {
    const v1::Result& result = trial.result();
    const v1::Timing& timing = result.timing();
    absl::StatusOr<StatementLease> insert = connection_->Prepare(kInsertResultSql);
    if (!insert.ok()) return insert.status();
    (*insert)->BindAll(trial.job_id(), trial.problem(), trial.target_id(), candidate.hash(),
                       trial.worker_name(), static_cast<int>(result.status()), result.error(),
                       timing.median_s(), timing.p25_s(), timing.p75_s(), timing.min_s(),
                       timing.cv(), timing.repetitions(), timing.warmup(),
                       std::max<uint32_t>(timing.calls_per_sample(), 1), result.gflops(),
                       result.gbps(), result.roofline_gflops(), result.roofline_level(),
                       result.fraction_of_roofline(), result.compile_s(), result.verify_s(),
                       result.max_rel_error(), result.total_s(), NowUnixSeconds());
    if (absl::Status status = (*insert)->Run(); !status.ok()) return status;
    inserted = connection_->Changes() == 1;
  }
  return inserted;
}

absl::StatusOr<bool> Store::HasResult(int64_t job_id, const std::string& problem,
                                      const std::string& candidate_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(kHasResultSql);
  if (!select.ok()) return select.status();
  (*select)->BindAll(job_id, problem, candidate_hash);
  absl::StatusOr<int64_t> count = StepInt(*select);
  if (!count.ok()) return count.status();
  return *count > 0;
}

absl::StatusOr<std::vector<std::string>> Store::ResultCandidateHashes(int64_t job_id,
                                                                      const std::string& problem) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(kResultHashesSql);
  if (!select.ok()) return select.status();
  (*select)->BindAll(job_id, problem);
  std::vector<std::string> hashes;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return hashes;
    hashes.push_back((*select)->ColumnText(0));
  }
}

absl::StatusOr<std::vector<v1::TrialResult>> Store::ListResults(int64_t job_id,
                                                                const std::string& problem,
                                                                uint32_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(kListResultsSql);
  if (!select.ok()) return select.status();
  // SQLite treats a negative LIMIT as "no limit".
  (*select)->BindAll(job_id, problem, limit == 0 ? int64_t{-1} : int64_t{limit});
  return ReadTrials(**select);
}

absl::StatusOr<std::vector<v1::TrialResult>> Store::ListRankedCandidates(
    const std::string& problem, uint32_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(kRankedCandidatesSql);
  if (!select.ok()) return select.status();
  (*select)->BindAll(problem, limit == 0 ? int64_t{-1} : int64_t{limit});
  return ReadTrials(**select);
}

// ---------------------------------------------------------------------------
// Best strategies
// ---------------------------------------------------------------------------

absl::StatusOr<v1::BestStrategy> Store::GetBest(const std::string& problem,
                                                const std::string& target_id) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(
      target_id.empty() ? kBestForProblemSql : kBestForProblemOnTargetSql);
  if (!select.ok()) return select.status();
  if (target_id.empty()) {
    (*select)->BindAll(problem);
  } else {
    (*select)->BindAll(problem, target_id);
  }
  absl::StatusOr<std::vector<v1::BestStrategy>> rows = ReadAllBest(*select);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no successful result for problem '", problem, "' on ",
        target_id.empty() ? std::string("any target") : absl::StrCat("target '", target_id, "'")));
  }
  return std::move(rows->front());
}

absl::StatusOr<std::vector<v1::BestStrategy>> Store::AllBest() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(kAllBestSql);
  if (!select.ok()) return select.status();
  return ReadAllBest(*select);
}

}  // namespace mtune::db
