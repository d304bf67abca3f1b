#include "cli/command.h"

namespace hetsched::cli {

void AddCatalogCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("catalog", "List the built-in device types");
  cmd->callback([&result] { result.exit_code = ReportError(util::Status::Internal("catalog: in progress")); });
}

}  // namespace hetsched::cli
