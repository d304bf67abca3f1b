// One set of rules, two drivers: the same jobs and the same scripted faults (a start failure, a
// One set of rules, two drivers: the same jobs and the same scripted faults (a start failure, a
// node down under a gang, a lost attempt, a time limit, cancels, one while a checkpoint is
// written, a daemon restart, nodes suspended and woken) through the simulator and through the
// daemon on its virtual backend must end every job the same way after the same number of
// attempts, at the same time where the script says when, and switch node power as often
// (drive::Attempts' and drive::PowerDriver's rules, docs/architecture.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/virtual/virtual_backend.h"
#include "daemon/job_request.h"
#include "daemon/service.h"
#include "model/io/cluster_reader.h"
#include "sim/engine.h"
#include "testing/forwarding_backend.h"
#include "testing/temp_dir.h"

namespace hetsched::svc {
namespace {

// Two nodes of two V100s, one of two K80s.
constexpr const char* kCluster = "v100=4:per_node=2,k80=2:per_node=2";
// Modeled seconds per wall second for the daemon: its jitter (milliseconds) is a few modeled
// seconds, and the scripts below keep their events 50 modeled seconds apart or more.
constexpr double kScale = 250;

struct Script {
  std::vector<std::string> jobs;  // request bodies, all submitted at 0
  std::vector<VirtualFault> faults;
  std::vector<std::pair<double, std::string>> cancels;  // (modeled s, job)
  std::vector<double> restarts;                         // daemon restarts (modeled s)
  double checkpoint_save_s = 0;  // a stopped attempt's checkpoint write (modeled s)
  double end_s = 0;              // every job has ended by then
  // With a 100 s suspend time and no suspend timeout; nodes boot in 30 s (the virtual backend
  // at once) and shut down in 10 s.
  std::string power_policy = "always-on";
};

// The daemon's clock runs on wall time: its ends come a few modeled seconds late (the script's
// events are 50 modeled seconds apart or more).
constexpr double kEndTolerance_s = 25;

struct Outcome {
  std::string state;
  int64_t attempts = 0;
  double ended_s = -1;  // modeled s; -1 in an expectation: not checked
  bool operator==(const Outcome& o) const {
    return state == o.state && attempts == o.attempts &&
           (ended_s < 0 || o.ended_s < 0 || std::abs(ended_s - o.ended_s) <= kEndTolerance_s);
  }
};
using Outcomes = std::map<std::string, Outcome>;

// What a run did: each job's outcome, and how many times nodes were suspended or resumed.
struct Observed {
  Outcomes jobs;
  int64_t power_transitions = 0;
};

power::PowerOptions PowerOf(const Script& s) {
  power::PowerOptions p;
  p.policy = s.power_policy;
  p.suspend_time_s = 100;
  p.suspend_timeout_s = 0;
  return p;
}

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  os << o.state << " after " << o.attempts << " attempt(s)";
  if (o.ended_s >= 0) os << " at " << o.ended_s << " s";
  return os;
}

std::vector<JobRequest> Requests(const Script& s, const model::Cluster& cluster) {
  std::vector<JobRequest> out;
  for (const std::string& body : s.jobs) {
    auto r = ParseJobRequest(body, cluster.catalog);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    out.push_back(std::move(r).value());
  }
  return out;
}

Observed Simulated(const Script& s, const model::Cluster& cluster) {
  model::Workload workload;
  for (JobRequest& r : Requests(s, cluster)) {
    r.job.id = model::JobId(static_cast<int32_t>(workload.jobs.size()));
    workload.jobs.push_back(r.job);
  }
  sim::SimOptions so;
  so.policy = "fifo";
  so.restore_s = 0;
  so.checkpoint_save_s = s.checkpoint_save_s;
  so.checkpoint_interval_s = 0;  // a loss loses the whole run, as the daemon's store knows it
  so.record_jobs = true;
  so.power = PowerOf(s);
  so.horizon_s = s.end_s;  // the machines' power events after the last job, as the daemon's
  for (const VirtualFault& f : s.faults) {
    sim::Fault sf;
    sf.time_s = f.at_s;
    sf.node = *cluster.FindNode(f.node);
    sf.duration_s = f.duration_s;
    sf.start_failure = f.start_failure;
    so.faults.push_back(sf);
  }
  for (const auto& [at_s, name] : s.cancels) {
    for (const model::Job& j : workload.jobs) {
      if (j.name == name) so.cancels.push_back({at_s, j.id.value()});
    }
  }
  auto result = sim::Simulate(cluster, workload, nullptr, so);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  Observed out;
  for (const sim::JobOutcome& o : result->jobs) {
    const char* state = o.status == sim::JobStatus::kCompleted   ? "completed"
                        : o.status == sim::JobStatus::kFailed    ? "failed"
                        : o.status == sim::JobStatus::kCancelled ? "cancelled"
                                                                 : "unfinished";
    out.jobs[workload.jobs[o.id].name] = {state, o.attempts, o.completion_s};
  }
  out.power_transitions = result->node_power_transitions;
  return out;
}

// Hands every call to one virtual backend that outlives the daemon (a restart keeps the
// machines and what runs on them).
class SharedBackend final : public hetsched::testing::ForwardingBackend {
 public:
  explicit SharedBackend(std::shared_ptr<VirtualBackend> b)
      : ForwardingBackend(*b), b_(std::move(b)) {}

