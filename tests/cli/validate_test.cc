// `hetsched validate` end to end: the shipped example clusters, shorthands, JSON, workloads
// with jobs that can run nowhere, and bad files (exit status 2 and a precise message).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_runner.h"
#include "util/file.h"

namespace {

using hetsched::testing::CliRun;

// `merge_stderr` appends stderr to the captured text.
CliRun Validate(const std::string& args, bool merge_stderr = true) {
  return hetsched::testing::RunHetsched("validate " + args, merge_stderr
                                                                ? hetsched::testing::Stderr::kMerge
                                                                : hetsched::testing::Stderr::kDrop);
}

std::string TempFile(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/validate_test_" + name;
  EXPECT_TRUE(hetsched::util::WriteFile(path, contents).ok());
  return path;
}

TEST(ValidateCli, EveryExampleClusterValidates) {
  CliRun r = Validate("examples/clusters/*.yaml");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* name : {"cluster seed-startup", "cluster gavel-108", "cluster lab-mixed",
                           "cluster frontier-mixed"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("39 nodes, 3 racks, 132 devices"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cann: ascend-910b 8.0 (8 devices)"), std::string::npos) << r.out;
}

TEST(ValidateCli, JsonSummary) {
  CliRun r = Validate("examples/clusters/seed-startup.yaml v100=36,p100=36,k80=36 --json", false);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["clusters"].size(), 2u);
  const nlohmann::json& seed = j["clusters"][0];
  EXPECT_EQ(seed["name"], "seed-startup");
  EXPECT_EQ(seed["nodes"], 39);
  EXPECT_EQ(seed["devices"], 132);
  // Node base power: 4 x 1.5 kW + 4 x 1.2 kW + 1.2 kW + 30 x 200 W.
  EXPECT_DOUBLE_EQ(seed["power"]["node_base_watts"].get<double>(), 18000);
  bool found_a100 = false;
  for (const auto& t : seed["device_types"]) {
    if (t["type"] == "a100-80g") {
      found_a100 = true;
      EXPECT_EQ(t["devices"], 32);
      EXPECT_EQ(t["memory_bytes_total"].get<uint64_t>(), 32ull * 80 * (1ull << 30));
    }
  }
  EXPECT_TRUE(found_a100);
  EXPECT_EQ(j["clusters"][1]["devices"], 108);
}

TEST(ValidateCli, WorkloadThatFitsExitsZero) {
  CliRun r = Validate(
      "examples/clusters/seed-startup.yaml --workload examples/workloads/small-mixed.yaml");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("12 can run here, 0 can run nowhere"), std::string::npos) << r.out;
}

TEST(ValidateCli, JobsThatCanRunNowhereExitTwoWithTheReason) {
  CliRun r = Validate("v100=36,p100=36,k80=36 --workload examples/workloads/small-mixed.yaml");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("job etl-clickstream can run nowhere: needs x86_64; no device in the "
                       "cluster runs x86_64"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("job llm-finetune-7b can run nowhere: needs 72 GiB per worker; the "
                       "largest compatible device has 32 GiB (v100-32g)"),
            std::string::npos)
      << r.out;
  const std::string jobs = TempFile("new-cuda.yaml", R"(jobs:
  - name: llm-3
    stacks: ["cuda>=13.0"]
    memory_per_worker: 8GiB
    work: 100
    throughput: {k80: 1}
)");
  r = Validate("k80=4 --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("job llm-3 can run nowhere: needs cuda>=13.0; the cluster has cuda only "
                       "up to 11.4 (k80)"),
            std::string::npos)
      << r.out;
}

TEST(ValidateCli, ElasticJobsNeedTheirMinimumOnly) {
  const std::string jobs = TempFile("elastic.yaml", R"(jobs:
  - name: grows
    stacks: [cuda]
    gang_size: 8
    elastic: {min: 2, max: 8}
    work: 100
    throughput: {k80: 1}
  - name: rigid
    stacks: [cuda]
    gang_size: 8
    work: 100
    throughput: {k80: 1}
)");
  const CliRun r = Validate("k80=4 --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("job grows can run nowhere"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("job rigid can run nowhere: needs 8 devices of one type at once"),
            std::string::npos)
      << r.out;
}

