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

  TempDir tmp_;
  std::unique_ptr<SlurmTestBed> bed_;
  std::unique_ptr<Daemon> daemon_;
  std::string need_;
};

TEST_F(SlurmBackendTest, PlacesEveryJobWhereItsStackRunsAcrossADaemonRestart) {
  ASSERT_NO_FATAL_FAILURE(StartDaemon());
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
  ASSERT_TRUE(WaitUntil([&] { return AllEnded(1); }, 90)) << daemon_->Stderr();
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
  const std::string kill_node = "kill -9 $(cat " +
                                (bed_->dir() / "run" / ("slurmd." + first + ".pid")).string() +
                                "); pkill -9 -f 'slurmstepd: \\[" + std::to_string(id) +
                                "\\.'; for p in $(grep -lzx SLURM_JOB_ID=" + std::to_string(id) +
                                " /proc/[0-9]*/environ | cut -d/ -f3); do kill -9 $p; done; true";
  ASSERT_EQ(testing::RunCommand({"/bin/sh", "-c", kill_node}).status, 0);
  ASSERT_TRUE(WaitUntil([&] { return AllEnded(1); }, 150)) << daemon_->Stderr();
  const nlohmann::json j = Jobs()[name];
  EXPECT_EQ(j["state"], "completed") << j.dump() << daemon_->Stderr();
  EXPECT_GE(j["attempt"].get<int>(), 2);
  const std::string second = first == "nv1" ? "nv2" : "nv1";
  EXPECT_THAT(Output(id), HasSubstr("ran on " + second + " "));
  EXPECT_THAT(daemon_->Stderr(), HasSubstr(R"("msg":"node down","node":")" + first));
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
  httplib::Client api(daemon_->url());
  api.set_read_timeout(10);
  api.set_bearer_token_auth(daemon_->token().c_str());
  // llama.cpp's names: the replicas count no requests, so the gateway's rate drives the plan;
  // one replica carries about 170 requests/s of these.
  const nlohmann::json service = {
      {"name", "chat"},
      {"kind", "service"},
      {"model", "llama-7b"},
      {"stacks", {"cuda"}},
      {"rate", {{0, 1}}},
      {"tokens", {{"input", 64}, {"output", 16}}},
      {"command",
       {"python3", std::string(HETSCHED_SOURCE_DIR) + "/tests/testing/stand_in_model_server.py",
        "--port", "{port}", "--prefill-s", "0.01", "--decode-step-s", "0.04", "--metrics",
        "llamacpp"}}};
  auto res = api.Post("/v1/jobs", service.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;

  nlohmann::json view;
  // Pushes `rate` and reads the service; its replicas in state `state`.
  const auto replicas_in = [&](double rate, const std::string& state) {
    api.Post("/v1/services/chat/load", fmt::format(R"({{"requests_per_s": {}}})", rate),
             "application/json");
    auto r = api.Get("/v1/services/chat");
    view =
        r && r->status == 200 ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& replica : view.value("replicas", nlohmann::json::array())) {
      if (replica["state"] == state) out.push_back(replica);
    }
    return out;
  };
  // Slurm's running jobs of the service: job name -> node.
  const auto slurm_replicas = [&] {
    std::map<std::string, std::string> out;
    std::istringstream lines(bed_->Slurm({"squeue", "-h", "-t", "running", "-o", "%j %N"}).out);
    std::string name, node;
    while (lines >> name >> node) {
      if (name.rfind("hetsched:chat.", 0) == 0) out[name.substr(9, name.rfind(':') - 9)] = node;
    }
    return out;
  };
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

}  // namespace
}  // namespace hetsched
