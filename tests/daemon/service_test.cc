#include "daemon/service.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "backends/local/local_backend.h"
#include "backends/virtual/virtual_backend.h"
#include "cli/serve_analysis.h"
#include "daemon/job_request.h"
#include "model/io/cluster_reader.h"
#include "testing/forwarding_backend.h"
#include "testing/temp_dir.h"
#include "util/file.h"

namespace hetsched::svc {
namespace {

using hetsched::testing::TempDir;
using hetsched::testing::WaitUntil;

struct Daemon {
  Logger logger{LogLevel::kError, [](std::string_view) {}};
  MetricsRegistry metrics;
  std::unique_ptr<Service> service;
};

// A daemon on `cluster` with a virtual backend at `scale` modeled seconds per wall second.
std::unique_ptr<Daemon> StartDaemon(const std::string& db,
                                    const std::string& cluster = "v100=2,k80=2",
                                    double scale = 1000, std::string policy = "fifo",
                                    ServiceOptions so = {}, std::vector<VirtualFault> faults = {},
                                    Logger* logger = nullptr) {
  auto d = std::make_unique<Daemon>();
  auto c = model::io::LoadCluster(cluster);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  VirtualBackendOptions vo;
  for (const model::Node& n : c->nodes) vo.nodes.push_back(n.name);
  vo.time_scale = scale;
  vo.faults = std::move(faults);
  auto store = Store::Open(db);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  so.policy = std::move(policy);
  so.time_scale = scale;
  so.tick_s = 0.005;
  so.analysis = cli::ServeAnalysisHooks();
  auto s = Service::Create(std::move(c).value(), std::make_unique<VirtualBackend>(vo),
                           std::move(store).value(), so, logger ? logger : &d->logger, &d->metrics);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  d->service = std::move(s).value();
  EXPECT_TRUE(d->service->Start().ok());
  return d;
}

util::Result<Service::Submitted> SubmitJson(Service& s, const std::string& body,
                                            const std::string& key = "") {
  auto req = ParseJobRequest(body, s.cluster().catalog);
  if (!req.ok()) return req.status();
  return s.Submit(std::move(req->job), req->spec_json, key);
}

std::string State(Service& s, const std::string& name) {
  auto v = s.Get(name);
  return v.ok() ? std::string(JobStateName(v->state)) : "?";
}

TEST(Service, JobsRunToCompletionOnTheVirtualBackend) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"));
  // 60 modeled seconds each at 1 step/s: 60 ms of wall time.
  for (int i = 0; i < 6; ++i) {
    auto r =
        SubmitJson(*d->service, fmt::format(R"({{"name":"j{}","stacks":["cuda"],"work":60}})", i));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->created);
    EXPECT_EQ(r->job.state, JobState::kQueued);
  }
  ASSERT_TRUE(WaitUntil([&] {
    for (int i = 0; i < 6; ++i) {
      if (State(*d->service, fmt::format("j{}", i)) != "completed") return false;
    }
    return true;
  }));
  auto j = d->service->Get("j0");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->exit_status, 0);
  EXPECT_GE(j->started_s, j->submitted_s);
  EXPECT_GE(j->ended_s, j->started_s);
  auto c = d->service->Cluster();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->jobs_in(JobState::kCompleted), 6);
  EXPECT_EQ(c->jobs_in(JobState::kRunning) + c->jobs_in(JobState::kQueued) +
                c->jobs_in(JobState::kStarting),
            0);
}

TEST(Service, ARelaunchedJobShowsItsNewAttemptsMessageOnly) {
  TempDir dir;
  ServiceOptions so;
  so.max_start_failures = 1;
  // `busy` holds the K80s for 200 s; the V100 node fails every start: `moved` gives the type
  // up and runs on the K80s after `busy`.
  auto d = StartDaemon(dir.File("h.db"), "v100=2:per_node=2,k80=2:per_node=2", 1000, "fifo", so,
                       {{0, "v100-1", 1e6, true}});
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"busy","stacks":["cuda"],"gang_size":2,)"
                                      R"("work":200,"throughput":{"k80":1}})")
                  .ok());
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"moved","stacks":["cuda"],"work":1e6,)"
                                      R"("throughput":{"v100":2,"k80":1}})")
                  .ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto v = d->service->Get("moved");
    return v.ok() && v->state == JobState::kRunning && v->attempt == 2;
  })) <<
      [&] {
        auto v = d->service->Get("moved");
        return v.ok() ? fmt::format("{} attempt {} on {}: {}", JobStateName(v->state), v->attempt,
                                    v->device_type, v->message)
                      : v.status().ToString();
      }();
  auto v = d->service->Get("moved");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->device_type, "k80");
  // The first attempt's start failure is not this attempt's message.
  EXPECT_EQ(v->message, "");
}

// Passes every call to a virtual backend and keeps a copy of each LaunchSpec.
class RecordingBackend final : public hetsched::testing::ForwardingBackend {
 public:
  RecordingBackend(std::unique_ptr<Backend> inner, std::mutex* mu, std::vector<LaunchSpec>* specs)
      : ForwardingBackend(*inner), inner_(std::move(inner)), mu_(mu), specs_(specs) {}
  util::Status Start(const LaunchSpec& spec) override {
    {
      std::lock_guard lock(*mu_);
      specs_->push_back(spec);
    }
    return ForwardingBackend::Start(spec);
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::mutex* mu_;
  std::vector<LaunchSpec>* specs_;
};

// The backend is told each device's place in the node and its number among the node's devices
// of its vendor, which is what *_VISIBLE_DEVICES takes; CPUs get no vendor (an AMD CPU is no
// ROCm device). Before this was fixed the MI100s below got ROCR_VISIBLE_DEVICES=3,4.
TEST(Service, LaunchesNumberDevicesAsTheirVendorDoes) {
  TempDir dir;
  auto c = model::io::ParseClusterYaml(R"(name: mixed
racks: [{name: r, uplink_bandwidth: 100Gb/s, latency: 1us}]
nodes:
  - name: box
    devices:
      - {type: epyc-7763, count: 1}
      - {type: a100-80g, count: 2}
      - {type: mi100, count: 2}
    nic: {bandwidth: 100Gb/s, latency: 2us}
)",
                                       "mixed.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  VirtualBackendOptions vo;
  vo.nodes = {"box"};
  vo.time_scale = 1000;
  std::mutex mu;
  std::vector<LaunchSpec> specs;
  auto store = Store::Open(dir.File("h.db"));
  ASSERT_TRUE(store.ok());
  ServiceOptions so;
  so.policy = "fifo";
  so.time_scale = 1000;
  so.tick_s = 0.005;
  Logger logger(LogLevel::kError, [](std::string_view) {});
  MetricsRegistry metrics;
  auto s = Service::Create(
      std::move(c).value(),
      std::make_unique<RecordingBackend>(std::make_unique<VirtualBackend>(vo), &mu, &specs),
      std::move(store).value(), so, &logger, &metrics);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->Start().ok());
  for (const char* body : {R"({"name":"cpu","stacks":["x86_64"],"work":1})",
                           R"({"name":"cuda","stacks":["cuda"],"gang_size":2,"work":1})",
                           R"({"name":"rocm","stacks":["rocm"],"gang_size":2,"work":1})"}) {
    ASSERT_TRUE(SubmitJson(**s, body).ok()) << body;
  }
  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard lock(mu);
    return specs.size() == 3;
  }));
  (*s).reset();
  std::map<std::string, LaunchSpec> by_job;
  for (const LaunchSpec& spec : specs) by_job[spec.job] = spec;
  EXPECT_EQ(by_job["cpu"].vendor, "");
  EXPECT_EQ(by_job["cpu"].node_devices, std::vector<int32_t>({0}));
  EXPECT_EQ(by_job["cuda"].vendor, "nvidia");
  EXPECT_EQ(by_job["cuda"].node_devices, std::vector<int32_t>({1, 2}));
  EXPECT_EQ(by_job["cuda"].visible_devices, std::vector<int32_t>({0, 1}));
  EXPECT_EQ(by_job["rocm"].vendor, "amd");
  EXPECT_EQ(by_job["rocm"].node_devices, std::vector<int32_t>({3, 4}));
  EXPECT_EQ(by_job["rocm"].visible_devices, std::vector<int32_t>({0, 1}))
      << "the EPYC is an AMD CPU, not ROCm device 0";
}

