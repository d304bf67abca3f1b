// What `hetsched serve` leaves when it cannot start, and what it refuses at once: a daemon that
// exits at start-up (port in use, an unknown policy, a local backend's cluster of two nodes,
// Slurm not answering) removes the database, lock, token and state folders that this start
// made, and leaves what was there before; a database in a missing folder is named with the fix;
// a job without a command on a backend that runs commands is a 400 at submission. Daemons are
// real processes (tests/testing/daemon.h), always stopped.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "testing/build_paths.h"
#include "testing/daemon.h"

namespace {

namespace fs = std::filesystem;
using hetsched::testing::CommandResult;
using hetsched::testing::Daemon;
using hetsched::testing::ReadFileText;
using hetsched::testing::RunCommand;
using hetsched::testing::TempDir;

// Every path under `dir`, relative to it.
std::set<std::string> Tree(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += n + " ";
  return out;
}

// `hetsched serve ARGS` in `dir`, killed after 20 s (a daemon that wrongly starts).
CommandResult Serve(const fs::path& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {HETSCHED_BINARY, "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {}, 20, dir.string());
}

TEST(ServeStart, AStartThatCannotListenLeavesNothingItMade) {
  TempDir first_dir, dir;
  std::string error;
  auto first = Daemon::Start({first_dir.path(), {}}, &error);
  ASSERT_NE(first, nullptr) << error;
  // A token that was there before the start stays, as it was.
  const fs::path token = dir.path() / "hetsched.token";
  std::ofstream(token) << "0123456789abcdef0123456789abcdef\n";

  const CommandResult r =
      Serve(dir.path(), {"--listen", "127.0.0.1:" + std::to_string(first->port()), "--db",
                         (dir.path() / "h.db").string()});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot listen on"), std::string::npos) << r.err;
  EXPECT_EQ(Tree(dir.path()), std::set<std::string>{"hetsched.token"}) << Join(Tree(dir.path()));
  EXPECT_EQ(ReadFileText(token), "0123456789abcdef0123456789abcdef\n");
}

TEST(ServeStart, AStartWithAnUnknownPolicyLeavesNothingItMade) {
  TempDir dir;
  const CommandResult r = Serve(dir.path(), {"--listen", "127.0.0.1:0", "--db",
                                             (dir.path() / "h.db").string(), "--policy", "nope"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  EXPECT_EQ(Tree(dir.path()), std::set<std::string>{}) << Join(Tree(dir.path()));
}

// Tenants are checked against the cluster before anything is made: a quota larger than it, a
// cycle or an unknown parent, a weight, limit or quota below zero, or a token of a tenant the
// config does not have, exits 2 with the place in the file.
TEST(ServeStart, BadTenantsExitTwoAndLeaveNothing) {
  TempDir dir, config_dir;
  const std::string config = (config_dir.path() / "serve.yaml").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cluster: v100=2\ntenants:\n  - {name: vision, quota: {v100: 3}}\n",
       "serve.yaml:3:27: tenant vision: quota.v100: 3 is more than the cluster's 2"},
      {"cluster: v100=2\ntenants:\n  - {name: a, quota: {v100: 2}}\n  - {name: b, quota: "
       "{v100: 1}}\n",
       "serve.yaml:4:22: tenant b: quota.v100-32g: the roots guarantee 3 together, more than the 2 "
       "there are"},
      {"cluster: v100=4\ntenants:\n  - {name: p, quota: {v100: 2}}\n  - {name: c1, parent: p, "
       "quota: {v100: 2}}\n  - {name: c2, parent: p, quota: {v100: 1}}\n",
       "serve.yaml:5:34: tenant c2: quota.v100-32g: the children of p guarantee 3 together, more "
       "than the 2 there are"},
      {"cluster: v100=2\ntenants:\n  - {name: a, quota: {normalized: 3}}\n",
       "serve.yaml:3:22: tenant a: quota.normalized: the roots guarantee 3 reference devices "
       "together, more than 2"},
      {"tenants:\n  - {name: a, parent: b}\n  - {name: b, parent: a}\n",
       "serve.yaml:2:23: tenants[0].parent: 'a' is in a cycle of parents (expected a tree: no "
       "tenant its own ancestor)"},
      {"tenants:\n  - {name: a, parent: nobody}\n",
       "serve.yaml:2:23: tenants[0].parent: 'nobody' is not a tenant (expected one of a)"},
      {"tenants:\n  - {name: a, weight: -1}\n",
       "serve.yaml:2:23: tenants[0].weight: is -1 (expected a positive number)"},
      {"tenants:\n  - {name: a, borrow_limit: -2}\n",
       "serve.yaml:2:29: tenants[0].borrow_limit: is '-2' (expected a number >= 0, in the unit of "
       "the tenant's quota)"},
      {"tenants:\n  - {name: a, lend_limit: -0.5}\n",
       "serve.yaml:2:27: tenants[0].lend_limit: is '-0.5' (expected a number >= 0"},
      {"tenants:\n  - {name: a, quota: {v100: -1}}\n",
       "serve.yaml:2:29: tenants[0].quota.v100: -1 is out of range (expected a whole number from "
       "0"},
      {"tenants:\n  - {name: a, quota: {normalized: -3}}\n",
       "serve.yaml:2:35: tenants[0].quota.normalized: is '-3' (expected reference devices, a "
       "number "
       ">= 0)"},
      {"tenants:\n  - {name: vision}\ntokens:\n  - {token: t-0123456789abcdef, role: read, "
       "tenant: llm}\n",
       "serve.yaml:4:53: tokens[0].tenant: 'llm' is not a tenant (expected one of vision)"}};
  for (const auto& [text, message] : cases) {
    std::ofstream(config) << text;
    const CommandResult r = Serve(dir.path(), {"--config", config, "--listen", "127.0.0.1:0",
                                               "--db", (dir.path() / "h.db").string()});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(Tree(dir.path()), std::set<std::string>{}) << Join(Tree(dir.path()));
  }
}

TEST(ServeStart, ALocalBackendRefusingItsClusterLeavesNothingItMade) {
  TempDir dir;
  const CommandResult r =
      Serve(dir.path(), {"--listen", "127.0.0.1:0", "--db", (dir.path() / "h.db").string(),
                         "--backend", "local", "--cluster", "xeon-8380=2"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("must have one node"), std::string::npos) << r.err;
  EXPECT_EQ(Tree(dir.path()), std::set<std::string>{}) << Join(Tree(dir.path()));
}

TEST(ServeStart, ASlurmThatDoesNotAnswerLeavesNoOutputFolder) {
  TempDir dir, tools;
  // Slurm's five tools, each failing as a client does when slurmctld is down.
  for (const char* tool : {"sbatch", "scontrol", "scancel", "sinfo", "squeue"}) {
    const fs::path p = tools.path() / tool;
    std::ofstream(p) << "#!/bin/sh\necho 'Unable to contact slurm controller' >&2\nexit 1\n";
    fs::permissions(p, fs::perms::owner_all);
  }
  const fs::path config = tools.path() / "serve.yaml";
  std::ofstream(config) << "backend: slurm\nslurm:\n  bin_dir: " << tools.path().string()
                        << "\n  output_dir: " << (dir.path() / "out" / "hetsched").string() << "\n";
  const CommandResult r = Serve(dir.path(), {"--config", config.string(), "--listen", "127.0.0.1:0",
                                             "--db", (dir.path() / "h.db").string()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("Slurm cannot be reached"), std::string::npos) << r.err;
  EXPECT_EQ(Tree(dir.path()), std::set<std::string>{}) << Join(Tree(dir.path()));
}

TEST(ServeStart, ADatabaseHeldByAnotherDaemonIsLeftAsItWas) {
  TempDir dir, other;
  std::string error;
  auto first = Daemon::Start({dir.path(), {}}, &error);
  ASSERT_NE(first, nullptr) << error;
  const std::set<std::string> before = Tree(dir.path());
  const std::string token = first->token();

  const CommandResult r = Serve(other.path(), {"--listen", "127.0.0.1:0", "--db", first->db()});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(Tree(dir.path()), before) << Join(Tree(dir.path()));
  EXPECT_EQ(first->token(), token);
  EXPECT_EQ(Tree(other.path()), std::set<std::string>{}) << Join(Tree(other.path()));
  EXPECT_TRUE(first->running());
}

TEST(ServeStart, ADatabaseInAMissingFolderIsNamedWithTheFix) {
  TempDir dir;
  const fs::path missing = dir.path() / "state";
  const CommandResult r =
      Serve(dir.path(), {"--listen", "127.0.0.1:0", "--db", (missing / "h.db").string()});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "hetsched: database " + (missing / "h.db").string() + ": its folder " +
                       missing.string() + " does not exist; create it (mkdir -p " +
                       missing.string() +
                       ") or choose another with --db (or database: in the config)\n");
  EXPECT_EQ(Tree(dir.path()), std::set<std::string>{}) << Join(Tree(dir.path()));
}

TEST(ServeStart, AJobWithoutACommandIsRefusedWhereCommandsRun) {
  TempDir dir;
  std::string error;
  auto d = Daemon::Start({dir.path(), {"--backend", "local", "--cluster", "xeon-8380=1"}}, &error);
  ASSERT_NE(d, nullptr) << error;
  CommandResult r =
      d->Client({"submit", "--name", "bare", "--stacks", "x86_64", "--duration", "1m"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("command: missing (the local backend runs each job's command"),
            std::string::npos)
      << r.err;
  r = d->Client({"jobs", "--json"});
  EXPECT_EQ(r.out.find("bare"), std::string::npos) << "it was accepted: " << r.out;

  // The virtual backend models jobs: no command needed.
  TempDir vdir;
  auto v =
      Daemon::Start({vdir.path(), {"--backend", "virtual", "--cluster", "xeon-8380=1"}}, &error);
  ASSERT_NE(v, nullptr) << error;
  r = v->Client({"submit", "--name", "bare", "--stacks", "x86_64", "--duration", "1m"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

}  // namespace
