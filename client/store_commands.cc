// Stored results and what is made of them: results, best, export, apply, workers.
// `best --db`, `export --db` and `apply` read a best-strategy database file and
// need no coordinator.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "client/cli.h"
#include "client/connection.h"
#include "client/format.h"
#include "client/offline.h"

namespace mtune::client::cli {
namespace {

Command AddResults(CLI::App& app, CoordinatorFlags& coordinator) {
  struct Flags {
    int64_t job_id = 0;
    std::string problem;
    uint32_t limit = 20;
  };
  auto flags = std::make_shared<Flags>();
  auto* results = app.add_subcommand("results", "list stored trials, best first");
  AddCoordinatorFlags(results, coordinator);
  results->add_option("--job", flags->job_id, "only this job (0: any)");
  results->add_option("--problem", flags->problem, "only this problem");
  results->add_option("--limit", flags->limit, "at most this many (0: all)")->capture_default_str();
  return {results, [flags, &coordinator] {
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            grpc::ClientContext context;
            mtune::v1::ListResultsRequest request;
            request.set_job_id(flags->job_id);
            request.set_problem(flags->problem);
            request.set_limit(flags->limit);
            mtune::v1::ListResultsResponse response;
            if (auto s = FromGrpc((*stub)->ListResults(&context, request, &response)); !s.ok())
              return Fail(s);
            printf("%s", FormatResults(response).c_str());
            return 0;
          }};
}

Command AddBest(CLI::App& app, CoordinatorFlags& coordinator) {
  struct Flags {
    std::string problem, target, db_file;
    bool json = false, nearest = false;
  };
  auto flags = std::make_shared<Flags>();
  auto* best = app.add_subcommand("best", "the best strategy measured for a problem");
  AddCoordinatorFlags(best, coordinator);
  best->add_option("--problem", flags->problem, "problem key")->required();
  best->add_option("--target", flags->target,
                   "target id (default: whichever is best; with --db: this machine)");
  best->add_flag("--json", flags->json, "print JSON (problem, target, knobs, script, figures)");
  best->add_option("--db", flags->db_file,
                   "look up in this best-strategy database file instead of the coordinator "
                   "(prints JSON)");
  best->add_flag("--nearest", flags->nearest,
                 "with --db: allow the flagged nearest-shape fallback when the shape is missing");
  return {best, [flags, &coordinator] {
            if (!flags->db_file.empty()) {
              auto answer = LookupLocal(flags->db_file, flags->problem, flags->target, flags->nearest);
              if (!answer.ok()) return Fail(answer.status());
              printf("%s\n", answer->c_str());
              return 0;
            }
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            auto response = FetchBest(**stub, flags->problem, flags->target);
            if (!response.ok()) return Fail(response.status());
            if (flags->json)
              printf("%s\n", BestToJson(*response).dump(2).c_str());
            else
              printf("%s", FormatBest(*response).c_str());
            return 0;
          }};
}

struct ExportFlags {
  std::string out, library, db_file, target;
  bool force = false;
  std::string format = "sqlite";
};

// Formats other than the coordinator's own database (or one target of it) are
// built here from that database, as from a --db file.
int ExportConverted(mtune::v1::Tuner::Stub& stub, const ExportFlags& f, ExportFormat format) {
  grpc::ClientContext context;
  mtune::v1::ExportResponse response;
  if (auto s = FromGrpc(stub.Export(&context, mtune::v1::ExportRequest(), &response)); !s.ok())
    return Fail(s);
  char temp[] = "/tmp/mtune-export.XXXXXX";
  const int fd = mkstemp(temp);
  if (fd < 0) return Fail(absl::InternalError("cannot create a temporary file"));
  close(fd);
  absl::Status written = WriteFileAtomically(temp, response.sqlite_db(), true);
  auto summary = written.ok() ? ExportLocal(temp, format, f.target, f.out, f.force)
                              : absl::StatusOr<std::string>(written);
  unlink(temp);
  if (!summary.ok()) return Fail(summary.status());
  fprintf(stderr, "%s\n", summary->c_str());
  return 0;
}

// The coordinator's database as it is, with its transform library beside it.
int ExportDatabaseAndLibrary(mtune::v1::Tuner::Stub& stub, const ExportFlags& f) {
  std::string library = f.library;
  if (library.empty()) {
    auto dot = f.out.rfind('.');
    library = (dot == std::string::npos || f.out.find('/', dot) != std::string::npos
                   ? f.out
                   : f.out.substr(0, dot)) + ".mlir";
  }
  grpc::ClientContext context;
  mtune::v1::ExportResponse response;
  if (auto s = FromGrpc(stub.Export(&context, mtune::v1::ExportRequest(), &response)); !s.ok())
    return Fail(s);
  if (absl::Status s = WriteFileAtomically(f.out, response.sqlite_db(), f.force); !s.ok()) return Fail(s);
  if (absl::Status s = WriteFileAtomically(library, response.transform_library(), f.force); !s.ok())
    return Fail(s);
  printf("exported %u best strategies to %s and %s\n", response.entries(), f.out.c_str(),
         library.c_str());
  return 0;
}

Command AddExport(CLI::App& app, CoordinatorFlags& coordinator) {
  auto flags = std::make_shared<ExportFlags>();
  auto* export_cmd = app.add_subcommand("export", "write the best-strategy database and library");
  AddCoordinatorFlags(export_cmd, coordinator);
  export_cmd->add_option("--out", flags->out, "file to write ('-': stdout)")->required();
  export_cmd->add_option("--format", flags->format,
                         "sqlite (best-strategy database), mlir (transform library whose "
                         "@__transform_main dispatches to the tuned strategies) or json")
      ->capture_default_str();
  export_cmd->add_option("--db", flags->db_file,
                         "convert this best-strategy database file instead of asking the "
                         "coordinator");
  export_cmd->add_option("--target", flags->target,
                         "only entries of this target (mlir: the target to dispatch; default: "
                         "the only target)");
  export_cmd->add_option("--library", flags->library,
                         "sqlite from the coordinator: also write the transform library here "
                         "(default: --out with .mlir)");
  export_cmd->add_flag("--force", flags->force, "replace existing files");
  return {export_cmd, [flags, &coordinator] {
            const ExportFlags& f = *flags;
            auto format = ParseExportFormat(f.format);
            if (!format.ok()) return Fail(format.status());
            if (!f.db_file.empty()) {
              auto summary = ExportLocal(f.db_file, *format, f.target, f.out, f.force);
              if (!summary.ok()) return Fail(summary.status());
              fprintf(stderr, "%s\n", summary->c_str());
              return 0;
            }
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            if (*format != ExportFormat::kSqlite || !f.target.empty()) return ExportConverted(**stub, f, *format);
            return ExportDatabaseAndLibrary(**stub, f);
          }};
}

Command AddApply(CLI::App& app) {
  struct Flags {
    std::string db_file, target, input, output = "-";
  };
  auto flags = std::make_shared<Flags>();
  auto* apply = app.add_subcommand(
      "apply", "apply the tuned strategies of a best-strategy database to an MLIR file");
  apply->add_option("--db", flags->db_file, "best-strategy database file")->required();
  apply->add_option("--target", flags->target, "target id (default: this machine)");
  apply->add_option("input", flags->input, "MLIR file ('-': stdin)")->required();
  apply->add_option("-o,--output", flags->output, "where to write the result ('-': stdout)")
      ->capture_default_str();
  return {apply, [flags] {
            const std::string input = flags->input == "-" ? "/dev/stdin" : flags->input;
            if (auto s = ApplyLocal(flags->db_file, flags->target, input, flags->output, stderr); !s.ok())
              return Fail(s);
            return 0;
          }};
}

Command AddWorkers(CLI::App& app, CoordinatorFlags& coordinator) {
  auto json = std::make_shared<bool>(false);
  auto* workers = app.add_subcommand("workers", "list workers, their targets and calibration");
  AddCoordinatorFlags(workers, coordinator);
  workers->add_flag("--json", *json, "print JSON (name, state, target, calibration per worker)");
  return {workers, [json, &coordinator] {
            auto stub = Connect(coordinator);
            if (!stub.ok()) return Fail(stub.status());
            grpc::ClientContext context;
            mtune::v1::ListWorkersResponse response;
            if (auto s = FromGrpc((*stub)->ListWorkers(&context, mtune::v1::ListWorkersRequest(), &response));
                !s.ok())
              return Fail(s);
            if (*json)
              printf("%s\n", WorkersToJson(response).dump(2).c_str());
            else
              printf("%s", FormatWorkers(response).c_str());
            return 0;
          }};
}

}  // namespace

std::vector<Command> AddStoreCommands(CLI::App& app, CoordinatorFlags& coordinator) {
  std::vector<Command> commands;
  commands.push_back(AddResults(app, coordinator));
  commands.push_back(AddBest(app, coordinator));
  commands.push_back(AddExport(app, coordinator));
  commands.push_back(AddApply(app));
  commands.push_back(AddWorkers(app, coordinator));
  return commands;
}

}  // namespace mtune::client::cli
