// One workload, two drivers, real processes: 500 jobs through `hetsched simulate` (virtual
// time) and through `hetsched serve --backend local`, which runs each job's command on this
// machine. Every job must complete with exit status 0, see the devices it was given in its
// vendor's *_VISIBLE_DEVICES, and the two must make the same placements.
//
// What is compared, and why real-time jitter cannot change it:
//  - The policy is fifo, which blocks strictly at the head of the queue (sched/policies.cc): no
//    job starts before every job ahead of it has started. Its queue is in submission order: in
//    the simulator every job arrives at 0 and ties go by workload order; the daemon is sent the
//    jobs one at a time, each acknowledged (committed) before the next is sent, and ties in
//    arrival go by submission sequence (sched/job_record.h). So on both sides jobs start in
//    submission order whatever their run times: when a device frees decides *when* the head
//    starts, never *which* job starts next. The test checks the simulator's order is the
//    submission order (the premise), then that the daemon's is the simulator's.
//  - Each job's stacks allow exactly one device type of the node (cuda: a100-80g, rocm: mi100,
//    cann: ascend-910b, x86_64: epyc-7763), so the job alone decides its type.
//  Per job the test compares the device type and the number of devices; over all jobs the
//  sequence of starts: the daemon's "place" events in the order it stored them against the
//  simulator's timeline runs in the order it opened them. Which devices of a type a job gets
//  depends on which finished first, so indices are not compared with the simulator; they are
//  checked against what the job's process saw instead (its log).
// A job placed out of order, on another type, or twice shows up as a difference
// (StartDifferences, itself tested below on sequences with such faults).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/store.h"
#include "testing/build_paths.h"
#include "testing/daemon.h"

namespace {

namespace fs = std::filesystem;
using hetsched::testing::CommandResult;
using hetsched::testing::Daemon;
using hetsched::testing::ReadFileText;
using hetsched::testing::RunCommand;
using hetsched::testing::TempDir;
using hetsched::testing::WaitUntil;
using nlohmann::json;

constexpr int kJobs = 500;
constexpr double kRunDeadlineS = 150;  // generous: the run takes 10-17 s on a shared 2-core machine

// One node: the CPU first, then three vendors' accelerators, so each vendor's devices sit at
// node positions other than their runtime numbers (the a100s are 1-3 in the node, CUDA 0-2).
constexpr const char* kClusterYaml = R"(name: local-e2e
racks:
  - {name: rack-1, uplink_bandwidth: 100Gb/s, latency: 1us}
nodes:
  - name: e2e-host
    devices:
      - {type: epyc-7763, count: 1}
      - {type: a100-80g, count: 3}
      - {type: mi100, count: 2}
      - {type: ascend-910b, count: 2}
    nic: {bandwidth: 100Gb/s, latency: 2us}
)";

// A kind of job: the one stack it names and the one type of the node that runs it.
struct Kind {
  const char* stack;
  const char* type;
  int first_position;  // the type's first device in the node
  int count;           // its devices in the node
  int max_gang;
};
constexpr Kind kKinds[] = {
    {"cuda", "a100-80g", 1, 3, 2},
    {"rocm", "mi100", 4, 2, 2},
    {"cann", "ascend-910b", 6, 2, 2},
    {"x86_64", "epyc-7763", 0, 1, 1},
};
constexpr const char* kVariables[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                      "HIP_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"};

struct TestJob {
  std::string name;
  const Kind* kind;
  int gang;
  json spec;  // the body submitted to the daemon and the line given to the simulator
};

// The workload: kinds, gangs and run times from a fixed LCG, so every run submits the same jobs.
// Each job prints what the backend set, then sleeps 0-30 ms. `throughput` names the one type
// its stack allows at 1 step/s, which is what the daemon assumes for a job without one; `work`
// is the sleep, so the simulator models the same run time.
std::vector<TestJob> Workload() {
  std::vector<TestJob> jobs;
  uint64_t state = 20240611;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int i = 0; i < kJobs; ++i) {
    const uint32_t r = next() % 10;  // cuda 4, rocm 3, cann 2, cpu 1 in 10
    const Kind& kind = kKinds[r < 4 ? 0 : r < 7 ? 1 : r < 9 ? 2 : 3];
    const int gang = kind.max_gang > 1 && next() % 4 == 0 ? 2 : 1;
    const double sleep_s = 0.01 * (next() % 4);
    TestJob j{fmt::format("job-{:03}", i), &kind, gang, json::object()};
    std::string script = "echo \"seen type=$HETSCHED_DEVICE_TYPE devices=$HETSCHED_DEVICES";
    for (const char* v : kVariables) script += fmt::format(" {0}=${{{0}-unset}}", v);
    script += fmt::format("\"; exec sleep {}", sleep_s);
    j.spec = {{"name", j.name},
              {"stacks", json::array({kind.stack})},
              {"gang_size", gang},
              {"work", sleep_s > 0 ? sleep_s : 0.001},
              {"throughput", json::object({{kind.type, 1}})},
              {"command", json::array({"/bin/sh", "-c", script})}};
    jobs.push_back(std::move(j));
  }
  return jobs;
}

