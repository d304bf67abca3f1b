#include "backends/slurm/slurm_records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "daemon/job_request.h"
#include "model/catalog.h"
#include "testing/build_paths.h"

namespace hetsched::svc::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

// What the test bed's Slurm printed (tests/data/slurm; scripts/slurm-testbed.sh).
std::string Recorded(const std::string& name) {
  std::ifstream in(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/slurm/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const model::DeviceCatalog& Catalog() { return model::DeviceCatalog::BuiltIn(); }

Mapping TestBedMapping() {
  Mapping m;
  m.device_types = {{"910b", "ascend-910b"}};
  m.cpu_type = "xeon-8380";
  return m;
}

TEST(SlurmGres, ReadsNodeAndTresForms) {
  auto g = ParseGres("gpu:a100:4(S:0-1),gpu:t4:2,mps:100");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->size(), 3u);
  EXPECT_EQ((*g)[0].name, "gpu");
  EXPECT_EQ((*g)[0].type, "a100");
  EXPECT_EQ((*g)[0].count, 4);
  EXPECT_EQ((*g)[1].type, "t4");
  EXPECT_EQ((*g)[2].name, "mps");
  auto tres = ParseGres("gres:gpu:2");
  ASSERT_TRUE(tres.ok());
  EXPECT_EQ((*tres)[0].type, "");
  EXPECT_EQ((*tres)[0].count, 2);
  EXPECT_TRUE(ParseGres("").ok());
  EXPECT_EQ(ParseGres("gpu")->at(0).count, 1);
  EXPECT_THAT(ParseGres("gpu:a:b:c").status().message(), HasSubstr("'gpu:a:b:c' does not read"));
}

TEST(SlurmNodes, ReadsTheTestBedsNodes) {
  auto nodes = ParseSinfoJson(Recorded("sinfo_mixed.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 7u);
  std::map<std::string, Node> by_name;
  for (const Node& n : *nodes) by_name[n.name] = n;
  const Node& asc = by_name.at("asc1");
  EXPECT_TRUE(NodeDrained(asc));
  EXPECT_TRUE(NodeUsable(asc));  // drained: its jobs run on
  EXPECT_EQ(asc.reason, "disk check");
  EXPECT_FALSE(NodeUsable(by_name.at("cpu2")));  // powering down
  EXPECT_TRUE(NodeUsable(by_name.at("nv1")));
  EXPECT_THAT(by_name.at("nv1").partitions, ElementsAre("het"));
  EXPECT_THAT(by_name.at("amd1").features, ElementsAre("rocm"));

  const BackendNode nv = DescribeNode(by_name.at("nv1"), TestBedMapping(), Catalog());
  EXPECT_EQ(nv.problem, "");
  EXPECT_THAT(nv.devices, ElementsAre(Pair("a100-80g", 4)));  // the catalog's alias
  EXPECT_EQ(nv.address, "127.0.0.1");  // its NodeAddr: where a replica there is reached
  EXPECT_THAT(DescribeNode(asc, TestBedMapping(), Catalog()).devices,
              ElementsAre(Pair("ascend-910b", 8)));
  EXPECT_TRUE(DescribeNode(asc, TestBedMapping(), Catalog()).drained);
  EXPECT_THAT(DescribeNode(by_name.at("cpu1"), TestBedMapping(), Catalog()).devices,
              ElementsAre(Pair("xeon-8380", 2)));  // one device per socket

  // What cannot be described is said, not guessed.
  Node unknown = asc;
  unknown.gres = {{"gpu", "z9000", 8}};
  EXPECT_THAT(DescribeNode(unknown, Mapping(), Catalog()).problem,
              HasSubstr("GRES type 'z9000' maps to no catalog device type"));
  EXPECT_THAT(DescribeNode(by_name.at("cpu1"), Mapping(), Catalog()).problem,
              HasSubstr("slurm.cpu_type"));
}

TEST(SlurmNodes, UntypedGpusTakeTheirTypeFromAFeature) {
  Node n;
  n.name = "g1";
  n.state = "idle";
  n.features = {"ib", "h100"};
  n.gres = {{"gpu", "", 8}};
  EXPECT_THAT(DescribeNode(n, Mapping(), Catalog()).devices, ElementsAre(Pair("h100-80g", 8)));
  n.features = {"ib"};
  EXPECT_THAT(DescribeNode(n, Mapping(), Catalog()).problem, HasSubstr("none of its features"));
  n.state = "down";
  EXPECT_FALSE(DescribeNode(n, Mapping(), Catalog()).up);
}

TEST(SlurmJobs, ReadsEveryStateTheTestBedShowed) {
  auto jobs = ParseSqueueJson(Recorded("squeue.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  std::map<int64_t, Job> by_id;
  for (const Job& j : *jobs) by_id[j.id] = j;
  const Job& held = by_id.at(1);
  EXPECT_EQ(held.state, "PENDING");
  EXPECT_EQ(held.priority, 0);
  EXPECT_EQ(held.comment, "stacks=rocm");
  EXPECT_EQ(held.time_limit_min, 10);
  ASSERT_EQ(held.gres_per_node.size(), 1u);
  EXPECT_EQ(held.gres_per_node[0].count, 2);
  EXPECT_EQ(by_id.at(4).state, "FAILED");
  EXPECT_EQ(by_id.at(4).exit_status, 3 << 8);
  EXPECT_TRUE(JobEnded(by_id.at(5).state));  // cancelled
  EXPECT_FALSE(JobEnded(by_id.at(2).state));
  EXPECT_EQ(by_id.at(6).node_count, 2);
  EXPECT_EQ(by_id.at(8).restarts, 1);  // requeued and held
  EXPECT_EQ(by_id.at(7).gres_per_node[0].type, "a100");
}

TEST(SlurmJobs, BecomeRequestsTheDaemonAccepts) {
  auto jobs = ParseSqueueJson(Recorded("squeue.json"));
  ASSERT_TRUE(jobs.ok());
  std::map<int64_t, Job> by_id;
  for (const Job& j : *jobs) by_id[j.id] = j;

  auto rocm = JobRequestOf(by_id.at(1), "slurm-1", TestBedMapping(), Catalog());
  ASSERT_TRUE(rocm.ok()) << rocm.status().message();
  auto req = ParseJobRequest(*rocm, Catalog());
  ASSERT_TRUE(req.ok()) << req.status().message();
  EXPECT_EQ(req->job.name, "slurm-1");
  EXPECT_EQ(req->job.gang_size, 2);
  ASSERT_EQ(req->job.stacks.size(), 1u);
  EXPECT_EQ(req->job.stacks[0].name, "rocm");
  EXPECT_EQ(req->job.time_limit_s, 600);
  EXPECT_FALSE(req->job.command.empty());  // Slurm's script decides when it ends

  // No stacks declared: the configured default (a GPU job is most likely CUDA).
  auto plain = ParseJobRequest(*JobRequestOf(by_id.at(2), "slurm-2", TestBedMapping(), Catalog()),
                               Catalog());
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->job.stacks[0].name, "cuda");

  // A typed request may use that type only.
  auto typed = ParseJobRequest(*JobRequestOf(by_id.at(7), "slurm-7", TestBedMapping(), Catalog()),
                               Catalog());
  ASSERT_TRUE(typed.ok()) << typed.status().message();
  EXPECT_EQ(typed->job.throughput.size(), 1u);
  EXPECT_EQ(typed->job.throughput.count("a100-80g"), 1u);

  // A CPU job: one socket of the CPU type.
  auto cpu = ParseJobRequest(*JobRequestOf(by_id.at(3), "slurm-3", TestBedMapping(), Catalog()),
                             Catalog());
  ASSERT_TRUE(cpu.ok()) << cpu.status().message();
  EXPECT_EQ(cpu->job.gang_size, 1);
  EXPECT_EQ(cpu->job.throughput.count("xeon-8380"), 1u);

  EXPECT_THAT(JobRequestOf(by_id.at(6), "slurm-6", TestBedMapping(), Catalog()).status().message(),
              HasSubstr("asks for 2 nodes"));
}

TEST(SlurmJobs, StacksComeFromTheCommentOrAConstraint) {
  Job j;
  j.id = 9;
  j.gres_per_node = {{"gpu", "", 1}};
  j.comment = "team=vision stacks=cuda>=12.2,rocm";
  auto spec = JobRequestOf(j, "slurm-9", Mapping(), Catalog());
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(*spec, HasSubstr(R"("stacks":["cuda>=12.2","rocm"])"));
  j.comment = "";
  j.features = "rocm|cann";
  EXPECT_THAT(*JobRequestOf(j, "slurm-9", Mapping(), Catalog()),
              HasSubstr(R"("stacks":["rocm","cann"])"));
  j.features = "ib";  // a feature that names no stack is no stack
  EXPECT_THAT(*JobRequestOf(j, "slurm-9", Mapping(), Catalog()), HasSubstr(R"("stacks":["cuda"])"));
  j.gres_per_node = {{"gpu", "z9000", 1}};
  EXPECT_THAT(JobRequestOf(j, "slurm-9", Mapping(), Catalog()).status().message(),
              HasSubstr("GPU type 'z9000'"));
}

TEST(SlurmJobs, WithTenantsTheAccountNamesTheTenant) {
  Job j;
  j.id = 9;
  j.gres_per_node = {{"gpu", "", 1}};
  j.account = "cv-lab";
  Mapping m;
  EXPECT_THAT(*JobRequestOf(j, "slurm-9", m, Catalog()), Not(HasSubstr("tenant")));
  m.tenants = true;
  EXPECT_THAT(*JobRequestOf(j, "slurm-9", m, Catalog()), HasSubstr(R"("tenant":"cv-lab")"));
  m.account_tenants = {{"cv-lab", "vision"}};
  EXPECT_THAT(*JobRequestOf(j, "slurm-9", m, Catalog()), HasSubstr(R"("tenant":"vision")"));
  // No account: no tenant, which the daemon refuses as it refuses such an API submission.
  j.account = "";
  EXPECT_THAT(*JobRequestOf(j, "slurm-9", m, Catalog()), Not(HasSubstr("tenant")));
}

TEST(SlurmJobs, GpusThatNoNodeHoldsAreRefusedNamingTheLargestNode) {
  Node nv{"nv1", "idle", {}, {}, {"het"}, {{"gpu", "a100", 4}}, 2, 16, "", ""};
  Node asc{"asc1", "idle", {}, {}, {"het"}, {{"gpu", "910b", 8}}, 2, 16, "", ""};
  Node cpu{"cpu1", "idle", {}, {}, {"het"}, {}, 2, 16, "", ""};
  const std::vector<Node> nodes = {cpu, nv, asc};
  Job j;
  j.id = 5;
  j.gres_per_node = {{"gpu", "a100", 5}};
  // A typed request counts only its type: asc1's 8 GPUs are no use to it.
  EXPECT_EQ(NoNodeHolds(j, nodes, TestBedMapping(), Catalog()),
            "it asks for gpu:a100:5 on one node (a --gres count is per node), and no node holds "
            "that many: the largest, nv1, has 4 a100-80g (GRES gpu:a100:4)");
  j.gres_per_node = {{"gpu", "a100", 4}};
  EXPECT_EQ(NoNodeHolds(j, nodes, TestBedMapping(), Catalog()), "");
  // An untyped one may use any GPU type.
  j.gres_per_node = {{"gpu", "", 8}};
  EXPECT_EQ(NoNodeHolds(j, nodes, TestBedMapping(), Catalog()), "");
  j.gres_per_node = {{"gpu", "", 9}};
  EXPECT_THAT(NoNodeHolds(j, nodes, TestBedMapping(), Catalog()),
              HasSubstr("gpu:9 on one node (a --gres count is per node), and no node holds that "
                        "many: the largest, asc1, has 8 ascend-910b (GRES gpu:910b:8)"));
  // No node of its type at all: the daemon says why it cannot run.
  j.gres_per_node = {{"gpu", "mi250x", 2}};
  EXPECT_EQ(NoNodeHolds(j, nodes, TestBedMapping(), Catalog()), "");
  // CPU jobs ask for no GPU.
  j.gres_per_node = {};
  EXPECT_EQ(NoNodeHolds(j, nodes, TestBedMapping(), Catalog()), "");
}

TEST(SlurmRecords, AnUnreachableControllerComesWithTheFix) {
  // What Debian 12's Slurm 22.05.8 tools print without a slurm.conf (stderr, exit status 1).
  const char* no_conf =
      "sinfo: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
      "sinfo: error: fetch_config: DNS SRV lookup failed\n"
      "sinfo: error: _establish_config_source: failed to fetch config\n"
      "sinfo: fatal: Could not establish a configuration source\n";
  EXPECT_THAT(UnreachableHint(no_conf, ""),
              HasSubstr("Slurm found no slurm.conf and looked its controller up in DNS: set "
                        "slurm.conf in hetsched's config (exported as SLURM_CONF)"));
  EXPECT_THAT(UnreachableHint(no_conf, ""), HasSubstr("docs/slurm.md"));
  // With a slurm.conf whose controller does not run.
  EXPECT_THAT(UnreachableHint("sbatch: error: Batch job submission failed: Unable to contact "
                              "slurm controller (connect failure)",
                              "/etc/slurm/x.conf"),
              HasSubstr("the controller that SLURM_CONF=/etc/slurm/x.conf names does not answer: "
                        "is slurmctld running"));
  EXPECT_THAT(UnreachableHint(R"([{"error":"Unspecified error","errno":-1}])", ""),
              HasSubstr("Slurm's default slurm.conf names does not answer"));
  EXPECT_EQ(UnreachableHint("scontrol: error: Invalid job id specified", ""), "");
}

TEST(SlurmRecords, BadOutputIsAPreciseError) {
  EXPECT_THAT(ParseSqueueJson("<html>").status().message(),
              HasSubstr("squeue --json: the output is not JSON"));
  EXPECT_THAT(ParseSinfoJson(R"({"meta": {}})").status().message(),
              HasSubstr("has no \"nodes\" list"));
  EXPECT_THAT(
      ParseSqueueJson(R"({"jobs": [{"job_id": "7", "job_state": "RUNNING"}]})").status().message(),
      HasSubstr("squeue --json: jobs[0].job_id: is not an integer"));
  EXPECT_THAT(ParseSqueueJson(R"({"jobs": [{"job_id": 7}]})").status().message(),
              HasSubstr("jobs[0].job_state: is missing"));
  EXPECT_THAT(
      ParseSinfoJson(R"({"nodes": [{"name": "a", "gres": "gpu:x:y:z:w"}]})").status().message(),
      HasSubstr("nodes[0].gres: GRES 'gpu:x:y:z:w' does not read"));
  EXPECT_EQ(ParseSqueueJson(R"({"jobs": [], "errors": [{"error": "x"}]})").status().code(),
            util::StatusCode::kUnavailable);
  EXPECT_THAT(ParseSinfoJson(R"({"nodes": [{"name": "a", "sockets": 0}]})").status().message(),
              HasSubstr("sockets: is not from 1 to 4096"));
}

TEST(SlurmRecords, ClusterOfNodesLeavesOutWhatItCannotDescribe) {
  std::vector<std::string> problems;
  BackendNode good{"n1", true, {{"a100-80g", 4}}, "", "", false, ""};
  BackendNode bad{"n2", true, {}, "", "GRES type 'x' maps to nothing", false, ""};
  auto cluster = ClusterOfNodes({good, bad}, 60, 30, &problems);
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->nodes.size(), 1u);
  EXPECT_EQ(cluster->devices.size(), 4u);
  EXPECT_THAT(problems, ElementsAre("n2: GRES type 'x' maps to nothing"));
  problems.clear();
  EXPECT_EQ(cluster->nodes[0].boot_s, 60);
  EXPECT_FALSE(ClusterOfNodes({bad}, 60, 30, &problems).ok());
}

}  // namespace
}  // namespace hetsched::svc::slurm