TEST(Service, EndedJobsLeaveMemoryButStayVisibleAndTheirNamesTaken) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(SubmitJson(*d->service,
                           fmt::format(R"({{"name":"e{}","stacks":["cuda"],"work":30}})", i),
                           fmt::format("k{}", i))
                    .ok());
  }
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"long","stacks":["cuda"],"work":1e8})").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "e4") == "completed"; }));
  ASSERT_TRUE(WaitUntil([&] { return d->service->jobs_held() == 1; }));
  // Read back from the store: state, times, what it asked for.
  auto e0 = d->service->Get("e0");
  ASSERT_TRUE(e0.ok());
  EXPECT_EQ(e0->state, JobState::kCompleted);
  EXPECT_EQ(e0->exit_status, 0);
  EXPECT_EQ(e0->stacks, std::vector<std::string>{"cuda"});
  EXPECT_GE(e0->ended_s, e0->started_s);
  EXPECT_EQ(*d->service->Why("e0"), "completed");
  EXPECT_EQ(d->service->Cancel("e0")->state, JobState::kCompleted);
  // A name stays taken; the first submission's key still gets the first job back.
  const std::string again = R"({"name":"e1","stacks":["cuda"],"work":30})";
  EXPECT_EQ(SubmitJson(*d->service, again).status().code(), util::StatusCode::kAlreadyExists);
  auto retry = SubmitJson(*d->service, again, "k1");
  ASSERT_TRUE(retry.ok());
  EXPECT_FALSE(retry->created);
  EXPECT_EQ(retry->job.state, JobState::kCompleted);
  // Lists: live first, then ended in submission order; filters and limits on both.
  auto all = d->service->List({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->jobs.size(), 6u);
  EXPECT_FALSE(all->next.has_value());
  EXPECT_EQ(all->jobs[0].name, "long");
  EXPECT_EQ(all->jobs[1].name, "e0");
  EXPECT_EQ(all->jobs[5].name, "e4");
  EXPECT_EQ(d->service->List({JobState::kCompleted, 2, std::nullopt, std::nullopt})->jobs.size(),
            2u);
  EXPECT_EQ(
      d->service->List({JobState::kCompleted, 2, std::nullopt, std::nullopt})->jobs.at(1).name,
      "e1");
  EXPECT_EQ(d->service->List({JobState::kRunning, 10, std::nullopt, std::nullopt})->jobs.size(),
            1u);
  EXPECT_EQ(d->service->List({std::nullopt, 1, std::nullopt, std::nullopt})->jobs.size(), 1u);
  // A restart loads live jobs only.
  d.reset();
  d = StartDaemon(dir.File("h.db"));
  EXPECT_EQ(d->service->jobs_held(), 1u);
  EXPECT_EQ(State(*d->service, "e3"), "completed");
}

// Pages read one after another show each job once, though jobs end (moving from memory to
// the store) and are submitted between them.
TEST(Service, PagesOfJobsNeitherSkipNorRepeatAJobThatEndsBetweenThem) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"), "v100=1");
  const auto submit = [&](const std::string& name, const char* work) {
    ASSERT_TRUE(
        SubmitJson(*d->service,
                   fmt::format(R"({{"name":"{}","stacks":["cuda"],"work":{}}})", name, work))
            .ok())
        << name;
  };
  for (const char* name : {"done0", "done1"}) submit(name, "1");
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "done1") == "completed"; }));
  for (int i = 0; i < 12; ++i) submit(fmt::format("p{:02}", i), "1e8");  // one runs, 11 wait

  JobFilter filter{std::nullopt, 5, std::nullopt, std::nullopt};
  std::vector<std::string> shown;
  std::vector<size_t> page_sizes;
  const auto read_page = [&] {
    auto page = d->service->List(filter);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) return false;
    for (const JobView& v : page->jobs) shown.push_back(v.name);
    page_sizes.push_back(page->jobs.size());
    filter.after = page->next;
    return page->next.has_value();
  };
  ASSERT_TRUE(read_page());
  EXPECT_EQ(shown, (std::vector<std::string>{"p00", "p01", "p02", "p03", "p04"}));
  // A job of the first page and one of a later page end (a queued job's cancel ends it at
  // once: it leaves memory for the store); one more is submitted.
  ASSERT_EQ(d->service->Cancel("p02")->state, JobState::kCancelled);
  ASSERT_EQ(d->service->Cancel("p07")->state, JobState::kCancelled);
  submit("p12", "1e8");
  while (read_page()) {
  }
  EXPECT_EQ(shown, (std::vector<std::string>{"p00", "p01", "p02", "p03", "p04", "p05", "p06", "p07",
                                             "p08", "p09", "p10", "p11", "p12", "done0", "done1"}));
  EXPECT_EQ(page_sizes, (std::vector<size_t>{5, 5, 5}));
  // A new first page sees p02 and p07 among the ended jobs, after the live ones.
  auto fresh = d->service->List({});
  ASSERT_TRUE(fresh.ok());
  ASSERT_EQ(fresh->jobs.size(), 15u);
  EXPECT_EQ(fresh->jobs[10].name, "p12");
  EXPECT_EQ(fresh->jobs[11].name, "done0");
  EXPECT_EQ(fresh->jobs[13].name, "p02");
  EXPECT_EQ(fresh->jobs[14].name, "p07");
}

