// SlurmBackend against a fake Slurm: shell scripts that print the sinfo/squeue JSON a test
// writes and record the sbatch, scontrol and scancel calls. What the backend derives from
// Slurm's records (its events) and what it asks Slurm to do, without a Slurm test bed
// (tests/cli/slurm_backend_test.cc runs the real one).
#include "backends/slurm/slurm_backend.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/catalog.h"
#include "testing/temp_dir.h"

namespace hetsched::svc {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using json = nlohmann::json;

json NodeRecord(const std::string& name, const std::string& state, const std::string& gres,
                const std::string& reason = "") {
  return {{"name", name}, {"state", state},        {"state_flags", json::array()},
          {"gres", gres}, {"partitions", {"het"}}, {"sockets", 2},
          {"cpus", 16},   {"reason", reason},      {"active_features", ""}};
}

json JobRecord(int64_t id, const std::string& name, const std::string& state) {
  return {{"job_id", id},         {"name", name},       {"job_state", state},
          {"state_reason", ""},   {"partition", "het"}, {"nodes", ""},
          {"required_nodes", ""}, {"priority", 1},      {"admin_comment", ""},
          {"tres_per_node", ""},  {"exit_code", 0},     {"restart_cnt", 0},
          {"node_count", 1}};
}

// One event as a line, so that a test can state all of them in order.
std::string Line(const BackendEvent& e) {
  static const char* const kKinds[] = {"started", "start-failed", "exited",    "lost",
                                       "node-up", "node-down",    "submitted", "withdrawn"};
  std::ostringstream out;
  out << kKinds[static_cast<int>(e.kind)] << ' ' << e.job << ' ' << e.attempt << ' ' << e.node
      << ' ' << e.exit_status << (e.stopped ? " stopped" : "") << " '" << e.message << "'";
  return out.str();
}

std::vector<std::string> Lines(const std::vector<BackendEvent>& events) {
  std::vector<std::string> out;
  for (const BackendEvent& e : events) out.push_back(Line(e));
  return out;
}

class FakeSlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    fs::create_directories(dir_.path() / "bin");
    fs::create_directories(dir_.path() / "out");
    std::ofstream(dir_.File("next_id")) << "101\n";
    const std::string d = dir_.path().string();
    // squeue prints what was published with the nodes sinfo printed last: a snapshot never
    // mixes two publications.
    Tool("sinfo",
         "readlink '" + d + "/current' > '" + d + "/read'\ncat '" + d + "/current/sinfo.json'");
    Tool("squeue", "cat \"$(cat '" + d + "/read')/squeue.json\"");
    Tool("sbatch", "echo \"sbatch $*\" >> '" + d + "/calls'\n" +
                       "env | grep -E '^(HETSCHED_|[A-Z_]*VISIBLE_DEVICES)' | LC_ALL=C sort > '" +
                       d + "/sbatch_env'\n" + "id=$(cat '" + d +
                       "/next_id')\necho $((id + 1)) > '" + d + "/next_id'\necho \"$id\"");
    for (const char* tool : {"scontrol", "scancel"}) {
      Tool(tool, std::string("echo \"") + tool + " $*\" >> '" + d + "/calls'");
    }
    nodes_ = {NodeRecord("nv1", "idle", "gpu:a100:4"), NodeRecord("cpu1", "idle", "")};
  }

  // Replaces the tool whole (written aside, then renamed over it): the backend's poll thread
  // may be running it, and a file open for writing cannot be executed (ETXTBSY). The fd is
  // close-on-exec so that a child forked meanwhile does not keep it open either.
  void Tool(const std::string& name, const std::string& body) {
    const std::string path = (dir_.path() / "bin" / name).string();
    const std::string aside = path + ".new";
    const std::string text = "#!/bin/sh\n" + body + "\n";
    const int fd = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    ASSERT_GE(fd, 0) << aside;
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
    fs::rename(aside, path);
  }

  // What sinfo and squeue print from now on.
  void Publish() {
    const fs::path gen = dir_.path() / ("gen" + std::to_string(++generation_));
    fs::create_directories(gen);
    std::ofstream(gen / "sinfo.json") << json{{"nodes", nodes_}}.dump();
    std::ofstream(gen / "squeue.json") << json{{"jobs", jobs_}}.dump();
    fs::create_symlink(gen, dir_.path() / "current.tmp");
    fs::rename(dir_.path() / "current.tmp", dir_.path() / "current");
  }

  std::unique_ptr<SlurmBackend> Create() {
    auto b = TryCreate();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(b).value() : nullptr;
  }
  util::Result<std::unique_ptr<SlurmBackend>> TryCreate() {
    Publish();
    SlurmBackendOptions o;
    o.bin_dir = (dir_.path() / "bin").string();
    o.partitions = {"het"};
    o.mapping.device_types = {{"910b", "ascend-910b"}};
    o.mapping.cpu_type = "xeon-8380";
    o.catalog = model::DeviceCatalog::BuiltIn();
    o.output_dir = (dir_.path() / "out").string();
    o.poll_interval_s = 0.02;
    o.command_timeout_s = 10;
    o.start_timeout_s = start_timeout_s_;
    o.logger = &logger_;
    return SlurmBackend::Create(std::move(o));
  }

  // The events of the Polls until `count` have come (after Slurm's next snapshot). A
  // snapshot's sinfo and squeue are two reads, so one Publish may reach the backend in two.
  std::vector<std::string> NextEvents(SlurmBackend& b, size_t count = 1) {
    std::vector<BackendEvent> events;
    hetsched::testing::WaitUntil([&] {
      for (BackendEvent& e : b.Poll()) events.push_back(std::move(e));
      return events.size() >= count;
    });
    return Lines(events);
  }

  std::vector<std::string> FileLines(const std::string& name) const {
    std::ifstream in(dir_.File(name));
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::vector<std::string> Calls() const { return FileLines("calls"); }
  // The log lines so far that contain `text`.
  std::vector<std::string> Logged(const std::string& text) {
    std::lock_guard lock(log_mu_);
    std::vector<std::string> out;
    for (const std::string& line : log_) {
      if (line.find(text) != std::string::npos) out.push_back(line);
    }
    return out;
  }

  hetsched::testing::TempDir dir_;
  json nodes_;
  json jobs_ = json::array();
  int generation_ = 0;
  double start_timeout_s_ = 120;
  std::mutex log_mu_;  // the reader thread logs too
  std::vector<std::string> log_;
  Logger logger_{LogLevel::kInfo, [this](std::string_view line) {
                   std::lock_guard lock(log_mu_);
                   log_.emplace_back(line);
                 }};
};

