#include <fmt/format.h>

#include <cstdio>

#include "cli/command.h"

namespace hetsched::cli {

int ReportError(const util::Status& status) {
  std::fprintf(stderr, "hetsched: %s\n", status.message().c_str());
  switch (status.code()) {
    case util::StatusCode::kInvalidArgument:
    case util::StatusCode::kNotFound:
    case util::StatusCode::kInfeasible:
    case util::StatusCode::kAlreadyExists:
    case util::StatusCode::kMismatch:
      return kExitBadInput;
    default:
      return kExitFailure;
  }
}

int Main(int argc, char** argv) {
  CLI::App app{
      "hetsched: a heterogeneous compute scheduler. Splits jobs across CPUs, GPUs and NPUs,\n"
      "matches each piece to a device that can run it, routes data along the shortest path,\n"
      "and saves power.",
      "hetsched"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hetsched 0.1.0");
  CommandResult result;
  AddValidateCommand(app, result);
  AddCatalogCommand(app, result);
  AddPlanCommand(app, result);
  AddGenDagCommand(app, result);
  AddSimulateCommand(app, result);
  AddCompareCommand(app, result);
  AddGenTraceCommand(app, result);
  AddDemoCommand(app, result);
  AddServeCommand(app, result);
  AddK8sReplayCommand(app, result);
  AddClientCommands(app, result);
  AddOperatorCommands(app, result);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }
  return result.exit_code;
}

}  // namespace hetsched::cli