TEST(Service, EndedJobsArePrunedFromTheStoreAfterKeepEnded) {
  TempDir dir;
  double wall = 1e9;
  ServiceOptions so;
  so.keep_ended_s = 3600;
  so.reconcile_every_s = 0;  // every pass prunes
  std::mutex mu;
  so.wall_clock = [&] {
    std::lock_guard lock(mu);
    return wall += 0.01;
  };
  auto d = StartDaemon(dir.File("h.db"), "v100=2,k80=2", 1000, "fifo", so);
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"old","stacks":["cuda"],"work":1})").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "old") == "completed"; }));
  EXPECT_EQ(d->service->Get("old").status().code(), util::StatusCode::kOk);
  {
    std::lock_guard lock(mu);
    wall += 3601;
  }
  ASSERT_TRUE(WaitUntil(
      [&] { return d->service->Get("old").status().code() == util::StatusCode::kNotFound; }));
  // The name is free again.
  EXPECT_TRUE(SubmitJson(*d->service, R"({"name":"old","stacks":["cuda"],"work":1})").ok());
}

TEST(Service, ARestartKeepsWhatThePolicyRemembers) {
  TempDir dir;
  // LAS ranks by attained service: after a restart, a job that ran keeps what it attained
  // (saved at its changes and at shutdown) rather than starting again from zero.
  auto d = StartDaemon(dir.File("h.db"), "v100=1", 1000, "las");
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"a","stacks":["cuda"],"work":1e8})").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "a") == "running"; }));
  ASSERT_TRUE(WaitUntil([&] { return d->service->Get("a")->attained_s.value_or(0) > 200; }));
  const double before = *d->service->Get("a")->attained_s;
  d.reset();
  d = StartDaemon(dir.File("h.db"), "v100=1", 1000, "las");
  const auto after = d->service->Get("a");
  ASSERT_TRUE(after.ok() && after->attained_s);
  EXPECT_GE(*after->attained_s, before);
  // An ended job has no attained service to show.
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"b","stacks":["cuda"],"work":1})").ok());
  EXPECT_TRUE(d->service->Cancel("a").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "b") == "completed"; }));
  EXPECT_FALSE(d->service->Get("b")->attained_s.has_value());
}

std::string PowerState(Service& s, const std::string& node) {
  auto h = s.Node(node, 100);
  return h.ok() ? h->node.power_state : "?";
}

TEST(Service, IdleNodesArePoweredDownAndWokenForWork) {
  TempDir dir;
  const std::string cluster = dir.File("c.yaml");
  ASSERT_TRUE(util::WriteFile(cluster,
                              "name: two\n"
                              "racks: [{name: r, uplink_bandwidth: 100Gb/s, latency: 1us}]\n"
                              "nodes:\n"
                              "  - name: gpu-[1-2]\n"
                              "    rack: r\n"
                              "    nic: {bandwidth: 100Gb/s, latency: 1us}\n"
                              "    host_link: {bandwidth: 16GB/s, latency: 1us}\n"
                              "    host_memory: 256GiB\n"
                              "    devices: [{type: v100, count: 1}]\n"
                              "    boot_time: 30s\n"
                              "    shutdown_time: 10s\n")
                  .ok());
  ServiceOptions so;
  so.power.policy = "idle-timeout";
  so.power.suspend_time_s = 60;  // 60 ms of wall time at scale 1000
  so.power.suspend_timeout_s = 0;
  auto d = StartDaemon(dir.File("h.db"), cluster, 1000, "fifo", so);
  const std::vector<std::string> nodes = {d->service->cluster().nodes[0].name,
                                          d->service->cluster().nodes[1].name};
  ASSERT_TRUE(WaitUntil([&] {
    return PowerState(*d->service, nodes[0]) == "off" && PowerState(*d->service, nodes[1]) == "off";
  }));
  // Work wakes one node; the job runs there and completes.
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"w","stacks":["cuda"],"work":30})").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "w") == "completed"; }));
  int resumed = 0;
  for (const std::string& n : nodes) {
    auto history = d->service->Node(n, 100);
    ASSERT_TRUE(history.ok());
    std::vector<std::string> details;
    for (const StoredEvent& e : history->events) {
      if (e.kind == "power") details.push_back(e.detail);
    }
    ASSERT_GE(details.size(), 2u) << n;
    EXPECT_EQ(details[0], "suspend requested") << n;
    EXPECT_EQ(details[1], "off") << n;
    if (std::find(details.begin(), details.end(), "up: boot completed") != details.end()) {
      ++resumed;
    }
  }
  EXPECT_EQ(resumed, 1);
  auto c = d->service->Cluster();
  ASSERT_TRUE(c.ok());
  EXPECT_GT(c->energy_j, 0);
  EXPECT_GE(c->power_transitions, 3);
  // Idle again, it goes back off; after a restart the nodes stay off until work comes.
  ASSERT_TRUE(WaitUntil([&] {
    return PowerState(*d->service, nodes[0]) == "off" && PowerState(*d->service, nodes[1]) == "off";
  }));
  d.reset();
  d = StartDaemon(dir.File("h.db"), cluster, 1000, "fifo", so);
  EXPECT_EQ(PowerState(*d->service, nodes[0]), "off");
  EXPECT_EQ(PowerState(*d->service, nodes[1]), "off");
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"w2","stacks":["cuda"],"work":30})").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "w2") == "completed"; }));
}

TEST(Service, PowerPoliciesTheDaemonCannotCarryOutAreRefused) {
  auto c = model::io::LoadCluster("v100=2");
  ASSERT_TRUE(c.ok());
  Logger logger{LogLevel::kError, [](std::string_view) {}};
  MetricsRegistry metrics;
  TempDir dir;
  for (const char* policy : {"cap", "idle-timeout+cap", "sometimes"}) {
    ServiceOptions so;
    so.power.policy = policy;
    auto store = Store::Open(dir.File(std::string(policy) + ".db"));
    ASSERT_TRUE(store.ok());
    auto s = Service::Create(*c, std::make_unique<VirtualBackend>(VirtualBackendOptions{}),
                             std::move(store).value(), so, &logger, &metrics);
    EXPECT_EQ(s.status().code(), util::StatusCode::kInvalidArgument) << policy;
  }
}

TEST(Service, AHistoryWithANegativeIntervalOrNoRoomIsRefused) {
  auto c = model::io::LoadCluster("v100=2");
  ASSERT_TRUE(c.ok());
  Logger logger{LogLevel::kError, [](std::string_view) {}};
  MetricsRegistry metrics;
  TempDir dir;
  for (const auto& [every_s, kept] :
       std::vector<std::pair<double, int64_t>>{{-1, 10}, {std::nan(""), 10}, {10, 0}, {0, 1}}) {
    ServiceOptions so;
    so.history_every_s = every_s;
    so.history_kept = kept;
    auto store = Store::Open(dir.File(fmt::format("{}-{}.db", every_s, kept)));
    ASSERT_TRUE(store.ok());
    auto s = Service::Create(*c, std::make_unique<VirtualBackend>(VirtualBackendOptions{}),
                             std::move(store).value(), so, &logger, &metrics);
    // 0 s: no samples, which is allowed.
    EXPECT_EQ(s.status().code(),
              every_s == 0 ? util::StatusCode::kOk : util::StatusCode::kInvalidArgument)
        << every_s << " s, " << kept << " kept";
  }
}

