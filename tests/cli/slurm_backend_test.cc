// `hetsched serve --backend slurm` on a real Slurm cluster: the test bed of
// scripts/slurm-testbed.sh (7 nodes: nv1-2 a100 x4, amd1-2 mi250x x4, asc1 910b x8, cpu1-2),
// one bed per test, torn down even when the test fails. Jobs check the node they land on the
// way a vendor's binary would: one built for another stack exits 1.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/daemon.h"
#include "testing/slurm_testbed.h"
#include "testing/temp_dir.h"

namespace hetsched {
namespace {

using testing::CommandResult;
using testing::Daemon;
using ::testing::HasSubstr;
using testing::SlurmTestBed;
using testing::TempDir;
using testing::WaitUntil;

// need.sh STACK...: runs (printing where) only on a node of one of those stacks, as a binary
// built for them would; elsewhere it fails at once. SLEEP: how long it then runs.
constexpr char kNeedScript[] = R"(#!/bin/sh
case "$SLURMD_NODENAME" in
  nv*) have=cuda ;; amd*) have=rocm ;; asc*) have=cann ;; cpu*) have=x86_64 ;; *) have=none ;;
esac
for s in "$@"; do
  if [ "$s" = "$have" ]; then
    echo "ran on $SLURMD_NODENAME devices=${CUDA_VISIBLE_DEVICES:-none}"
    sleep "${SLEEP:-1}"
    exit 0
  fi
done
echo "no $* on $SLURMD_NODENAME" >&2
exit 1
)";

class SlurmBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = SlurmTestBed::Unavailable(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(tmp_.ok());
    std::string error;
    bed_ = SlurmTestBed::Up(tmp_.path() / "bed", &error);
    ASSERT_NE(bed_, nullptr) << error;
    need_ = (bed_->dir() / "work" / "need.sh").string();
    std::ofstream(need_) << kNeedScript;
    std::filesystem::permissions(need_, std::filesystem::perms::all);
  }

  // The daemon on this bed, with `extra` config lines (e.g. a power: block).
  void StartDaemon(const std::string& extra = "") {
    const std::filesystem::path dir = tmp_.path() / "daemon";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.yaml")
        << "backend: slurm\n"
        << "slurm:\n"
        << "  conf: " << bed_->conf() << "\n"
        << "  partitions: [het]\n"
        << "  device_types: {a100: a100-80g, mi250x: mi250x, 910b: ascend-910b}\n"
        << "  cpu_type: xeon-8380\n"
        << "  output_dir: " << (bed_->dir() / "work" / "hetsched").string() << "\n"
        << "  poll_interval: 200ms\n"
        << extra;
    std::string error;
    daemon_ = Daemon::Start({dir, {"--config", (dir / "config.yaml").string()}}, &error);
    ASSERT_NE(daemon_, nullptr) << error;
  }

  // sbatch ARGS --wrap 'need.sh STACKS' with its output in work/ID.out; the Slurm job id.
  int64_t Sbatch(std::vector<std::string> args, const std::string& needs,
                 const std::string& sleep = "1") {
    std::vector<std::string> argv = {"sbatch", "--parsable", "--open-mode=append",
                                     "--output=" + (bed_->dir() / "work" / "%j.out").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--wrap=SLEEP=" + sleep + " " + need_ + " " + needs);
    CommandResult r = bed_->Slurm(argv);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    return std::atoll(r.out.c_str());
  }

  // The daemon's jobs by name (GET /v1/jobs through the client).
  std::map<std::string, nlohmann::json> Jobs() {
    std::map<std::string, nlohmann::json> out;
    CommandResult r = daemon_->Client({"jobs", "--json"});
    if (r.status != 0) return out;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (!j.is_object() || !j["jobs"].is_array()) return out;
    for (auto& job : j["jobs"]) out[job["name"].get<std::string>()] = job;
    return out;
  }

  bool AllEnded(size_t expected) {
    auto jobs = Jobs();
    if (jobs.size() < expected) return false;
    for (auto& [name, j] : jobs) {
      const std::string s = j["state"];
      if (s != "completed" && s != "failed" && s != "cancelled") return false;
    }
    return true;
  }

  std::string Output(int64_t slurm_id) {
    return testing::ReadFileText(bed_->dir() / "work" / (std::to_string(slurm_id) + ".out"));
  }

  // For a failure message: what Slurm logged about `node` (slurmctld's lines naming it or its
  // power saving, then the ends of slurmctld's log, the node's slurmd log and resume.sh's).
  std::string BedLogs(const std::string& node) {
    const std::filesystem::path log = bed_->dir() / "log";
    std::string out = "--- slurmctld.log (" + node + ", power):\n";
    std::istringstream ctld(testing::ReadFileText(log / "slurmctld.log"));
    for (std::string line; std::getline(ctld, line);) {
      if (line.find(node) != std::string::npos || line.find("power") != std::string::npos) {
        out += line + "\n";
      }
    }
    for (const std::string& name :
         {std::string("slurmctld.log"), "slurmd." + node + ".log", std::string("resume.log")}) {
      const std::string text = testing::ReadFileText(log / name);
      out += "--- " + name + " (end):\n" +
             text.substr(text.size() - std::min<size_t>(text.size(), 3000));
    }
    return out;
  }

  // Where the daemon says the job's attempt started (its log; ended jobs hold no devices).
  std::string StartedOn(const std::string& job, int attempt = 1) {
    const std::regex started(R"re("msg":"started","job":")re" + job + R"re(","attempt":)re" +
                             std::to_string(attempt) + R"re(,"node":"([a-z0-9]+)")re");
    const std::string log = daemon_->Stderr();
    std::smatch m;
    return std::regex_search(log, m, started) ? m[1].str() : "(not started)";
  }

  // Where a running job is placed: the node of its first device ("nv1/0" -> nv1).
  static std::string NodeOf(const nlohmann::json& job) {
    const std::string d = job["devices"].empty() ? "" : job["devices"][0].get<std::string>();
    return d.substr(0, d.find('/'));
  }

  // The daemon's API with its token.
  std::unique_ptr<httplib::Client> Api() {
    auto api = std::make_unique<httplib::Client>(daemon_->url());
    api->set_read_timeout(10);
    api->set_bearer_token_auth(daemon_->token().c_str());
    return api;
  }

  // GET /v1/services/chat, after pushing the gateway rate `rate`; null when it does not answer.
  static nlohmann::json ChatAt(httplib::Client& api, double rate) {
    api.Post("/v1/services/chat/load", fmt::format(R"({{"requests_per_s": {}}})", rate),
             "application/json");
    auto r = api.Get("/v1/services/chat");
    return r && r->status == 200 ? nlohmann::json::parse(r->body, nullptr, false)
                                 : nlohmann::json();
  }

  // The replicas of `view` in state `state`.
  static std::vector<nlohmann::json> ReplicasIn(const nlohmann::json& view,
                                                const std::string& state) {
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& replica : view.value("replicas", nlohmann::json::array())) {
      if (replica["state"] == state) out.push_back(replica);
    }
    return out;
  }

  // Slurm's running jobs of service chat's replicas: the daemon's job name -> node.
  std::map<std::string, std::string> SlurmReplicas() {
    std::map<std::string, std::string> out;
    std::istringstream lines(bed_->Slurm({"squeue", "-h", "-t", "running", "-o", "%j %N"}).out);
    std::string name, node;
    while (lines >> name >> node) {
      if (name.rfind("hetsched:chat.", 0) == 0) out[name.substr(9, name.rfind(':') - 9)] = node;
    }
    return out;
  }

  TempDir tmp_;
  std::unique_ptr<SlurmTestBed> bed_;
  std::unique_ptr<Daemon> daemon_;
  std::string need_;
};