TEST(ValidateCli, ServiceWhoseSloNoDeviceMeetsExitsTwo) {
  const std::string jobs = TempFile("service.yaml", R"(jobs:
  - name: chat
    kind: service
    model: llama2-70b
    stacks: [cuda, rocm]
    slo: {ttft: 10ms, tpot: 1ms, percentile: 99}
    rate: [[0, 1], [12h, 1]]
    tokens: {input: 1000, output: 200}
  - name: easy
    kind: service
    model: llama2-7b
    stacks: [cuda, rocm]
    slo: {ttft: 2s, tpot: 150ms, percentile: 99}
    rate: [[0, 1], [12h, 1]]
    tokens: {input: 500, output: 100}
)");
  const CliRun r = Validate("examples/clusters/seed-startup.yaml --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("job chat can run nowhere: " + jobs +
                       ":2:5: jobs[0]: service 'chat': no device "
                       "type meets its SLO (TTFT 0.01 s, TPOT 0.001 s): a100-80g (tp 8): one "
                       "iteration takes at least"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("job easy can run nowhere"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 jobs, 1 can run here, 1 can run nowhere"), std::string::npos) << r.out;
}

TEST(ValidateCli, BadClusterFileExitsTwoWithPosition) {
  const std::string path = TempFile("bad.yaml", R"(name: bad
racks: [{name: r, uplink_bandwidth: 1Gb/s, latency: 1us}]
nodes:
  - name: n1
    devices: [{type: v200, count: 1}]
    nic: {bandwidth: 1Gb/s, latency: 1us}
)");
  CliRun r = Validate(path);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("hetsched: " + path +
                       ":5:22: nodes[0].devices[0].type: unknown device type 'v200' (expected "
                       "one of: "),
            std::string::npos)
      << r.out;
}

TEST(ValidateCli, BadShorthandAndMissingFile) {
  CliRun r = Validate("v100=abc");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("<shorthand>:1:6: v100=abc: 'abc' is not a whole number"), std::string::npos)
      << r.out;
  r = Validate("no/such.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("hetsched: no/such.yaml: no such cluster file"), std::string::npos) << r.out;
  // One bad cluster among good ones: the good ones are still summarized, the exit status is 2.
  r = Validate("examples/clusters/lab-mixed.yaml no/such.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("cluster lab-mixed"), std::string::npos) << r.out;
}

// A cluster file that adds a device type the built-in catalog lacks, with 4 of them.
const std::string kRtxCluster = "tests/data/clusters/rtx-lab.yaml";

TEST(ValidateCli, WorkloadMayNameTheClustersOwnDeviceTypes) {
  const std::string& cluster = kRtxCluster;
  const std::string jobs = TempFile("rtx-jobs.yaml", R"(jobs:
  - name: bert
    stacks: [cuda]
    memory_per_worker: 8GiB
    throughput: {rtx2080ti: 3}
    duration: 2h
    reference_device: rtx2080ti
)");
  CliRun r = Validate(cluster + " --workload " + jobs);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("workload: 1 jobs, 1 can run here, 0 can run nowhere"), std::string::npos)
      << r.out;
  // Against a cluster without that type the name is unknown: reported once, exit 2, and the
  // good cluster is still summarized.
  r = Validate("k80=4 v100=4 " + cluster + " --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  const std::string error = "hetsched: " + jobs +
                            ":5:18: jobs[0].throughput.rtx2080ti: unknown device type 'rtx2080ti' "
                            "(expected one of: xeon-8380, ";
  ASSERT_NE(r.out.find(error), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(error, r.out.find(error) + 1), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cluster rtx-lab"), std::string::npos) << r.out;
}

TEST(ValidateCli, UnknownDeviceTypeInWorkloadListsTheClustersTypes) {
  const std::string& cluster = kRtxCluster;
  const std::string jobs = TempFile("gtx-jobs.yaml", R"(jobs:
  - name: bert
    stacks: [cuda]
    throughput: {gtx-9999: 3}
    work: 100
)");
  CliRun r = Validate(cluster + " --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  const size_t at = r.out.find("hetsched: " + jobs +
                               ":4:18: jobs[0].throughput.gtx-9999: unknown device type "
                               "'gtx-9999' (expected one of: xeon-8380, ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", rtx2080ti)", at), std::string::npos) << r.out;
}

TEST(ValidateCli, BadWorkloadExitsTwo) {
  const std::string jobs = TempFile("bad-jobs.yaml", "jobs:\n  - name: x\n    gang_size: -1\n");
  CliRun r = Validate("k80=4 --workload " + jobs);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(jobs + ":3:"), std::string::npos) << r.out;
}

}  // namespace