// The backend's cluster changes under the daemon: a node it starts listing (with what it holds)
// joins and takes work; a node it stops listing leaves, and its jobs are requeued elsewhere.
// Both survive a restart.
TEST(Service, NodesJoinAndLeaveAsTheBackendListsThem) {
  TempDir dir;
  Logger logger{LogLevel::kError, [](std::string_view) {}};
  std::vector<std::unique_ptr<MetricsRegistry>> registries;  // one per daemon, outliving it
  const auto start = [&](VirtualBackend** backend, bool with_v100) {
    registries.push_back(std::make_unique<MetricsRegistry>());
    auto c = model::io::LoadCluster("k80=1");
    EXPECT_TRUE(c.ok());
    VirtualBackendOptions vo;
    for (const model::Node& n : c->nodes) vo.nodes.push_back(n.name);
    vo.time_scale = 1000;
    auto b = std::make_unique<VirtualBackend>(vo);
    if (with_v100) b->AddNode({"v100-new", true, {{"v100", 2}}, "", "", false, ""});
    *backend = b.get();
    ServiceOptions so;
    so.policy = "fifo";
    so.time_scale = 1000;
    so.tick_s = 0.005;
    so.reconcile_every_s = 0.02;
    auto s = Service::Create(std::move(c).value(), std::move(b),
                             std::move(Store::Open(dir.File("h.db"))).value(), so, &logger,
                             registries.back().get());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE((*s)->Start().ok());
    return std::move(s).value();
  };
  VirtualBackend* backend = nullptr;
  auto service = start(&backend, false);
  // Measured on V100s only: it can run nowhere until a V100 node joins.
  const std::string body = R"({"name":"v","stacks":["cuda"],"work":1e8,"throughput":{"v100":1}})";
  auto req = ParseJobRequest(body, service->cluster().catalog);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(service->Submit(req->job, req->spec_json, "").status().code(),
            util::StatusCode::kInvalidArgument);  // no V100 yet: refused, with the reason
  backend->AddNode({"v100-new", true, {{"v100", 2}}, "", "", false, ""});
  ASSERT_TRUE(WaitUntil([&] { return service->Node("v100-new", 10).ok(); }));
  auto joined = service->Node("v100-new", 10);
  ASSERT_EQ(joined->node.devices.size(), 2u);
  EXPECT_EQ(joined->node.devices[0].type, "v100-32g");
  ASSERT_TRUE(service->Submit(req->job, req->spec_json, "").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*service, "v") == "running"; }));
  EXPECT_EQ(service->Get("v")->devices.at(0), "v100-new/0");
  // A restart keeps the node that joined (the backend still lists it) and the job on it.
  service.reset();
  service = start(&backend, true);
  ASSERT_TRUE(WaitUntil([&] { return State(*service, "v") == "running"; }));
  // It leaves: the job waits again (no other V100), the node is gone from the list.
  backend->RemoveNode("v100-new");
  ASSERT_TRUE(WaitUntil([&] { return State(*service, "v") == "queued"; }));
  EXPECT_NE(service->Get("v")->message.find("left the cluster"), std::string::npos);
  auto nodes = service->Nodes(100, std::nullopt);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->nodes.size(), 1u);
  EXPECT_EQ(service->Node("v100-new", 10)->node.power_state, "removed");
  auto c = service->Cluster();
  ASSERT_TRUE(c.ok());
  for (const TypeSummary& t : c->types) EXPECT_NE(t.type, "v100-32g") << t.capacity;
}

TEST(Service, ANameIsTakenOnceAndAnIdempotentRetryReturnsTheFirstJob) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"));
  const std::string body = R"({"name":"once","stacks":["cuda"],"work":1e6})";
  auto first = SubmitJson(*d->service, body, "key-1");
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->created);
  auto retry = SubmitJson(*d->service, body, "key-1");
  ASSERT_TRUE(retry.ok());
  EXPECT_FALSE(retry->created);
  EXPECT_EQ(retry->job.name, "once");
  auto other_key = SubmitJson(*d->service, body, "key-2");
  EXPECT_EQ(other_key.status().code(), util::StatusCode::kAlreadyExists);
  auto no_key = SubmitJson(*d->service, body);
  EXPECT_EQ(no_key.status().code(), util::StatusCode::kAlreadyExists);
  auto list = d->service->List({});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->jobs.size(), 1u);
}

TEST(Service, AJobNoDeviceCanRunIsRefusedWithTheReason) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"));
  auto r = SubmitJson(*d->service, R"({"name":"amd","stacks":["rocm"],"work":10})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), util::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("runs cuda"), std::string::npos) << r.status().message();
  EXPECT_EQ(d->service->Get("amd").status().code(), util::StatusCode::kNotFound);
  // The name is free for a job that fits.
  EXPECT_TRUE(SubmitJson(*d->service, R"({"name":"amd","stacks":["cuda"],"work":10})").ok());
}

TEST(Service, TheConfigurationsClassesOrderTheQueue) {
  TempDir dir;
  ServiceOptions so;
  so.classes[model::JobKind::kBatch] = {10, 1};
  auto d = StartDaemon(dir.File("h.db"), "v100=1", 1000, "priority", so);
  // One device: `first` runs, then the batch job before the training job submitted ahead of
  // it, since its class adds 10 to its priority.
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"first","stacks":["cuda"],"work":200})").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "first") == "running"; }));
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"train","stacks":["cuda"],"work":1e6})").ok());
  ASSERT_TRUE(
      SubmitJson(*d->service, R"({"name":"sweep","kind":"batch","stacks":["cuda"],"work":1e6})")
          .ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "sweep") == "running"; }));
  EXPECT_EQ(State(*d->service, "train"), "queued");
}

TEST(Service, AnElasticJobRunsAtTheSizeTheSchedulerPicksAndGivesWay) {
  TempDir dir;
  ServiceOptions so;
  so.scheduler.elastic = true;
  auto d = StartDaemon(dir.File("h.db"), "v100=4", 1000, "default", so);
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"grow","stacks":["cuda"],"work":1e8,)"
                                      R"("gang_size":1,"elastic":{"min":1,"max":4}})")
                  .ok());
  // Alone on four devices it starts on all four (its speed scales with its size).
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "grow") == "running"; }));
  auto grow = d->service->Get("grow");
  ASSERT_TRUE(grow.ok());
  EXPECT_EQ(grow->devices.size(), 4u);
  // A rigid job of two arrives: the elastic one shrinks so that it starts.
  ASSERT_TRUE(
      SubmitJson(*d->service, R"({"name":"pair","stacks":["cuda"],"work":1e5,"gang_size":2})")
          .ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "pair") == "running"; }));
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "grow") == "running"; }));
  grow = d->service->Get("grow");
  ASSERT_TRUE(grow.ok());
  EXPECT_EQ(grow->devices.size(), 2u);
  EXPECT_GE(grow->preemptions, 1);
}

