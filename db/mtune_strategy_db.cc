// The C interface: opaque handles over StrategyDb and StrategyAnswer. No C++
// exception or absl type crosses it; every status becomes a code and a message.
#include "db/mtune_strategy_db.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "db/strategy_db.h"

struct mtune_strategy_db {
  std::unique_ptr<mtune::db::StrategyDb> db;
};

struct mtune_strategy {
  mtune::db::StrategyAnswer answer;
};

namespace {

mtune_status CodeOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return MTUNE_OK;
    case absl::StatusCode::kNotFound:
      return MTUNE_NOT_FOUND;
    case absl::StatusCode::kInvalidArgument:
      return MTUNE_INVALID_ARGUMENT;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kDataLoss:
      return MTUNE_BAD_DATABASE;
    default:
      return MTUNE_ERROR;
  }
}

// Copies `message` into a malloc'ed C string for the caller (nothing if unwanted).
mtune_status Report(mtune_status code, const std::string& message, char** error) {
  if (error == nullptr) return code;
  *error = static_cast<char*>(std::malloc(message.size() + 1));
  if (*error != nullptr) std::memcpy(*error, message.c_str(), message.size() + 1);
  return code;
}

mtune_status Report(const absl::Status& status, char** error) {
  return Report(CodeOf(status), std::string(status.message()), error);
}

}  // namespace

extern "C" {

mtune_status mtune_strategy_db_open(const char* path, const char* reader_mlir_version,
                                    mtune_strategy_db** db, char** error) {
  if (error != nullptr) *error = nullptr;
  if (path == nullptr || db == nullptr)
    return Report(MTUNE_INVALID_ARGUMENT, "mtune_strategy_db_open: path and db are required", error);
  *db = nullptr;
  mtune::db::StrategyDb::Options options;
  if (reader_mlir_version != nullptr) options.reader_mlir_version = reader_mlir_version;
  absl::StatusOr<std::unique_ptr<mtune::db::StrategyDb>> opened =
      mtune::db::StrategyDb::Open(path, options);
  if (!opened.ok()) return Report(opened.status(), error);
  *db = new (std::nothrow) mtune_strategy_db{std::move(*opened)};
  if (*db == nullptr) return Report(MTUNE_ERROR, "out of memory", error);
  return MTUNE_OK;
}

void mtune_strategy_db_close(mtune_strategy_db* db) { delete db; }

mtune_status mtune_strategy_db_lookup(mtune_strategy_db* db, const char* problem,
                                      const char* target_id, int flags, mtune_strategy** strategy,
                                      char** error) {
  if (error != nullptr) *error = nullptr;
  if (db == nullptr || problem == nullptr || target_id == nullptr || strategy == nullptr)
    return Report(MTUNE_INVALID_ARGUMENT,
                  "mtune_strategy_db_lookup: db, problem, target_id and strategy are required",
                  error);
  *strategy = nullptr;
  if ((flags & ~MTUNE_LOOKUP_NEAREST_SHAPE) != 0)
    return Report(MTUNE_INVALID_ARGUMENT, "mtune_strategy_db_lookup: unknown flags", error);
  absl::StatusOr<mtune::db::StrategyAnswer> answer = db->db->Lookup(
      problem, target_id,
      (flags & MTUNE_LOOKUP_NEAREST_SHAPE) ? mtune::db::Fallback::kNearestShape
                                           : mtune::db::Fallback::kExactOnly);
  if (!answer.ok()) return Report(answer.status(), error);
  *strategy = new (std::nothrow) mtune_strategy{std::move(*answer)};
  if (*strategy == nullptr) return Report(MTUNE_ERROR, "out of memory", error);
  return MTUNE_OK;
}

const char* mtune_strategy_problem(const mtune_strategy* s) { return s->answer.entry.problem.c_str(); }
const char* mtune_strategy_target_id(const mtune_strategy* s) {
  return s->answer.entry.target_id.c_str();
}
const char* mtune_strategy_template_name(const mtune_strategy* s) {
  return s->answer.entry.template_name.c_str();
}
const char* mtune_strategy_knobs_json(const mtune_strategy* s) {
  return s->answer.entry.knobs_json.c_str();
}
const char* mtune_strategy_script(const mtune_strategy* s) { return s->answer.entry.script.c_str(); }
const char* mtune_strategy_mtune_version(const mtune_strategy* s) {
  return s->answer.entry.mtune_version.c_str();
}
const char* mtune_strategy_mlir_version(const mtune_strategy* s) {
  return s->answer.entry.mlir_version.c_str();
}
const char* mtune_strategy_note(const mtune_strategy* s) { return s->answer.note.c_str(); }
int mtune_strategy_is_exact(const mtune_strategy* s) {
  return s->answer.match == mtune::db::MatchKind::kExact ? 1 : 0;
}
int mtune_strategy_is_stale(const mtune_strategy* s) { return s->answer.stale ? 1 : 0; }
double mtune_strategy_shape_distance(const mtune_strategy* s) { return s->answer.shape_distance; }
double mtune_strategy_gflops(const mtune_strategy* s) { return s->answer.entry.gflops; }
double mtune_strategy_gbps(const mtune_strategy* s) { return s->answer.entry.gbps; }
double mtune_strategy_fraction_of_roofline(const mtune_strategy* s) {
  return s->answer.entry.fraction_of_roofline;
}
double mtune_strategy_median_seconds(const mtune_strategy* s) { return s->answer.entry.median_s; }
void mtune_strategy_free(mtune_strategy* s) { delete s; }
void mtune_error_free(char* error) { std::free(error); }

}  // extern "C"