TEST_F(FakeSlurmTest, EventsOfWhatChangedWhileNoBackendWatched) {
  // hetsched's own jobs, by their names.
  json running = JobRecord(11, "hetsched:train:1", "RUNNING");
  running["nodes"] = "nv1";
  json failed = JobRecord(12, "hetsched:eval:2", "FAILED");
  failed["required_nodes"] = "nv1";
  failed["exit_code"] = 3 << 8;
  json refused = JobRecord(13, "hetsched:bad:1", "PENDING");
  refused["state_reason"] = "BadConstraints";
  refused["required_nodes"] = "nv1";
  json timed_out = JobRecord(14, "hetsched:slow:1", "TIMEOUT");
  timed_out["required_nodes"] = "nv1";
  json node_failed = JobRecord(15, "hetsched:unlucky:4", "NODE_FAIL");
  node_failed["required_nodes"] = "nv1";
  node_failed["state_reason"] = "NodeDown";
  // sbatch jobs: new and held, new and not held, placed by hetsched (attempt 2) and running,
  // held again after hetsched stopped it, and one outside the managed partitions.
  json held = JobRecord(20, "wrap", "PENDING");
  held["priority"] = 0;
  held["tres_per_node"] = "gres:gpu:a100:2";
  json unheld = JobRecord(21, "wrap", "PENDING");
  json placed = JobRecord(22, "wrap", "RUNNING");
  placed["admin_comment"] = "hetsched:attempt=2";
  placed["required_nodes"] = "nv1";
  placed["nodes"] = "nv1";
  json stopped = JobRecord(23, "wrap", "PENDING");
  stopped["admin_comment"] = "hetsched:attempt=1";
  stopped["priority"] = 0;
  json elsewhere = JobRecord(24, "wrap", "PENDING");
  elsewhere["partition"] = "other";
  jobs_ = {running, failed, refused, timed_out, node_failed,
           held,    unheld, placed,  stopped,   elsewhere};
  nodes_.push_back(NodeRecord("nv2", "down", "gpu:a100:4", "fan failure"));

  auto b = Create();
  ASSERT_NE(b, nullptr);
  const std::vector<BackendEvent> events = b->Poll();
  EXPECT_THAT(Lines(events),
              ElementsAre("started train 1 nv1 0 ''", "exited eval 2 nv1 3 ''",
                          "start-failed bad 1 nv1 0 'Slurm will not run it: BadConstraints'",
                          "exited slow 1 nv1 143 'Slurm says TIMEOUT'",
                          "lost unlucky 4 nv1 -1 'Slurm says NODE_FAIL (NodeDown)'",
                          "started slurm-22 2 nv1 0 ''", "node-down  0 nv2 0 'fan failure'",
                          "submitted slurm-20 0  0 ''", "submitted slurm-21 0  0 ''"));
  EXPECT_THAT(events[7].spec, HasSubstr("\"gang_size\":2"));
  EXPECT_THAT(Calls(), ElementsAre("scancel 13"));
  EXPECT_THAT(b->Poll(), IsEmpty()) << "each event once";

  std::vector<BackendJob> jobs = b->ListJobs();
  std::vector<std::string> listed;
  for (const BackendJob& j : jobs) listed.push_back(j.job + "." + std::to_string(j.attempt));
  EXPECT_THAT(listed, ElementsAre("train.1", "slurm-22.2"));
}