// The cluster's job counts are kept as jobs change state, not counted by walking them: at
// every moment they equal what listing every job counts, through starts, preemptions (an
// elastic job shrinking), cancels, time-limit stops, completions and a restart.
TEST(Service, JobCountsByStateFollowEveryChangeOfState) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  // Equal counts from both views, retried while a pass changes states between the two reads.
  // Ended jobs count since the daemon started: compared only before the restart.
  const auto counts_agree = [](Service& s, bool with_ended = true) {
    return WaitUntil([&] {
      auto c = s.Cluster();
      auto list = s.List({});
      if (!c.ok() || !list.ok()) return false;
      std::map<JobState, int64_t> listed;
      for (const JobView& j : list->jobs) ++listed[j.state];
      for (const JobState state : kJobStates) {
        if ((with_ended || !IsEnded(state)) && c->jobs_in(state) != listed[state]) return false;
      }
      return true;
    });
  };
  ServiceOptions so;
  so.scheduler.elastic = true;
  {
    auto d = StartDaemon(db, "v100=4", 1000, "default", so);
    ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"grow","stacks":["cuda"],"work":1e8,)"
                                        R"("gang_size":1,"elastic":{"min":1,"max":4}})")
                    .ok());
    ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "grow") == "running"; }));
    EXPECT_TRUE(counts_agree(*d->service));
    ASSERT_TRUE(
        SubmitJson(*d->service, R"({"name":"pair","stacks":["cuda"],"work":1e7,"gang_size":2})")
            .ok());
    auto limited = SubmitJson(*d->service,
                              R"({"name":"limited","stacks":["cuda"],"work":1e7,"time_limit":60})");
    ASSERT_TRUE(limited.ok()) << limited.status().ToString();
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(SubmitJson(*d->service,
                             fmt::format(R"({{"name":"w{}","stacks":["cuda"],"work":1e7}})", i))
                      .ok());
    }
    ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "pair") == "running"; }));
    EXPECT_GE(d->service->Get("grow")->preemptions, 1);
    EXPECT_TRUE(counts_agree(*d->service));
    ASSERT_TRUE(d->service->Cancel("w3").ok());
    ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "limited") == "failed"; }));
    EXPECT_TRUE(counts_agree(*d->service));
  }
  // After a restart: recovered jobs counted once, the vanished attempts requeued.
  auto d = StartDaemon(db, "v100=4", 1000, "default", so);
  EXPECT_TRUE(counts_agree(*d->service, /*with_ended=*/false));
  ASSERT_TRUE(d->service->Cancel("pair").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "pair") == "cancelled"; }));
  EXPECT_TRUE(counts_agree(*d->service, /*with_ended=*/false));
}

TEST(Service, CancelEndsQueuedAndRunningJobs) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"), "v100=1", 1);
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"long","stacks":["cuda"],"work":1e6})").ok());
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"next","stacks":["cuda"],"work":1e6})").ok());
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "long") == "running"; }));
  EXPECT_EQ(State(*d->service, "next"), "queued");
  ASSERT_TRUE(d->service->Cancel("next").ok());
  ASSERT_TRUE(d->service->Cancel("long").ok());
  ASSERT_TRUE(WaitUntil([&] {
    return State(*d->service, "next") == "cancelled" && State(*d->service, "long") == "cancelled";
  }));
  EXPECT_EQ(d->service->Cancel("nobody").status().code(), util::StatusCode::kNotFound);
  auto why = d->service->Why("long");
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->rfind("cancelled", 0), 0u) << *why;
}

// A job still running at its time limit is stopped and fails with the reason; one that ends
// in time completes (drive::Attempts' rule, the simulator's too).
TEST(Service, AJobPastItsTimeLimitIsStoppedAndFails) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"), "v100=2", 1000);
  // At 1 step/s: 75 modeled seconds against a 60 s limit, and 30 against one of 60.
  ASSERT_TRUE(
      SubmitJson(*d->service, R"({"name":"over","stacks":["cuda"],"work":75,"time_limit":60})")
          .ok());
  ASSERT_TRUE(
      SubmitJson(*d->service, R"({"name":"within","stacks":["cuda"],"work":30,"time_limit":60})")
          .ok());
  ASSERT_TRUE(WaitUntil([&] {
    return State(*d->service, "over") == "failed" && State(*d->service, "within") == "completed";
  }));
  auto over = d->service->Get("over");
  ASSERT_TRUE(over.ok());
  EXPECT_NE(over->message.find("time limit of 60 s"), std::string::npos) << over->message;
}

// A job without work is modeled for its estimate; one with only a time limit runs until the
// limit stops it (a limit is a bound, not a size), whatever the order of the two.
TEST(Service, AJobWithoutWorkIsModeledForItsEstimateElseUntilItsTimeLimit) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"), "v100=3", 1000);
  ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"guess","stacks":["cuda"],"estimate":30})").ok());
  ASSERT_TRUE(
      SubmitJson(*d->service, R"({"name":"both","stacks":["cuda"],"estimate":30,"time_limit":60})")
          .ok());
  ASSERT_TRUE(
      SubmitJson(*d->service, R"({"name":"bound","stacks":["cuda"],"time_limit":60})").ok());
  ASSERT_TRUE(WaitUntil([&] {
    return State(*d->service, "guess") == "completed" &&
           State(*d->service, "both") == "completed" && State(*d->service, "bound") == "failed";
  })) << State(*d->service, "guess")
      << " " << State(*d->service, "both") << " " << State(*d->service, "bound");
  auto bound = d->service->Get("bound");
  ASSERT_TRUE(bound.ok());
  EXPECT_NE(bound->message.find("time limit of 60 s"), std::string::npos) << bound->message;
}

TEST(Service, NothingStartsOnADrainedNode) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"), "v100=1,k80=1", 1);
  auto nodes = d->service->Nodes(100, std::nullopt);
  ASSERT_TRUE(nodes.ok());
  std::string v100_node;
  for (const NodeView& n : nodes->nodes) {
    if (n.devices[0].type == "v100-32g") v100_node = n.name;
  }
  ASSERT_FALSE(v100_node.empty());
  auto drained = d->service->SetDrained(v100_node, true);
  ASSERT_TRUE(drained.ok());
  EXPECT_TRUE(drained->drained);
  ASSERT_TRUE(SubmitJson(*d->service,
                         R"({"name":"v","stacks":["cuda"],"work":1e6,"throughput":{"v100":1}})")
                  .ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(State(*d->service, "v"), "queued");
  ASSERT_TRUE(d->service->SetDrained(v100_node, false).ok());
  EXPECT_TRUE(WaitUntil([&] { return State(*d->service, "v") == "running"; }));
  EXPECT_EQ(d->service->SetDrained("no-such-node", true).status().code(),
            util::StatusCode::kNotFound);
}

