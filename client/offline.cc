#include "client/offline.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "db/export.h"
#include "db/strategy_db.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "nlohmann/json.hpp"
#include "strategies/apply.h"
#include "strategies/mlir_support.h"
#include "strategies/transform_library.h"
#include "worker/jit_kernel.h"

#ifndef MTUNE_VERSION
#define MTUNE_VERSION "unknown"
#endif
#ifndef MTUNE_MLIR_VERSION
#define MTUNE_MLIR_VERSION "unknown"
#endif

namespace mtune::client {
namespace {

std::string Family(const std::string& key) { return key.substr(0, key.find(':')); }

nlohmann::json RowToJson(const db::ExportedStrategy& row) {
  nlohmann::json knobs = nlohmann::json::parse(row.knobs_json, nullptr, false);
  return {{"problem", row.problem},
          {"family", row.family},
          {"target", row.target_id},
          {"target_triple", row.target_triple},
          {"target_cpu", row.target_cpu},
          {"template", row.template_name},
          {"candidate_hash", row.candidate_hash},
          {"knobs", knobs.is_discarded() ? nlohmann::json::object() : knobs},
          {"script", row.script},
          {"gflops", row.gflops},
          {"gbps", row.gbps},
          {"fraction_of_roofline", row.fraction_of_roofline},
          {"roofline_gflops", row.roofline_gflops},
          {"median_s", row.median_s},
          {"mtune_version", row.mtune_version},
          {"mlir_version", row.mlir_version},
          {"exported_unix_s", row.exported_unix_s}};
}

// The target to use: the one asked for, else this machine's; NotFound listing
// the database's targets when it has no entry for it (never a silent pick).
absl::StatusOr<std::string> ChooseTarget(db::StrategyDb& strategies, const std::string& asked) {
  const std::string target = asked.empty() ? HostTargetId() : asked;
  absl::StatusOr<std::vector<std::string>> targets = strategies.Targets();
  if (!targets.ok()) return targets.status();
  for (const std::string& t : *targets)
    if (t == target) return target;
  return absl::NotFoundError(absl::StrCat(
      strategies.path(), " has no entries for target ", target,
      asked.empty() ? " (this machine)" : "", "; it has: ",
      targets->empty() ? "none" : absl::StrJoin(*targets, ", "), " (choose one with --target)"));
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string HostTargetId() { return strategies::HostCpuTargetId(); }

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes, bool force) {
  if (!force && access(path.c_str(), F_OK) == 0)
    return absl::AlreadyExistsError(path + " exists (use --force to replace it)");
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::FailedPreconditionError("cannot write " + path);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> RecordInExport(const std::string& path, const std::string& problem,
                                    const MeasureOutcome& outcome) {
  const mtune::v1::Result& r = outcome.result;
  if (r.status() != mtune::v1::RESULT_STATUS_OK)
    return absl::FailedPreconditionError("only OK results are recorded in a best-strategy database");
  std::vector<db::ExportedStrategy> rows;
  std::error_code error;
  if (std::filesystem::exists(path, error)) {
    absl::StatusOr<std::vector<db::ExportedStrategy>> existing = db::ReadExportedDb(path);
    if (!existing.ok()) return existing.status();
    rows = std::move(*existing);
  }
  db::ExportedStrategy row;
  row.problem = problem;
  row.family = Family(problem);
  row.target_id = HostTargetId();
  row.target_triple = worker::JitKernel::HostTriple();
  row.target_cpu = worker::JitKernel::HostCpuName();
  row.template_name = outcome.candidate.template_name();
  row.knobs_json = outcome.candidate.canonical_json();
  row.candidate_hash = outcome.candidate.hash();
  row.script = outcome.script;
  row.gflops = r.gflops();
  row.gbps = r.gbps();
  row.fraction_of_roofline = r.fraction_of_roofline();
  row.roofline_gflops = r.roofline_gflops();
  row.median_s = r.timing().median_s();
  row.mtune_version = MTUNE_VERSION;
  row.mlir_version = MTUNE_MLIR_VERSION;
  row.exported_unix_s = static_cast<int64_t>(time(nullptr));
  bool stored = true;
  auto same = [&](const db::ExportedStrategy& e) {
    return e.problem == row.problem && e.target_id == row.target_id;
  };
  auto it = std::find_if(rows.begin(), rows.end(), same);
  if (it == rows.end())
    rows.push_back(row);
  // Faster by time: a transpose or a copy has 0 GFLOP/s whichever strategy it runs.
  else if (row.median_s < it->median_s)
    *it = row;
  else
    stored = false;
  if (!stored) return false;
  absl::StatusOr<uint32_t> written = db::WriteExportedDb(rows, path, db::ExistingFile::kReplace);
  if (!written.ok()) return written.status();
  return true;
}

absl::StatusOr<ExportFormat> ParseExportFormat(const std::string& name) {
  if (name == "sqlite") return ExportFormat::kSqlite;
  if (name == "mlir") return ExportFormat::kMlir;
  if (name == "json") return ExportFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown export format '", name, "' (expected sqlite, mlir or json)"));
}

absl::StatusOr<std::string> ExportLocal(const std::string& db_path, ExportFormat format,
                                        const std::string& target, const std::string& out_path,
                                        bool force) {
  absl::StatusOr<std::unique_ptr<db::StrategyDb>> strategies = db::StrategyDb::Open(db_path);
  if (!strategies.ok()) return strategies.status();
  absl::StatusOr<std::vector<db::ExportedStrategy>> rows = (*strategies)->Entries(target);
  if (!rows.ok()) return rows.status();
  if (!target.empty() && rows->empty()) {
    absl::StatusOr<std::string> checked = ChooseTarget(**strategies, target);
    if (!checked.ok()) return checked.status();
  }
  std::string bytes;
  switch (format) {
    case ExportFormat::kSqlite: {
      absl::StatusOr<db::ExportedDb> built = db::BuildExportedDb(*rows);
      if (!built.ok()) return built.status();
      bytes = std::move(built->sqlite_bytes);
      break;
    }
    case ExportFormat::kMlir: {
      std::vector<strategies::LibraryEntry> entries;
      for (const auto& row : *rows) entries.push_back({row.problem, row.target_id, row.script});
      absl::StatusOr<std::string> library = strategies::BuildTransformLibrary(entries, target);
      if (!library.ok()) return library.status();
      bytes = std::move(*library);
      break;
    }
    case ExportFormat::kJson: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& row : *rows) list.push_back(RowToJson(row));
      bytes = list.dump(2) + "\n";
      break;
    }
  }
  if (out_path == "-") {
    fwrite(bytes.data(), 1, bytes.size(), stdout);
  } else if (absl::Status s = WriteFileAtomically(out_path, bytes, force); !s.ok()) {
    return s;
  }
  return absl::StrCat("exported ", rows->size(), " best strategies",
                      target.empty() ? "" : absl::StrCat(" of ", target), " to ", out_path);
}

absl::StatusOr<std::string> LookupLocal(const std::string& db_path, const std::string& problem,
                                        const std::string& target, bool nearest) {
  db::StrategyDb::Options options{MTUNE_MLIR_VERSION};
  absl::StatusOr<std::unique_ptr<db::StrategyDb>> strategies =
      db::StrategyDb::Open(db_path, options);
  if (!strategies.ok()) return strategies.status();
  absl::StatusOr<std::string> chosen = ChooseTarget(**strategies, target);
  if (!chosen.ok()) return chosen.status();
  absl::StatusOr<db::StrategyAnswer> answer = (*strategies)->Lookup(
      problem, *chosen, nearest ? db::Fallback::kNearestShape : db::Fallback::kExactOnly);
  if (!answer.ok()) return answer.status();
  nlohmann::json json = RowToJson(answer->entry);
  json["requested_problem"] = answer->requested_problem;
  json["exact"] = answer->match == db::MatchKind::kExact;
  json["shape_distance"] = answer->shape_distance;
  json["stale"] = answer->stale;
  json["note"] = answer->note;
  return json.dump(2);
}

absl::Status ApplyLocal(const std::string& db_path, const std::string& target,
                        const std::string& input, const std::string& output, FILE* report) {
  db::StrategyDb::Options options{MTUNE_MLIR_VERSION};
  absl::StatusOr<std::unique_ptr<db::StrategyDb>> strategies =
      db::StrategyDb::Open(db_path, options);
  if (!strategies.ok()) return strategies.status();
  absl::StatusOr<std::string> chosen = ChooseTarget(**strategies, target);
  if (!chosen.ok()) return chosen.status();
  absl::StatusOr<std::vector<db::ExportedStrategy>> rows = (*strategies)->Entries(*chosen);
  if (!rows.ok()) return rows.status();
  std::vector<strategies::LibraryEntry> entries;
  for (const auto& row : *rows) {
    // Said, not hidden: the entry is still applied, and fails loudly if it no longer fits.
    if (db::MajorVersion(row.mlir_version) != db::MajorVersion(MTUNE_MLIR_VERSION))
      fprintf(report, "mtune: warning: %s is stale (measured with MLIR %s, applying with %s)\n",
              row.problem.c_str(), row.mlir_version.c_str(), MTUNE_MLIR_VERSION);
    entries.push_back({row.problem, row.target_id, row.script});
  }

  absl::StatusOr<std::string> text = ReadFile(input);
  if (!text.ok()) return text.status();
  auto context = strategies::MakeMlirContext();
  strategies::DiagnosticCapture diagnostics(context.get());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(*text, context.get(), input);
  if (!module)
    return diagnostics.ToStatus(absl::StatusCode::kInvalidArgument,
                                absl::StrCat(input, " does not parse"));
  absl::StatusOr<strategies::PreparedLibrary> library =
      strategies::PrepareLibrary(entries, *chosen, context.get());
  if (!library.ok()) return library.status();
  absl::StatusOr<std::vector<strategies::OpOutcome>> outcomes =
      strategies::ApplyLibrary(*module, *library);
  if (!outcomes.ok()) return outcomes.status();
  int tuned = 0;
  for (const auto& o : *outcomes) {
    tuned += o.kind == strategies::OpOutcome::Kind::kTuned;
    fprintf(report, "%-15s @%s %s %s%s\n", strategies::OutcomeName(o.kind), o.function.c_str(),
            o.op_name.c_str(), o.key_or_reason.c_str(),
            o.outlined ? " (shares its function: outlined)" : "");
  }
  fprintf(report, "mtune: applied tuned strategies of %s to %d of %zu linalg ops\n",
          chosen->c_str(), tuned, outcomes->size());
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  os.flush();
  if (output == "-") {
    fwrite(printed.data(), 1, printed.size(), stdout);
    return absl::OkStatus();
  }
  return WriteFileAtomically(output, printed, /*force=*/true);
}

}  // namespace mtune::client
