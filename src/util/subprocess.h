// Running a helper program (a vendor tool, a Slurm command) and reading what it printed, with a
// deadline: the daemon's control loop calls these and must never hang on one.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace hetsched::util {

struct CommandOptions {
  double timeout_s = 30;
  // More output than this (stdout and stderr together) kills the program: an error.
  size_t max_output = 4 * 1024 * 1024;
  // Set in the program's environment on top of this process's (e.g. SLURM_CONF).
  std::map<std::string, std::string> env;
  bool capture_stderr = false;  // else stderr goes to /dev/null
};

struct CommandResult {
  std::string out;
  std::string err;         // when captured
  int status = 0;          // waitpid status
  bool succeeded() const;  // exited with status 0
  // "exit status 3: <first line of stderr, else stdout>" or "killed by signal 9".
  std::string Failure() const;
};

// Runs `path args...` in its own process group, stdin from /dev/null, all signals at their
// defaults and unblocked (the daemon blocks SIGTERM in its threads). kIoError when it cannot be
// started, runs past the timeout or prints too much (its group is killed then); a program
// that exits non-zero is a result, not an error (see succeeded()).
Result<CommandResult> RunCommand(const std::string& path, const std::vector<std::string>& args,
                                 const CommandOptions& options);

// The first executable regular file called `name` in the ':'-separated directories ("" when
// none; the current directory is never searched).
std::string FindExecutable(const std::string& name, std::string_view search_path);

// The first non-empty line of `text`, trimmed, at most 200 characters.
std::string FirstLine(std::string_view text);

}  // namespace hetsched::util
