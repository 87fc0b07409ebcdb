#include "db/strategy_db.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "db/exported_row.h"
#include "db/sqlite.h"

namespace mtune::db {
namespace {

// Whole statements as constants: the connection's cache prepares each once.
constexpr char kSelectOneSql[] = "SELECT " MTUNE_EXPORTED_ROW_COLUMNS R"sql(
FROM best_strategies WHERE problem = ? AND target_id = ?)sql";

constexpr char kSelectByTargetSql[] = "SELECT " MTUNE_EXPORTED_ROW_COLUMNS R"sql(
FROM best_strategies WHERE target_id = ? ORDER BY problem)sql";

constexpr char kSelectAllSql[] = "SELECT " MTUNE_EXPORTED_ROW_COLUMNS R"sql(
FROM best_strategies ORDER BY problem, target_id)sql";

// Uses the best_strategies_by_family index; the target filter runs on its rows.
constexpr char kSelectFamilyKeysSql[] =
    "SELECT problem, gflops FROM best_strategies WHERE family = ? AND target_id = ?";

constexpr char kSelectTargetsSql[] =
    "SELECT DISTINCT target_id FROM best_strategies ORDER BY target_id";

// Strides and dilations change what is computed, not just how much: a
// strategy tuned for stride 1 is no evidence for stride 2.
bool IsSizeDimension(absl::string_view name) {
  return !(name == "sh" || name == "sw" || name == "dh" || name == "dw");
}

}  // namespace

std::string MajorVersion(absl::string_view version) {
  return std::string(version.substr(0, version.find('.')));
}

absl::StatusOr<ParsedKey> ParseKeyParts(absl::string_view key) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad problem key '", key, "': ", why,
                                                   " (expected FAMILY:NAME=VALUE,...:TYPE, e.g. "
                                                   "matmul:m=512,n=512,k=512:f32)"));
  };
  std::vector<absl::string_view> fields = absl::StrSplit(key, ':');
  if (fields.size() != 3) return bad("expected three ':'-separated fields");
  if (fields[0].empty()) return bad("empty family");
  if (fields[2].empty()) return bad("empty element type");
  ParsedKey parsed;
  parsed.family = std::string(fields[0]);
  parsed.element_type = std::string(fields[2]);
  for (absl::string_view item : absl::StrSplit(fields[1], ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) return bad(absl::StrCat("'", item, "' is not NAME=VALUE"));
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(kv[1].data(), kv[1].data() + kv[1].size(), value);
    if (ec != std::errc() || ptr != kv[1].data() + kv[1].size() || value <= 0)
      return bad(absl::StrCat("'", item, "' does not have a positive integer value"));
    parsed.dims.emplace_back(std::string(kv[0]), value);
  }
  return parsed;
}

double ShapeDistance(const ParsedKey& asked, const ParsedKey& tuned) {
  if (asked.family != tuned.family || asked.element_type != tuned.element_type ||
      asked.dims.size() != tuned.dims.size())
    return -1;
  double distance = 0;
  for (size_t i = 0; i < asked.dims.size(); ++i) {
    const auto& [name, value] = asked.dims[i];
    if (name != tuned.dims[i].first) return -1;
    const int64_t other = tuned.dims[i].second;
    if (!IsSizeDimension(name)) {
      if (value != other) return -1;
      continue;
    }
    distance += std::abs(std::log2(static_cast<double>(value) / static_cast<double>(other)));
  }
  return distance;
}

StrategyDb::StrategyDb(std::unique_ptr<Connection> connection, std::string path, Options options)
    : connection_(std::move(connection)), path_(std::move(path)), options_(std::move(options)) {}

StrategyDb::~StrategyDb() = default;

absl::StatusOr<std::unique_ptr<StrategyDb>> StrategyDb::Open(const std::string& path,
                                                             Options options) {
  absl::StatusOr<std::unique_ptr<Connection>> connection = OpenExportedDb(path);
  if (!connection.ok()) return connection.status();
  return std::unique_ptr<StrategyDb>(
      new StrategyDb(std::move(*connection), path, std::move(options)));
}

absl::StatusOr<bool> StrategyDb::ReadEntry(absl::string_view problem, absl::string_view target_id,
                                           ExportedStrategy* entry) {
  absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectOneSql);
  if (!select.ok()) return select.status();
  (*select)->BindText(1, std::string_view(problem.data(), problem.size()));
  (*select)->BindText(2, std::string_view(target_id.data(), target_id.size()));
  absl::StatusOr<bool> row = (*select)->Step();
  if (!row.ok() || !*row) return row;
  ReadExportedRow(**select, *entry);
  return true;
}

absl::StatusOr<const std::vector<StrategyDb::TunedShape>*> StrategyDb::FamilyShapes(
    const std::string& family, const std::string& target_id) {
  auto key = std::make_pair(family, target_id);
  if (auto it = family_shapes_.find(key); it != family_shapes_.end()) return &it->second;
  absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectFamilyKeysSql);
  if (!select.ok()) return select.status();
  (*select)->BindAll(family, target_id);
  std::vector<TunedShape> shapes;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    TunedShape& shape = shapes.emplace_back();
    shape.key = (*select)->ColumnText(0);
    shape.gflops = (*select)->ColumnDouble(1);
    absl::StatusOr<ParsedKey> parsed = ParseKeyParts(shape.key);
    if (!parsed.ok()) {
      return absl::DataLossError(
          absl::StrCat(path_, " holds a malformed problem key: ", parsed.status().message()));
    }
    shape.parsed = std::move(*parsed);
    for (const auto& [name, value] : shape.parsed.dims)
      if (IsSizeDimension(name)) shape.log_sizes.push_back(std::log2(static_cast<double>(value)));
  }
  return &family_shapes_.emplace(std::move(key), std::move(shapes)).first->second;
}