// A restart recovers every job exactly once; jobs that ran on the virtual backend (which died
// with the daemon) are found vanished by reconciliation and run again from their checkpoint.
TEST(Service, ARestartRecoversEveryJobExactlyOnce) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  {
    auto d = StartDaemon(db, "v100=2", 1);
    auto nodes = d->service->Nodes(100, std::nullopt);
    ASSERT_TRUE(nodes.ok());
    ASSERT_TRUE(d->service->SetDrained(nodes->nodes[0].name, true).ok());
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(
          SubmitJson(*d->service, fmt::format(R"({{"name":"r{}","stacks":["cuda"],"work":30}})", i))
              .ok());
    }
    ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "r0") == "running"; }));
    ASSERT_TRUE(d->service->Cancel("r4").ok());
    ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "r4") == "cancelled"; }));
  }
  auto d = StartDaemon(db, "v100=2", 1000);
  auto nodes = d->service->Nodes(100, std::nullopt);
  ASSERT_TRUE(nodes.ok());
  EXPECT_TRUE(nodes->nodes[0].drained) << "the drain survives the restart";
  auto list = d->service->List({});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->jobs.size(), 5u);
  EXPECT_EQ(State(*d->service, "r4"), "cancelled");
  ASSERT_TRUE(WaitUntil([&] {
    for (int i = 0; i < 4; ++i) {
      if (State(*d->service, fmt::format("r{}", i)) != "completed") return false;
    }
    return true;
  }));
  auto r0 = d->service->Get("r0");
  ASSERT_TRUE(r0.ok());
  EXPECT_GE(r0->attempt, 2) << "r0 ran before the restart and again after";
}

// A job the cluster can no longer run (its only device type left the cluster file) fails at
// the restart and is stored so: recovery writes it once every stored row has been read.
TEST(Service, ARestartFailsAndStoresAJobTheClusterCanNoLongerRun) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  {
    auto d = StartDaemon(db, "v100=1,k80=1", 1);
    for (const std::string name : {"k80-only", "either"}) {
      const std::string speed = name == "k80-only" ? R"("k80":1)" : R"("k80":1,"v100":1)";
      ASSERT_TRUE(
          SubmitJson(*d->service, fmt::format(R"({{"name":"{}","stacks":["cuda"],"work":1e6,)"
                                              R"("throughput":{{{}}}}})",
                                              name, speed))
              .ok())
          << name;
    }
  }
  const std::string why = "cannot run on this cluster after a restart";
  for (int restart = 0; restart < 2; ++restart) {
    auto d = StartDaemon(db, "v100=1", 1);
    auto failed = d->service->Get("k80-only");
    ASSERT_TRUE(failed.ok()) << failed.status().ToString();
    EXPECT_EQ(JobStateName(failed->state), "failed") << "restart " << restart;
    EXPECT_NE(failed->message.find(why), std::string::npos) << failed->message;
    EXPECT_NE(State(*d->service, "either"), "failed") << "restart " << restart;
  }
}

// After a restart on the virtual backend every attempt that ran has vanished: one warning
// counts them (at scale a line per job buried the log), each is at debug, and every job keeps
// its events.
TEST(Service, VanishedAttemptsAreOneWarningAndAnEventPerJob) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  const auto all_run = [](Service& s) {
    return WaitUntil([&] {
      for (int i = 0; i < 3; ++i) {
        if (State(s, fmt::format("v{}", i)) != "running") return false;
      }
      return true;
    });
  };
  {
    auto d = StartDaemon(db, "v100=3", 1);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(SubmitJson(*d->service,
                             fmt::format(R"({{"name":"v{}","stacks":["cuda"],"work":1e6}})", i))
                      .ok());
    }
    ASSERT_TRUE(all_run(*d->service));
  }
  std::mutex mu;
  std::vector<std::string> lines;
  auto log_at = [&](LogLevel level) {
    return Logger(level, [&](std::string_view line) {
      std::lock_guard lock(mu);
      lines.emplace_back(line);
    });
  };
  const auto count = [&](std::string_view text) {
    std::lock_guard lock(mu);
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  {
    Logger warn = log_at(LogLevel::kWarn);
    auto d = StartDaemon(db, "v100=3", 1, "fifo", {}, {}, &warn);
    EXPECT_EQ(count(R"("msg":"attempts vanished from the backend; requeued","attempts":3,)"), 1);
    EXPECT_EQ(count("an attempt vanished"), 0);
    EXPECT_EQ(count("an attempt was lost"), 0);
    ASSERT_TRUE(all_run(*d->service));  // started again, to vanish at the next restart
  }
  lines.clear();
  {
    // At debug each one is there, twice (the vanished attempt, then its loss).
    Logger debug = log_at(LogLevel::kDebug);
    auto d = StartDaemon(db, "v100=3", 1, "fifo", {}, {}, &debug);
    EXPECT_EQ(count("an attempt vanished; requeued"), 3);
    EXPECT_EQ(count("an attempt was lost"), 3);
  }
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int i = 0; i < 3; ++i) {
    auto events = (*store)->Events(fmt::format("v{}", i), 100);
    ASSERT_TRUE(events.ok());
    EXPECT_EQ(std::count_if(events->begin(), events->end(),
                            [](const StoredEvent& e) { return e.kind == "repair"; }),
              2)
        << "one per restart";
  }
}

// Every field of a job's view but those a restart may change for a job that ran (its state,
// attempt, devices, start, message), as text.
std::string Fields(const JobView& v) {
  return fmt::format(
      "name={} tenant={} kind={} gang={} stacks={} submitted={} ended={} exit={} preemptions={} "
      "command={} preemptible={}",
      v.name, v.tenant, v.kind, v.gang, fmt::join(v.stacks, ","), v.submitted_s, v.ended_s,
      v.exit_status.value_or(-999), v.preemptions, v.has_command, v.preemptible);
}

