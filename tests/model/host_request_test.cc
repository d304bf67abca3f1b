// Jobs' host requests (cores and host memory per worker): the workload readers, and which
// device types can ever run a job once its nodes' cores and memory count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/compatibility.h"
#include "model/io/cluster_reader.h"
#include "model/io/workload_reader.h"
#include "util/units.h"

namespace hetsched::model {
namespace {

using ::testing::HasSubstr;

std::string YamlError(const std::string& text) {
  auto result = io::ParseWorkloadYaml(text, "w.yaml");
  EXPECT_FALSE(result.ok()) << "parsed:\n" << text;
  return result.ok() ? "" : result.status().message();
}

std::string OneJob(const std::string& extra) {
  return "jobs:\n"
         "  - name: a\n"
         "    stacks: [cuda]\n"
         "    work: 100\n" +
         extra;
}

TEST(HostRequestReader, YamlJobsAndDefaults) {
  auto w = io::ParseWorkloadYaml(R"(defaults:
  cores: 4
  host_memory: 16GiB
jobs:
  - name: a
    stacks: [cuda]
    work: 100
  - name: b
    stacks: [x86_64]
    work: 100
    cores: 32
    host_memory: 1TiB
  - name: c
    stacks: [cuda]
    work: 100
    cores: 0
    host_memory: 0
)",
                                 "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->jobs.size(), 3u);
  EXPECT_EQ(w->jobs[0].cores_per_worker, 4);
  EXPECT_EQ(w->jobs[0].host_memory_per_worker, 16 * util::kGiB);
  EXPECT_EQ(w->jobs[1].cores_per_worker, 32);
  EXPECT_EQ(w->jobs[1].host_memory_per_worker, 1024 * util::kGiB);
  EXPECT_EQ(w->jobs[2].cores_per_worker, 0);
  EXPECT_EQ(w->jobs[2].host_memory_per_worker, 0u);
  // Where each job was read.
  EXPECT_EQ(w->jobs[1].origin.entry, 1);
  EXPECT_EQ(w->jobs[1].origin.line, 8);
  EXPECT_EQ(w->jobs[1].origin.column, 5);
}

TEST(HostRequestReader, NothingSaidMeansNothingReserved) {
  auto w = io::ParseWorkloadYaml(OneJob(""), "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->jobs[0].cores_per_worker, 0);
  EXPECT_EQ(w->jobs[0].host_memory_per_worker, 0u);
  EXPECT_FALSE(AsksForHost(w->jobs[0]));
}

TEST(HostRequestReader, JsonLines) {
  auto w = io::ParseWorkloadJsonl(
      R"({"name": "a", "stacks": ["cuda"], "work": 1, "cores": 8, "host_memory": "64GiB"}
{"name": "b", "stacks": ["cuda"], "work": 1, "cores": "2", "host_memory": 1048576}
)",
      "w.jsonl");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->jobs[0].cores_per_worker, 8);
  EXPECT_EQ(w->jobs[0].host_memory_per_worker, 64 * util::kGiB);
  EXPECT_EQ(w->jobs[1].cores_per_worker, 2);
  EXPECT_EQ(w->jobs[1].host_memory_per_worker, 1048576u);
  EXPECT_EQ(w->jobs[1].origin.entry, 1);
  EXPECT_EQ(w->jobs[1].origin.line, 2);