TEST_F(FakeSlurmTest, EventsOfLaterSnapshots) {
  json own = JobRecord(11, "hetsched:train:1", "PENDING");
  own["required_nodes"] = "nv1";
  json placed = JobRecord(22, "wrap", "RUNNING");
  placed["admin_comment"] = "hetsched:attempt=2";
  placed["required_nodes"] = "nv1";
  json queued = JobRecord(30, "wrap", "PENDING");
  queued["priority"] = 0;
  jobs_ = {own, placed, queued};
  auto b = Create();
  ASSERT_NE(b, nullptr);
  EXPECT_THAT(Lines(b->Poll()),
              ElementsAre("started slurm-22 2 nv1 0 ''", "submitted slurm-30 0  0 ''"));

  // Own job runs, the placed one is requeued by Slurm (its node failed), the queued one is
  // cancelled in Slurm, and a node goes down.
  jobs_[0]["job_state"] = "RUNNING";
  jobs_[1]["job_state"] = "PENDING";
  jobs_[1]["restart_cnt"] = 1;
  jobs_[1]["state_reason"] = "BeginTime";
  jobs_[2]["job_state"] = "CANCELLED";
  nodes_[1]["state"] = "down";
  Publish();
  EXPECT_THAT(NextEvents(*b, 4),
              UnorderedElementsAre("started train 1 nv1 0 ''",
                                   "lost slurm-22 2 nv1 -1 'Slurm requeued it (BeginTime)'",
                                   "withdrawn slurm-30 0  0 'scancel'", "node-down  0 cpu1 0 ''"));
  EXPECT_THAT(Calls(), ElementsAre("scontrol hold 22")) << "Slurm must not start it by itself";

  // The own job completes and disappears; the node comes back.
  jobs_[0]["job_state"] = "COMPLETED";
  nodes_[1]["state"] = "idle";
  Publish();
  EXPECT_THAT(NextEvents(*b, 2),
              UnorderedElementsAre("exited train 1 nv1 0 ''", "node-up  0 cpu1 0 ''"));
  EXPECT_THAT(b->ListJobs(), IsEmpty());

  // Slurm forgets the ended job: nothing more to say about it.
  jobs_.erase(0);
  Publish();
  std::vector<BackendEvent> later;
  hetsched::testing::WaitUntil(
      [&] {
        for (BackendEvent& e : b->Poll()) later.push_back(std::move(e));
        return false;
      },
      0.3);
  EXPECT_THAT(Lines(later), IsEmpty());
}