 private:
  std::shared_ptr<VirtualBackend> b_;
};

Observed Served(const Script& s, const model::Cluster& cluster) {
  hetsched::testing::TempDir dir;
  Logger logger(LogLevel::kError, [](std::string_view) {});
  std::unique_ptr<MetricsRegistry> metrics;  // one per daemon: each registers its families
  VirtualBackendOptions vo;
  for (const model::Node& n : cluster.nodes) vo.nodes.push_back(n.name);
  vo.time_scale = kScale;
  vo.faults = s.faults;
  vo.checkpoint_save_s = s.checkpoint_save_s;
  auto backend = std::make_shared<VirtualBackend>(vo);
  const auto start = std::chrono::steady_clock::now();
  const auto at = [&](double modeled_s) {
    return start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(modeled_s / kScale));
  };
  ServiceOptions opts;
  opts.policy = "fifo";
  opts.time_scale = kScale;
  opts.tick_s = 0.002;
  opts.max_start_failures = 1;  // as the simulator's (its start failures are stacks missing)
  opts.scheduler.preemption_cost_s = 0;
  opts.stop_grace_s = std::numeric_limits<double>::infinity();  // as the simulator's
  opts.power = PowerOf(s);
  const auto open = [&]() -> std::unique_ptr<Service> {
    metrics = std::make_unique<MetricsRegistry>();
    auto store = Store::Open(dir.File("h.db"));
    EXPECT_TRUE(store.ok());
    auto service = Service::Create(cluster, std::make_unique<SharedBackend>(backend),
                                   std::move(store).value(), opts, &logger, metrics.get());
    EXPECT_TRUE(service.ok()) << service.status().ToString();
    EXPECT_TRUE((*service)->Start().ok());
    return std::move(service).value();
  };
  std::unique_ptr<Service> service = open();
  for (JobRequest& r : Requests(s, cluster)) {
    EXPECT_TRUE(service->Submit(r.job, r.spec_json, "").ok());
  }
  // Cancels and restarts in modeled-time order.
  std::multimap<double, std::string> actions;
  for (const auto& [t, name] : s.cancels) actions.emplace(t, name);
  for (double t : s.restarts) actions.emplace(t, "");
  for (const auto& [t, name] : actions) {
    std::this_thread::sleep_until(at(t));
    if (name.empty()) {
      service.reset();
      service = open();
    } else {
      EXPECT_TRUE(service->Cancel(name).ok()) << name;
    }
  }
  std::this_thread::sleep_until(at(s.end_s));
  Observed out;
  auto list = service->List({});
  EXPECT_TRUE(list.ok());
  for (const JobView& v : list->jobs) {
    // Every job was submitted at modeled 0.
    out.jobs[v.name] = {std::string(JobStateName(v.state)), v.attempt,
                        v.ended_s < 0 ? -1 : (v.ended_s - v.submitted_s) * kScale};
  }
  auto view = service->Cluster();
  EXPECT_TRUE(view.ok());
  out.power_transitions = view->power_transitions;  // since the daemon started
  return out;
}

std::string Job(const std::string& name, int gang, double work,
                const std::string& throughput = R"("v100":2,"k80":1)",
                const std::string& extra = "") {
  return fmt::format(R"({{"name":"{}","stacks":["cuda"],"gang_size":{},"work":{},)"
                     R"("throughput":{{{}}}{}}})",
                     name, gang, work, throughput, extra);
}

