// A real Slurm cluster on this machine for a test (scripts/slurm-testbed.sh): brought up in a
// folder of the test's own, always torn down by the destructor, even when the test fails.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "testing/build_paths.h"
#include "testing/daemon.h"

namespace hetsched::testing {

class SlurmTestBed {
 public:
  // Why this machine cannot run a test bed ("" when it can): the bed needs root and Debian's
  // Slurm and munge packages (scripts/install-deps.sh installs them; CI runs as root).
  static std::string Unavailable() {
    if (geteuid() != 0) return "the Slurm test bed needs root";
    for (const char* tool :
         {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/sbatch"}) {
      if (access(tool, X_OK) != 0) {
        return std::string(tool) + " is missing (scripts/install-deps.sh installs it)";
      }
    }
    return "";
  }

  // Brings a bed up in `dir` (which must not exist or be empty). nullptr with `*error` (the
  // script's output) when it did not come up.
  static std::unique_ptr<SlurmTestBed> Up(const std::filesystem::path& dir, std::string* error) {
    auto bed = std::unique_ptr<SlurmTestBed>(new SlurmTestBed(dir));
    CommandResult r = RunCommand({"/bin/bash", Script(), "up", dir.string()}, {}, 60);
    if (r.status != 0) {
      *error = "slurm-testbed.sh up failed:\n" + r.out + r.err;
      return nullptr;
    }
    return bed;
  }

  ~SlurmTestBed() { RunCommand({"/bin/bash", Script(), "down", dir_.string()}, {}, 60); }
  SlurmTestBed(const SlurmTestBed&) = delete;
  SlurmTestBed& operator=(const SlurmTestBed&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::string conf() const { return (dir_ / "slurm.conf").string(); }
  // Runs a Slurm client command (e.g. {"sbatch", ...}) against this bed.
  CommandResult Slurm(std::vector<std::string> argv, double timeout_s = 30) const {
    argv[0] = "/usr/bin/" + argv[0];
    return RunCommand(argv, {"SLURM_CONF=" + conf()}, timeout_s, (dir_ / "work").string());
  }

 private:
  explicit SlurmTestBed(std::filesystem::path dir) : dir_(std::move(dir)) {}
  static std::string Script() {
    return std::string(HETSCHED_SOURCE_DIR) + "/scripts/slurm-testbed.sh";
  }
  std::filesystem::path dir_;
};

}  // namespace hetsched::testing
