// `hetsched validate` with jobs that reserve host cores and memory or read data from a place:
// a job whose request no node of a device type it can use holds, or whose data lies nowhere in
// the cluster, is reported at its entry in the file, exit status 2.
#include <gtest/gtest.h>

#include <string>

#include "testing/cli_runner.h"
#include "util/file.h"

namespace {

using hetsched::testing::CliRun;

CliRun Validate(const std::string& args) {
  return hetsched::testing::RunHetsched("validate " + args, hetsched::testing::Stderr::kMerge);
}

std::string TempFile(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/validate_host_test_" + name;
  EXPECT_TRUE(hetsched::util::WriteFile(path, contents).ok());
  return path;
}

const std::string kCpuCluster = R"(name: cpu-lab
racks: [{name: r, uplink_bandwidth: 100Gb/s, latency: 1us}]
nodes:
  - name: cpu-[1-2]
    devices: [{type: xeon-8380, count: 2}]
    nic: {bandwidth: 100Gb/s, latency: 2us}
    cores: 80
    host_memory: 512GiB
)";

TEST(ValidateHostCli, RequestNoNodeHoldsIsLocatedAndExitsTwo) {
  const std::string cluster = TempFile("cpu.yaml", kCpuCluster);
  const std::string jobs = TempFile("jobs.yaml", R"(jobs:
  - name: etl
    stacks: [x86_64]
    work: 100
    cores: 40
    host_memory: 256GiB
  - name: huge
    stacks: [x86_64]
    work: 100
    cores: 96
)");
  CliRun r = Validate(cluster + " --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("hetsched: " + jobs +
                       ":7:5: jobs[1]: 'huge' needs 96 cores per worker; a node with a "
                       "compatible device has at most 80 (cpu-1) (expected cores and "
                       "host_memory per worker that the nodes of a device type it can use hold "
                       "for the whole gang)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 can run here, 1 can run nowhere"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("jobs[0]"), std::string::npos) << r.out;

  // Asking nothing, or what the nodes hold, validates.
  const std::string fits = TempFile("fits.yaml", R"(jobs:
  - name: etl
    stacks: [x86_64]
    work: 100
    gang_size: 4
    cores: 40
    host_memory: 256GiB
)");
  r = Validate(cluster + " --workload " + fits);
  EXPECT_EQ(r.status, 0) << r.out;
  // A shorthand cluster models no host: any request fits.
  r = Validate("xeon-8380=2 --workload " + jobs);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(ValidateHostCli, GangTheHostsCannotHoldAtOnce) {
  const std::string cluster = TempFile("cpu2.yaml", kCpuCluster);
  const std::string jobs =
      TempFile("gang.jsonl", R"({"name": "sweep", "stacks": ["x86_64"], "work": 1, )"
                             R"("gang_size": 3, "cores": 48})"
                             "\n");
  CliRun r = Validate(cluster + " --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("hetsched: " + jobs +
                       ":1: jobs[0]: 'sweep' needs 3 workers at once with 48 cores each; the "
                       "nodes with compatible devices hold at most 2 such workers (xeon-8380)"),
            std::string::npos)
      << r.out;
}

TEST(ValidateHostCli, DataLocationTheClusterLacksIsLocatedAndExitsTwo) {
  const std::string cluster = TempFile("cpu-data.yaml", kCpuCluster);
  const std::string jobs = TempFile("data-jobs.yaml", R"(jobs:
  - name: here
    stacks: [x86_64]
    work: 100
    data: {size: 1TB, location: r}
  - name: lost
    stacks: [x86_64]
    work: 100
    data: {size: 1TB, location: nas-9}
)");
  CliRun r = Validate(cluster + " --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("hetsched: " + jobs +
                       ":6:5: jobs[1].data.location: 'lost' reads its data from 'nas-9', no "
                       "node, rack or storage of cpu-lab (expected the name of a node, rack or "
                       "storage of the cluster)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("jobs[0]"), std::string::npos) << r.out;
}

}  // namespace
