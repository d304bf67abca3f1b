// One decision core, two drivers, with preemption: an owner takes its guarantee back from a
// borrower. The simulator (virtual time, waking for the full decision due) and the daemon on its
// virtual backend (real time, scaled; it decides on its ticks) must stop the same runs and
// start the same jobs on the same device types, at the same modeled times within the daemon's
// timing jitter.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

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
// A checkpoint write longer than kToleranceS, so that one taken as instant shows.
constexpr double kCheckpointSaveS = 120, kRestoreS = 60, kPreemptIntervalS = 300;
// The owner's jobs arrive here, between the first full decision and the next, 300 s later.
constexpr double kOwnerArrivalS = 60;
// How far apart the two drivers' times of the same step may be, in modeled seconds: the
// daemon's ticks and its thread's wake-ups (tens of wall milliseconds on a loaded machine,
// times kScale), far below the preempt interval that separates one decision from the next.
constexpr double kToleranceS = 30;

// research borrows every device with 4 CUDA jobs at 0 (600 s of work on a V100, 1,200 on a
// K80); vision, guaranteed both V100s, submits 2 jobs of 600 s that run on V100s only at
// kOwnerArrivalS.
std::vector<std::string> JobBodies() {
  std::vector<std::string> out;
  for (int i = 0; i < 4; ++i) {
    out.push_back(fmt::format(R"({{"name":"research-{}","stacks":["cuda"],"work":1200,)"
                              R"("throughput":{{"v100":2,"k80":1}},"tenant":"research"}})",
                              i));
  }
  for (int i = 0; i < 2; ++i) {
    out.push_back(fmt::format(R"({{"name":"vision-{}","stacks":["cuda"],"work":600,)"
                              R"("throughput":{{"v100":1}},"tenant":"vision"}})",
                              i));
  }
  return out;
}

std::shared_ptr<const model::Tenants> OwnerAndBorrower(const model::Cluster& cluster) {
  model::Tenants t;
  t.list.resize(2);
  t.list[0].name = "vision";
  t.list[0].per_type = {{"v100", 2}};
  t.list[1].name = "research";
  EXPECT_TRUE(model::io::ResolveTenants(cluster, &t).ok());
  return std::make_shared<const model::Tenants>(std::move(t));
}

// One step of a job's life as both drivers report it: placed on a type, or stopped.
struct Step {
  std::string what;  // "place TYPE" or "preempt"
  double at_s;       // modeled seconds
};
using Steps = std::map<std::string, std::vector<Step>>;  // by job name

// The simulation of `requests` arriving at `arrival_s` (modeled seconds, by job name).
Steps Simulated(const model::Cluster& cluster, const std::vector<JobRequest>& requests,
                const std::map<std::string, double>& arrival_s,
                std::shared_ptr<const model::Tenants> tenants) {
  model::Workload workload;
  for (const JobRequest& r : requests) {
    model::Job job = r.job;
    job.id = model::JobId(static_cast<int32_t>(workload.jobs.size()));
    job.arrival_s = arrival_s.at(job.name);
    workload.jobs.push_back(std::move(job));
  }
  sim::SimOptions so;
  so.policy = "default";
  so.sched.tenants = std::move(tenants);
  so.sched.preempt_interval_s = kPreemptIntervalS;
  so.checkpoint_save_s = kCheckpointSaveS;
  so.restore_s = kRestoreS;
  so.timeline_sample_s = 60;
  auto sim = sim::Simulate(cluster, workload, nullptr, so);
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  Steps out;
  if (!sim.ok()) return out;
  for (const sim::RunSpan& run : sim->timeline.runs) {
    std::vector<Step>& steps = out[workload.jobs[run.job].name];
    steps.push_back({"place " + sim->timeline.types[run.type], run.start_s});
    // A stopped run ends once its checkpoint is written; the daemon's event marks the stop.
    if (run.end == sim::RunEnd::kPreempted) {
      steps.push_back({"preempt", run.end_s - kCheckpointSaveS});
    }
  }
  for (auto& [job, steps] : out) {
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.at_s < b.at_s; });
  }
  return out;
}

// What the daemon did, and when each job arrived there (modeled seconds).
struct DaemonRun {
  Steps steps;
  std::map<std::string, double> arrival_s;
};

