// One daemon per port and per database: a second `hetsched serve` on a port or a database
// that a running daemon holds exits with status 2, naming the address or the file, and never
// says it listens. Both daemons are real processes on 127.0.0.1 (tests/testing/daemon.h); the
// first is stopped by its destructor, the second killed at its deadline even when it runs on.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <string>

#include "testing/build_paths.h"
#include "testing/daemon.h"

namespace {

using hetsched::testing::CommandResult;
using hetsched::testing::Daemon;
using hetsched::testing::RunCommand;
using hetsched::testing::TempDir;

// `hetsched serve ARGS` in `dir`, killed after 20 s (a second daemon that wrongly starts).
CommandResult SecondServe(const std::filesystem::path& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {HETSCHED_BINARY, "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {}, 20, dir.string());
}

TEST(ServeSingle, ASecondDaemonOnAPortInUseExitsNamingTheAddress) {
  TempDir first_dir, second_dir;
  std::string error;
  auto first = Daemon::Start({first_dir.path(), {}}, &error);
  ASSERT_NE(first, nullptr) << error;
  const std::string address = "127.0.0.1:" + std::to_string(first->port());

  const CommandResult r = SecondServe(
      second_dir.path(), {"--listen", address, "--db", (second_dir.path() / "h.db").string()});
  EXPECT_FALSE(r.timed_out) << "the second daemon kept running; its stdout: " << r.out;
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot listen on " + address), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in use"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("listening on"), std::string::npos) << r.out;

  // The first one still answers, alone on its port.
  httplib::Client client(first->url());
  client.set_connection_timeout(2);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  EXPECT_TRUE(first->running());
}

TEST(ServeSingle, ASecondDaemonOnAHeldDatabaseExitsNamingTheFile) {
  TempDir first_dir, second_dir;
  std::string error;
  auto first = Daemon::Start({first_dir.path(), {}}, &error);
  ASSERT_NE(first, nullptr) << error;

  const CommandResult r =
      SecondServe(second_dir.path(), {"--listen", "127.0.0.1:0", "--db", first->db()});
  EXPECT_FALSE(r.timed_out) << "the second daemon kept running; its stdout: " << r.out;
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(first->db() + ": another hetsched serve uses this database"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("listening on"), std::string::npos) << r.out;
  EXPECT_TRUE(first->running());
}

}  // namespace