TEST_F(FakeSlurmTest, APlacementWhileSlurmStillEndsTheLastRunWaitsForTheRequeue) {
  json placed = JobRecord(22, "wrap", "RUNNING");
  placed["admin_comment"] = "hetsched:attempt=2";
  placed["required_nodes"] = "nv1";
  json other = placed;
  other["job_id"] = 23;
  jobs_ = {placed, other};
  auto b = Create();
  ASSERT_NE(b, nullptr);
  b->Poll();
  // The daemon placed both again (their node failed) before Slurm requeued them.
  jobs_[0]["job_state"] = jobs_[1]["job_state"] = "NODE_FAIL";
  Publish();
  hetsched::testing::WaitUntil([&] { return !b->Poll().empty(); });
  for (const char* job : {"slurm-22", "slurm-23"}) {
    LaunchSpec spec;
    spec.job = job;
    spec.attempt = 3;
    spec.node = "nv1";
    ASSERT_TRUE(b->Start(spec).ok());
  }
  EXPECT_THAT(Calls(), IsEmpty()) << "not pinned while Slurm ends the last run";

  // Slurm requeues one; the other's processes complete after all.
  jobs_[0]["job_state"] = "PENDING";
  jobs_[0]["priority"] = 0;
  jobs_[1]["job_state"] = "COMPLETED";
  Publish();
  EXPECT_THAT(NextEvents(*b), ElementsAre("exited slurm-23 3 nv1 0 ''"));
  b->Poll();
  EXPECT_THAT(Calls(), ElementsAre("scontrol update JobId=22 NodeList=nv1 "
                                   "AdminComment=hetsched:attempt=3",
                                   "scontrol release 22"));
}

TEST_F(FakeSlurmTest, StartsAGpuJobHeldOnItsNodeAndReleasesIt) {
  auto b = Create();
  ASSERT_NE(b, nullptr);
  LaunchSpec spec;
  spec.job = "train";
  spec.attempt = 3;
  spec.node = "nv1";
  spec.device_type = "a100-80g";
  spec.vendor = "nvidia";
  spec.node_devices = {1, 2};
  spec.visible_devices = {1, 2};
  spec.command = {"python", "it's a b"};
  spec.env = {{"HETSCHED_FROM_SPEC", "x,y"}};
  spec.time_limit_s = 89.5;
  ASSERT_TRUE(b->Start(spec).ok());
  b->Poll();
  const std::string out = (dir_.path() / "out").string();
  EXPECT_THAT(Calls(), ElementsAre("sbatch --parsable --hold --job-name=hetsched:train:3 "
                                   "--partition=het --nodelist=nv1 --nodes=1 --ntasks=1 "
                                   "--no-requeue --chdir=" +
                                       out + " --output=" + out +
                                       "/train.3.nv1.log --gres=gpu:a100:2 "
                                       "--wrap=exec 'python' 'it'\\''s a b' --time=2:30",
                                   "scontrol release 101"));
  EXPECT_THAT(
      FileLines("sbatch_env"),
      ElementsAre("HETSCHED_ATTEMPT=3", "HETSCHED_DEVICES=1,2", "HETSCHED_DEVICE_TYPE=a100-80g",
                  "HETSCHED_FROM_SPEC=x,y", "HETSCHED_JOB=train", "HETSCHED_NODE=nv1"));
  std::vector<BackendJob> jobs = b->ListJobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job, "train");
}