TEST_F(SlurmBackendTest, PlacesEveryJobWhereItsStackRunsAcrossADaemonRestart) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  // The backend's reader thread too leaves SIGTERM to the daemon's shutdown.
  EXPECT_EQ(daemon_->ThreadsTakingStopSignals(), std::vector<std::string>{});
  // Submitted to Slurm the way users do; the stacks ride in the comment or a constraint.
  const std::map<std::string, int64_t> sbatch = {
      {"cuda", Sbatch({"--gres=gpu:2", "--comment=stacks=cuda"}, "cuda", "4")},
      {"rocm", Sbatch({"--gres=gpu:4", "--comment=stacks=rocm"}, "rocm", "4")},
      {"cann", Sbatch({"--gres=gpu:8", "--comment=stacks=cann"}, "cann", "4")},
      {"cpu", Sbatch({}, "x86_64", "4")},
      {"portable", Sbatch({"--gres=gpu:1", "--comment=stacks=cuda,rocm"}, "cuda rocm", "4")},
      {"undeclared", Sbatch({"--gres=gpu:1"}, "cuda", "4")},  // slurm.default_stacks: cuda
      {"constraint", Sbatch({"--gres=gpu:1", "--constraint=rocm"}, "rocm", "4")},
  };
  const int64_t nowhere = Sbatch({"--gres=gpu:1", "--comment=stacks=oneapi"}, "oneapi");
  // Submitted through hetsched: Slurm runs the command where hetsched pinned it.
  for (const char* stack : {"cuda", "cann"}) {
    CommandResult r = daemon_->Client({"submit", "--name", std::string("api-") + stack, "--stacks",
                                       stack, "--gpus", "2", "--", need_, stack});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
  }
  // Restarted while jobs run: nothing may be lost or placed twice.
  ASSERT_TRUE(WaitUntil([&] { return Jobs().size() >= 10; }, 30));
  daemon_->Terminate(SIGTERM, 10);
  daemon_.reset();
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  ASSERT_TRUE(WaitUntil([&] { return AllEnded(10); }, 120)) << daemon_->Stderr();

  auto jobs = Jobs();
  for (const auto& [label, id] : sbatch) {
    const nlohmann::json& j = jobs["slurm-" + std::to_string(id)];
    EXPECT_EQ(j["state"], "completed") << label << ": " << j.dump();
    EXPECT_EQ(j["attempt"], 1) << label << ": placed once";
    // It ran once, where hetsched said.
    const std::string out = Output(id);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << label << ": " << out;
    EXPECT_THAT(out, HasSubstr("ran on " + StartedOn("slurm-" + std::to_string(id)) + " "))
        << label;
  }
  const nlohmann::json& rejected = jobs["slurm-" + std::to_string(nowhere)];
  EXPECT_EQ(rejected["state"], "failed");
  EXPECT_THAT(rejected["message"].get<std::string>(), HasSubstr("cannot run here"));
  EXPECT_THAT(
      bed_->Slurm({"squeue", "-h", "-t", "all", "-j", std::to_string(nowhere), "-o", "%T"}).out,
      HasSubstr("CANCELLED"));
  for (const char* name : {"api-cuda", "api-cann"}) {
    const nlohmann::json& j = jobs[name];
    ASSERT_EQ(j["state"], "completed") << j.dump();
    const std::string node = StartedOn(name);
    const std::string log = testing::ReadFileText(bed_->dir() / "work" / "hetsched" /
                                                  (std::string(name) + ".1." + node + ".log"));
    // Two devices, as placed; which two on the node is Slurm's choice (docs/slurm.md).
    EXPECT_THAT(log, ::testing::MatchesRegex("ran on " + node + " devices=[0-9],[0-9]\n")) << name;
  }
  EXPECT_THAT(daemon_->Stderr(),
              HasSubstr("cannot run here; withdrawn\",\"job\":\"slurm-" + std::to_string(nowhere)))
      << "the rejection is logged";
}

