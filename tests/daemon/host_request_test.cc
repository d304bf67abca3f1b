// The daemon takes jobs' host cores and memory per worker (POST /v1/jobs bodies): checked as the
// workload reader checks them, held on the nodes while jobs run, and named by `why`.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/virtual/virtual_backend.h"
#include "daemon/job_request.h"
#include "daemon/service.h"
#include "model/io/cluster_reader.h"
#include "testing/temp_dir.h"
#include "util/file.h"

namespace hetsched::svc {
namespace {

using hetsched::testing::TempDir;
using hetsched::testing::WaitUntil;

TEST(HostRequest, ParsedFromTheBodyWithLocatedErrors) {
  const model::DeviceCatalog& catalog = model::DeviceCatalog::BuiltIn();
  auto req = ParseJobRequest(
      R"({"name":"a","stacks":["cuda"],"work":1,"cores":8,"host_memory":"64GiB"})", catalog);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->job.cores_per_worker, 8);
  EXPECT_EQ(req->job.host_memory_per_worker, 64ull << 30);
  auto bad = ParseJobRequest(R"({"name":"a","stacks":["cuda"],"work":1,"cores":-1})", catalog);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "request body:1: cores: is -1 (expected a whole number of cores from 0 to 1000000)");
  bad = ParseJobRequest(R"({"name":"a","stacks":["cuda"],"work":1,"host_memory":"lots"})", catalog);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("request body:1: host_memory: "), std::string::npos)
      << bad.status().message();
}

struct Daemon {
  Logger logger{LogLevel::kError, [](std::string_view) {}};
  MetricsRegistry metrics;
  std::unique_ptr<Service> service;
};

TEST(HostRequest, SecondJobWaitsForTheNodesCoresAndWhySaysSo) {
  TempDir dir;
  const std::string cluster_file = dir.File("c.yaml");
  ASSERT_TRUE(util::WriteFile(cluster_file, R"(name: one
racks: [{name: r, uplink_bandwidth: 100Gb/s, latency: 1us}]
nodes:
  - name: gpu-1
    devices: [{type: v100, count: 2}]
    nic: {bandwidth: 100Gb/s, latency: 2us}
    cores: 16
)")
                  .ok());
  auto d = std::make_unique<Daemon>();
  auto c = model::io::LoadCluster(cluster_file);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  VirtualBackendOptions vo;
  vo.nodes = {"gpu-1"};
  vo.time_scale = 1;
  auto store = Store::Open(dir.File("h.db"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ServiceOptions so;
  so.policy = "fifo";
  so.time_scale = 1;
  so.tick_s = 0.005;
  auto s = Service::Create(std::move(c).value(), std::make_unique<VirtualBackend>(vo),
                           std::move(store).value(), so, &d->logger, &d->metrics);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  d->service = std::move(s).value();
  ASSERT_TRUE(d->service->Start().ok());
  Service& service = *d->service;
  const auto submit = [&](const std::string& body) -> util::Status {
    auto req = ParseJobRequest(body, service.cluster().catalog);
    if (!req.ok()) return req.status();
    auto r = service.Submit(std::move(req->job), req->spec_json, "");
    return r.ok() ? util::Status::Ok() : r.status();
  };
  ASSERT_TRUE(submit(R"({"name":"a","stacks":["cuda"],"work":1e6,"cores":12})").ok());
  ASSERT_TRUE(submit(R"({"name":"b","stacks":["cuda"],"work":1e6,"cores":12})").ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto v = service.Get("a");
    return v.ok() && v->state == JobState::kRunning;
  }));
  auto why = service.Why("b");
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->find("v100-32g has the free devices but their nodes lack free host cores"),
            std::string::npos)
      << *why;
  // More cores than the node has: refused with the reason.
  const util::Status refused = submit(R"({"name":"c","stacks":["cuda"],"work":1,"cores":32})");
  EXPECT_EQ(refused.code(), util::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("hold 0 worker(s) with 32 cores each"), std::string::npos)
      << refused.message();
  ASSERT_TRUE(service.Cancel("a").ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto v = service.Get("b");
    return v.ok() && v->state == JobState::kRunning;
  }));
}

}  // namespace
}  // namespace hetsched::svc