struct Start {
  std::string job;
  std::string type;
  int devices = 0;
};

// How `got` differs from `expected`, position by position (at most `limit` lines; empty when
// they agree).
std::vector<std::string> StartDifferences(const std::vector<Start>& expected,
                                          const std::vector<Start>& got, size_t limit = 10) {
  std::vector<std::string> out;
  if (expected.size() != got.size()) {
    out.push_back(fmt::format("{} starts, expected {}", got.size(), expected.size()));
  }
  for (size_t i = 0; i < std::min(expected.size(), got.size()) && out.size() < limit; ++i) {
    const Start& e = expected[i];
    const Start& g = got[i];
    if (e.job != g.job || e.type != g.type || e.devices != g.devices) {
      out.push_back(fmt::format("start #{}: {} on {} x{}, expected {} on {} x{}", i, g.job, g.type,
                                g.devices, e.job, e.type, e.devices));
    }
  }
  return out;
}

// The daemon's jobs over HTTP with its admin token.
struct Api {
  explicit Api(const Daemon& d) : client(d.url()), token(d.token()) {
    client.set_connection_timeout(2);
    client.set_read_timeout(30);
    client.set_write_timeout(30);
  }
  httplib::Headers Auth() const { return {{"Authorization", "Bearer " + token}}; }
  httplib::Client client;
  std::string token;
};

// After the daemon is gone: waits for the processes its local backend recorded in run/ (jobs and
// their monitors) to end, and kills the groups of jobs that outlive `seconds` (a test that failed
// half-way leaves some; they are short, so normally none is left to wait for).
void ReapJobProcesses(const fs::path& state_dir, double seconds) {
  std::vector<pid_t> jobs, all;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(state_dir / "run", ec)) {
    if (entry.path().extension() != ".pid") continue;
    std::istringstream in(ReadFileText(entry.path()));
    std::string key;
    long long value = 0;
    while (in >> key >> value) {
      if (value <= 1) continue;
      if (key == "pid") jobs.push_back(static_cast<pid_t>(value));
      if (key == "pid" || key == "monitor_pid") all.push_back(static_cast<pid_t>(value));
    }
  }
  auto alive = [](pid_t pid) {
    if (kill(pid, 0) != 0) return false;
    const std::string stat = ReadFileText(fmt::format("/proc/{}/stat", pid));
    const size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
  };
  auto any_alive = [&] {
    for (pid_t p : all) {
      if (alive(p)) return true;
    }
    return false;
  };
  if (WaitUntil([&] { return !any_alive(); }, seconds, 20)) return;
  for (pid_t p : jobs) {
    if (alive(p)) kill(-p, SIGKILL);
  }
  WaitUntil([&] { return !any_alive(); }, 5, 20);
}

// Reaps in its destructor, after the daemon (declared after it) has been stopped.
struct Reaper {
  fs::path state_dir;
  ~Reaper() {
    if (!state_dir.empty()) ReapJobProcesses(state_dir, 5);
  }
};

TEST(SameDecisionsLocal, StartDifferencesCatchesOrderTypeAndCount) {
  const std::vector<Start> expected = {
      {"a", "a100-80g", 1}, {"b", "mi100", 2}, {"c", "epyc-7763", 1}};
  EXPECT_TRUE(StartDifferences(expected, expected).empty());
  std::vector<Start> swapped = {expected[1], expected[0], expected[2]};
  EXPECT_EQ(StartDifferences(expected, swapped).size(), 2u) << "out of order";
  std::vector<Start> wrong_type = expected;
  wrong_type[0].type = "mi100";  // a CUDA job on an AMD device
  EXPECT_EQ(StartDifferences(expected, wrong_type),
            std::vector<std::string>{"start #0: a on mi100 x1, expected a on a100-80g x1"});
  std::vector<Start> wrong_gang = expected;
  wrong_gang[1].devices = 1;
  EXPECT_EQ(StartDifferences(expected, wrong_gang).size(), 1u);
  std::vector<Start> twice = expected;
  twice.push_back(expected[0]);
  EXPECT_EQ(StartDifferences(expected, twice).size(), 1u) << "a job placed twice";
}