  auto bad = io::ParseWorkloadJsonl(
      "{\"name\": \"a\", \"stacks\": [\"cuda\"], \"work\": 1, \"cores\": -2}\n", "w.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "w.jsonl:1: jobs[0].cores: is -2 (expected a whole number of cores from 0 to 1000000)");
}

TEST(HostRequestReader, BadValuesAreLocated) {
  EXPECT_EQ(YamlError(OneJob("    cores: -1\n")),
            "w.yaml:5:12: jobs[0].cores: is -1 (expected a whole number of cores from 0 to "
            "1000000)");
  EXPECT_EQ(YamlError(OneJob("    cores: 1.5\n")),
            "w.yaml:5:12: jobs[0].cores: '1.5' is not an integer (expected a whole number of "
            "cores from 0 to 1000000)");
  EXPECT_EQ(YamlError(OneJob("    cores: 1000001\n")),
            "w.yaml:5:12: jobs[0].cores: is 1000001 (expected a whole number of cores from 0 to "
            "1000000)");
  EXPECT_EQ(YamlError(OneJob("    cores: [4]\n")),
            "w.yaml:5:12: jobs[0].cores: is a list (expected a whole number of cores from 0 to "
            "1000000)");
  EXPECT_THAT(YamlError(OneJob("    host_memory: lots\n")),
              HasSubstr("w.yaml:5:18: jobs[0].host_memory: "));
  EXPECT_THAT(YamlError(OneJob("    host_memory: lots\n")),
              HasSubstr("(expected a byte count like 40GiB)"));
  EXPECT_THAT(YamlError(OneJob("    host_memory: -64GiB\n")),
              HasSubstr("jobs[0].host_memory: '-64GiB' is negative"));
  EXPECT_THAT(YamlError("defaults:\n  cores: x\n" + OneJob("")),
              HasSubstr("w.yaml:2:10: defaults.cores: 'x' is not an integer"));
}

Cluster FromYaml(const std::string& nodes) {
  auto c = io::ParseClusterYaml(
      "name: t\nracks: [{name: r, uplink_bandwidth: 100Gb/s, latency: 1us}]\nnodes:\n" + nodes,
      "c.yaml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::move(c).value();
}

Job CpuJob(int32_t cores, uint64_t memory, int32_t gang = 1) {
  Job job;
  job.name = "etl";
  job.stacks.push_back(*ParseStackRequirement("x86_64"));
  job.gang_size = job.min_workers = job.max_workers = gang;
  job.cores_per_worker = cores;
  job.host_memory_per_worker = memory;
  return job;
}

TEST(HostRequestCompatibility, CoresAndMemoryOfTheNodesCount) {
  // Two CPU nodes of 2 sockets: 48 cores and 256 GiB each; one without cores or memory given.
  const Cluster c = FromYaml(R"(  - name: cpu-[1-2]
    devices: [{type: xeon-8380, count: 2}]
    nic: {bandwidth: 100Gb/s, latency: 2us}
    cores: 48
    host_memory: 256GiB
)");
  EXPECT_EQ(CompatibleTypes(c, CpuJob(24, 128 * util::kGiB, 4)).size(), 1u);
  EXPECT_EQ(WhyNoDeviceFits(c, CpuJob(24, 128 * util::kGiB, 4)), "");

  EXPECT_TRUE(CompatibleTypes(c, CpuJob(64, 0)).empty());
  EXPECT_EQ(WhyNoDeviceFits(c, CpuJob(64, 0)),
            "needs 64 cores per worker; a node with a compatible device has at most 48 (cpu-1)");
  EXPECT_EQ(WhyNoDeviceFits(c, CpuJob(0, 512 * util::kGiB)),
            "needs 512 GiB of host memory per worker; a node with a compatible device has at most "
            "256 GiB (cpu-1)");
  // Each worker fits, but a node holds one of 32 cores: 2 workers in all, not 3.
  EXPECT_TRUE(CompatibleTypes(c, CpuJob(32, 0, 3)).empty());
  EXPECT_EQ(WhyNoDeviceFits(c, CpuJob(32, 0, 3)),
            "needs 3 workers at once with 32 cores each; the nodes with compatible devices hold "
            "at most 2 such workers (xeon-8380)");
  EXPECT_EQ(HostedWorkersByType(c, CpuJob(32, 0))[c.devices[0].type.value()], 2);
  EXPECT_EQ(HostedWorkersByType(c, CpuJob(32, 0), {1, 0})[c.devices[0].type.value()], 1);

  // A node that gives no cores or memory holds any request.
  const Cluster open = FromYaml(R"(  - name: cpu-1
    devices: [{type: xeon-8380, count: 2}]
    nic: {bandwidth: 100Gb/s, latency: 2us}
)");
  EXPECT_EQ(CompatibleTypes(open, CpuJob(10000, 100 * 1024 * util::kGiB, 2)).size(), 1u);
  EXPECT_EQ(HostWorkersFit(open.nodes[0], CpuJob(10000, 0)), kAnyWorkers);
}

TEST(HostRequestCompatibility, DescribeHostRequest) {
  EXPECT_EQ(DescribeHostRequest(CpuJob(0, 0)), "");
  EXPECT_EQ(DescribeHostRequest(CpuJob(1, 0)), "1 core");
  EXPECT_EQ(DescribeHostRequest(CpuJob(16, 64 * util::kGiB)), "16 cores and 64 GiB of host memory");
  EXPECT_EQ(DescribeHostRequest(CpuJob(0, 64 * util::kGiB)), "64 GiB of host memory");
}

}  // namespace
}  // namespace hetsched::model
