// The `mtune` command line, one group of subcommands per file: each group adds its
// subcommands and their options to the app and hands back what runs the one that
// parsing selects. main.cc only builds the app and dispatches.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/mtune.grpc.pb.h"
#include "proto/transport_security.h"

namespace mtune::client::cli {

// The exit status of a command that failed (an error, a failed candidate or job).
inline constexpr int kFailed = 1;

// Prints `status`'s message as mtune's error and returns kFailed.
int Fail(const absl::Status& status);

// How to reach the coordinator. The address: --coordinator after the subcommand,
// else before it (`mtune --coordinator H:P status 3`), else $MTUNE_COORDINATOR (a
// cluster's address set once per shell), else loopback. Resolved after parsing
// (Connect): CLI11 would apply the environment over a flag given at the other level.
struct CoordinatorFlags {
  std::string address;                    // --coordinator after the subcommand
  std::string address_before_subcommand;  // --coordinator before it
  transport::ClientSecurity security;
  std::string token_file;
};

// Adds --coordinator before any subcommand to `app`.
void AddCoordinatorAddress(CLI::App& app, CoordinatorFlags& flags);
// Adds --coordinator and the security flags (--tls-ca, --token-file, --insecure) to
// a subcommand that talks to the coordinator.
void AddCoordinatorFlags(CLI::App* command, CoordinatorFlags& flags);
// Connects as `flags` say (see CoordinatorFlags for the address).
absl::StatusOr<std::unique_ptr<mtune::v1::Tuner::Stub>> Connect(CoordinatorFlags flags);

// The best strategy of `problem` as the coordinator ranks it (on `target`, or the
// best of any target when empty).
absl::StatusOr<mtune::v1::BestStrategy> FetchBest(mtune::v1::Tuner::Stub& stub, const std::string& problem,
                                                  const std::string& target);

// A subcommand and what runs it once it is the one parsed; returns the exit status.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// submit, confirm, status, explain, watch, cancel, jobs (job_commands.cc).
std::vector<Command> AddJobCommands(CLI::App& app, CoordinatorFlags& coordinator);
// results, best, export, apply, workers (store_commands.cc).
std::vector<Command> AddStoreCommands(CLI::App& app, CoordinatorFlags& coordinator);
// families, measure, payload, instantiate, space, and the hidden sandbox server
// that `measure` starts (local_commands.cc).
std::vector<Command> AddLocalCommands(CLI::App& app);

}  // namespace mtune::client::cli