TEST_F(FakeSlurmTest, AnAscendJobSeesTheNpusSlurmAllocated) {
  nodes_.push_back(NodeRecord("asc1", "idle", "gpu:910b:8"));
  // This sbatch runs the batch script the way Slurm's gres/gpu would: with the devices it
  // allocated (not necessarily those hetsched chose) in CUDA_VISIBLE_DEVICES. Written before
  // the backend's reader thread starts: a child it forks meanwhile would hold the script open
  // for writing, and running it would fail with ETXTBSY.
  const std::string d = dir_.path().string();
  Tool("sbatch",
       "for a in \"$@\"; do case \"$a\" in --wrap=*) w=\"${a#--wrap=}\";; esac; done\n"
       "CUDA_VISIBLE_DEVICES=3,4 sh -c \"$w\" > '" +
           d + "/job.out'\necho 101");
  auto b = Create();
  ASSERT_NE(b, nullptr);
  LaunchSpec spec;
  spec.job = "npu";
  spec.attempt = 1;
  spec.node = "asc1";
  spec.device_type = "ascend-910b";
  spec.vendor = "huawei";
  spec.node_devices = {0, 1};
  spec.visible_devices = {0, 1};
  spec.command = {"sh", "-c", "echo \"npu $ASCEND_RT_VISIBLE_DEVICES\""};
  const util::Status started = b->Start(spec);
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_THAT(FileLines("job.out"), ElementsAre("npu 3,4"));

  // Other vendors' jobs are left to what Slurm sets.
  spec.job = "gpu";
  spec.node = "nv1";
  spec.device_type = "a100-80g";
  spec.vendor = "nvidia";
  ASSERT_TRUE(b->Start(spec).ok());
  EXPECT_THAT(FileLines("job.out"), ElementsAre("npu "));
}

TEST_F(FakeSlurmTest, AStartOnACpuNodeAsksForItsSocketsShareOfCpus) {
  auto b = Create();
  ASSERT_NE(b, nullptr);
  LaunchSpec spec;
  spec.job = "etl";
  spec.attempt = 1;
  spec.node = "cpu1";
  spec.device_type = "xeon-8380";
  spec.node_devices = {0};
  spec.command = {"true"};
  ASSERT_TRUE(b->Start(spec).ok());
  b->Poll();
  ASSERT_FALSE(Calls().empty());
  EXPECT_THAT(Calls()[0], HasSubstr(" --cpus-per-task=8 --wrap=exec 'true'"));
}

TEST_F(FakeSlurmTest, StartRefusesWhatSlurmCannotRun) {
  auto b = Create();
  ASSERT_NE(b, nullptr);
  LaunchSpec spec;
  spec.job = "j";
  spec.attempt = 1;
  spec.node = "nv1";
  spec.device_type = "a100-80g";
  spec.node_devices = {0};
  EXPECT_THAT(b->Start(spec).message(), HasSubstr("has no command for Slurm to run"));
  spec.command = {"true"};
  spec.node = "elsewhere";
  EXPECT_THAT(b->Start(spec).message(), HasSubstr("is not in a managed Slurm partition"));
  spec.node = "nv1";
  spec.device_type = "mi100";
  EXPECT_THAT(b->Start(spec).message(), HasSubstr("node 'nv1' has no GRES that maps to mi100"));
  spec.device_type = "a100-80g";
  spec.node_devices = {0, 1, 2, 3, 4};
  EXPECT_EQ(b->Start(spec).message(),
            "node 'nv1' has 4 GPUs of GRES gpu:a100 and the placement asks for 5");
  b->Poll();
  EXPECT_THAT(Calls(), IsEmpty());
}

