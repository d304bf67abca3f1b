// The client against a real daemon (tests/testing/daemon.h) with one token of each role in its
// config: the operator's verbs (drain, undrain, whatif, plan live) with their exit statuses,
// and token errors that name where the token came from and which role a request needs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/build_paths.h"
#include "testing/daemon.h"

namespace {

namespace fs = std::filesystem;
using hetsched::testing::CommandResult;
using hetsched::testing::Daemon;
using hetsched::testing::RunCommand;
using hetsched::testing::TempDir;
using nlohmann::json;

constexpr const char* kAdmin = "admin-token-0123456789abcdef";
constexpr const char* kSubmit = "submit-token-0123456789abcdef";

class ClientOperator : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path config = dir_.path() / "serve.yaml";
    std::ofstream(config) << "tokens:\n  - {token: " << kAdmin << ", role: admin}\n"
                          << "  - {token: " << kSubmit << ", role: submit}\n";
    std::string error;
    daemon_ =
        Daemon::Start({dir_.path(), {"--config", config.string(), "--cluster", "v100=2"}}, &error);
    ASSERT_NE(daemon_, nullptr) << error;
  }

  // `hetsched ARGS` against the daemon from an empty folder (no ./hetsched.token), with
  // HETSCHED_TOKEN set to `env_token` ("" for unset).
  CommandResult Run(std::vector<std::string> args, const std::string& env_token = "") {
    std::vector<std::string> argv = {HETSCHED_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {"HETSCHED_SERVER=" + daemon_->url(), "HETSCHED_TOKEN=" + env_token},
                      60, elsewhere_.path().string());
  }

  std::string FirstNode() {
    const json nodes = json::parse(Run({"nodes", "--json"}).out, nullptr, false);
    return nodes.is_discarded() ? "" : nodes["nodes"][0]["name"].get<std::string>();
  }

  bool Drained(const std::string& node) {
    const json nodes = json::parse(Run({"nodes", "--json"}).out, nullptr, false);
    for (const json& n : nodes["nodes"]) {
      if (n["name"] == node) return n["drained"].get<bool>();
    }
    return false;
  }

  TempDir dir_, elsewhere_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ClientOperator, DrainAndUndrainANode) {
  const std::string node = FirstNode();
  ASSERT_FALSE(node.empty());
  CommandResult r = Run({"drain", node}, kAdmin);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "drained " + node + "\n");
  EXPECT_TRUE(Drained(node));
  r = Run({"undrain", node, "--json"}, kAdmin);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out, nullptr, false)["drained"], false) << r.out;
  EXPECT_FALSE(Drained(node));

  r = Run({"drain", "no-such-node"}, kAdmin);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no-such-node"), std::string::npos) << r.err;
}

TEST_F(ClientOperator, ALowRoleIsExplainedWithTheRoleNeeded) {
  const std::string node = FirstNode();
  const CommandResult r = Run({"drain", node}, kSubmit);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("this request needs the admin role"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the token from the HETSCHED_TOKEN environment variable is valid but its "
                       "role is lower"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(Drained(node));
}

TEST_F(ClientOperator, AnInvalidTokenNamesTheFileItWasReadFrom) {
  const fs::path file = elsewhere_.path() / "old.token";
  std::ofstream(file) << "not-the-token-0123456789\n";
  CommandResult r = Run({"drain", FirstNode(), "--token-file", file.string()});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(
      r.err.find("the token is not valid; the token sent came from --token-file " + file.string()),
      std::string::npos)
      << r.err;

  // The default file, in the folder the client runs in.
  std::ofstream(elsewhere_.path() / "hetsched.token") << "not-the-token-0123456789\n";
  r = Run({"whatif", "fifo"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("came from " + (elsewhere_.path() / "hetsched.token").string() +
                       " (the default: ./hetsched.token)"),
            std::string::npos)
      << r.err;
}

TEST_F(ClientOperator, NoTokenSaysWhereItLookedAndATokenFileThatCannotBeReadIsNamed) {
  CommandResult r = Run({"whatif", "fifo"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no token was sent: none of --token, --token-file or HETSCHED_TOKEN was "
                       "given, and there is no hetsched.token in " +
                       elsewhere_.path().string()),
            std::string::npos)
      << r.err;

  const std::string missing = (elsewhere_.path() / "missing.token").string();
  r = Run({"whatif", "fifo", "--token-file", missing});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--token-file " + missing + ": cannot read the token"), std::string::npos)
      << r.err;
}

TEST_F(ClientOperator, WhatIfComparesThePolicies) {
  CommandResult r = Run({"whatif", "fifo"}, kSubmit);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("candidate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fifo"), std::string::npos) << r.out;
  r = Run({"whatif", "no-such-policy"}, kSubmit);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no-such-policy"), std::string::npos) << r.err;
}

TEST_F(ClientOperator, PlanLiveAsksTheDaemon) {
  CommandResult r = Run({"plan", "live", "--model", "llama-7b", "--nodes", "all"}, kSubmit);
  const json plan = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(plan.is_discarded()) << r.out << r.err;
  EXPECT_EQ(plan["nodes"]["mode"], "all") << r.out;
  EXPECT_EQ(r.status, plan["feasible"].get<bool>() ? 0 : 1) << r.out << r.err;

  r = Run({"plan", "live", "--model", "no-such-model"}, kSubmit);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  r = Run({"plan", "live"}, kSubmit);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("give --model PRESET or --dag FILE"), std::string::npos) << r.err;
}

TEST_F(ClientOperator, EachVerbHasHelpAndAnUnreachableDaemonIsStatusOne) {
  for (const std::vector<std::string>& verb : std::vector<std::vector<std::string>>{
           {"drain"}, {"undrain"}, {"whatif"}, {"plan", "live"}}) {
    std::vector<std::string> args = verb;
    args.push_back("--help");
    const CommandResult r = Run(args);
    EXPECT_EQ(r.status, 0) << verb[0] << r.err;
    EXPECT_NE(r.out.find("--token-file"), std::string::npos) << r.out;
  }
  const CommandResult r = RunCommand(
      {HETSCHED_BINARY, "drain", "n", "--server", "http://127.0.0.1:1", "--token", kAdmin});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot reach the daemon"), std::string::npos) << r.err;
}

}  // namespace
