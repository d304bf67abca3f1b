// `hetsched serve` end to end: the built daemon runs as a child process (tests/testing/daemon.h)
// on 127.0.0.1 with a port it picks, and is driven through the client commands (submit, jobs,
// why, nodes, cancel) and its HTTP API. Covers the virtual backend, the local backend running
// real commands (also on a node it probes from fake vendor tools), crash safety under kill -9
// at several points of a submission load, and the dashboard in headless Chromium (screenshot
// kept in <build>/test-artifacts/dashboard.png).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

// Starts a daemon in `dir` with `args`, or fails the test (the daemon's stderr in the message).
#define ASSERT_DAEMON_STARTS(var, dir, ...)                                        \
  std::string var##_error;                                                         \
  std::unique_ptr<Daemon> var = Daemon::Start({dir, {__VA_ARGS__}}, &var##_error); \
  ASSERT_NE(var, nullptr) << var##_error

// The daemon's jobs through `hetsched jobs --json`, by name; empty when the call failed.
std::map<std::string, json> JobsByName(const Daemon& d) {
  const CommandResult r = d.Client({"jobs", "--json"});
  std::map<std::string, json> out;
  if (r.status != 0) return out;
  const json doc = json::parse(r.out, nullptr, false);
  if (doc.is_discarded() || !doc.contains("jobs")) return out;
  for (const json& j : doc["jobs"]) out[j["name"].get<std::string>()] = j;
  return out;
}

// Polls `jobs --json` until every job of `names` is in one of the ended states (or `seconds`
// pass) and returns the last listing.
std::map<std::string, json> WaitEnded(const Daemon& d, const std::vector<std::string>& names,
                                      double seconds) {
  std::map<std::string, json> jobs;
  WaitUntil(
      [&] {
        jobs = JobsByName(d);
        for (const std::string& n : names) {
          if (!jobs.count(n)) return false;
          const std::string s = jobs[n]["state"];
          if (s != "completed" && s != "failed" && s != "cancelled") return false;
        }
        return true;
      },
      seconds, 100);
  return jobs;
}

// What to show when a wait failed: the last `jobs --json` call and the daemon's stderr.
std::string Diagnose(Daemon& d) {
  const CommandResult r = d.Client({"jobs", "--json"});
  std::string err = d.Stderr();
  if (err.size() > 6000) err = "..." + err.substr(err.size() - 6000);
  const std::string state = d.running() ? "running" : "not running: " + d.ended_how();
  return "\n--- jobs --json: status " + std::to_string(r.status) + " ---\n" + r.out + r.err +
         "\n--- daemon stderr (" + state + ") ---\n" + err;
}

std::string StateOf(const std::map<std::string, json>& jobs, const std::string& name) {
  auto it = jobs.find(name);
  return it == jobs.end() ? "<missing>" : it->second["state"].get<std::string>();
}

std::string Dump(const std::map<std::string, json>& jobs) {
  json a = json::array();
  for (const auto& [name, j] : jobs) a.push_back(j);
  return a.dump(1);
}

// An HTTP client of the daemon's API with its admin token.
struct Api {
  explicit Api(const Daemon& d) : client(d.url()), token(d.token()) {
    client.set_connection_timeout(2);
    client.set_read_timeout(30);
  }
  httplib::Headers Auth() const { return {{"Authorization", "Bearer " + token}}; }
  httplib::Result Get(const std::string& path) { return client.Get(path.c_str(), Auth()); }
  httplib::Result Post(const std::string& path, const std::string& body,
                       httplib::Headers extra = {}) {
    httplib::Headers h = Auth();
    h.insert(extra.begin(), extra.end());
    return client.Post(path.c_str(), h, body, "application/json");
  }

  httplib::Client client;
  std::string token;
};

bool ProcessGone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

// Kills a job's process group at the end of a test, if the test left it running.
struct GroupReaper {
  ~GroupReaper() {
    if (pid > 0 && !ProcessGone(pid)) kill(-pid, SIGKILL);
  }
  pid_t pid = 0;
};

// ---- 1. The virtual backend through the client binary ------------------------------------

TEST(ServeCli, VirtualBackendThroughTheClient) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--backend", "virtual", "--cluster", "v100=2", "--time-scale",
                       "600");
  EXPECT_NE(d->Stdout().find("virtual backend"), std::string::npos) << d->Stdout();
  // Only the main thread takes SIGINT and SIGTERM (sigwait), so that they always shut it down.
  EXPECT_EQ(d->ThreadsTakingStopSignals(), std::vector<std::string>{});

  // The admin token: beside the database, readable by its owner only.
  struct stat st {};
  ASSERT_EQ(stat(d->token_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_GE(d->token().size(), 16u);

  // Nodes: two v100 nodes of one device each.
  CommandResult r = d->Client({"nodes", "--json"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json nodes = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(nodes.is_discarded()) << r.out;
  ASSERT_EQ(nodes["nodes"].size(), 2u) << r.out;
  std::vector<std::string> node_names;
  for (const json& n : nodes["nodes"]) {
    node_names.push_back(n["name"]);
    ASSERT_EQ(n["devices"].size(), 1u) << r.out;
    EXPECT_EQ(n["devices"][0]["type"], "v100-32g") << r.out;
  }

  // With both nodes drained the jobs wait, so `why` sees a queued job without a race.
  Api api(*d);
  for (const std::string& n : node_names) {
    auto res = api.Post("/v1/nodes/" + n + "/drain", "");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    ASSERT_EQ(res->status, 200) << res->body;
  }
  const std::vector<std::string> names = {"train-a", "train-b", "train-c"};
  for (const std::string& n : names) {
    r = d->Client({"submit", "--name", n, "--stacks", "cuda", "--gpus", "1", "--duration", "10m"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("submitted " + n + " (queued)"), std::string::npos) << r.out;
  }
  r = d->Client({"jobs"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const std::string& n : names) {
    EXPECT_NE(r.out.find(n), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("queued"), std::string::npos) << r.out;
  r = d->Client({"why", "train-b"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(r.out.starts_with("train-b: needs 1 device(s) of one type among: v100-32g (0 free)"))
      << r.out;
  r = d->Client({"nodes"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const std::string& n : node_names) {
    EXPECT_NE(r.out.find(n), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("yes"), std::string::npos) << "drained column\n" << r.out;

  // Undrained, they run: 10 modeled minutes at 600x, two at a time.
  for (const std::string& n : node_names) {
    auto res = api.Post("/v1/nodes/" + n + "/undrain", "");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    ASSERT_EQ(res->status, 200) << res->body;
  }
  std::map<std::string, json> jobs = WaitEnded(*d, names, 30);
  for (const std::string& n : names) {
    ASSERT_EQ(StateOf(jobs, n), "completed") << Dump(jobs) << Diagnose(*d);
    const json& j = jobs[n];
    EXPECT_EQ(j["exit_status"], 0) << j;
    EXPECT_EQ(j["device_type"], "v100-32g") << j;
    // The default policy (srpt-het-fair) may time-slice the three over the two devices:
    // every attempt after the first follows a preemption.
    EXPECT_EQ(j["attempt"].get<int>(), 1 + j["preemptions"].get<int>()) << j;
    // 600 modeled seconds at 600x: about one wall second, not instantly.
    const double ran = j["ended"].get<double>() - j["started"].get<double>();
    EXPECT_GE(ran, 0.8) << j;
    EXPECT_LE(ran, 10) << j;
  }
  r = d->Client({"why", "train-a"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("train-a: completed"), std::string::npos) << r.out;

  // A long job, cancelled while it runs.
  r = d->Client(
      {"submit", "--name", "long", "--stacks", "cuda", "--gpus", "2", "--duration", "1000h"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_TRUE(WaitUntil([&] { return StateOf(JobsByName(*d), "long") == "running"; }, 20, 100))
      << Diagnose(*d);
  r = d->Client({"why", "long"});
  EXPECT_NE(r.out.find("long: running on v100-32g x2"), std::string::npos) << r.out;
  r = d->Client({"cancel", "long"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cancelling long"), std::string::npos) << r.out;
  jobs = WaitEnded(*d, {"long"}, 20);
  EXPECT_EQ(StateOf(jobs, "long"), "cancelled") << Dump(jobs);

  // The same name again: refused (exit 2), and a retry with its key is no second job.
  r = d->Client({"submit", "--name", "train-a", "--stacks", "cuda", "--duration", "1m"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  const std::vector<std::string> keyed = {"submit", "--name",     "keyed", "--stacks",
                                          "cuda",   "--duration", "1m",    "--idempotency-key",
                                          "key-1"};
  r = d->Client(keyed);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(r.out.starts_with("submitted keyed")) << r.out;
  r = d->Client(keyed);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(r.out.starts_with("already submitted keyed")) << r.out;
  r = d->Client({"submit", "--name", "keyed", "--stacks", "cuda", "--duration", "1m",
                 "--idempotency-key", "key-2"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  jobs = JobsByName(*d);
  EXPECT_EQ(jobs.size(), 5u) << Dump(jobs);

  // Requests the daemon refuses exit 2 and say why.
  r = d->Client({"why", "no-such-job"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no job 'no-such-job'"), std::string::npos) << r.err;
  r = d->Client({"submit", "--name", "nowhere", "--stacks", "rocm", "--duration", "1m"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot run on this cluster"), std::string::npos) << r.err;

  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

// The URL exactly as the daemon prints it (with its trailing slash) works as HETSCHED_SERVER.
TEST(ServeCli, ClientTakesTheUrlTheDaemonPrints) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--cluster", "v100=1");
  const CommandResult r = hetsched::testing::RunCommand(
      {HETSCHED_BINARY, "nodes"},
      {"HETSCHED_SERVER=" + d->printed_url(), "HETSCHED_TOKEN=" + d->token()}, 60);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("v100"), std::string::npos) << r.out;
  EXPECT_EQ(d->Terminate(SIGINT, 10), 0) << d->Stderr();
}

// The what-if and plan endpoints run the simulator and report/'s plan writers, which `hetsched
// serve` hands the daemon (cli/serve_analysis.h).
TEST(ServeCli, WhatIfAndPlanAnswerWithWhatServeHandsTheDaemon) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--cluster", "v100=2");
  Api api(*d);
  auto w = api.Get("/v1/whatif?policy=fifo");
  ASSERT_TRUE(w);
  ASSERT_EQ(w->status, 200) << w->body;
  EXPECT_EQ(json::parse(w->body)["candidate"]["policy"], "fifo") << w->body;
  auto p =
      api.Post("/v1/plan", R"({"dag":{"tasks":[{"id":"a","cost":{"v100-32g":2}}],"edges":[]}})");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 200) << p->body;
  const json plan = json::parse(p->body);
  EXPECT_EQ(plan["plan"]["algo"], "heft") << p->body;
  EXPECT_EQ(plan["plan"]["schedule"].size(), 1u) << p->body;
  EXPECT_EQ(d->Terminate(SIGINT, 10), 0) << d->Stderr();
}

// `submit --time` alone sizes a job for the virtual backend (docs/api.md): it runs until its
// time limit stops it. With no size at all the daemon names the fields that give one.
TEST(ServeCli, ATimeLimitAloneSizesAVirtualJob) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--backend", "virtual", "--cluster", "v100=1", "--time-scale",
                       "3600");
  CommandResult r = d->Client({"submit", "--name", "bounded", "--stacks", "cuda", "--time", "30m"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("submitted bounded (queued)"), std::string::npos) << r.out;
  std::map<std::string, json> jobs = WaitEnded(*d, {"bounded"}, 30);
  ASSERT_EQ(StateOf(jobs, "bounded"), "failed") << Dump(jobs) << Diagnose(*d);
  EXPECT_NE(jobs["bounded"]["message"].get<std::string>().find("time limit of 1800 s"),
            std::string::npos)
      << jobs["bounded"];
  r = d->Client({"submit", "--name", "unsized", "--stacks", "cuda"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("work: is missing (expected work (steps), duration with reference_device, "
                       "an estimate or a time_limit"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

// `submit --tenant` names the job's tenant; with tenants, a job of none or of an unknown one is
// refused with the known names (docs/api.md, "Tenants").
TEST(ServeCli, SubmitNamesTheJobsTenant) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  std::ofstream(tmp.File("teams.yaml"))
      << "tenants:\n  - {name: vision, quota: {v100: 1}}\n  - {name: llm}\n";
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--config", tmp.File("teams.yaml"), "--cluster", "v100=2");
  const std::vector<std::string> submit = {"submit", "--name",     "t1", "--stacks",
                                           "cuda",   "--duration", "1m"};
  CommandResult r = d->Client(submit);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("tenant: job t1 names no tenant (expected one of vision, llm)"),
            std::string::npos)
      << r.err;
  std::vector<std::string> with = submit;
  with.insert(with.end(), {"--tenant", "lmm"});
  r = d->Client(with);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("tenant: 'lmm' is not a tenant (expected one of vision, llm)"),
            std::string::npos)
      << r.err;
  with.back() = "llm";
  r = d->Client(with);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("submitted t1 (queued)"), std::string::npos) << r.out;
  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

// Jobs belong to tenants without children: one naming a parent is refused, and not stored.
TEST(ServeCli, AJobOfAParentTenantIsRefused) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  std::ofstream(tmp.File("tree.yaml"))
      << "tenants:\n  - {name: llm}\n  - {name: llm-sft, parent: llm}\n";
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--config", tmp.File("tree.yaml"), "--cluster", "v100=2");
  const auto submit = [&](const std::string& name, const std::string& tenant) {
    return d->Client(
        {"submit", "--name", name, "--stacks", "cuda", "--duration", "1m", "--tenant", tenant});
  };
  CommandResult r = submit("p1", "llm");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("'llm' has child tenants (expected a tenant without children)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(submit("c1", "llm-sft").status, 0);
  const std::map<std::string, json> jobs = JobsByName(*d);
  EXPECT_EQ(jobs.count("p1"), 0u);
  EXPECT_EQ(jobs.count("c1"), 1u);
  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

// `serve` on database `db` of one V100 with `config`, where the start is expected to stop with an
// error (so it exits on its own; bounded at 30 s otherwise).
CommandResult ServeRefused(const TempDir& tmp, const std::string& db, const std::string& config) {
  return RunCommand({HETSCHED_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", db, "--config",
                     config, "--cluster", "v100=1"},
                    {}, 30, tmp.path().string());
}

// Live jobs of a tenant that a restart's config no longer has would run outside every tenant's
// limits: the start stops with exit status 2, naming them, and the database keeps them; the
// config they were submitted under starts again with every job.
TEST(ServeCli, ARestartWithoutTheTenantOfLiveJobsStopsAndKeepsThem) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  std::ofstream(tmp.File("two.yaml")) << "tenants:\n  - {name: vision}\n  - {name: llm}\n";
  std::ofstream(tmp.File("one.yaml")) << "tenants:\n  - {name: vision}\n";
  std::ofstream(tmp.File("parent.yaml"))
      << "tenants:\n  - {name: vision}\n  - {name: llm}\n  - {name: llm-sft, parent: llm}\n";
  {
    ASSERT_DAEMON_STARTS(d, tmp.path(), "--config", tmp.File("two.yaml"), "--cluster", "v100=1");
    for (const char* name : {"l1", "l2"}) {
      const CommandResult r = d->Client(
          {"submit", "--name", name, "--stacks", "cuda", "--duration", "10h", "--tenant", "llm"});
      ASSERT_EQ(r.status, 0) << r.err;
    }
    ASSERT_EQ(d->Client({"submit", "--name", "v1", "--stacks", "cuda", "--duration", "10h",
                         "--tenant", "vision"})
                  .status,
              0);
    EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
  }
  const std::string db = tmp.File("h.db");
  for (const auto& [config, why] :
       {std::pair<std::string, std::string>{"one.yaml", "this config's tenants: does not list"},
        {"parent.yaml", "has child tenants in this config"}}) {
    const CommandResult r = ServeRefused(tmp, db, tmp.File(config));
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(db + ": live job(s) l1, l2 of tenant 'llm', which " + why),
              std::string::npos)
        << r.err;
  }
  ASSERT_DAEMON_STARTS(again, tmp.path(), "--config", tmp.File("two.yaml"), "--cluster", "v100=1");
  const std::map<std::string, json> jobs = JobsByName(*again);
  EXPECT_EQ(jobs.size(), 3u);
  for (const char* name : {"l1", "l2", "v1"}) EXPECT_EQ(jobs.count(name), 1u) << name;
  EXPECT_EQ(again->Terminate(SIGTERM, 10), 0) << again->Stderr();
}

// Jobs submitted before the config had tenants name none; under tenants they would run outside
// every tenant's limits, so the start stops with exit status 2, naming them, as above.
TEST(ServeCli, ARestartThatAddsTenantsUnderJobsWithoutOneStopsAndKeepsThem) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  std::ofstream(tmp.File("two.yaml")) << "tenants:\n  - {name: vision}\n  - {name: llm}\n";
  {
    ASSERT_DAEMON_STARTS(d, tmp.path(), "--cluster", "v100=1");
    ASSERT_EQ(d->Client({"submit", "--name", "n1", "--stacks", "cuda", "--duration", "10h"}).status,
              0);
    EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
  }
  const std::string db = tmp.File("h.db");
  const CommandResult r = ServeRefused(tmp, db, tmp.File("two.yaml"));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(db + ": live job(s) n1 name no tenant"), std::string::npos) << r.err;
  ASSERT_DAEMON_STARTS(again, tmp.path(), "--cluster", "v100=1");
  EXPECT_EQ(JobsByName(*again).count("n1"), 1u);
  EXPECT_EQ(again->Terminate(SIGTERM, 10), 0) << again->Stderr();
}

// ---- 2. The local backend runs real commands ----------------------------------------------

TEST(ServeLocal, CpuNodeRunsCommandsKeepsExitStatusAndCancels) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--backend", "local", "--cluster", "xeon-8380=1");

  // The shorthand 'xeon-8380=1' is one node with one device.
  CommandResult r = d->Client({"nodes", "--json"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json nodes = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(nodes.is_discarded()) << r.out;
  ASSERT_EQ(nodes["nodes"].size(), 1u) << r.out;
  ASSERT_EQ(nodes["nodes"][0]["devices"].size(), 1u) << r.out;
  EXPECT_EQ(nodes["nodes"][0]["devices"][0]["type"], "xeon-8380") << r.out;

  const std::string out_file = tmp.File("ok.out");
  r = d->Client({"submit", "--name", "ok", "--stacks", "x86_64", "--", "/bin/sh", "-c",
                 "echo \"$HETSCHED_JOB $HETSCHED_DEVICES\" > " + out_file + "; exit 0"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  r = d->Client({"submit", "--name", "bad", "--stacks", "x86_64", "--", "/bin/sh", "-c", "exit 3"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::map<std::string, json> jobs = WaitEnded(*d, {"ok", "bad"}, 30);
  ASSERT_EQ(StateOf(jobs, "ok"), "completed") << Dump(jobs) << Diagnose(*d);
  EXPECT_EQ(jobs["ok"]["exit_status"], 0) << jobs["ok"];
  EXPECT_EQ(jobs["ok"]["device_type"], "xeon-8380") << jobs["ok"];
  EXPECT_EQ(ReadFileText(out_file), "ok 0\n");
  ASSERT_EQ(StateOf(jobs, "bad"), "failed") << Dump(jobs);
  EXPECT_EQ(jobs["bad"]["exit_status"], 3) << jobs["bad"];
  EXPECT_NE(jobs["bad"]["message"].get<std::string>().find("exited with status 3"),
            std::string::npos)
      << jobs["bad"];

  // A running job, cancelled: SIGTERM ends it at once (not the 30 s grace, then SIGKILL).
  const std::string pid_file = tmp.File("sleeper.pid");
  r = d->Client({"submit", "--name", "sleeper", "--stacks", "x86_64", "--", "/bin/sh", "-c",
                 "echo $$ > " + pid_file + ".tmp && mv " + pid_file + ".tmp " + pid_file +
                     " && exec sleep 60"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  GroupReaper reaper;
  ASSERT_TRUE(WaitUntil(
      [&] {
        return StateOf(JobsByName(*d), "sleeper") == "running" && !ReadFileText(pid_file).empty();
      },
      20, 100))
      << Diagnose(*d);
  reaper.pid = std::stoi(ReadFileText(pid_file));
  ASSERT_FALSE(ProcessGone(reaper.pid));
  const auto t0 = std::chrono::steady_clock::now();
  r = d->Client({"cancel", "sleeper"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  jobs = WaitEnded(*d, {"sleeper"}, 20);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(StateOf(jobs, "sleeper"), "cancelled") << Dump(jobs);
  EXPECT_LT(took, 10) << "cancel took the grace period: SIGTERM did not end it";
  EXPECT_EQ(jobs["sleeper"]["exit_status"], 128 + SIGTERM) << jobs["sleeper"];
  EXPECT_TRUE(WaitUntil([&] { return ProcessGone(reaper.pid); }, 5))
      << "the job's process " << reaper.pid << " runs still";
  // Its output is kept in the local backend's state folder (hetsched-local beside the database
  // by default).
  EXPECT_TRUE(fs::exists(tmp.path() / "hetsched-local" / "logs" / "ok.1.log"));

  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

TEST(ServeLocal, GpuNodeGetsItsDevicesInCudaVisibleDevices) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--backend", "local", "--cluster", "v100=2:per_node=2");
  CommandResult r = d->Client({"nodes", "--json"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json nodes = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(nodes.is_discarded()) << r.out;
  ASSERT_EQ(nodes["nodes"].size(), 1u) << r.out;
  ASSERT_EQ(nodes["nodes"][0]["devices"].size(), 2u) << r.out;

  const std::string out_file = tmp.File("gpus.out");
  r = d->Client({"submit", "--name", "pair", "--stacks", "cuda", "--gpus", "2", "--", "/bin/sh",
                 "-c", "echo \"$CUDA_VISIBLE_DEVICES\" > " + out_file});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::map<std::string, json> jobs = WaitEnded(*d, {"pair"}, 30);
  ASSERT_EQ(StateOf(jobs, "pair"), "completed") << Dump(jobs) << Diagnose(*d);
  EXPECT_EQ(jobs["pair"]["exit_status"], 0);
  EXPECT_EQ(ReadFileText(out_file), "0,1\n");

  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

// A folder holding a fake `nvidia-smi` that prints `csv` (the query's answer), to put ahead on
// the daemon's PATH.
std::string FakeNvidiaSmi(const TempDir& tmp, const std::string& csv) {
  const fs::path bin = tmp.path() / "fake-bin";
  fs::create_directories(bin);
  std::ofstream(bin / "nvidia-smi.out") << csv;
  std::ofstream(bin / "nvidia-smi")
      << "#!/bin/sh\ncat '" << (bin / "nvidia-smi.out").string() << "'\n";
  fs::permissions(bin / "nvidia-smi", fs::perms::owner_all);
  const char* path = std::getenv("PATH");
  return "PATH=" + bin.string() + ":" + (path != nullptr ? path : "/usr/bin:/bin");
}

TEST(ServeLocal, WithoutAClusterItDescribesThisMachineFromTheProbe) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  const std::string path = FakeNvidiaSmi(
      tmp, "0, NVIDIA A100-SXM4-80GB, 81920, GPU-a\n1, NVIDIA A100-SXM4-80GB, 81920, GPU-b\n");
  std::string error;
  std::unique_ptr<Daemon> d = Daemon::Start(
      {tmp.path(), {"--backend", "local"}, 20, {path, "CUDA_VISIBLE_DEVICES=7"}}, &error);
  ASSERT_NE(d, nullptr) << error;
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  // It says what it probed and the node it made, before it listens.
  const std::string out = d->Stdout();
  EXPECT_NE(out.find("hetsched serve: probed nvidia-smi: found 2 devices ("), std::string::npos)
      << out;
  EXPECT_NE(out.find("hetsched serve: probed nvidia-smi: 2 x 'NVIDIA A100-SXM4-80GB' -> a100-80g "
                     "(devices 0-1 of nvidia)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(std::string("hetsched serve: probed node '") + host +
                     "': a100-80g x2 (node devices 0-1)"),
            std::string::npos)
      << out;

  CommandResult r = d->Client({"nodes", "--json"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json nodes = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(nodes.is_discarded()) << r.out;
  ASSERT_EQ(nodes["nodes"].size(), 1u) << r.out;
  EXPECT_EQ(nodes["nodes"][0]["name"], std::string(host));
  const json& devices = nodes["nodes"][0]["devices"];
  ASSERT_GE(devices.size(), 2u) << r.out;  // and the CPU, where the catalog has one for it
  EXPECT_EQ(devices[0]["type"], "a100-80g");
  EXPECT_EQ(devices[1]["type"], "a100-80g");

  // A CUDA job gets both GPUs as CUDA devices 0 and 1 (the daemon's own value is replaced).
  const std::string out_file = tmp.File("gpus.out");
  r = d->Client({"submit", "--name", "pair", "--stacks", "cuda", "--gpus", "2", "--", "/bin/sh",
                 "-c", "echo \"$CUDA_VISIBLE_DEVICES\" > " + out_file});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::map<std::string, json> jobs = WaitEnded(*d, {"pair"}, 30);
  ASSERT_EQ(StateOf(jobs, "pair"), "completed") << Dump(jobs) << Diagnose(*d);
  EXPECT_EQ(jobs["pair"]["device_type"], "a100-80g");
  EXPECT_EQ(ReadFileText(out_file), "0,1\n");
  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

TEST(ServeLocal, AProbedGpuTheCatalogLacksStopsTheDaemonNamingIt) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  const std::string path = FakeNvidiaSmi(tmp, "0, NVIDIA H200, 143771, GPU-a\n");
  std::string error;
  std::unique_ptr<Daemon> d =
      Daemon::Start({tmp.path(), {"--backend", "local"}, 20, {path}}, &error);
  ASSERT_EQ(d, nullptr) << "it started on a machine it cannot describe";
  EXPECT_NE(error.find("exited with status 2"), std::string::npos) << error;
  EXPECT_NE(error.find("nvidia-smi device 0 'NVIDIA H200': no catalog type is this model"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("describe this machine with --cluster"), std::string::npos) << error;
}

TEST(ServeLocal, AnUnknownBackendIsRefusedNotRunAsLocal) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  const CommandResult r =
      RunCommand({HETSCHED_BINARY, "serve", "--backend", "bogus", "--cluster", "xeon-8380=1",
                  "--listen", "127.0.0.1:0", "--db", tmp.File("h.db")},
                 {}, 20, tmp.path().string());
  EXPECT_FALSE(r.timed_out) << "it served: " << r.out;
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(
      r.err,
      "hetsched: --backend 'bogus': unknown (expected virtual, local, slurm or kubernetes)\n");
  EXPECT_FALSE(fs::exists(tmp.path() / "hetsched-local")) << "it made the local backend's folder";
}

// ---- 3. Crash safety: kill -9 under a submission load --------------------------------------

constexpr int kCrashDevices = 4;            // cluster v100=4
constexpr const char* kCrashScale = "100";  // modeled seconds per wall second
constexpr double kCrashWork = 5;            // modeled seconds per job: 0.05 s wall

// Threads that submit jobs crash-00000, crash-00001, ... over HTTP, each with its name as its
// Idempotency-Key, retrying one that got no answer (the daemon is down) until it is
// acknowledged (HTTP 201 or 200).
class SubmitLoad {
 public:
  SubmitLoad(std::string url, std::string token) : url_(std::move(url)), token_(std::move(token)) {}
  ~SubmitLoad() { Stop(/*seconds=*/0); }  // a failed test gives up on what is under way

  // `threads` submitters, each pausing `pause_ms` after an acknowledgement.
  void Start(int threads, int pause_ms) {
    pause_ms_ = pause_ms;
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
  }
  // No new names; the names under way are retried until acknowledged, for up to `seconds`.
  void Stop(double seconds = 20) {
    stop_new_ = true;
    const auto deadline = hetsched::testing::DeadlineIn(seconds);
    WaitUntil([&] { return busy_ == 0; }, hetsched::testing::SecondsLeft(deadline));
    give_up_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  void SetUrl(const std::string& url) {
    std::lock_guard lock(mu_);
    url_ = url;
  }
  int acked() const { return acked_count_; }
  int replayed() const { return replayed_; }
  std::set<std::string> Acked() {
    std::lock_guard lock(mu_);
    return acked_;
  }
  std::set<std::string> Attempted() {
    std::lock_guard lock(mu_);
    return attempted_;
  }
  std::vector<std::string> Errors() {
    std::lock_guard lock(mu_);
    return errors_;
  }

 private:
  void Run() {
    while (!stop_new_) {
      ++busy_;
      char name[32];
      std::snprintf(name, sizeof name, "crash-%05d", next_++);
      {
        std::lock_guard lock(mu_);
        attempted_.insert(name);
      }
      const std::string body =
          json{{"name", name}, {"stacks", json::array({"cuda"})}, {"work", kCrashWork}}.dump();
      const httplib::Headers headers = {{"Authorization", "Bearer " + token_},
                                        {"Idempotency-Key", name}};
      while (!give_up_) {
        std::string url;
        {
          std::lock_guard lock(mu_);
          url = url_;
        }
        httplib::Client client(url);
        client.set_connection_timeout(1);
        client.set_read_timeout(10);
        auto res = client.Post("/v1/jobs", headers, body, "application/json");
        if (res && (res->status == 201 || res->status == 200)) {
          std::lock_guard lock(mu_);
          acked_.insert(name);
          ++acked_count_;
          if (res->status == 200) ++replayed_;
          break;
        }
        if (res && res->status != 503) {
          std::lock_guard lock(mu_);
          errors_.push_back(std::string(name) + ": HTTP " + std::to_string(res->status) + " " +
                            res->body);
          break;
        }
        // No answer (the daemon is down or was killed mid-request) or 503 (recovering).
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      --busy_;
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_));
    }
  }

  std::mutex mu_;
  std::string url_;
  const std::string token_;
  std::set<std::string> attempted_, acked_;
  std::vector<std::string> errors_;
  std::atomic<int> next_{0}, busy_{0}, acked_count_{0}, replayed_{0};
  std::atomic<bool> stop_new_{false}, give_up_{false};
  int pause_ms_ = 0;
  std::vector<std::thread> threads_;
};

// Polls GET /v1/jobs and checks what must hold in every listing and between listings: a name
// appears once and was submitted by the load; no job fails or is cancelled; no device runs two
// jobs and no more jobs run than there are devices; attempts never go down; a completed job
// stays completed, with the same attempt and start.
class Watcher {
 public:
  Watcher(std::string url, std::string token, SubmitLoad* load)
      : url_(std::move(url)), token_(std::move(token)), load_(load) {}
  ~Watcher() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      while (!stop_) {
        Poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void SetUrl(const std::string& url) {
    std::lock_guard lock(mu_);
    url_ = url;
  }
  // One listing, checked; null when the daemon did not answer.
  json Poll() {
    std::string url;
    {
      std::lock_guard lock(mu_);
      url = url_;
    }
    httplib::Client client(url);
    client.set_connection_timeout(1);
    client.set_read_timeout(10);
    auto res = client.Get("/v1/jobs?limit=100000", {{"Authorization", "Bearer " + token_}});
    if (!res || res->status != 200) return nullptr;
    json doc = json::parse(res->body, nullptr, false);
    if (doc.is_discarded()) {
      Violation("GET /v1/jobs: not JSON");
      return nullptr;
    }
    Check(doc["jobs"]);
    return doc["jobs"];
  }
  int polls() const { return polls_; }
  // Jobs completed in the last listing.
  int completed() const { return completed_; }
  std::vector<std::string> Violations() {
    std::lock_guard lock(mu_);
    return violations_;
  }

 private:
  struct Seen {
    std::string state;
    int64_t attempt = 0;
    double started = -1;
  };

  void Violation(const std::string& what) {
    std::lock_guard lock(mu_);
    if (violations_.size() < 20) violations_.push_back(what);
  }

  void Check(const json& jobs) {
    const std::set<std::string> attempted = load_->Attempted();
    std::set<std::string> names, devices;
    int live = 0, completed = 0;
    std::lock_guard check_lock(check_mu_);
    ++polls_;
    for (const json& j : jobs) {
      const std::string name = j["name"];
      const std::string state = j["state"];
      const int64_t attempt = j["attempt"];
      if (!names.insert(name).second) Violation(name + " is listed twice");
      if (!attempted.count(name)) Violation(name + " was never submitted");
      if (state == "failed" || state == "cancelled")
        Violation(name + " " + state + ": " + j.dump());
      if (state == "starting" || state == "running" || state == "stopping") {
        ++live;
        for (const json& dev : j["devices"]) {
          if (!devices.insert(dev.get<std::string>()).second) {
            Violation("device " + dev.get<std::string>() + " runs two jobs, one " + name);
          }
        }
      }
      completed += state == "completed";
      auto [it, fresh] = seen_.try_emplace(name);
      Seen& s = it->second;
      if (!fresh) {
        if (attempt < s.attempt) {
          Violation(name + ": attempt went from " + std::to_string(s.attempt) + " to " +
                    std::to_string(attempt));
        }
        if (s.state == "completed" && (state != "completed" || attempt != s.attempt ||
                                       j["started"].get<double>() != s.started)) {
          Violation(name + " completed, then " + j.dump());
        }
      }
      s.state = state;
      s.attempt = attempt;
      s.started = j["started"].is_null() ? -1 : j["started"].get<double>();
    }
    completed_ = completed;
    if (live > kCrashDevices) {
      Violation(std::to_string(live) + " jobs hold devices at once on " +
                std::to_string(kCrashDevices) + " devices");
    }
  }

  std::mutex mu_;  // url_, violations_
  std::string url_;
  const std::string token_;
  SubmitLoad* load_;
  std::vector<std::string> violations_;
  std::mutex check_mu_;  // seen_, between the watcher's thread and the test's own polls
  std::map<std::string, Seen> seen_;
  std::atomic<int> polls_{0}, completed_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The scheduler clock (GET /v1/cluster now_s), or -1.
double SchedulerNow(const Daemon& d) {
  Api api(d);
  auto res = api.Get("/v1/cluster");
  if (!res || res->status != 200) return -1;
  const json doc = json::parse(res->body, nullptr, false);
  return doc.is_discarded() ? -1 : doc.value("now_s", -1.0);
}

class ServeCrash : public ::testing::TestWithParam<int> {};

TEST_P(ServeCrash, KillNineLosesNoAcknowledgedJobAndRunsNoneTwice) {
  const int kill_after = GetParam();
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  const std::vector<std::string> args = {"--backend", "virtual",      "--cluster",
                                         "v100=4",    "--time-scale", kCrashScale};
  std::string error;
  std::unique_ptr<Daemon> d = Daemon::Start({tmp.path(), args}, &error);
  ASSERT_NE(d, nullptr) << error;

  SubmitLoad load(d->url(), d->token());
  Watcher watcher(d->url(), d->token(), &load);
  // About 250 submissions a second, so some jobs have completed by the kill (4 devices run
  // about 80 a second) and many wait.
  load.Start(4, 15);
  watcher.Start();
  ASSERT_TRUE(WaitUntil([&] { return load.acked() >= kill_after; }, 30, 1))
      << load.acked() << " acknowledged of " << kill_after << "\n"
      << d->Stderr();
  const double clock_before = SchedulerNow(*d);
  d->Kill();
  const int acked_at_kill = load.acked();
  const int completed_at_kill = watcher.completed();
  if (kill_after >= 150) {
    // Completed jobs exist at the kill, so "no completed job starts again" is put to the test.
    EXPECT_GT(completed_at_kill, 0);
  }

  // Down for a moment: submissions fail to connect and are retried.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  d = Daemon::Start({tmp.path(), args}, &error);
  ASSERT_NE(d, nullptr) << error;
  load.SetUrl(d->url());
  watcher.SetUrl(d->url());
  const double clock_after = SchedulerNow(*d);
  // A little more load on the restarted daemon.
  EXPECT_TRUE(WaitUntil([&] { return load.acked() >= acked_at_kill + 20; }, 20))
      << load.acked() << " acknowledged\n"
      << d->Stderr();
  load.Stop();
  EXPECT_TRUE(load.Errors().empty()) << load.Errors().front();
  // From here on the test polls itself: listings are checked in the order they were taken.
  watcher.Stop();

  const std::set<std::string> acked = load.Acked();
  const std::set<std::string> attempted = load.Attempted();
  EXPECT_EQ(acked.size(), attempted.size()) << "submissions never acknowledged";
  // Every job completes.
  json jobs;
  const bool all_done = WaitUntil(
      [&] {
        jobs = watcher.Poll();
        if (!jobs.is_array()) return false;
        size_t completed = 0;
        for (const json& j : jobs) completed += j["state"] == "completed";
        return completed == jobs.size() && jobs.size() >= acked.size();
      },
      40, 200);
  ASSERT_TRUE(jobs.is_array());
  std::map<std::string, int> listed;
  std::map<std::string, int> states;
  for (const json& j : jobs) {
    ++listed[j["name"].get<std::string>()];
    ++states[j["state"].get<std::string>()];
  }
  EXPECT_TRUE(all_done) << "not all jobs completed: " << json(states).dump() << "\n"
                        << d->Stderr().substr(0, 4000);
  std::vector<std::string> lost, doubled, unknown;
  for (const std::string& name : acked) {
    if (listed.count(name) == 0) lost.push_back(name);
  }
  for (const auto& [name, count] : listed) {
    if (count != 1) doubled.push_back(name);
    if (attempted.count(name) == 0) unknown.push_back(name);
  }
  const auto some = [](const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size() && i < 5; ++i) out += " " + names[i];
    return out + (names.size() > 5 ? " ..." : "");
  };
  EXPECT_TRUE(lost.empty()) << lost.size() << " acknowledged job(s) missing:" << some(lost);
  EXPECT_TRUE(doubled.empty()) << doubled.size() << " job(s) listed twice:" << some(doubled);
  EXPECT_TRUE(unknown.empty()) << unknown.size() << " job(s) never submitted:" << some(unknown);
  const std::vector<std::string> violations = watcher.Violations();
  EXPECT_TRUE(violations.empty()) << violations.size()
                                  << " violation(s), first: " << violations.front();
  EXPECT_GE(watcher.polls(), 3);
  // The scheduler clock continues across the crash (it does not start over).
  EXPECT_GE(clock_after, clock_before) << "scheduler clock went back after the restart";
  std::printf(
      "[ kill after %d acks ] at the kill: %d acknowledged, %d completed; in all: %d "
      "acknowledged, %d of them replayed after the restart, %d listings checked\n",
      kill_after, acked_at_kill, completed_at_kill, load.acked(), load.replayed(), watcher.polls());
  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

INSTANTIATE_TEST_SUITE_P(KillPoints, ServeCrash, ::testing::Values(20, 150, 400),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "After" + std::to_string(info.param) + "Acks";
                         });

// ---- 4. The dashboard in a real browser ----------------------------------------------------

TEST(ServeDashboard, RendersInHeadlessChromium) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--backend", "virtual", "--cluster", "v100=4,k80=2",
                       "--time-scale", "60");
  for (const char* name : {"dash-1", "dash-2", "dash-3"}) {
    CommandResult r = d->Client(
        {"submit", "--name", name, "--stacks", "cuda", "--gpus", "1", "--duration", "2h"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
  }
  // The check's DOM dump, screenshot and Chromium logs: <build>/test-artifacts/serve-dashboard/.
  const fs::path artifacts = fs::path(HETSCHED_BINARY).parent_path() / "test-artifacts";
  const fs::path out_dir = artifacts / "serve-dashboard";
  std::error_code ec;
  fs::remove_all(out_dir, ec);
  const CommandResult r = hetsched::testing::RunCommand(
      {"/bin/bash", std::string(HETSCHED_SOURCE_DIR) + "/tests/daemon/api/dashboard_check.sh",
       d->printed_url(), out_dir.string()},
      {}, 180);
  if (r.status == 77) GTEST_SKIP() << r.out << r.err;
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // Also kept where people look first: <build>/test-artifacts/dashboard.png.
  ASSERT_TRUE(fs::exists(out_dir / "dashboard.png")) << r.out << r.err;
  fs::copy_file(out_dir / "dashboard.png", artifacts / "dashboard.png",
                fs::copy_options::overwrite_existing, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_GT(fs::file_size(artifacts / "dashboard.png", ec), 10240u);
  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

// The page driven through the DevTools protocol (tests/daemon/api/dashboard_cdp.py): its power
// against /v1/cluster and /metrics on nodes with base power, a queued job's wait reason, paging
// past 200 jobs, a drain, undrain and cancel clicked on the page, what a reload keeps, and the
// charts' history from the daemon in a new tab.
TEST(ServeDashboard, ActsAndPagesInHeadlessChromium) {
  TempDir tmp;
  ASSERT_TRUE(tmp.ok());
  // 3 one-GPU nodes of 400 W base power each: the devices' share is not the whole draw.
  const std::string cluster =
      std::string(HETSCHED_SOURCE_DIR) + "/examples/clusters/homogeneous-3gpu.yaml";
  // A sample a second, so that the daemon's samples outnumber what a tab polled meanwhile.
  const std::string config = tmp.File("serve.yaml");
  std::ofstream(config) << "history_every: 1s\n";
  ASSERT_DAEMON_STARTS(d, tmp.path(), "--backend", "virtual", "--cluster", cluster, "--config",
                       config);
  Api api(*d);
  // 3 run and 230 wait; at time scale 1 none ends during the check.
  for (int i = 0; i < 233; ++i) {
    const std::string name = "page-" + std::to_string(1000 + i).substr(1);  // page-000 on
    auto res = api.Post("/v1/jobs", R"({"name":")" + name + R"(","stacks":["cuda"],"work":1e7})");
    ASSERT_TRUE(res) << name;
    ASSERT_EQ(res->status, 201) << res->body;
  }
  const fs::path out_dir =
      fs::path(HETSCHED_BINARY).parent_path() / "test-artifacts" / "serve-dashboard-cdp";
  std::error_code ec;
  fs::remove_all(out_dir, ec);
  const CommandResult r = hetsched::testing::RunCommand(
      {"/usr/bin/env", "python3",
       std::string(HETSCHED_SOURCE_DIR) + "/tests/daemon/api/dashboard_cdp.py", d->printed_url(),
       out_dir.string()},
      {"DASHBOARD_TOKEN=" + d->token()}, 200);
  if (r.status == 77) GTEST_SKIP() << r.out << r.err;
  if (r.status == 127) GTEST_SKIP() << "python3 is not installed: " << r.err;
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(d->Terminate(SIGTERM, 10), 0) << d->Stderr();
}

}  // namespace