TEST_F(FakeSlurmTest, AFailedReleaseIsAStartFailure) {
  auto b = Create();
  ASSERT_NE(b, nullptr);
  Tool("scontrol", "echo \"scontrol $*\" >> '" + dir_.path().string() +
                       "/calls'\necho 'release refused' >&2\nexit 1");
  LaunchSpec spec;
  spec.job = "j";
  spec.attempt = 1;
  spec.node = "nv1";
  spec.device_type = "a100-80g";
  spec.node_devices = {0};
  spec.command = {"true"};
  ASSERT_TRUE(b->Start(spec).ok());
  EXPECT_THAT(Lines(b->Poll()),
              ElementsAre("start-failed j 1 nv1 0 'scontrol release 101: exit status 1: "
                          "release refused'"));
  EXPECT_THAT(Calls(), ElementsAre(HasSubstr("sbatch "), "scontrol release 101",
                                   "scontrol release 101", "scancel 101"));
}

TEST_F(FakeSlurmTest, AnSbatchJobNoNodeCanHoldIsRefusedWithTheReason) {
  nodes_.push_back(NodeRecord("nv2", "idle", "gpu:a100:4"));
  json too_big = JobRecord(30, "wrap", "PENDING");
  too_big["priority"] = 0;
  too_big["tres_per_node"] = "gres:gpu:8";
  json fits = too_big;
  fits["job_id"] = 31;
  fits["tres_per_node"] = "gres:gpu:4";
  jobs_ = {too_big, fits};
  auto b = Create();
  ASSERT_NE(b, nullptr);
  const std::vector<BackendEvent> events = b->Poll();
  // The daemon records an empty spec with a message as failed, and cancels it in Slurm.
  EXPECT_THAT(Lines(events),
              ElementsAre("submitted slurm-30 0  0 'it asks for gpu:8 on one node (a --gres "
                          "count is per node), and no node holds that many: the largest, nv1, "
                          "has 4 a100-80g (GRES gpu:a100:4)'",
                          "submitted slurm-31 0  0 ''"));
  EXPECT_EQ(events[0].spec, "");
  EXPECT_THAT(events[1].spec, HasSubstr("\"gang_size\":4"));
}

TEST_F(FakeSlurmTest, AnSbatchJobIsNotPinnedToAPartOfItsGpus) {
  json held = JobRecord(30, "wrap", "PENDING");
  held["priority"] = 0;
  held["tres_per_node"] = "gres:gpu:4";
  jobs_ = {held};
  auto b = Create();
  ASSERT_NE(b, nullptr);
  b->Poll();
  // The daemon split its gang across nodes: 2 of its 4 GPUs on nv1.
  LaunchSpec spec;
  spec.job = "slurm-30";
  spec.attempt = 1;
  spec.node = "nv1";
  spec.node_devices = {0, 1};
  EXPECT_EQ(b->Start(spec).message(),
            "Slurm job 30 asks for 4 GPUs on one node (--gres counts are per node); this "
            "placement gives it 2 on nv1");
  b->Poll();
  EXPECT_THAT(Calls(), IsEmpty());
  EXPECT_THAT(b->ListJobs(), IsEmpty());
}