// A restart reads the live jobs back by a path of its own (Service::RecoverJob): nothing of a
// job may be lost on the way, whatever it asked for.
TEST(Service, ARestartKeepsEveryFieldOfEveryLiveJob) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  const std::vector<std::string> bodies = {
      R"({"name":"runs","stacks":["cuda"],"work":1e7})",
      R"({"name":"timed","kind":"inference","stacks":["cuda>=11.0"],"estimate":"20m",)"
      R"("time_limit":"1h","preemptible":false,"priority":3})",
      R"({"name":"cmd","stacks":["cuda"],"command":["train.py","--lr","0.1"],"gang_size":1})",
      R"({"name":"sized","stacks":["cuda"],"work":50,"throughput":{"v100":2}})",
  };
  std::map<std::string, JobView> before;
  {
    auto d = StartDaemon(db, "v100=1", 1);
    for (size_t i = 0; i < bodies.size(); ++i) {
      auto submitted = SubmitJson(*d->service, bodies[i], fmt::format("key-{}", i));
      ASSERT_TRUE(submitted.ok()) << bodies[i] << ": " << submitted.status().ToString();
      if (i == 0) {
        ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "runs") == "running"; }));
      }
    }
    auto list = d->service->List({});
    ASSERT_TRUE(list.ok());
    for (const JobView& v : list->jobs) before[v.name] = v;
  }
  ASSERT_EQ(before.size(), bodies.size());
  auto d = StartDaemon(db, "v100=1", 1);
  for (const auto& [name, was] : before) {
    auto now = d->service->Get(name);
    ASSERT_TRUE(now.ok()) << name;
    EXPECT_EQ(Fields(*now), Fields(was));
    if (name == "runs") continue;  // its attempt vanished with the old backend: requeued
    EXPECT_EQ(now->state, JobState::kQueued) << name;
    EXPECT_EQ(now->attempt, 0) << name;
    EXPECT_EQ(now->message, was.message) << name;
  }
  // The idempotency keys came back too: a retry returns the job rather than a conflict.
  auto retry = SubmitJson(*d->service, bodies[2], "key-2");
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_FALSE(retry->created);
  EXPECT_FALSE(SubmitJson(*d->service, bodies[2], "another key").ok());
}

// The scheduler sees no job's size; the daemon keeps it apart (Service::Entry::work) and a
// restart reads it back: the virtual backend models the run from it, so a long job started
// again does not end at once.
TEST(Service, ARestartKeepsAJobsTrueSize) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  {
    auto d = StartDaemon(db, "v100=1", 1);
    ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"long","stacks":["cuda"],"work":1e7})").ok());
    ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "long") == "running"; }));
  }
  auto d = StartDaemon(db, "v100=1", 1);
  ASSERT_TRUE(WaitUntil([&] { return State(*d->service, "long") == "running"; }))
      << State(*d->service, "long");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(State(*d->service, "long"), "running");
}

// What reading the stored state back took is reported apart from the first scheduling pass
// (which holds the service's lock): `hetsched_recovery_seconds{clock}`, wall and CPU.
TEST(Service, ARestartReportsWhatItsRecoveryTook) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  {
    auto d = StartDaemon(db, "v100=1", 1);
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(SubmitJson(*d->service, fmt::format(R"({{"name":"j{}","stacks":["cuda"],)"
                                                      R"("work":1e7}})",
                                                      i))
                      .ok());
    }
  }
  auto d = StartDaemon(db, "v100=1", 1);
  const std::string text = d->metrics.Render();
  const auto value = [&](const std::string& clock) {
    std::smatch m;
    const std::regex line("hetsched_recovery_seconds\\{clock=\"" + clock + "\"\\} ([0-9.e+-]+)");
    EXPECT_TRUE(std::regex_search(text, m, line)) << text;
    return m.empty() ? -1.0 : std::stod(m[1]);
  };
  const double wall = value("wall"), cpu = value("cpu");
  EXPECT_GT(wall, 0);
  EXPECT_GT(cpu, 0);
  EXPECT_LE(cpu, wall + 0.01);  // one thread's CPU: no more than the wall time, give or take a tick
}

// The samples behind GET /v1/history are the database's: a restarted daemon still has them,
// and adds its own after them.
TEST(Service, ARestartKeepsTheSampledHistory) {
  TempDir dir;
  const std::string db = dir.File("h.db");
  std::mutex mu;
  double wall = 1e9;
  ServiceOptions so;
  so.history_every_s = 1;
  so.history_kept = 5;
  so.wall_clock = [&] {
    std::lock_guard lock(mu);
    return wall += 0.01;  // a sample every 100 passes of the control loop
  };
  const auto times = [](Service& s) {
    std::vector<double> out;
    auto page = s.History(0, std::nullopt, 100);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (page.ok()) {
      for (const StoredSample& sample : page->samples) out.push_back(sample.at_s);
    }
    return out;
  };
  std::vector<double> before;
  {
    auto d = StartDaemon(db, "v100=2", 1000, "fifo", so);
    ASSERT_TRUE(SubmitJson(*d->service, R"({"name":"a","stacks":["cuda"],"work":1e7})").ok());
    ASSERT_TRUE(WaitUntil([&] { return times(*d->service).size() == 5; }));
    // Kept: the newest 5, a second apart, the newest showing the running job on one of the two
    // V100s.
    auto page = d->service->History(0, std::nullopt, 100);
    ASSERT_TRUE(page.ok());
    const StoredSample& last = page->samples.back();
    EXPECT_EQ(last.jobs_running, 1);
    ASSERT_EQ(last.types.size(), 1u);
    EXPECT_EQ(last.types[0].type, "v100-32g");
    EXPECT_EQ(last.types[0].used, 1);
    EXPECT_EQ(last.types[0].offered, 2);
    EXPECT_GT(last.power_w, 0);
  }
  {
    // What the database holds after the stop (the control loop may have sampled once more).
    auto store = Store::Open(db);
    ASSERT_TRUE(store.ok());
    auto stored = (*store)->Samples(0, 0, 100);
    ASSERT_TRUE(stored.ok());
    for (const StoredSample& sample : *stored) before.push_back(sample.at_s);
    ASSERT_EQ(before.size(), 5u);
  }
  {
    std::lock_guard lock(mu);
    wall += 1000;  // the daemon was down for a while
  }
  so.history_every_s = 0;  // takes none: what it shows is what the first one stored
  auto d = StartDaemon(db, "v100=2", 1000, "fifo", so);
  EXPECT_EQ(times(*d->service), before);
  // Pages: after a sample, from a time, at most a limit.
  auto first = d->service->History(0, std::nullopt, 2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->samples.size(), 2u);
  ASSERT_TRUE(first->next_after.has_value());
  auto rest = d->service->History(0, first->next_after, 100);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->samples.size(), 3u);
  EXPECT_FALSE(rest->next_after.has_value());
  EXPECT_EQ(rest->samples[0].at_s, before[2]);
  d.reset();
  so.history_every_s = 1;
  d = StartDaemon(db, "v100=2", 1000, "fifo", so);
  ASSERT_TRUE(WaitUntil([&] { return times(*d->service).back() > before.back() + 1000; }));
}