TEST_F(SlurmBackendTest, CancellingOnEitherSideCancelsOnBoth) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  // asc1 is the only CANN node: the first job runs, the second and third wait for it.
  const int64_t running = Sbatch({"--gres=gpu:8", "--comment=stacks=cann"}, "cann", "60");
  const int64_t waiting = Sbatch({"--gres=gpu:8", "--comment=stacks=cann"}, "cann");
  const int64_t other = Sbatch({"--gres=gpu:8", "--comment=stacks=cann"}, "cann");
  const auto state = [&](int64_t id) {
    return Jobs()["slurm-" + std::to_string(id)]["state"].get<std::string>();
  };
  ASSERT_TRUE(WaitUntil([&] { return Jobs().size() == 3 && state(running) == "running"; }, 30));
  // scancel in Slurm: the daemon's job is cancelled too.
  ASSERT_EQ(bed_->Slurm({"scancel", std::to_string(waiting)}).status, 0);
  ASSERT_TRUE(WaitUntil([&] { return state(waiting) == "cancelled"; }, 20)) << daemon_->Stderr();
  EXPECT_THAT(Jobs()["slurm-" + std::to_string(waiting)]["message"].get<std::string>(),
              HasSubstr("cancelled in slurm"));
  // hetsched cancel: cancelled in Slurm, queued or running.
  for (int64_t id : {other, running}) {
    CommandResult r = daemon_->Client({"cancel", "slurm-" + std::to_string(id)});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    ASSERT_TRUE(WaitUntil([&] { return state(id) == "cancelled"; }, 30)) << daemon_->Stderr();
    ASSERT_TRUE(WaitUntil(
        [&] {
          return bed_->Slurm({"squeue", "-h", "-t", "all", "-j", std::to_string(id), "-o", "%T"})
                     .out == "CANCELLED\n";
        },
        30))
        << id;
  }
}