TEST(SameDecisionsLocal, FiveHundredRealJobsPlaceAsInTheSimulator) {
  const auto test_start = std::chrono::steady_clock::now();
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  const std::vector<TestJob> jobs = Workload();
  {
    std::ofstream(tmp.File("node.yaml")) << kClusterYaml;
    std::ofstream trace(tmp.File("jobs.jsonl"));
    for (const TestJob& j : jobs) trace << j.spec.dump() << "\n";
  }

  // 1. The simulator. --html makes it record the timeline (runs with their types, in the order
  // it placed them) in the JSON too.
  const auto sim_start = std::chrono::steady_clock::now();
  const CommandResult sim =
      RunCommand({HETSCHED_BINARY, "simulate", "--cluster", tmp.File("node.yaml"), "--trace",
                  tmp.File("jobs.jsonl"), "--policy", "fifo", "--json", tmp.File("sim.json"),
                  "--html", tmp.File("sim.html"), "-q"},
                 {}, 120);
  const double sim_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sim_start).count();
  ASSERT_EQ(sim.status, 0) << sim.out << sim.err;
  const json result = json::parse(ReadFileText(tmp.File("sim.json")), nullptr, false);
  ASSERT_FALSE(result.is_discarded());
  ASSERT_EQ(result["jobs_completed"], kJobs) << result.dump().substr(0, 2000);
  const json& timeline = result["timeline"];
  ASSERT_EQ(timeline["runs"].size(), static_cast<size_t>(kJobs)) << "fifo runs each job once";
  std::vector<Start> expected;
  for (const json& run : timeline["runs"]) {
    // Job ids are workload positions: every job arrives at 0, and the reader keeps file order.
    const int id = run["job"];
    ASSERT_TRUE(id >= 0 && id < kJobs);
    expected.push_back({jobs[id].name, timeline["types"][run["type"].get<int>()].get<std::string>(),
                        run["devices"].get<int>()});
  }
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_EQ(expected[i].job, jobs[i].name)
        << "the simulator started jobs out of submission order under fifo: the premise of this "
           "test (start order independent of run times) no longer holds";
  }

  // 2. The daemon, running the jobs' commands here. Its environment must not carry visibility
  // variables of its own: a job would inherit those its vendor does not set.
  for (const char* v : kVariables) unsetenv(v);
  const fs::path state_dir = tmp.path() / "hetsched-local";
  Reaper reaper{state_dir};  // destroyed after the daemon
  std::string error;
  std::unique_ptr<Daemon> d =
      Daemon::Start({tmp.path(),
                     {"--backend", "local", "--cluster", tmp.File("node.yaml"), "--policy", "fifo",
                      "--log-level", "warn"}},
                    &error);
  ASSERT_NE(d, nullptr) << error;
  Api api(*d);
  const auto run_start = std::chrono::steady_clock::now();
  for (const TestJob& j : jobs) {
    auto r = api.client.Post("/v1/jobs", api.Auth(), j.spec.dump(), "application/json");
    ASSERT_TRUE(r) << j.name << ": " << httplib::to_string(r.error()) << "\n" << d->Stderr();
    ASSERT_EQ(r->status, 201) << j.name << ": " << r->body;
  }
  const double submit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  std::map<std::string, json> views;
  const bool all_ended = WaitUntil(
      [&] {
        auto r = api.client.Get("/v1/jobs?limit=1000", api.Auth());
        if (!r || r->status != 200) return false;
        const json doc = json::parse(r->body, nullptr, false);
        if (doc.is_discarded()) return false;
        views.clear();
        for (const json& v : doc["jobs"]) views[v["name"].get<std::string>()] = v;
        int ended = 0;
        for (const auto& [name, v] : views) {
          const std::string state = v["state"];
          ended += state == "completed" || state == "failed" || state == "cancelled";
        }
        return ended == kJobs;
      },
      kRunDeadlineS, 200);
  const double run_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  ASSERT_TRUE(all_ended) << views.size() << " jobs listed; daemon stderr:\n" << d->Stderr();
  ASSERT_EQ(d->Terminate(SIGTERM, 20), 0) << d->Stderr();

  // 3. Every job completed once, on its kind's type, and its process saw its devices.
  const std::regex seen(
      R"(seen type=(\S*) devices=(\S*) CUDA_VISIBLE_DEVICES=(\S*) ROCR_VISIBLE_DEVICES=(\S*) )"
      R"(HIP_VISIBLE_DEVICES=(\S*) ASCEND_RT_VISIBLE_DEVICES=(\S*)\n)");
  // Each job's problems, one line each (the first ones are shown: a systematic fault would
  // otherwise print hundreds of failures).
  std::vector<std::string> problems;
  for (const TestJob& j : jobs) {
    auto problem = [&](const std::string& what) { problems.push_back(j.name + ": " + what); };
    if (!views.count(j.name)) {
      problem("not listed");
      continue;
    }
    const json& v = views[j.name];
    if (v["state"] != "completed" || v["exit_status"] != 0 || v["attempt"] != 1) {
      problem("expected completed with exit status 0 in attempt 1: " + v.dump());
    }
    if (v["device_type"] != j.kind->type) {
      problem(fmt::format("a {} job ran on {}, expected {}", j.kind->stack, v["device_type"].dump(),
                          j.kind->type));
    }
    // A completed job holds no devices any more: what it held is in its log.
    const std::string log = ReadFileText(state_dir / "logs" / (j.name + ".1.log"));
    const std::string shown_log = log.ends_with('\n') ? log.substr(0, log.size() - 1) : log;
    std::smatch m;
    if (!std::regex_match(log, m, seen) || m[1].str() != j.kind->type) {
      problem("log: " + shown_log);
      continue;
    }
    std::vector<int> positions;
    std::istringstream list(m[2].str());
    for (std::string p; std::getline(list, p, ',');) positions.push_back(std::stoi(p));
    std::string vendor_numbers, renumbered;
    bool in_range = static_cast<int>(positions.size()) == j.gang;
    for (size_t i = 0; i < positions.size(); ++i) {
      const int p = positions[i];
      in_range =
          in_range && p >= j.kind->first_position && p < j.kind->first_position + j.kind->count;
      vendor_numbers += (i > 0 ? "," : "") + std::to_string(p - j.kind->first_position);
      renumbered += (i > 0 ? "," : "") + std::to_string(i);
    }
    // Its vendor's variable lists its devices as the vendor numbers them (position in the node
    // less the position of the vendor's first device); the other vendors' are not set.
    std::string want[4] = {"unset", "unset", "unset", "unset"};  // in kVariables' order
    if (std::string(j.kind->stack) == "cuda") want[0] = vendor_numbers;
    if (std::string(j.kind->stack) == "rocm") {
      want[1] = vendor_numbers;
      want[2] = renumbered;  // HIP numbers what ROCR left visible from 0
    }
    if (std::string(j.kind->stack) == "cann") want[3] = vendor_numbers;
    if (!in_range || m[3] != want[0] || m[4] != want[1] || m[5] != want[2] || m[6] != want[3]) {
      problem(fmt::format("expected {} device(s) of {} with {}={} {}={} {}={} {}={}; log: {}",
                          j.gang, j.kind->type, kVariables[0], want[0], kVariables[1], want[1],
                          kVariables[2], want[2], kVariables[3], want[3], shown_log));
    }
  }
  std::string shown;
  for (size_t i = 0; i < problems.size() && i < 10; ++i) shown += "\n  " + problems[i];
  EXPECT_TRUE(problems.empty()) << problems.size() << " problem(s), the first ones:" << shown;

  // 4. The daemon's placements, in the order it stored them, against the simulator's.
  auto store = hetsched::svc::Store::Open(d->db());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto events = (*store)->Events("", 1000000);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  const std::regex placed(R"(attempt (\d+) on (\S+) x(\d+))");
  std::vector<Start> got;
  for (const hetsched::svc::StoredEvent& e : *events) {
    if (e.kind != "place") continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(e.detail, m, placed)) << e.detail;
    got.push_back({e.subject, m[2].str(), std::stoi(m[3].str())});
  }
  const std::vector<std::string> differences = StartDifferences(expected, got);
  std::string listed;
  for (const std::string& line : differences) listed += "\n  " + line;
  EXPECT_TRUE(differences.empty()) << "the daemon placed differently from the simulator:" << listed;

  const double test_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - test_start).count();
  const std::string summary = fmt::format(
      "{} jobs: local backend {:.1f} s from the first submission to the last end ({:.1f} "
      "jobs/s; submitting took {:.1f} s), simulate {:.2f} s, whole test {:.1f} s",
      kJobs, run_s, kJobs / run_s, submit_s, sim_s, test_s);
  std::printf("%s\n", summary.c_str());
  RecordProperty("local_backend_s", fmt::format("{:.2f}", run_s));
  RecordProperty("local_backend_jobs_per_s", fmt::format("{:.1f}", kJobs / run_s));
  RecordProperty("test_s", fmt::format("{:.1f}", test_s));
}

}  // namespace
