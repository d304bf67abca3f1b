// One decision core, two drivers: the same workload through the simulator (virtual time) and
// through the daemon on its virtual backend (real time, scaled) must place the same jobs on the
// same device types in the same order, with tenants too (both take turns by fair share).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "backends/virtual/virtual_backend.h"
#include "daemon/job_request.h"
#include "daemon/service.h"
#include "model/io/cluster_reader.h"
#include "model/io/tenants_reader.h"
#include "sim/engine.h"
#include "testing/temp_dir.h"

namespace hetsched::svc {
namespace {

constexpr const char* kCluster = "v100=2,k80=2";
constexpr double kScale = 400;  // modeled seconds per wall second

// Jobs of 1 or 2 workers, all submitted at once; their lengths are spread so that no two
// completions in the simulation fall within kMinGapS of each other (checked below): the
// daemon's timing jitter (milliseconds, i.e. a few modeled seconds) cannot reorder them.
constexpr double kMinGapS = 20;
// With `tenants`, every third job is vision's and the others llm's, and every job has one
// worker. Tenants take turns by usage, which grows between events: the daemon decides at every
// tick while jobs wait, the simulator at events only, so where fifo's head is a gang that does
// not fit, a job of the other tenant may become the head and start between two events in the
// daemon but only at the next event in the simulator. With single workers nothing waits while
// a device is free, and the two start the same jobs at the same events.
std::vector<std::string> JobBodies(int variant, bool tenants) {
  std::vector<std::string> out;
  for (int i = 0; i < 14; ++i) {
    const int gang = i % 3 == 2 && !tenants ? 2 : 1;
    const double work = 2.0 * (120 + 41 * ((i * (7 + variant)) % 11) + (9 + variant) * i);
    const std::string tenant =
        tenants ? fmt::format(R"(,"tenant":"{}")", i % 3 == 0 ? "vision" : "llm") : "";
    out.push_back(fmt::format(R"({{"name":"job-{:02}","stacks":["cuda"],"gang_size":{},"work":{},)"
                              R"("throughput":{{"v100":2,"k80":1}}{}}})",
                              i, gang, work, tenant));
  }
  return out;
}

// Two tenants weighted 1:2, each guaranteed one device of a type, resolved against `cluster`.
std::shared_ptr<const model::Tenants> TwoTenants(const model::Cluster& cluster) {
  model::Tenants t;
  t.list.resize(2);
  t.list[0].name = "vision";
  t.list[0].per_type = {{"v100", 1}};
  t.list[1].name = "llm";
  t.list[1].weight = 2;
  t.list[1].per_type = {{"k80", 1}};
  EXPECT_TRUE(model::io::ResolveTenants(cluster, &t).ok());
  return std::make_shared<const model::Tenants>(std::move(t));
}

struct Start {
  std::string job;
  std::string type;
  double at_s;
};

// The simulator's and the daemon's starts of the same workload under fifo, with `tenants` when
// given.
void ExpectTheSameStarts(std::shared_ptr<const model::Tenants> tenants) {
  auto cluster = model::io::LoadCluster(kCluster);
  ASSERT_TRUE(cluster.ok());
  // The first variant of the workload whose simulated completions are kMinGapS apart.
  std::vector<JobRequest> requests;
  model::Workload workload;
  std::vector<Start> expected;
  for (int variant = 0; variant < 40 && expected.empty(); ++variant) {
    requests.clear();
    workload.jobs.clear();
    for (const std::string& body : JobBodies(variant, tenants != nullptr)) {
      auto r = ParseJobRequest(body, cluster->catalog);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      model::Job job = r->job;
      job.id = model::JobId(static_cast<int32_t>(workload.jobs.size()));
      workload.jobs.push_back(job);
      requests.push_back(std::move(r).value());
    }
    // The simulator: every job arrives at 0; decisions at every event.
    sim::SimOptions so;
    so.policy = "fifo";
    so.sched.tenants = tenants;
    so.timeline_sample_s = 60;
    auto sim = sim::Simulate(*cluster, workload, nullptr, so);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    ASSERT_EQ(sim->timeline.runs.size(), workload.jobs.size()) << "each job runs once (fifo)";
    std::vector<double> ends;
    for (const sim::RunSpan& run : sim->timeline.runs) ends.push_back(run.end_s);
    std::sort(ends.begin(), ends.end());
    bool apart = true;
    for (size_t i = 1; i < ends.size(); ++i) apart = apart && ends[i] - ends[i - 1] >= kMinGapS;
    if (!apart) continue;
    for (const sim::RunSpan& run : sim->timeline.runs) {
      expected.push_back({workload.jobs[run.job].name, sim->timeline.types[run.type], run.start_s});
    }
  }
  ASSERT_FALSE(expected.empty()) << "no variant keeps completions apart";
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Start& a, const Start& b) { return a.at_s < b.at_s; });

  // The daemon: the same jobs submitted at once, run by the virtual backend in scaled time.
  hetsched::testing::TempDir dir;
  Logger logger(LogLevel::kError, [](std::string_view) {});
  MetricsRegistry metrics;
  VirtualBackendOptions vo;
  for (const model::Node& n : cluster->nodes) vo.nodes.push_back(n.name);
  vo.time_scale = kScale;
  auto store = Store::Open(dir.File("h.db"));
  ASSERT_TRUE(store.ok());
  ServiceOptions opts;
  opts.policy = "fifo";
  opts.scheduler.tenants = tenants;
  opts.time_scale = kScale;
  opts.tick_s = 0.002;
  auto service = Service::Create(*cluster, std::make_unique<VirtualBackend>(vo),
                                 std::move(store).value(), opts, &logger, &metrics);
  ASSERT_TRUE(service.ok());
  ASSERT_TRUE((*service)->Start().ok());
  for (JobRequest& r : requests) {
    ASSERT_TRUE((*service)->Submit(r.job, r.spec_json, "").ok());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<JobView> done;
  while (std::chrono::steady_clock::now() < deadline) {
    auto list = (*service)->List({});
    ASSERT_TRUE(list.ok());
    if (std::all_of(list->jobs.begin(), list->jobs.end(),
                    [](const JobView& v) { return v.state == JobState::kCompleted; })) {
      done = list->jobs;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(done.size(), workload.jobs.size()) << "every job completes";
  (*service).reset();

  // A completed job's view keeps the type it ran on and when it first started.
  std::vector<Start> got;
  for (const JobView& v : done) {
    EXPECT_EQ(v.attempt, 1) << v.name << " ran once, as in the simulator";
    got.push_back({v.name, v.device_type, v.started_s});
  }
  std::stable_sort(got.begin(), got.end(),
                   [](const Start& a, const Start& b) { return a.at_s < b.at_s; });
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].job, expected[i].job) << "start #" << i;
    EXPECT_EQ(got[i].type, expected[i].type) << "start #" << i << ": " << got[i].job;
  }
}

TEST(SameDecisions, SimulatorAndDaemonPlaceAlike) { ExpectTheSameStarts(nullptr); }

TEST(SameDecisions, SimulatorAndDaemonPlaceAlikeWithTenants) {
  auto cluster = model::io::LoadCluster(kCluster);
  ASSERT_TRUE(cluster.ok());
  ExpectTheSameStarts(TwoTenants(*cluster));
}

}  // namespace
}  // namespace hetsched::svc