TEST_F(FakeSlurmTest, APlacementSlurmLeavesPendingIsTakenBack) {
  start_timeout_s_ = 1;
  json held = JobRecord(30, "wrap", "PENDING");
  held["priority"] = 0;
  held["state_reason"] = "JobHeldUser";
  held["tres_per_node"] = "gres:gpu:2";
  jobs_ = {held};
  auto b = Create();
  ASSERT_NE(b, nullptr);
  b->Poll();
  // What Slurm will say once both are placed and released: still pending.
  jobs_[0]["priority"] = 1;
  jobs_[0]["state_reason"] = "Resources";
  jobs_[0]["admin_comment"] = "hetsched:attempt=1";
  jobs_[0]["required_nodes"] = "nv1";
  json own_job = JobRecord(101, "hetsched:train:1", "PENDING");
  own_job["state_reason"] = "Priority";
  own_job["required_nodes"] = "nv1";
  jobs_.push_back(own_job);
  Publish();
  LaunchSpec adopted;
  adopted.job = "slurm-30";
  adopted.attempt = 1;
  adopted.node = "nv1";
  adopted.node_devices = {0, 1};
  ASSERT_TRUE(b->Start(adopted).ok());
  LaunchSpec own = adopted;
  own.job = "train";
  own.device_type = "a100-80g";
  own.node_devices = {2};
  own.command = {"true"};
  ASSERT_TRUE(b->Start(own).ok());
  EXPECT_THAT(b->Poll(), IsEmpty()) << "pending for less than start_timeout_s";

  std::vector<std::string> events;
  hetsched::testing::WaitUntil([&] {
    for (const BackendEvent& e : b->Poll()) events.push_back(Line(e));
    return events.size() >= 2;
  });
  // Each at its own bound: which comes first depends on the snapshots.
  EXPECT_THAT(events,
              UnorderedElementsAre("start-failed train 1 nv1 0 'Slurm did not start it within 1 s: "
                                   "pending (Priority)'",
                                   "start-failed slurm-30 1 nv1 0 'Slurm did not start it within "
                                   "1 s: pending (Resources)'"));
  // Cancelled, or held again for its next placement.
  EXPECT_THAT(Calls(), UnorderedElementsAre(HasSubstr("scontrol update JobId=30 NodeList=nv1"),
                                            HasSubstr("sbatch "), "scontrol release 30,101",
                                            "scancel 101", "scontrol hold 30"));
  EXPECT_THAT(b->ListJobs(), IsEmpty());
  EXPECT_THAT(
      Logged("placement taken back"),
      UnorderedElementsAre(AllOf(HasSubstr("\"job\":\"train\""),
                                 HasSubstr("\"why\":\"Slurm did not start it within 1 s: pending "
                                           "(Priority)\"")),
                           AllOf(HasSubstr("\"slurm_job\":30"), HasSubstr("pending (Resources)"))));
}

TEST_F(FakeSlurmTest, SlurmWithoutItsConfigSaysWhereSlurmConfComesIn) {
  // Debian 12's Slurm 22.05.8 without a slurm.conf.
  Tool("sinfo",
       "echo 'sinfo: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host' >&2\n"
       "echo 'sinfo: fatal: Could not establish a configuration source' >&2\nexit 1");
  auto b = TryCreate();
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(),
            "Slurm cannot be reached: sinfo --json: exit status 1: sinfo: error: "
            "resolve_ctls_from_dns_srv: res_nsearch error: Unknown host; Slurm found no "
            "slurm.conf and looked its controller up in DNS: set slurm.conf in hetsched's config "
            "(exported as SLURM_CONF) to the cluster's slurm.conf (docs/slurm.md, "
            "\"Configuration\")");
}

TEST_F(FakeSlurmTest, AControllerThatStopsAnsweringIsSaidWithTheFix) {
  auto b = Create();
  ASSERT_NE(b, nullptr);
  // slurmctld stops: sinfo --json exits 0 with an error in its JSON, sbatch fails.
  Tool("sinfo", R"(echo '{"errors": [{"error": "Unspecified error", "errno": -1}], "nodes": []}')");
  Tool("sbatch",
       "echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller "
       "(connect failure)' >&2\nexit 1");
  ASSERT_TRUE(hetsched::testing::WaitUntil([&] { return !b->Available(); }));
  EXPECT_THAT(Logged("Slurm cannot be reached"),
              ElementsAre(HasSubstr("sinfo --json: Slurm reports errors: "
                                    "[{\\\"errno\\\":-1,\\\"error\\\":\\\"Unspecified error\\\"}]; "
                                    "the controller that Slurm's default slurm.conf names does "
                                    "not answer")));
  LaunchSpec spec;
  spec.job = "j";
  spec.attempt = 1;
  spec.node = "nv1";
  spec.device_type = "a100-80g";
  spec.node_devices = {0};
  spec.command = {"true"};
  EXPECT_EQ(b->Start(spec).message(),
            "sbatch: exit status 1: sbatch: error: Batch job submission failed: Unable to "
            "contact slurm controller (connect failure); the controller that Slurm's default "
            "slurm.conf names does not answer: is slurmctld running, and does this machine "
            "reach its SlurmctldHost? (docs/slurm.md, \"Configuration\")");
}

}  // namespace
}  // namespace hetsched::svc
