// `hetsched jobs` against a stand-in daemon (an HTTP server answering GET /v1/jobs with a job
// whose message is 300 bytes): the table cuts the message so that it stays readable, says
// so under the table, and `jobs --json` keeps the message whole.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "testing/build_paths.h"
#include "testing/daemon.h"

namespace {

using hetsched::testing::CommandResult;
using hetsched::testing::RunCommand;
using nlohmann::json;

// Answers GET /v1/jobs with `jobs` on 127.0.0.1 until destroyed.
class FakeDaemon {
 public:
  explicit FakeDaemon(json jobs) {
    server_.Get("/v1/jobs", [jobs](const httplib::Request&, httplib::Response& res) {
      res.set_content(json{{"jobs", jobs}}.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeDaemon() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

json Job(const std::string& name, const std::string& message) {
  return {{"name", name}, {"state", "failed"}, {"device_type", "v100"}, {"devices", json::array()},
          {"attempt", 3}, {"message", message}};
}

TEST(JobsTable, ALongMessageIsCutAndTheJsonKeepsItWhole) {
  std::string long_message;
  while (long_message.size() < 300) long_message += "start failed on node-7: no such file; ";
  FakeDaemon d(json::array({Job("long", long_message), Job("short", "exit status 1")}));
  const std::vector<std::string> env = {"HETSCHED_SERVER=" + d.url(), "HETSCHED_TOKEN=t"};

  const CommandResult table = RunCommand({HETSCHED_BINARY, "jobs"}, env, 30);
  ASSERT_EQ(table.status, 0) << table.out << table.err;
  std::istringstream lines(table.out);
  size_t widest = 0;
  for (std::string line; std::getline(lines, line);) widest = std::max(widest, line.size());
  EXPECT_LE(widest, 120u) << table.out;
  EXPECT_NE(table.out.find(long_message.substr(0, 57) + "..."), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find(long_message), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("exit status 1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(messages cut to 60 bytes; `hetsched jobs --json` has them "
                           "whole)"),
            std::string::npos)
      << table.out;

  const CommandResult whole = RunCommand({HETSCHED_BINARY, "jobs", "--json"}, env, 30);
  ASSERT_EQ(whole.status, 0) << whole.err;
  EXPECT_EQ(json::parse(whole.out)["jobs"][0]["message"], long_message);
}

TEST(JobsTable, ShortMessagesAreShownWholeWithoutANote) {
  FakeDaemon d(json::array({Job("short", "exit status 1")}));
  const CommandResult table =
      RunCommand({HETSCHED_BINARY, "jobs"}, {"HETSCHED_SERVER=" + d.url(), "HETSCHED_TOKEN=t"}, 30);
  ASSERT_EQ(table.status, 0) << table.out << table.err;
  EXPECT_NE(table.out.find("exit status 1"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("cut"), std::string::npos) << table.out;
}

}  // namespace
