// Running the built hetsched binary from tests: exit status and captured output.
// Commands run from the source tree, so relative paths like examples/... resolve.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "testing/build_paths.h"

namespace hetsched::testing {

struct CliRun {
  int status = -1;  // exit status; -1 if the binary could not run or was killed
  std::string out;
};

enum class Stderr { kDrop, kMerge };

// Runs `hetsched ARGS` (ARGS is passed through the shell).
inline CliRun RunHetsched(const std::string& args, Stderr stderr_mode = Stderr::kMerge) {
  const std::string cmd = std::string("cd ") + HETSCHED_SOURCE_DIR + " && " + HETSCHED_BINARY +
                          " " + args + (stderr_mode == Stderr::kMerge ? " 2>&1" : " 2>/dev/null");
  CliRun run;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) run.out.append(buf.data(), n);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace hetsched::testing
