// The coordinator's SQLite store: jobs, targets, candidates and every measured
// result, with the "best strategy per (problem, target)" queries built on them.
//
// Thread-safety: one Store owns one SQLite connection and serializes every call
// on an internal mutex, so gRPC handler threads may share a Store freely. Other
// processes (an offline `mtune` query) may open the same file: WAL mode lets
// them read while the coordinator writes.
//
// Errors never throw: every call returns absl::Status / absl::StatusOr.
//   InvalidArgument    malformed input (empty key, bad candidate hash, ...)
//   NotFound           the job / target / best result asked for does not exist
//   FailedPrecondition input refers to rows that must exist first (unknown
//                      target), or the file is not a usable mtune store
//   Unavailable        another process held the write lock past busy_timeout
#ifndef MTUNE_DB_STORE_H_
#define MTUNE_DB_STORE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/sqlite.h"
#include "proto/mtune.pb.h"

namespace mtune::db {

// Op family of a problem key: the text before the first ':' ("matmul" for
// "matmul:m=512,n=512,k=512:f32"), or the whole key if it has no ':'.
std::string_view ProblemFamily(std::string_view problem_key);

// Persistent record of tuning jobs and their measurements.
class Store {
 public:
  // Opens or creates the store at `path`, applying pending schema migrations.
  // FailedPrecondition when the file is not a SQLite database, belongs to
  // another application, or has a schema newer than this build (names both).
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The file this store was opened from.
  const std::string& path() const { return path_; }

  // --- jobs -----------------------------------------------------------------

  // Records a new RUNNING job and its problems (with planned trials each) in one
  // transaction; returns its id. `problems_with_trials_total` is the job's
  // problem list: it must be non-empty, without duplicates, and equal to
  // spec.problems when that is non-empty (InvalidArgument otherwise).
  // spec.problem_templates, when non-empty, names one template per problem.
  absl::StatusOr<int64_t> CreateJob(
      const mtune::v1::JobSpec& spec,
      const std::vector<std::pair<std::string, uint32_t>>& problems_with_trials_total);

  // Ends a RUNNING job with `state` (SUCCEEDED, CANCELLED or FAILED) and stamps
  // its finish time. NotFound for an unknown job; FailedPrecondition if it has
  // already ended (so a cancel racing a natural finish has one winner).
  absl::Status FinishJob(int64_t job_id, mtune::v1::JobState state, const std::string& message);

  // The job with its spec, progress counters and best OK result per problem
  // (in spec order; problems without an OK result are absent). NotFound if missing.
  absl::StatusOr<mtune::v1::Job> GetJob(int64_t job_id);

  // Job ids in creation order, optionally only those in `only_state` (e.g. the
  // RUNNING jobs a restarted coordinator must resume).
  absl::StatusOr<std::vector<int64_t>> ListJobIds(
      std::optional<mtune::v1::JobState> only_state = std::nullopt);

  // --- targets --------------------------------------------------------------

  // Inserts or updates a target and the calibration of the worker registering it
  // (the latest registration wins). Results can only reference known targets.
  absl::Status UpsertTarget(const mtune::v1::Target& target,
                            const mtune::v1::Calibration& calibration);

  // The stored target and its calibration. NotFound if missing.
  absl::StatusOr<std::pair<mtune::v1::Target, mtune::v1::Calibration>> GetTarget(
      const std::string& target_id);

  // --- results --------------------------------------------------------------

  // Stores one trial: the candidate (with its instantiated `script`) if new,
  // then the result, and returns only once the transaction holding it has
  // committed, so a caller may acknowledge the result as durable. Group commit:
  // trials that callers on other threads hand in while a transaction is being
  // written are stored together in the next transaction (one writer, one
  // COMMIT for the group), each in its own savepoint, so one bad trial fails
  // alone; while trials arrive back to back the writer first waits up to 1 ms
  // for more (larger groups, fewer COMMITs). Idempotent: returns false, changing nothing, when (job_id, problem,
  // candidate hash) already has a result, so a re-sent report is harmless; the
  // key has no target because a job measures each candidate once. The commit
  // time replaces trial.created_unix_s.
  // NotFound for an unknown job; FailedPrecondition when the problem is not
  // part of the job, the target is not registered, or the hash is already
  // stored for a different candidate; a failed COMMIT fails every trial of its
  // group (none of them is stored).
  absl::StatusOr<bool> InsertResult(const mtune::v1::TrialResult& trial, const std::string& script);

