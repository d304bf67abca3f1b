// A job of kind service submitted to the daemon: its command must say where the replica's port
// goes, and its load is measured, not read from a trace.
#include <gtest/gtest.h>

#include <string>

#include "daemon/job_request.h"
#include "model/catalog.h"

namespace hetsched::svc {
namespace {

constexpr const char* kHead =
    R"({"name":"chat","kind":"service","model":"llama-7b","stacks":["cuda"],)"
    R"("rate":[["0h",1]],"tokens":{"input":10,"output":10})";

util::Result<JobRequest> Parse(const std::string& rest) {
  return ParseJobRequest(std::string(kHead) + rest + "}", model::DeviceCatalog::BuiltIn());
}

TEST(ServiceRequest, TakesAServiceWhoseCommandHoldsThePort) {
  auto req = Parse(R"(,"command":["vllm","serve","m","--port={port}","--tp","{tp}"])");
  ASSERT_TRUE(req.ok()) << req.status().message();
  EXPECT_EQ(req->job.kind, model::JobKind::kService);
  ASSERT_TRUE(req->job.service.has_value());
  EXPECT_EQ(req->job.service->model, "llama-7b");
  EXPECT_EQ(req->job.command[3], "--port={port}");  // filled in per replica, not here
  EXPECT_TRUE(req->job.throughput.empty()) << "a service's speed is its serving model's";
  EXPECT_FALSE(req->speed_assumed);
}

TEST(ServiceRequest, RefusesACommandWithoutThePortAndATraceFile) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "request body: command: is missing (expected the argv that starts one replica"},
      {R"(,"command":["vllm","serve","m","--port","8000"])",
       "request body: command: no argument holds {port} (expected the port placeholder"},
  };
  for (const auto& [rest, message] : cases) {
    auto req = Parse(rest);
    ASSERT_FALSE(req.ok()) << rest;
    EXPECT_EQ(req.status().message().rfind(message, 0), 0u) << req.status().message();
  }
  auto traced =
      ParseJobRequest(R"({"name":"chat","kind":"service","model":"llama-7b","stacks":["cuda"],)"
                      R"("requests":"azure.csv","command":["s","{port}"]})",
                      model::DeviceCatalog::BuiltIn());
  ASSERT_FALSE(traced.ok());
  EXPECT_EQ(traced.status().message().rfind(
                "request body: requests: a trace file is for `hetsched simulate`", 0),
            0u)
      << traced.status().message();
}

// Replicas are jobs named NAME.rN within the 128 characters of a job name.
TEST(ServiceRequest, RefusesANameWithoutRoomForItsReplicas) {
  const std::string tail = R"("kind":"service","model":"llama-7b","stacks":["cuda"],)"
                           R"("rate":[["0h",1]],"tokens":{"input":10,"output":10},)"
                           R"("command":["s","{port}"]})";
  const auto parse = [&](size_t length) {
    return ParseJobRequest(R"({"name":")" + std::string(length, 'c') + R"(",)" + tail,
                           model::DeviceCatalog::BuiltIn());
  };
  EXPECT_TRUE(parse(120).ok());
  auto req = parse(121);
  ASSERT_FALSE(req.ok());
  EXPECT_EQ(req.status().message(),
            "request body: name: a service's name is at most 120 characters, got 121 (its "
            "replicas are jobs named NAME.rN, at most 128)");
}

}  // namespace
}  // namespace hetsched::svc