DaemonRun RunByTheDaemon(const model::Cluster& cluster, std::vector<JobRequest> requests,
                         std::shared_ptr<const model::Tenants> tenants) {
  hetsched::testing::TempDir dir;
  Logger logger(LogLevel::kError, [](std::string_view) {});
  MetricsRegistry metrics;
  VirtualBackendOptions vo;
  for (const model::Node& n : cluster.nodes) vo.nodes.push_back(n.name);
  vo.time_scale = kScale;
  vo.checkpoint_save_s = kCheckpointSaveS;
  auto store = Store::Open(dir.File("h.db"));
  EXPECT_TRUE(store.ok());
  ServiceOptions opts;
  opts.policy = "default";
  opts.scheduler.tenants = std::move(tenants);
  opts.scheduler.preempt_interval_s = kPreemptIntervalS;
  opts.scheduler.preemption_cost_s = kCheckpointSaveS + kRestoreS;  // as the simulator's
  opts.restore_s = kRestoreS;
  opts.stop_grace_s = 10 * kCheckpointSaveS / kScale;  // wall seconds: the write is never cut
  opts.time_scale = kScale;
  opts.tick_s = 0.002;
  // The daemon's modeled time is its wall time since it started, times kScale.
  double start_wall_s = 0;
  opts.wall_clock = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const auto modeled_s = [&](double wall_s) { return (wall_s - start_wall_s) * kScale; };
  auto service = Service::Create(cluster, std::make_unique<VirtualBackend>(vo),
                                 std::move(store).value(), opts, &logger, &metrics);
  EXPECT_TRUE(service.ok()) << service.status().ToString();
  if (!service.ok()) return {};
  start_wall_s = opts.wall_clock();
  EXPECT_TRUE((*service)->Start().ok());
  // research at once, vision at kOwnerArrivalS.
  for (JobRequest& r : requests) {
    if (r.job.tenant != "research") continue;
    EXPECT_TRUE((*service)->Submit(r.job, r.spec_json, "").ok());
  }
  std::this_thread::sleep_until(std::chrono::system_clock::now() +
                                std::chrono::duration<double>(kOwnerArrivalS / kScale));
  for (JobRequest& r : requests) {
    if (r.job.tenant != "vision") continue;
    EXPECT_TRUE((*service)->Submit(r.job, r.spec_json, "").ok());
  }
  DaemonRun out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool all_done = false;
  while (!all_done && std::chrono::steady_clock::now() < deadline) {
    auto list = (*service)->List({});
    EXPECT_TRUE(list.ok());
    all_done = list.ok() && list->jobs.size() == requests.size() &&
               std::all_of(list->jobs.begin(), list->jobs.end(),
                           [](const JobView& v) { return v.state == JobState::kCompleted; });
    if (all_done) {
      for (const JobView& v : list->jobs) out.arrival_s[v.name] = modeled_s(v.submitted_s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(all_done) << "every job completes within 60 s";
  (*service).reset();

  // What it did, from the events it stored: "place" ("attempt N on TYPE xK") and "preempt".
  auto reread = Store::Open(dir.File("h.db"));
  EXPECT_TRUE(reread.ok());
  if (!reread.ok()) return out;
  for (const JobRequest& r : requests) {
    auto events = (*reread)->Events(r.job.name, 100);
    EXPECT_TRUE(events.ok());
    if (!events.ok()) continue;
    std::vector<Step>& steps = out.steps[r.job.name];
    for (const StoredEvent& e : *events) {
      if (e.kind == "preempt") steps.push_back({"preempt", modeled_s(e.at_s)});
      if (e.kind != "place") continue;
      const size_t on = e.detail.find(" on "), x = e.detail.rfind(" x");
      EXPECT_TRUE(on != std::string::npos && x != std::string::npos && x > on) << e.detail;
      steps.push_back({"place " + e.detail.substr(on + 4, x - on - 4), modeled_s(e.at_s)});
    }
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.at_s < b.at_s; });
  }
  return out;
}

std::string Show(const std::vector<Step>& steps) {
  std::string s;
  for (const Step& st : steps) s += fmt::format(" [{} at {:.0f} s]", st.what, st.at_s);
  return s;
}

TEST(SameReallocations, AnOwnerTakesItsGuaranteeBackAtTheSameTimeInBoth) {
  auto cluster = model::io::LoadCluster(kCluster);
  ASSERT_TRUE(cluster.ok());
  std::vector<JobRequest> requests;
  for (const std::string& body : JobBodies()) {
    auto r = ParseJobRequest(body, cluster->catalog);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    requests.push_back(std::move(r).value());
  }
  const auto tenants = OwnerAndBorrower(*cluster);
  // The daemon first: the simulator then takes its jobs at the times the daemon took them
  // (each submission takes a few wall milliseconds, a modeled second or so).
  const DaemonRun by_daemon = RunByTheDaemon(*cluster, requests, tenants);
  ASSERT_EQ(by_daemon.arrival_s.size(), requests.size());
  const Steps simulated = Simulated(*cluster, requests, by_daemon.arrival_s, tenants);
  const auto both = [&](const std::string& job) {
    return fmt::format("simulated{}, daemon{}", Show(simulated.at(job)),
                       Show(by_daemon.steps.at(job)));
  };
  // The simulator's story, which the daemon must tell too: the first decision starts research's
  // runs; the full decision due one preempt interval later stops the two on the V100s;
  // vision's jobs start there once their checkpoints are written; the stopped runs resume
  // when vision's end.
  const double first_s = simulated.at("research-0").at(0).at_s;
  int stopped = 0;
  for (const auto& [job, steps] : simulated) {
    for (const Step& st : steps) {
      if (st.what != "preempt") continue;
      ++stopped;
      EXPECT_NEAR(st.at_s, first_s + kPreemptIntervalS, 1e-3) << both(job);
    }
  }
  ASSERT_EQ(stopped, 2);
  for (const char* owner : {"vision-0", "vision-1"}) {
    ASSERT_EQ(simulated.at(owner).size(), 1u) << both(owner);
    EXPECT_EQ(simulated.at(owner)[0].what, "place v100-32g") << both(owner);
    EXPECT_NEAR(simulated.at(owner)[0].at_s, first_s + kPreemptIntervalS + kCheckpointSaveS, 1e-3)
        << both(owner);
  }

  ASSERT_EQ(by_daemon.steps.size(), simulated.size());
  for (const auto& [job, expected] : simulated) {
    const std::vector<Step>& got = by_daemon.steps.at(job);
    ASSERT_EQ(got.size(), expected.size()) << both(job);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].what, expected[i].what)
          << "step " << i << " of " << job << ": " << both(job);
      EXPECT_NEAR(got[i].at_s, expected[i].at_s, kToleranceS)
          << "step " << i << " of " << job << ": " << both(job);
    }
  }
}

}  // namespace
}  // namespace hetsched::svc