  // One trial of InsertResults: the result and its candidate's script.
  struct TrialToStore {
    const mtune::v1::TrialResult* trial;
    const std::string* script;
  };
  // Stores `trials` in one transaction now (what InsertResult does for a group),
  // returning one outcome per trial in order, each as InsertResult would.
  std::vector<absl::StatusOr<bool>> InsertResults(const std::vector<TrialToStore>& trials);

  // How well group commit groups: transactions InsertResult committed and the
  // trials they held (trials / transactions = the mean group size).
  struct GroupCommitStats {
    uint64_t transactions = 0;
    uint64_t trials = 0;
  };
  GroupCommitStats group_commit_stats();

  // Whether (job_id, problem, candidate_hash) already has a result.
  absl::StatusOr<bool> HasResult(int64_t job_id, const std::string& problem,
                                 const std::string& candidate_hash);

  // Hashes of candidates measured for (job_id, problem), in insertion order, so
  // a resumed search skips them.
  absl::StatusOr<std::vector<std::string>> ResultCandidateHashes(int64_t job_id,
                                                                 const std::string& problem);

  // Stored trials, best first: OK results by GFLOP/s descending, then failures
  // in insertion order. job_id 0 = any job, problem "" = any problem, limit 0 = all.
  absl::StatusOr<std::vector<mtune::v1::TrialResult>> ListResults(int64_t job_id,
                                                                  const std::string& problem,
                                                                  uint32_t limit);

  // The OK candidates of `problem` (any target), best first by the ranking GetBest
  // uses: one row per (candidate, target), its median result. limit 0 = all. What a
  // warm start re-proposes, so that the candidates it measures again are the ones a
  // best-strategy query would pick.
  absl::StatusOr<std::vector<mtune::v1::TrialResult>> ListRankedCandidates(
      const std::string& problem, uint32_t limit);

  // --- best strategies ------------------------------------------------------

  // The best candidate for `problem` on `target_id` ("" = any target), across all
  // jobs, with its script: a candidate measured more than once counts with its
  // median OK result (the lower one of an even count), and the one whose median is
  // the highest GFLOP/s wins; ties go to the lower median time, then the earlier
  // result. The result returned is that median one. NotFound when there is no OK
  // result.
  absl::StatusOr<mtune::v1::BestStrategy> GetBest(const std::string& problem,
                                                  const std::string& target_id);

  // GetBest for every (problem, target) with an OK result, ordered by problem
  // then target id: what the best-strategy export contains.
  absl::StatusOr<std::vector<mtune::v1::BestStrategy>> AllBest();

 private:
  Store(std::unique_ptr<Connection> connection, std::string path)
      : connection_(std::move(connection)), path_(std::move(path)) {}

  // A trial waiting for the group commit that stores it.
  struct PendingInsert {
    TrialToStore item;
    absl::StatusOr<bool> outcome = false;  // set by the committing thread
    bool done = false;                     // guarded by group_mu_
  };

  // Stores one validated trial in the open transaction (caller holds mu_).
  absl::StatusOr<bool> InsertResultLocked(const mtune::v1::TrialResult& trial,
                                          const std::string& script);
  // One transaction for `batch`: a savepoint per trial, one COMMIT; sets every
  // outcome (caller holds mu_).
  void CommitGroupLocked(const std::vector<PendingInsert*>& batch);

  // Guards connection_ and its statement cache: a sqlite3 connection and its
  // statements must not be used by two threads at once.
  std::mutex mu_;
  std::unique_ptr<Connection> connection_;
  const std::string path_;
  // (job, problem) pairs and targets InsertResult has found stored (guarded by mu_).
  std::set<std::pair<int64_t, std::string>> known_job_problems_;
  std::set<std::string> known_targets_;

  // Group commit (InsertResult): trials wait in group_pending_ until a thread
  // that finds no commit running becomes the writer of all of them. Taken
  // before mu_, never while holding it.
  std::mutex group_mu_;
  std::condition_variable group_done_;
  std::vector<PendingInsert*> group_pending_;
  bool group_writing_ = false;
  GroupCommitStats group_stats_;  // guarded by group_mu_
  // While results stream in (the previous group began moments ago), the writer
  // waits a little for more before it begins: a COMMIT costs about as much CPU as
  // the inserts of a few trials, so larger groups are cheaper per trial. The
  // waiting callers' acknowledgements are delayed by at most kGatherWait.
  std::condition_variable group_gathered_;
  bool group_gathering_ = false;                          // guarded by group_mu_
  std::chrono::steady_clock::time_point last_group_begin_;  // guarded by group_mu_
};

}  // namespace mtune::db

#endif  // MTUNE_DB_STORE_H_