TEST_F(SlurmBackendTest, KeepsEveryJobAcrossASlurmctldRestart) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  const int64_t a = Sbatch({"--gres=gpu:2", "--comment=stacks=cuda"}, "cuda", "8");
  const int64_t b = Sbatch({"--gres=gpu:2", "--comment=stacks=rocm"}, "rocm", "8");
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto jobs = Jobs();
        return jobs["slurm-" + std::to_string(a)]["state"] == "running" &&
               jobs["slurm-" + std::to_string(b)]["state"] == "running";
      },
      30));
  // slurmctld stops (its state saved), the daemon waits for it; a job comes in meanwhile.
  const std::string pid_file = (bed_->dir() / "run" / "slurmctld.pid").string();
  ASSERT_EQ(testing::RunCommand({"/bin/sh", "-c",
                                 "pid=$(cat " + pid_file +
                                     "); kill $pid; while kill -0 $pid 2>/dev/null; do sleep "
                                     "0.1; done"},
                                {}, 30)
                .status,
            0);
  CommandResult r = daemon_->Client(
      {"submit", "--name", "meanwhile", "--stacks", "cann", "--gpus", "1", "--", need_, "cann"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_TRUE(WaitUntil(
      [&] { return daemon_->Stderr().find("Slurm cannot be reached") != std::string::npos; }, 30));
  // Started again the way a service manager would (no -c: it recovers its saved state), marked
  // as the bed's so that the bed's teardown stops it.
  ASSERT_EQ(testing::RunCommand({"/usr/sbin/slurmctld", "-f", bed_->conf()},
                                {"HETSCHED_TESTBED_DIR=" + bed_->dir().string()}, 30)
                .status,
            0);
  ASSERT_TRUE(WaitUntil([&] { return AllEnded(3); }, 90)) << daemon_->Stderr();
  auto jobs = Jobs();
  for (int64_t id : {a, b}) {
    const nlohmann::json& j = jobs["slurm-" + std::to_string(id)];
    EXPECT_EQ(j["state"], "completed") << j.dump();
    EXPECT_EQ(j["attempt"], 1) << j.dump();
    const std::string out = Output(id);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
  EXPECT_EQ(jobs["meanwhile"]["state"], "completed") << jobs["meanwhile"].dump();
  EXPECT_THAT(daemon_->Stderr(), HasSubstr("Slurm answers again"));
}

TEST_F(SlurmBackendTest, PowersIdleNodesDownAndUpThroughSlurm) {
  ASSERT_NO_FATAL_FAILURE(
      StartDaemon("power:\n  policy: idle-timeout\n  suspend_time: 2s\n  suspend_timeout: 20s\n"
                  "  resume_timeout: 60s\n"));
  // Idle nodes are suspended through Slurm's power saving.
  const auto powered_down = [&] {
    return bed_->Slurm({"sinfo", "-h", "-N", "-t", "POWERED_DOWN", "-o", "%N"}).out;
  };
  ASSERT_TRUE(WaitUntil([&] { return powered_down().find("asc1") != std::string::npos; }, 60))
      << bed_->Slurm({"sinfo", "-N"}).out << daemon_->Stderr();
  // A job only asc1 can run: hetsched resumes it, through Slurm, and places the job there.
  const int64_t id = Sbatch({"--gres=gpu:8", "--comment=stacks=cann"}, "cann");
  ASSERT_TRUE(WaitUntil([&] { return AllEnded(1); }, 90)) << daemon_->Stderr() << BedLogs("asc1");
  auto jobs = Jobs();
  EXPECT_EQ(jobs["slurm-" + std::to_string(id)]["state"], "completed");
  EXPECT_THAT(Output(id), HasSubstr("ran on asc1"));
  const std::string log = daemon_->Stderr();
  EXPECT_THAT(log, HasSubstr(R"("msg":"suspending node","node":"asc1")"));
  EXPECT_THAT(log, HasSubstr(R"("msg":"resuming node","node":"asc1")"));
}

TEST_F(SlurmBackendTest, AJobOfANodeThatDiesIsPlacedAgainAndCompletes) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
  const int64_t id = Sbatch({"--gres=gpu:4", "--comment=stacks=cuda"}, "cuda", "5");
  const std::string name = "slurm-" + std::to_string(id);
  ASSERT_TRUE(WaitUntil([&] { return Jobs()[name]["state"] == "running"; }, 30));
  const std::string first = NodeOf(Jobs()[name]);
  ASSERT_THAT(first, ::testing::StartsWith("nv"));
  // The node dies: its slurmd, the job's slurmstepd and the job's processes are killed. Slurm
  // marks the node DOWN after SlurmdTimeout and requeues the job; hetsched places it again.
  // Only this bed's: beds of tests run in parallel number their jobs from 1 too, so the
  // slurmstepd must carry this bed's mark and the job's processes its SLURM_CONF.
  const std::string job = std::to_string(id);
  const std::string kill_node =
      "kill -9 $(cat " + (bed_->dir() / "run" / ("slurmd." + first + ".pid")).string() +
      "); for e in /proc/[0-9]*/environ; do p=${e%/environ}; p=${p#/proc/}; "
      "if { grep -qzxF 'HETSCHED_TESTBED_DIR=" +
      bed_->dir().string() +
      "' $e && "
      "grep -qzF 'slurmstepd: [" +
      job +
      ".' /proc/$p/cmdline; } || "
      "{ grep -qzxF SLURM_JOB_ID=" +
      job + " $e && grep -qzxF 'SLURM_CONF=" + bed_->conf() +
      "' $e; }; then kill -9 $p; fi; done 2>/dev/null; true";
  ASSERT_EQ(testing::RunCommand({"/bin/sh", "-c", kill_node}).status, 0);
  ASSERT_TRUE(WaitUntil([&] { return AllEnded(1); }, 150)) << daemon_->Stderr();
  const nlohmann::json j = Jobs()[name];
  EXPECT_EQ(j["state"], "completed") << j.dump() << daemon_->Stderr();
  EXPECT_GE(j["attempt"].get<int>(), 2);
  const std::string second = first == "nv1" ? "nv2" : "nv1";
  EXPECT_THAT(Output(id), HasSubstr("ran on " + second + " "));
  EXPECT_THAT(daemon_->Stderr(), HasSubstr(R"("msg":"node down","node":")" + first));
}

// Service chat: llama.cpp's names, so that the replicas count no requests and the gateway's
// rate drives the plan; one replica (one a100) carries about 170 requests/s of these, and
// `rate` until a gateway pushes one. Each replica's command runs `prefix` first (a shell
// command, "" for none).
nlohmann::json ChatService(double rate = 1, const std::string& prefix = "") {
  nlohmann::json command = {
      "python3",
      std::string(HETSCHED_SOURCE_DIR) + "/tests/testing/stand_in_model_server.py",
      "--port",
      "{port}",
      "--prefill-s",
      "0.01",
      "--decode-step-s",
      "0.04",
      "--metrics",
      "llamacpp"};
  if (!prefix.empty()) {
    std::string line = prefix + "; exec";
    for (const nlohmann::json& arg : command) line += " " + arg.get<std::string>();
    command = {"/bin/sh", "-c", line};
  }
  return {{"name", "chat"},     {"kind", "service"},   {"model", "llama-7b"},
          {"stacks", {"cuda"}}, {"rate", {{0, rate}}}, {"tokens", {{"input", 64}, {"output", 16}}},
          {"command", command}};
}

// A listening socket on 127.0.0.1 at a port the kernel picked, closed when it goes: a port
// that some other program holds on every node of the bed (all of them are 127.0.0.1).
struct HeldPort {
  HeldPort() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        listen(fd, 1) == 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
  }
  ~HeldPort() {
    if (fd >= 0) close(fd);
  }
  int fd = -1;
  int port = 0;
};

// An inference service whose replicas are Slurm jobs: placed by hetsched on the bed's a100
// nodes, reached at the node's NodeAddr on a port of serving.ports, scaled up and down with a
// gateway's rate. The range's first port is taken on the nodes: the replica given it fails and
// is replaced on the next port.
TEST_F(SlurmBackendTest, RunsAServicesReplicasAsSlurmJobsWhereItPlacedThem) {
  HeldPort taken;
  ASSERT_NE(taken.port, 0) << std::strerror(errno);
  ASSERT_NO_FATAL_FAILURE(
      StartDaemon(fmt::format("serving:\n  scrape_every: 200ms\n  replan_every: 1s\n"
                              "  ports: {}-{}\n",
                              taken.port, taken.port + 20)));
  std::unique_ptr<httplib::Client> client = Api();
  httplib::Client& api = *client;
  auto res = api.Post("/v1/jobs", ChatService().dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;

  nlohmann::json view;
  // Pushes `rate` and reads the service; its replicas in state `state`.
  const auto replicas_in = [&](double rate, const std::string& state) {
    view = ChatAt(api, rate);
    return ReplicasIn(view, state);
  };
  const auto slurm_replicas = [&] { return SlurmReplicas(); };
  // Every ready replica runs as a Slurm job on the node hetsched placed it on, and is reached
  // at that node's address on its own port.
  const auto check_placed = [&](const std::vector<nlohmann::json>& ready) {
    const auto running = slurm_replicas();
    std::set<std::string> endpoints;
    for (const nlohmann::json& r : ready) {
      const std::string job = r["job"];
      EXPECT_THAT(r["node"].get<std::string>(), ::testing::MatchesRegex("nv[12]")) << r;
      EXPECT_EQ(r["device_type"], "a100-80g") << r;
      ASSERT_TRUE(running.count(job)) << job << " is no running Slurm job";
      EXPECT_EQ(running.at(job), r["node"]) << job;
      EXPECT_THAT(r["endpoint"].get<std::string>(),
                  ::testing::MatchesRegex(R"(http://127\.0\.0\.1:[0-9]+)"));
      endpoints.insert(r["endpoint"]);
    }
    EXPECT_EQ(endpoints.size(), ready.size()) << view.dump(2);
  };

  // The first replica got the taken port: it fails, and the next one gets the next port.
  std::vector<nlohmann::json> ready;
  ASSERT_TRUE(WaitUntil([&] { return !(ready = replicas_in(0, "ready")).empty(); }, 30, 200))
      << view.dump(2) << daemon_->Stderr();
  EXPECT_THAT(view["message"].get<std::string>(),
              ::testing::ContainsRegex(fmt::format(
                  R"(^replica chat\.r0 failed \(.*\) before it was ready, on nv[12] with port {} )"
                  R"(\(a port taken there ends a replica so; the next one gets another port\))",
                  taken.port)))
      << view["message"];
  // The next port (or one further, should the next be taken on this machine too).
  const std::string endpoint = ready[0]["endpoint"];
  const int port = std::atoi(endpoint.substr(endpoint.rfind(':') + 1).c_str());
  EXPECT_GT(port, taken.port) << endpoint;
  EXPECT_LE(port, taken.port + 20) << endpoint;
  check_placed(ready);

  // 400 requests/s: three replicas, each a Slurm job on the node the plan's placement chose.
  // (The forecast's trend may ask for more at first: the rate rose from 0 in one interval.)
  ASSERT_TRUE(WaitUntil(
      [&] {
        ready = replicas_in(400, "ready");
        return ready.size() == 3 && view["replicas"].size() == 3 && slurm_replicas().size() == 3;
      },
      40, 200))
      << view.dump(2);
  check_placed(ready);
  EXPECT_THAT(view["plan"]["why"].get<std::string>(), HasSubstr("Chosen: a100-80g x 3"));

  // No load: drained back to one replica, whose Slurm jobs are cancelled.
  ASSERT_TRUE(WaitUntil(
      [&] { return replicas_in(0, "ready").size() == 1 && slurm_replicas().size() == 1; }, 30, 200))
      << view.dump(2) << "\n"
      << bed_->Slurm({"squeue", "-h", "-o", "%j %T %N"}).out;
  check_placed(replicas_in(0, "ready"));
  res = api.Delete("/v1/services/chat");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202) << res->body;
  EXPECT_TRUE(WaitUntil([&] { return slurm_replicas().empty(); }, 15));
  EXPECT_EQ(daemon_->Terminate(SIGTERM, 10), 0) << daemon_->Stderr();
}

// Lending and a restart with replicas on Slurm: training jobs borrow the a100s serving leaves
// idle; a rise of the load takes one device back (the training job holding it is preempted
// through Slurm and waits); the daemon killed with SIGKILL and started again on its database
// adopts both replicas, still running as the same Slurm jobs, and starts none twice; once the
// service is removed, the training job runs again.
TEST_F(SlurmBackendTest, LendsServingDevicesToTrainingAndAdoptsReplicasAcrossARestart) {
  HeldPort base;  // the range starts after a port the kernel found free
  ASSERT_NE(base.port, 0) << std::strerror(errno);
  const std::string config =
      fmt::format("serving:\n  scrape_every: 200ms\n  replan_every: 1s\n  ports: {}-{}\n",
                  base.port + 1, base.port + 20);
  ASSERT_NO_FATAL_FAILURE(StartDaemon(config));
  std::unique_ptr<httplib::Client> api = Api();
  // Each replica's start is noted with its port: a replica started twice shows twice.
  const std::string starts = (bed_->dir() / "work" / "starts.log").string();
  // 120 requests/s, which one replica carries (the forecast adds 20 %).
  auto res = api->Post("/v1/jobs", ChatService(120, "echo {port} >> " + starts).dump(),
                       "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  nlohmann::json view;
  ASSERT_TRUE(
      WaitUntil([&] { return ReplicasIn(view = ChatAt(*api, 120), "ready").size() == 1; }, 30, 200))
      << view.dump(2) << daemon_->Stderr();

  // Training takes the other 7 a100s: 4 on one node, 3 beside the replica. Each notes its
  // starts and its notices (SIGTERM).
  const std::string train_log = (bed_->dir() / "work" / "train.log").string();
  for (const auto& [name, gpus] : {std::pair{"train-4", 4}, std::pair{"train-3", 3}}) {
    const nlohmann::json train = {
        {"name", name},
        {"stacks", {"cuda"}},
        {"gang_size", gpus},
        {"throughput", {{"a100-80g", 1}}},
        {"preemptible", true},
        {"command",
         {"/bin/sh", "-c",
          fmt::format("echo start {0} >> {1}; trap 'echo notice {0} >> {1}; exit 0' TERM; "
                      "sleep 600 & wait",
                      name, train_log)}}};
    res = api->Post("/v1/jobs", train.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto jobs = Jobs();
        return jobs["train-4"]["state"] == "running" && jobs["train-3"]["state"] == "running";
      },
      30, 200))
      << daemon_->Stderr();

  // 180 requests/s (its rise carried one interval ahead: 240, plus 20 %): a second replica,
  // on a device a training job held.
  std::vector<nlohmann::json> ready;
  ASSERT_TRUE(WaitUntil(
      [&] {
        ready = ReplicasIn(view = ChatAt(*api, 180), "ready");
        return ready.size() == 2 && SlurmReplicas().size() == 2;
      },
      40, 200))
      << view.dump(2) << daemon_->Stderr();
  std::map<std::string, nlohmann::json> jobs = Jobs();
  const std::string preempted = jobs["train-4"]["preemptions"] == 1 ? "train-4" : "train-3";
  const std::string kept = preempted == "train-4" ? "train-3" : "train-4";
  EXPECT_EQ(jobs[preempted]["preemptions"], 1) << jobs[preempted].dump();
  EXPECT_EQ(jobs[preempted]["state"], "queued") << jobs[preempted].dump();
  EXPECT_THAT(jobs[preempted]["message"].get<std::string>(),
              HasSubstr("service 'chat' takes its device back"));
  EXPECT_EQ(jobs[kept]["state"], "running") << jobs[kept].dump();
  EXPECT_EQ(jobs[kept]["preemptions"], 0) << jobs[kept].dump();
  EXPECT_THAT(testing::ReadFileText(train_log), HasSubstr("notice " + preempted + "\n"));
  const auto before = SlurmReplicas();

  // kill -9 and a start on the same database: the same two replicas, the same Slurm jobs.
  daemon_->Kill();
  daemon_.reset();
  ASSERT_NO_FATAL_FAILURE(StartDaemon(config));
  api = Api();
  ASSERT_TRUE(
      WaitUntil([&] { return ReplicasIn(view = ChatAt(*api, 180), "ready").size() == 2; }, 30, 200))
      << view.dump(2) << daemon_->Stderr();
  EXPECT_EQ(view["replicas"].size(), 2u) << view.dump(2);
  for (const nlohmann::json& r : view["replicas"]) {
    EXPECT_EQ(before.count(r["job"]), 1u) << r["job"] << " is not one from before the restart";
  }
  EXPECT_EQ(SlurmReplicas(), before);
  jobs = Jobs();
  for (const auto& [name, job] : jobs) {
    if (name.rfind("chat.", 0) == 0) {
      EXPECT_EQ(job["attempt"], 1) << job.dump();
    }
  }
  EXPECT_EQ(jobs[kept]["state"], "running") << jobs[kept].dump();
  EXPECT_EQ(jobs[kept]["attempt"], 1) << jobs[kept].dump();
  EXPECT_EQ(jobs[preempted]["state"], "queued") << jobs[preempted].dump();
  std::istringstream lines(testing::ReadFileText(starts));
  std::multiset<std::string> ports{std::istream_iterator<std::string>(lines), {}};
  for (const std::string& port : ports) EXPECT_EQ(ports.count(port), 1u) << "port " << port;

  // The service removed: its devices go back to training.
  res = api->Delete("/v1/services/chat");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202) << res->body;
  ASSERT_TRUE(WaitUntil([&] { return Jobs()[preempted]["state"] == "running"; }, 30, 200))
      << Jobs()[preempted].dump() << daemon_->Stderr();
  EXPECT_TRUE(SlurmReplicas().empty());
  EXPECT_TRUE(WaitUntil(
      [&] {
        const std::string log = testing::ReadFileText(train_log);
        return std::count(log.begin(), log.end(), '\n') == 4;  // 3 starts, 1 notice
      },
      10, 100))
      << testing::ReadFileText(train_log);
  for (const char* name : {"train-4", "train-3"})
    api->Delete(fmt::format("/v1/jobs/{}", name).c_str());
  EXPECT_EQ(daemon_->Terminate(SIGTERM, 10), 0) << daemon_->Stderr();
}

}  // namespace
}  // namespace hetsched
