// How subcommands plug into the hetsched command line. Each command lives in its own
// cmd_<name>.cc and exposes one Add<Name>Command; cli/main_entry.cc lists them.
#pragma once

#include <CLI/CLI.hpp>

#include "util/status.h"

namespace hetsched::cli {

// Exit statuses: 0 success, 1 a failure that is not the input's fault, 2 unusable input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

// Set by the command that ran; main returns it.
struct CommandResult {
  int exit_code = kExitOk;
};

// Prints "hetsched: <message>" to stderr and returns the exit status that fits the error.
int ReportError(const util::Status& status);

void AddValidateCommand(CLI::App& app, CommandResult& result);
void AddCatalogCommand(CLI::App& app, CommandResult& result);
void AddPlanCommand(CLI::App& app, CommandResult& result);
void AddGenDagCommand(CLI::App& app, CommandResult& result);
void AddSimulateCommand(CLI::App& app, CommandResult& result);
void AddCompareCommand(CLI::App& app, CommandResult& result);
void AddGenTraceCommand(CLI::App& app, CommandResult& result);
void AddDemoCommand(CLI::App& app, CommandResult& result);
void AddServeCommand(CLI::App& app, CommandResult& result);
void AddK8sReplayCommand(CLI::App& app, CommandResult& result);
// submit, jobs, cancel, why, nodes: the daemon's client (cli/cmd_client.cc).
void AddClientCommands(CLI::App& app, CommandResult& result);
// drain, undrain, whatif: the operator's verbs against the daemon (cli/cmd_operator.cc).
void AddOperatorCommands(CLI::App& app, CommandResult& result);
// Children of `plan` (cli/cmd_plan.cc adds them).
void AddPlanModelCommand(CLI::App& plan, CommandResult& result);
void AddPlanDagCommand(CLI::App& plan, CommandResult& result);
void AddPlanServiceCommand(CLI::App& plan, CommandResult& result);
// `plan live`: a plan on a running daemon's cluster (cli/cmd_operator.cc).
void AddPlanLiveCommand(CLI::App& plan, CommandResult& result);

// Runs the command line; returns the process exit status.
int Main(int argc, char** argv);

}  // namespace hetsched::cli