void ExpectSameOutcomes(const Script& s, const Outcomes& expected,
                        int64_t expected_power_transitions = 0) {
  auto cluster = model::io::LoadCluster(kCluster);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  for (model::Node& n : cluster->nodes) {
    n.boot_s = 30;
    n.shutdown_s = 10;
  }
  const Observed simulated = Simulated(s, *cluster);
  EXPECT_EQ(simulated.jobs, expected) << "the simulator";
  EXPECT_EQ(simulated.power_transitions, expected_power_transitions) << "the simulator";
  const Observed served = Served(s, *cluster);
  EXPECT_EQ(served.jobs, expected) << "the daemon";
  EXPECT_EQ(served.power_transitions, expected_power_transitions) << "the daemon";
}

TEST(SameOutcomes, AStartFailureGivesTheTypeUpAndTheJobRunsOnAnother) {
  Script s;
  // `busy` holds the K80s for 400 s; `moved` fails to start on the V100s (injected), gives
  // them up and runs on the K80s after `busy`.
  s.jobs = {Job("busy", 2, 400, R"("k80":1)"), Job("moved", 1, 100)};
  s.faults = {{0, "v100-1", 1000, true}, {0, "v100-2", 1000, true}};
  s.end_s = 700;
  ExpectSameOutcomes(s, {{"busy", {"completed", 1}}, {"moved", {"completed", 2}}});
}

TEST(SameOutcomes, ANodeDownUnderAGangLosesItsAttemptAcrossADaemonRestart) {
  Script s;
  // `gang` spans both V100 nodes (500 s); v100-1 fails at 100 for 300 s: the attempt is lost
  // (its part on v100-2 stopped), the job waits for the node and runs again from 400 s. The
  // daemon restarts while it waits and while it runs again.
  s.jobs = {Job("gang", 4, 1000, R"("v100":2)")};
  s.faults = {{100, "v100-1", 300, false}};
  s.restarts = {250, 600};
  s.end_s = 1100;
  ExpectSameOutcomes(s, {{"gang", {"completed", 2}}});
}

TEST(SameOutcomes, TimeLimitsAndCancelsEndJobsTheSameWay) {
  Script s;
  s.jobs = {Job("over", 1, 300, R"("v100":2)", R"(,"time_limit":100)"),    // needs 150 s
            Job("within", 1, 100, R"("v100":2)", R"(,"time_limit":100)"),  // needs 50 s
            Job("long", 2, 10000, R"("k80":1)"),                           // cancelled running
            Job("waiting", 2, 100, R"("k80":1)")};  // cancelled in the queue behind `long`
  s.cancels = {{100, "waiting"}, {200, "long"}};
  s.end_s = 400;
  ExpectSameOutcomes(s, {{"over", {"failed", 1}},
                         {"within", {"completed", 1}},
                         {"long", {"cancelled", 1}},
                         {"waiting", {"cancelled", 0}}});
}

TEST(SameOutcomes, ALostAttemptAndACancelWhileACheckpointIsWritten) {
  Script s;
  // `over` (150 s of work) reaches its 100 s limit and writes its checkpoint for 80 s; the
  // cancel at 140 comes while it writes: it ends cancelled when the write is done, at 180.
  // `solo`'s node goes down at 100 for 100 s: its attempt is lost (no checkpoint kept) and it
  // runs again from the start when the node is back, 200 to 500.
  s.jobs = {Job("over", 1, 300, R"("v100":2)", R"(,"time_limit":100)"),
            Job("solo", 1, 300, R"("k80":1)")};
  s.faults = {{100, "k80-1", 100, false}};
  s.cancels = {{140, "over"}};
  s.checkpoint_save_s = 80;
  s.end_s = 600;
  ExpectSameOutcomes(s, {{"over", {"cancelled", 1, 180}}, {"solo", {"completed", 2, 500}}});
}

TEST(SameOutcomes, IdleNodesAreSuspendedAndWokenWhenALostJobNeedsThem) {
  Script s;
  s.power_policy = "idle-timeout";
  // `short` holds the V100s for 50 s, so `either` starts on the K80s; the V100 nodes are
  // suspended at 150 s. The K80 node fails at 300 s (for good): `either` is lost, and one V100
  // node is woken for it; the idle K80 node is suspended at 400 s. Once `either` is done
  // (500 s on the V100s), its node is suspended again: five switches.
  s.jobs = {Job("short", 4, 100, R"("v100":2)"), Job("either", 2, 1000)};
  s.faults = {{300, "k80-1", 1e6, false}};
  s.end_s = 1500;
  ExpectSameOutcomes(s, {{"short", {"completed", 1}}, {"either", {"completed", 2}}}, 5);
}

}  // namespace
}  // namespace hetsched::svc
