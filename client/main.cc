// mtune: the command-line client. Talks to a coordinator over gRPC; `measure`,
// `families` and the other local commands work without one. The subcommands live
// in job_commands.cc, store_commands.cc and local_commands.cc (client/cli.h).
#include "CLI/CLI.hpp"
#include "client/cli.h"

int main(int argc, char** argv) {
  namespace cli = mtune::client::cli;
  CLI::App app{"mtune: tune MLIR transform-dialect strategies for tensor kernels"};
  app.require_subcommand(1);
  cli::CoordinatorFlags coordinator;
  cli::AddCoordinatorAddress(app, coordinator);
  std::vector<cli::Command> commands = cli::AddJobCommands(app, coordinator);
  for (auto group : {cli::AddStoreCommands(app, coordinator), cli::AddLocalCommands(app)})
    commands.insert(commands.end(), group.begin(), group.end());
  CLI11_PARSE(app, argc, argv);
  for (const cli::Command& command : commands)
    if (*command.app) return command.run();
  return 0;
}