void StrategyDb::Annotate(StrategyAnswer& answer) const {
  std::vector<std::string> notes;
  if (answer.match == MatchKind::kNearestShape) {
    notes.push_back(absl::StrCat("no entry for ", answer.requested_problem,
                                 "; nearest tuned shape ", answer.entry.problem,
                                 " (distance ", answer.shape_distance, ") on the same target"));
  }
  if (!options_.reader_mlir_version.empty() &&
      MajorVersion(answer.entry.mlir_version) != MajorVersion(options_.reader_mlir_version)) {
    answer.stale = true;
    notes.push_back(absl::StrCat("stale: measured with MLIR ", answer.entry.mlir_version,
                                 " (mtune ", answer.entry.mtune_version,
                                 "), to be applied with MLIR ", options_.reader_mlir_version,
                                 "; re-tune or re-check before trusting it"));
  }
  answer.note = absl::StrJoin(notes, "; ");
}

absl::StatusOr<StrategyAnswer> StrategyDb::Lookup(absl::string_view problem,
                                                  absl::string_view target_id,
                                                  Fallback fallback) {
  if (target_id.empty()) return absl::InvalidArgumentError("lookup needs a target id");
  absl::StatusOr<ParsedKey> asked = ParseKeyParts(problem);
  if (!asked.ok()) return asked.status();

  std::lock_guard<std::mutex> lock(mu_);
  StrategyAnswer answer;
  answer.requested_problem = std::string(problem);
  absl::StatusOr<bool> found = ReadEntry(problem, target_id, &answer.entry);
  if (!found.ok()) return found.status();
  if (*found) {
    Annotate(answer);
    return answer;
  }

  if (fallback == Fallback::kExactOnly) {
    return absl::NotFoundError(absl::StrCat(path_, " has no entry for ", problem, " on target ",
                                            target_id,
                                            " (the nearest-shape fallback may find a tuned shape "
                                            "of the same family)"));
  }
  absl::StatusOr<const std::vector<TunedShape>*> shapes =
      FamilyShapes(asked->family, std::string(target_id));
  if (!shapes.ok()) return shapes.status();
  std::vector<double> asked_log_sizes;
  for (const auto& [name, value] : asked->dims)
    if (IsSizeDimension(name)) asked_log_sizes.push_back(std::log2(static_cast<double>(value)));

  const TunedShape* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const TunedShape& tuned : **shapes) {
    // Cheap checks first; ShapeDistance's rules, on precomputed logarithms.
    if (tuned.log_sizes.size() != asked_log_sizes.size() ||
        tuned.parsed.element_type != asked->element_type ||
        tuned.parsed.dims.size() != asked->dims.size())
      continue;
    double distance = 0;
    for (size_t i = 0; i < asked_log_sizes.size(); ++i)
      distance += std::abs(asked_log_sizes[i] - tuned.log_sizes[i]);
    if (distance > best_distance) continue;
    bool comparable = true;
    for (size_t i = 0; i < asked->dims.size() && comparable; ++i) {
      const auto& [name, value] = asked->dims[i];
      comparable = name == tuned.parsed.dims[i].first &&
                   (IsSizeDimension(name) || value == tuned.parsed.dims[i].second);
    }
    if (!comparable) continue;
    const bool better =
        best == nullptr || distance < best_distance ||
        (tuned.gflops > best->gflops ||
         (tuned.gflops == best->gflops && tuned.key < best->key));
    if (!better) continue;
    best = &tuned;
    best_distance = distance;
  }
  if (best == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        path_, " has no entry for ", problem, " on target ", target_id,
        " and no comparable shape to fall back to (same family, element type, strides and "
        "dilations; ",
        (*shapes)->size(), " ", asked->family, " entries for that target)"));
  }
  const std::string best_key = best->key;
  found = ReadEntry(best_key, target_id, &answer.entry);
  if (!found.ok()) return found.status();
  if (!*found) return absl::InternalError(absl::StrCat(best_key, " vanished from ", path_));
  answer.match = MatchKind::kNearestShape;
  answer.shape_distance = best_distance;
  Annotate(answer);
  return answer;
}

absl::StatusOr<std::vector<std::string>> StrategyDb::Targets() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select = connection_->Prepare(kSelectTargetsSql);
  if (!select.ok()) return select.status();
  std::vector<std::string> targets;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return targets;
    targets.push_back((*select)->ColumnText(0));
  }
}

absl::StatusOr<std::vector<ExportedStrategy>> StrategyDb::Entries(absl::string_view target_id) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<StatementLease> select =
      connection_->Prepare(target_id.empty() ? kSelectAllSql : kSelectByTargetSql);
  if (!select.ok()) return select.status();
  if (!target_id.empty()) (*select)->BindText(1, std::string_view(target_id.data(), target_id.size()));
  std::vector<ExportedStrategy> rows;
  while (true) {
    absl::StatusOr<bool> row = (*select)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return rows;
    ReadExportedRow(**select, rows.emplace_back());
  }
}

}  // namespace mtune::db
