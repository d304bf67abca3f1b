#include "cli/command.h"

namespace hetsched::cli {

void AddValidateCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("validate", "Check a cluster (and workload) file and summarize it");
  cmd->callback([&result] { result.exit_code = ReportError(util::Status::Internal("validate: in progress")); });
}

}  // namespace hetsched::cli