TEST(Service, WhatIfSimulatesTheLiveJobsUnderAnotherPolicy) {
  TempDir dir;
  auto d = StartDaemon(dir.File("h.db"), "v100=2", 1, "default");
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        SubmitJson(*d->service,
                   fmt::format(R"({{"name":"w{}","stacks":["cuda"],"work":{}}})", i, 600 * (i + 1)))
            .ok());
  }
  ASSERT_TRUE(
      SubmitJson(*d->service, R"({"name":"cmd","stacks":["cuda"],"command":["sleep","9"]})").ok());
  auto w = d->service->WhatIf("fifo");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[0].policy, "srpt-het-fair");
  EXPECT_EQ((*w)[1].policy, "fifo");
  for (const WhatIfResult& r : *w) {
    EXPECT_EQ(r.jobs, 4);
    EXPECT_EQ(r.skipped, 1) << "the command has no size";
    // Two devices, 6,000 steps at 1 step/s in all: at least 3,000 s from now.
    EXPECT_GE(r.makespan_s, 2990);
    EXPECT_LE(r.makespan_s, 3610);
  }
  EXPECT_EQ(d->service->WhatIf("nope").status().code(), util::StatusCode::kInvalidArgument);
}

// The daemon simulates and writes plans only through the hooks `hetsched serve` hands it.
TEST(Service, WhatIfAndPlanWithoutAnalysisHooksAreInternalErrors) {
  TempDir dir;
  Daemon d;
  auto c = model::io::LoadCluster("v100=1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  VirtualBackendOptions vo;
  vo.nodes.push_back(c->nodes[0].name);
  auto store = Store::Open(dir.File("h.db"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto s = Service::Create(std::move(c).value(), std::make_unique<VirtualBackend>(vo),
                           std::move(store).value(), ServiceOptions{}, &d.logger, &d.metrics);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  d.service = std::move(s).value();
  ASSERT_TRUE(d.service->Start().ok());
  EXPECT_EQ(d.service->WhatIf("fifo").status().code(), util::StatusCode::kInternal);
  PlanRequest plan;
  plan.model = "llama-7b";
  EXPECT_EQ(d.service->Plan(plan).status().code(), util::StatusCode::kInternal);
}

// A daemon killed while a preempted job wrote its checkpoint: the next one adopts the job on its
// devices, hears it exit as stopped, and puts it back in the queue (its devices freed), where it
// runs again.
TEST(Service, AJobStoppingForAPreemptionAtARestartIsQueuedWhenItExits) {
  TempDir dir;
  auto cluster = model::io::LoadCluster("xeon-8380=1");
  ASSERT_TRUE(cluster.ok());
  const std::string node = cluster->nodes[0].name;
  const std::string state_dir = dir.File("local");
  {
    // What the killed daemon left: attempt 1 asked to stop (it exits when told), and its row.
    auto before = LocalBackend::Create({node, state_dir, ""});
    ASSERT_TRUE(before.ok());
    LaunchSpec spec;
    spec.job = "p";
    spec.attempt = 1;
    spec.node = node;
    spec.node_devices = {0};
    spec.command = {"/bin/sh", "-c", "trap 'exit 0' TERM; sleep 30 & wait"};
    ASSERT_TRUE((*before)->Start(spec).ok());
    ASSERT_TRUE((*before)->Stop("p", 1, 10).ok());
    auto store = Store::Open(dir.File("h.db"));
    ASSERT_TRUE(store.ok());
    StoredJob row;
    row.name = "p";
    row.spec_json = R"({"name":"p","stacks":["x86_64"],"command":["/bin/sh","-c","exit 0"]})";
    row.state = JobState::kStopping;
    row.stop = drive::StopCause::kPreempt;
    row.attempt = 1;
    row.devices = {0};
    row.device_type = "xeon-8380";
    ASSERT_TRUE((*store)->InsertJob(row).ok());
  }
  Logger logger(LogLevel::kError, [](std::string_view) {});
  MetricsRegistry metrics;
  auto backend = LocalBackend::Create({node, state_dir, ""});
  ASSERT_TRUE(backend.ok());
  auto store = Store::Open(dir.File("h.db"));
  ASSERT_TRUE(store.ok());
  ServiceOptions so;
  so.policy = "fifo";
  so.tick_s = 0.005;
  auto service = Service::Create(*cluster, std::move(backend).value(), std::move(store).value(), so,
                                 &logger, &metrics);
  ASSERT_TRUE(service.ok());
  ASSERT_TRUE((*service)->Start().ok());
  // Attempt 2 can only start once attempt 1's device is free again.
  ASSERT_TRUE(WaitUntil([&] {
    auto v = (*service)->Get("p");
    return v.ok() && v->state == JobState::kCompleted;
  }));
  auto v = (*service)->Get("p");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->attempt, 2);
  EXPECT_EQ(v->exit_status, 0);
}

// A daemon restarted while a job it stopped at its time limit is still exiting finds the job
// stopping for that reason: it asks the backend to stop it again, and the job fails with the
// time limit as its reason when it exits (not "completed", although it exits 0, and not with a
// fresh time limit).
TEST(Service, AJobStoppingAtItsTimeLimitAtARestartFailsWhenItExits) {
  TempDir dir;
  auto cluster = model::io::LoadCluster("xeon-8380=1");
  ASSERT_TRUE(cluster.ok());
  const std::string node = cluster->nodes[0].name;
  const std::string state_dir = dir.File("local");
  Logger logger(LogLevel::kError, [](std::string_view) {});
  // Each daemon, on the same database and backend state: the backend's processes outlive it.
  const auto start = [&](MetricsRegistry& metrics) {
    auto backend = LocalBackend::Create({node, state_dir, ""});
    EXPECT_TRUE(backend.ok());
    auto store = Store::Open(dir.File("h.db"));
    EXPECT_TRUE(store.ok());
    ServiceOptions so;
    so.policy = "fifo";
    so.tick_s = 0.005;
    so.time_scale = 120;   // the shortest time limit, a minute, is half a second
    so.stop_grace_s = 60;  // no SIGKILL while the test runs
    auto service = Service::Create(*cluster, std::move(backend).value(), std::move(store).value(),
                                   so, &logger, &metrics);
    EXPECT_TRUE(service.ok());
    EXPECT_TRUE((*service)->Start().ok());
    return std::move(service).value();
  };
  {
    MetricsRegistry metrics;
    auto first = start(metrics);
    // Asked to stop, it takes a second, then exits 0.
    ASSERT_TRUE(SubmitJson(*first, R"({"name":"t","stacks":["x86_64"],"time_limit":60,)"
                                   R"("command":["/bin/sh","-c",)"
                                   R"("trap 'sleep 1; exit 0' TERM; sleep 30 & wait"]})")
                    .ok());
    ASSERT_TRUE(WaitUntil([&] { return State(*first, "t") == "stopping"; }));
  }  // the daemon goes while the job is still exiting
  MetricsRegistry metrics;
  auto second = start(metrics);
  ASSERT_TRUE(WaitUntil([&] { return State(*second, "t") == "failed"; }));
  auto v = second->Get("t");
  ASSERT_TRUE(v.ok());
  EXPECT_NE(v->message.find("time limit of 60 s"), std::string::npos) << v->message;
  EXPECT_EQ(v->attempt, 1);
}

}  // namespace
}  // namespace hetsched::svc
