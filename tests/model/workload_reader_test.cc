#include "model/io/workload_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>

#include "model/io/cluster_reader.h"
#include "testing/build_paths.h"
#include "util/file.h"
#include "util/units.h"

namespace hetsched::model::io {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kSourceDir = HETSCHED_SOURCE_DIR;

// Message of a parse that must fail; the test fails if it parsed.
std::string YamlError(const std::string& text) {
  auto result = ParseWorkloadYaml(text, "w.yaml");
  EXPECT_FALSE(result.ok()) << "parsed:\n" << text;
  return result.ok() ? "" : result.status().message();
}

std::string JsonlError(const std::string& text) {
  auto result = ParseWorkloadJsonl(text, "w.jsonl");
  EXPECT_FALSE(result.ok()) << "parsed:\n" << text;
  return result.ok() ? "" : result.status().message();
}

// One job in YAML with `extra` lines (indented by the caller) added to a valid minimal job.
std::string OneJob(const std::string& extra, const std::string& name = "a") {
  return "jobs:\n"
         "  - name: " +
         name +
         "\n"
         "    stacks: [cuda]\n"
         "    work: 100\n" +
         extra;
}

TEST(WorkloadReaderTest, ParsesEveryFieldOfAYamlJob) {
  const std::string text = R"(jobs:
  - name: full
    kind: inference
    job_type: bert
    gang_size: 4
    elastic: {min: 2, max: 8}
    stacks: ["cuda>=11.8", rocm]
    memory_per_worker: 40GiB
    work: 1000
    throughput: {V100: 12.5, a100-80g: 30}
    ops: {flops_per_step: 1e12, bytes_per_step: 2GB, precision: fp32}
    sync_bytes_per_step: 1MiB
    priority: -3
    priority_weight: 2.5
    arrival: 10m
    deadline: 2h
    preemptible: false
    estimate: 90m
    time_limit: 4h
    portable_checkpoint: true
    data: {size: 1TB, location: rack-1}
    pinned_devices: [node-1/0, node-2]
)";
  auto result = ParseWorkloadYaml(text, "w.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->jobs.size(), 1u);
  const Job& job = result->jobs[0];
  EXPECT_EQ(job.id, JobId(0));
  EXPECT_EQ(job.name, "full");
  EXPECT_EQ(job.kind, JobKind::kInference);
  EXPECT_EQ(job.job_type, "bert");
  EXPECT_EQ(job.gang_size, 4);
  EXPECT_EQ(job.min_workers, 2);
  EXPECT_EQ(job.max_workers, 8);
  ASSERT_EQ(job.stacks.size(), 2u);
  EXPECT_EQ(job.stacks[0].name, "cuda");
  EXPECT_EQ(job.stacks[0].min_version, "11.8");
  EXPECT_EQ(job.stacks[1].name, "rocm");
  EXPECT_EQ(job.memory_per_worker, 40 * util::kGiB);
  EXPECT_DOUBLE_EQ(job.work, 1000);
  // Aliases resolve to catalog names, case-insensitively.
  ASSERT_EQ(job.throughput.size(), 2u);
  EXPECT_DOUBLE_EQ(job.throughput.at("v100-32g"), 12.5);
  EXPECT_DOUBLE_EQ(job.throughput.at("a100-80g"), 30);
  ASSERT_TRUE(job.ops.has_value());
  EXPECT_DOUBLE_EQ(job.ops->flops_per_step, 1e12);
  EXPECT_EQ(job.ops->bytes_per_step, 2'000'000'000u);
  EXPECT_FALSE(job.ops->low_precision);
  EXPECT_EQ(job.sync_bytes_per_step, util::kMiB);
  EXPECT_EQ(job.priority, -3);
  EXPECT_DOUBLE_EQ(job.priority_weight, 2.5);
  EXPECT_DOUBLE_EQ(job.arrival_s, 600);
  ASSERT_TRUE(job.deadline_s.has_value());
  EXPECT_DOUBLE_EQ(*job.deadline_s, 7200);
  EXPECT_FALSE(job.preemptible);
  ASSERT_TRUE(job.estimate_s.has_value());
  EXPECT_DOUBLE_EQ(*job.estimate_s, 5400);
  ASSERT_TRUE(job.time_limit_s.has_value());
  EXPECT_DOUBLE_EQ(*job.time_limit_s, 14400);
  EXPECT_TRUE(job.portable_checkpoint);
  EXPECT_EQ(job.data_bytes, 1'000'000'000'000u);
  EXPECT_EQ(job.data_location, "rack-1");
  EXPECT_EQ(job.pinned_devices, (std::vector<std::string>{"node-1/0", "node-2"}));
}

TEST(WorkloadReaderTest, MinimalJobGetsDocumentedDefaults) {
  auto result = ParseWorkloadYaml(OneJob(""), "w.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Job& job = result->jobs[0];
  EXPECT_EQ(job.kind, JobKind::kTraining);
  EXPECT_EQ(job.gang_size, 1);
  EXPECT_EQ(job.min_workers, 1);
  EXPECT_EQ(job.max_workers, 1);
  EXPECT_TRUE(job.preemptible);
  EXPECT_DOUBLE_EQ(job.priority_weight, 1);
  EXPECT_DOUBLE_EQ(job.arrival_s, 0);
  EXPECT_FALSE(job.deadline_s.has_value());
  EXPECT_TRUE(job.throughput.empty());
  EXPECT_FALSE(job.estimate_s.has_value());
  EXPECT_FALSE(job.time_limit_s.has_value());
  EXPECT_FALSE(job.portable_checkpoint);
}

TEST(WorkloadReaderTest, EstimateTimeLimitAndPortableCheckpointInYamlAndJsonl) {
  // Plain numbers are seconds; an estimate above the time limit is what users write, not an
  // error; repeat copies keep both unchanged.
  auto yaml = ParseWorkloadYaml(R"(jobs:
  - {name: a, stacks: [cuda], work: 1, estimate: 3600, time_limit: 1d}
  - {name: b, stacks: [cuda], work: 1, estimate: 5h, time_limit: 2h, portable_checkpoint: false}
  - {name: 'c{i}', stacks: [cuda], work: 1, estimate: 30s, time_limit: 60, repeat: 2, every: 1m}
)",
                                "w.yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status().message();
  ASSERT_EQ(yaml->jobs.size(), 4u);
  EXPECT_EQ(yaml->jobs[0].estimate_s, 3600);
  EXPECT_EQ(yaml->jobs[0].time_limit_s, 86400);
  EXPECT_FALSE(yaml->jobs[0].portable_checkpoint);
  EXPECT_EQ(yaml->jobs[1].estimate_s, 18000);
  EXPECT_EQ(yaml->jobs[1].time_limit_s, 7200);
  for (int i : {2, 3}) {
    EXPECT_EQ(yaml->jobs[i].estimate_s, 30) << i;
    EXPECT_EQ(yaml->jobs[i].time_limit_s, 60) << i;
  }

  auto jsonl = ParseWorkloadJsonl(
      R"({"name": "a", "stacks": ["cuda"], "work": 1, "estimate": 7200, "time_limit": "3h", "portable_checkpoint": true})"
      "\n"
      R"({"name": "b", "stacks": ["cuda"], "work": 1, "estimate": "45m"})",
      "w.jsonl");
  ASSERT_TRUE(jsonl.ok()) << jsonl.status().message();
  EXPECT_EQ(jsonl->jobs[0].estimate_s, 7200);
  EXPECT_EQ(jsonl->jobs[0].time_limit_s, 10800);
  EXPECT_TRUE(jsonl->jobs[0].portable_checkpoint);
  EXPECT_EQ(jsonl->jobs[1].estimate_s, 2700);
  EXPECT_FALSE(jsonl->jobs[1].time_limit_s.has_value());
  EXPECT_FALSE(jsonl->jobs[1].portable_checkpoint);
}

TEST(WorkloadReaderTest, DefaultsApplyUnlessTheJobOverrides) {
  const std::string text = R"(defaults:
  kind: batch
  stacks: [x86_64]
  memory_per_worker: 8GiB
  estimate: 1h
  time_limit: 2h
  portable_checkpoint: true
jobs:
  - {name: a, work: 10}
  - {name: b, work: 10, kind: inference, stacks: [cann], estimate: 10m, time_limit: 1d,
     portable_checkpoint: false}
)";
  auto result = ParseWorkloadYaml(text, "w.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->jobs[0].kind, JobKind::kBatch);
  EXPECT_EQ(result->jobs[0].stacks[0].name, "x86_64");
  EXPECT_EQ(result->jobs[0].memory_per_worker, 8 * util::kGiB);
  EXPECT_EQ(result->jobs[1].kind, JobKind::kInference);
  EXPECT_EQ(result->jobs[1].stacks[0].name, "cann");
  EXPECT_EQ(result->jobs[1].memory_per_worker, 8 * util::kGiB);
  EXPECT_EQ(result->jobs[0].estimate_s, 3600);
  EXPECT_EQ(result->jobs[0].time_limit_s, 7200);
  EXPECT_TRUE(result->jobs[0].portable_checkpoint);
  EXPECT_EQ(result->jobs[1].estimate_s, 600);
  EXPECT_EQ(result->jobs[1].time_limit_s, 86400);
  EXPECT_FALSE(result->jobs[1].portable_checkpoint);
}

TEST(WorkloadReaderTest, DurationOnAReferenceDeviceBecomesWork) {
  auto result = ParseWorkloadYaml(R"(jobs:
  - name: a
    stacks: [cuda]
    throughput: {v100: 2.5}
    duration: 1h
    reference_device: v100-32g
)",
                                  "w.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_DOUBLE_EQ(result->jobs[0].work, 3600 * 2.5);
}

TEST(WorkloadReaderTest, RepeatMakesNamedCopiesSpacedInTime) {
  auto result = ParseWorkloadYaml(
      OneJob("    repeat: 3\n    every: 10m\n    arrival: 60\n    deadline: 1h\n", "infer-{i}"),
      "w.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->jobs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const Job& job = result->jobs[i];
    EXPECT_EQ(job.name, "infer-" + std::to_string(i));
    EXPECT_EQ(job.id, JobId(i));
    EXPECT_DOUBLE_EQ(job.arrival_s, 60 + 600.0 * i);
    EXPECT_DOUBLE_EQ(*job.deadline_s, 3600 + 600.0 * i);
  }
}

TEST(WorkloadReaderTest, BracesInANameWithoutRepeatAreKept) {
  auto result = ParseWorkloadYaml(OneJob("", "'job-{i}'"), "w.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->jobs[0].name, "job-{i}");
}

TEST(WorkloadReaderTest, SortsByArrivalKeepingFileOrderForTies) {
  auto result = ParseWorkloadYaml(R"(defaults: {stacks: [cuda], work: 1}
jobs:
  - {name: late, arrival: 100}
  - {name: first-tie, arrival: 5}
  - {name: early, arrival: 1}
  - {name: second-tie, arrival: 5}
)",
                                  "w.yaml");
  ASSERT_TRUE(result.ok()) << result.status().message();
  std::vector<std::string> names;
  for (const Job& job : result->jobs) {
    EXPECT_EQ(job.id, JobId(static_cast<int32_t>(names.size())));
    names.push_back(job.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"early", "first-tie", "second-tie", "late"}));
}

TEST(WorkloadReaderTest, ExampleWorkloadAndItsJsonlTwinAgree) {
  auto yaml = LoadWorkload(kSourceDir + "/examples/workloads/small-mixed.yaml");
  auto jsonl = LoadWorkload(kSourceDir + "/examples/workloads/small-mixed.jsonl");
  ASSERT_TRUE(yaml.ok()) << yaml.status().message();
  ASSERT_TRUE(jsonl.ok()) << jsonl.status().message();
  ASSERT_EQ(yaml->jobs.size(), 12u);
  ASSERT_EQ(jsonl->jobs.size(), yaml->jobs.size());
  int cpu_only = 0, three_stacks = 0;
  for (size_t i = 0; i < yaml->jobs.size(); ++i) {
    const Job& a = yaml->jobs[i];
    const Job& b = jsonl->jobs[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.gang_size, b.gang_size);
    EXPECT_EQ(a.stacks.size(), b.stacks.size());
    EXPECT_EQ(a.memory_per_worker, b.memory_per_worker);
    EXPECT_DOUBLE_EQ(a.work, b.work);
    EXPECT_EQ(a.throughput, b.throughput);
    EXPECT_DOUBLE_EQ(a.arrival_s, b.arrival_s);
    EXPECT_EQ(a.preemptible, b.preemptible);
    EXPECT_EQ(a.deadline_s, b.deadline_s);
    if (a.stacks.size() == 1 && a.stacks[0].name == "x86_64") ++cpu_only;
    if (a.stacks.size() == 3) ++three_stacks;
  }
  EXPECT_EQ(cpu_only, 3);
  EXPECT_EQ(three_stacks, 3);
}

TEST(WorkloadReaderTest, LoadPicksTheReaderByExtension) {
  auto trace = LoadWorkload(kSourceDir + "/data/gavel/traces/physical_cluster/small_test.trace");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->jobs.size(), 20u);

  auto unknown = LoadWorkload(kSourceDir + "/data/README.md");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown workload format '.md'"));

  auto missing = LoadWorkload(kSourceDir + "/no/such/workload.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), util::StatusCode::kNotFound);
}

// ---- bad input -------------------------------------------------------------------------------

TEST(WorkloadReaderBadInputTest, ZeroGangSizeNamesFileLineColumnAndField) {
  EXPECT_EQ(YamlError(OneJob("    gang_size: 0\n")),
            "w.yaml:5:16: jobs[0].gang_size: is 0 (expected a positive integer)");
}

TEST(WorkloadReaderBadInputTest, MalformedYamlGivesItsPosition) {
  EXPECT_THAT(YamlError("jobs:\n  - name: [a\n    stacks: cuda\n"), StartsWith("w.yaml:"));
  EXPECT_THAT(YamlError("jobs: [\n"), HasSubstr("not valid YAML"));
  EXPECT_THAT(YamlError(""), HasSubstr("(expected a map with a 'jobs' list)"));
  EXPECT_THAT(YamlError("- 1\n- 2\n"), HasSubstr("the document is a list"));
}

TEST(WorkloadReaderBadInputTest, MalformedJsonGivesLineAndByteColumn) {
  const std::string good = R"({"name": "a", "stacks": ["cuda"], "work": 1})";
  EXPECT_THAT(JsonlError(good + "\n\n{\"name\": \"b\", \"stacks\": [\"cuda\"] \"work\": 1}\n"),
              StartsWith("w.jsonl:3:39: not valid JSON"));
  EXPECT_THAT(JsonlError("[1, 2]\n"), StartsWith("w.jsonl:1: jobs[0]: is a list"));
  EXPECT_THAT(JsonlError(good + "\n" + R"({"name": "b", "stacks": ["cuda"], "work": 0})"),
              StartsWith("w.jsonl:2: jobs[1].work: is 0 (expected a positive number of steps)"));
  EXPECT_THAT(JsonlError("\n  \n"), HasSubstr("no jobs"));
}

TEST(WorkloadReaderBadInputTest, UnknownDeviceTypeListsTheKnownOnes) {
  const std::string msg = YamlError(OneJob("    throughput: {v100: 1, gtx-9999: 2}\n"));
  EXPECT_THAT(msg, StartsWith("w.yaml:5:27: jobs[0].throughput.gtx-9999: unknown device type"));
  EXPECT_THAT(msg, HasSubstr("a100-80g"));
  EXPECT_THAT(msg, HasSubstr("mi250x"));
  EXPECT_THAT(YamlError(OneJob("    throughput: {v100: 1, v100-32g: 2}\n")),
              HasSubstr("device type 'v100-32g' is given twice"));
}

TEST(WorkloadReaderBadInputTest, UnknownFieldListsTheKnownOnes) {
  const std::string msg = YamlError(OneJob("    gang: 2\n"));
  EXPECT_THAT(msg, StartsWith("w.yaml:5:5: jobs[0].gang: unknown field (expected one of: name,"));
  EXPECT_THAT(msg, HasSubstr("gang_size"));
  EXPECT_THAT(YamlError("jobz: []\n"), HasSubstr("jobz: unknown field"));
  EXPECT_THAT(YamlError("defaults: {name: x}\njobs: [{name: a, stacks: [cuda], work: 1}]\n"),
              HasSubstr("defaults.name: unknown field"));
}

TEST(WorkloadReaderBadInputTest, RejectsNegativeZeroAndOverflowingQuantities) {
  EXPECT_THAT(YamlError(OneJob("    gang_size: -2\n")), HasSubstr("jobs[0].gang_size: is -2"));
  EXPECT_THAT(YamlError(OneJob("    gang_size: 99999999999\n")),
              HasSubstr("jobs[0].gang_size: is 99999999999"));
  EXPECT_THAT(YamlError(OneJob("    gang_size: 123456789012345678901234567890\n")),
              HasSubstr("out of range"));
  EXPECT_THAT(YamlError(OneJob("    gang_size: 1.5\n")), HasSubstr("'1.5' is not an integer"));
  EXPECT_THAT(YamlError(OneJob("    memory_per_worker: -1GiB\n")),
              HasSubstr("jobs[0].memory_per_worker: '-1GiB' is negative"));
  EXPECT_THAT(YamlError(OneJob("    memory_per_worker: 1e30TiB\n")),
              HasSubstr("jobs[0].memory_per_worker"));
  EXPECT_THAT(YamlError(OneJob("    throughput: {v100: 0}\n")),
              HasSubstr("jobs[0].throughput.v100: is 0 (expected a positive number of steps/s)"));
  EXPECT_THAT(YamlError(OneJob("    throughput: {v100: .nan}\n")),
              HasSubstr("jobs[0].throughput.v100"));
  EXPECT_THAT(YamlError(OneJob("    priority_weight: 1e999\n")), HasSubstr("out of range"));
  EXPECT_THAT(YamlError(OneJob("    arrival: -5\n")), HasSubstr("jobs[0].arrival"));
  EXPECT_THAT(YamlError(OneJob("    arrival: 100\n    deadline: 50\n")),
              HasSubstr("jobs[0].deadline: 50 s is not after the arrival at 100 s"));
  EXPECT_THAT(YamlError(OneJob("    gang_size: 4\n    elastic: {min: 5, max: 8}\n")),
              HasSubstr("do not bracket gang_size 4"));
  EXPECT_THAT(
      YamlError("jobs:\n  - {name: a, stacks: [cuda], work: 1}\n  - {name: b, stacks: [cuda]}\n"),
      HasSubstr("jobs[1].work: is missing"));
  EXPECT_THAT(YamlError(OneJob("    duration: 1h\n")), HasSubstr("is given together with work"));
}

TEST(WorkloadReaderBadInputTest, EstimateMustBePositiveFiniteAndAtMostTenYears) {
  const std::string kExpected = " (expected a positive duration up to 10 years, like 2h)";
  EXPECT_EQ(YamlError(OneJob("    estimate: 0\n")),
            "w.yaml:5:15: jobs[0].estimate: is 0" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    estimate: 0s\n")),
            "w.yaml:5:15: jobs[0].estimate: is 0" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    estimate: -1h\n")),
            "w.yaml:5:15: jobs[0].estimate: '-1h' is negative" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    estimate: .nan\n")),
            "w.yaml:5:15: jobs[0].estimate: '.nan' is not finite" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    estimate: -.inf\n")),
            "w.yaml:5:15: jobs[0].estimate: '-.inf' is not finite" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    estimate: inf\n")),
            "w.yaml:5:15: jobs[0].estimate: 'inf' is not a finite number" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    estimate: 1e999\n")),
            "w.yaml:5:15: jobs[0].estimate: '1e999' is out of range" + kExpected);
  // 10 years of 365 days is the most; one day more is an error.
  EXPECT_EQ(YamlError(OneJob("    estimate: 3651d\n")),
            "w.yaml:5:15: jobs[0].estimate: is 315446400 s, more than 10 years" + kExpected);
  auto ten_years = ParseWorkloadYaml(OneJob("    estimate: 3650d\n"), "w.yaml");
  ASSERT_TRUE(ten_years.ok()) << ten_years.status().message();
  EXPECT_EQ(ten_years->jobs[0].estimate_s, kMaxJobTimeS);
  EXPECT_EQ(YamlError(OneJob("    estimate: [1h]\n")),
            "w.yaml:5:15: jobs[0].estimate: is a list" + kExpected);
  EXPECT_EQ(JsonlError(R"({"name": "a", "stacks": ["cuda"], "work": 1, "estimate": -5})"),
            "w.jsonl:1: jobs[0].estimate: '-5' is negative" + kExpected);
  EXPECT_EQ(JsonlError(R"({"name": "a", "stacks": ["cuda"], "work": 1, "estimate": "NaN"})"),
            "w.jsonl:1: jobs[0].estimate: 'NaN' is not a finite number" + kExpected);
  EXPECT_EQ(JsonlError(R"({"name": "a", "stacks": ["cuda"], "work": 1, "estimate": 4e8})"),
            "w.jsonl:1: jobs[0].estimate: is 400000000 s, more than 10 years" + kExpected);
  // A value from defaults is reported where it is written.
  EXPECT_EQ(YamlError("defaults: {estimate: 0}\njobs: [{name: a, stacks: [cuda], work: 1}]\n"),
            "w.yaml:1:22: defaults.estimate: is 0" + kExpected);
}

TEST(WorkloadReaderBadInputTest, TimeLimitMustCoverStartUpAndBeAtMostTenYears) {
  const std::string kExpected = " (expected a duration from 60 s to 10 years, like 4h)";
  EXPECT_EQ(YamlError(OneJob("    time_limit: 0\n")),
            "w.yaml:5:17: jobs[0].time_limit: is 0" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    time_limit: 30s\n")),
            "w.yaml:5:17: jobs[0].time_limit: is 30 s, less than the 60 s any real job takes just "
            "to start (container pull, CUDA context, data loader)" +
                kExpected);
  EXPECT_EQ(YamlError(OneJob("    time_limit: 59.5\n")),
            "w.yaml:5:17: jobs[0].time_limit: is 59.5 s, less than the 60 s any real job takes "
            "just to start (container pull, CUDA context, data loader)" +
                kExpected);
  EXPECT_EQ(YamlError(OneJob("    time_limit: -2h\n")),
            "w.yaml:5:17: jobs[0].time_limit: '-2h' is negative" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    time_limit: .inf\n")),
            "w.yaml:5:17: jobs[0].time_limit: '.inf' is not finite" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    time_limit: nan\n")),
            "w.yaml:5:17: jobs[0].time_limit: 'nan' is not a finite number" + kExpected);
  EXPECT_EQ(YamlError(OneJob("    time_limit: 400000000\n")),
            "w.yaml:5:17: jobs[0].time_limit: is 400000000 s, more than 10 years" + kExpected);
  EXPECT_EQ(JsonlError(R"({"name": "a", "stacks": ["cuda"], "work": 1, "time_limit": "10s"})"),
            "w.jsonl:1: jobs[0].time_limit: is 10 s, less than the 60 s any real job takes just "
            "to start (container pull, CUDA context, data loader)" +
                kExpected);
  EXPECT_EQ(YamlError("defaults: {time_limit: 5s}\njobs: [{name: a, stacks: [cuda], work: 1}]\n"),
            "w.yaml:1:24: defaults.time_limit: is 5 s, less than the 60 s any real job takes just "
            "to start (container pull, CUDA context, data loader)" +
                kExpected);
  // Exactly the minimum is accepted, and an estimate above the limit is no error.
  auto ok = ParseWorkloadYaml(OneJob("    time_limit: 1m\n    estimate: 1h\n"), "w.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->jobs[0].time_limit_s, kMinTimeLimitS);
  EXPECT_EQ(ok->jobs[0].estimate_s, 3600);
}

TEST(WorkloadReaderBadInputTest, PortableCheckpointMustBeABool) {
  EXPECT_EQ(YamlError(OneJob("    portable_checkpoint: maybe\n")),
            "w.yaml:5:26: jobs[0].portable_checkpoint: 'maybe' is not a boolean (expected true or "
            "false)");
  EXPECT_EQ(
      JsonlError(R"({"name": "a", "stacks": ["cuda"], "work": 1, "portable_checkpoint": 1})"),
      "w.jsonl:1: jobs[0].portable_checkpoint: '1' is not a boolean (expected true or false)");
}

TEST(WorkloadReaderBadInputTest, DuplicateNamesAreErrors) {
  EXPECT_EQ(YamlError("defaults: {stacks: [cuda], work: 1}\njobs:\n  - {name: a}\n  - {name: b}\n"
                      "  - {name: a}\n"),
            "w.yaml:5:5: jobs[2].name: 'a' is already used by jobs[0] (expected unique job "
            "names)");
  EXPECT_THAT(JsonlError(R"({"name": "a", "stacks": ["cuda"], "work": 1})"
                         "\n"
                         R"({"name": "a", "stacks": ["cuda"], "work": 1})"),
              HasSubstr("jobs[1].name: 'a' is already used by jobs[0]"));
  EXPECT_THAT(YamlError(OneJob("    work: 2\n")), HasSubstr("work: appears twice"));
}

TEST(WorkloadReaderBadInputTest, JobWithoutStacksIsAnError) {
  EXPECT_EQ(YamlError("jobs:\n  - name: a\n    work: 1\n"),
            "w.yaml:2:5: jobs[0].stacks: is missing (expected a list of stacks the job can run "
            "on, like [cuda>=11.8, rocm])");
  EXPECT_THAT(YamlError("jobs:\n  - {name: a, work: 1, stacks: []}\n"),
              HasSubstr("jobs[0].stacks: is empty"));
  EXPECT_THAT(YamlError("jobs:\n  - {name: a, work: 1, stacks: ['cuda>=x']}\n"),
              HasSubstr("jobs[0].stacks[0]: 'cuda>=x' has version 'x'"));
}

TEST(WorkloadReaderBadInputTest, HugeRepeatIsRejectedBeforeAllocating) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(YamlError(OneJob("    repeat: 1000000000000\n    every: 1s\n", "x-{i}")),
              HasSubstr("jobs[0].repeat: is 1000000000000 (expected an integer from 1 to"));
  EXPECT_THAT(YamlError(OneJob("    repeat: 1e12\n    every: 1s\n", "x-{i}")),
              HasSubstr("'1e12' is not an integer"));
  // Two entries each under the job limit but together over the memory limit.
  EXPECT_THAT(YamlError("defaults: {stacks: [cuda], work: 1}\njobs:\n"
                        "  - {name: 'a{i}', repeat: 1500000, every: 1}\n"
                        "  - {name: 'b{i}', repeat: 1500000, every: 1}\n"),
              HasSubstr("jobs[0].repeat: copies would take about"));
  EXPECT_THAT(YamlError(OneJob("    repeat: 2000001\n    every: 1s\n", "x-{i}")),
              HasSubstr("jobs[0].repeat: is 2000001 (expected an integer from 1 to 2000000)"));
  // A short file must not allocate gigabytes through a long name copied many times.
  EXPECT_THAT(
      YamlError(OneJob("    repeat: 1000000\n    every: 1s\n", "x-{i}-" + std::string(2000, 'n'))),
      HasSubstr("jobs[0].repeat: copies would take about"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THAT(YamlError(OneJob("    repeat: 2\n    every: 1s\n")),
              HasSubstr("jobs[0].name: 'a' has no {i} placeholder"));
  EXPECT_THAT(YamlError(OneJob("    every: 1s\n")), HasSubstr("is given without repeat"));
  EXPECT_THAT(YamlError(OneJob("    repeat: 2\n", "x-{i}")),
              HasSubstr("jobs[0].every: is missing"));
}

TEST(WorkloadReaderBadInputTest, AliasBombAndDeepNestingFailCleanly) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'k'; ++c, ++prev) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + prev;
    bomb += "]\n";
  }
  EXPECT_THAT(YamlError(bomb), HasSubstr("expands to more values than its text holds"));
  EXPECT_THAT(YamlError("jobs: " + std::string(200, '[') + std::string(200, ']') + "\n"),
              HasSubstr("nesting deeper than 64"));
  EXPECT_THAT(JsonlError(std::string(200, '[') + std::string(200, ']') + "\n"),
              HasSubstr("nesting deeper than 64"));
}

TEST(WorkloadReaderBadInputTest, LargeRandomBinaryFailsQuickly) {
  std::mt19937 rng(7);
  std::string junk(4 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ParseWorkloadYaml(junk, "junk.yaml").ok());
  EXPECT_FALSE(ParseWorkloadJsonl(junk, "junk.jsonl").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// A cluster whose file adds a device type the built-in catalog does not have.
Cluster ClusterWithRtx2080Ti() {
  auto cluster = LoadCluster(kSourceDir + "/tests/data/clusters/rtx-lab.yaml");
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  return cluster.ok() ? std::move(cluster).value() : Cluster{};
}

TEST(WorkloadReaderCatalogTest, ThroughputResolvesAgainstTheClustersDeviceTypes) {
  const Cluster cluster = ClusterWithRtx2080Ti();
  const std::string yaml = R"(jobs:
  - name: a
    stacks: [cuda]
    throughput: {2080TI: 4, v100: 6}
    duration: 1h
    reference_device: rtx2080ti
)";
  auto result = ParseWorkloadYaml(yaml, "w.yaml", cluster.catalog);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Job& job = result->jobs[0];
  // The alias is stored under the cluster's canonical name; built-in types still resolve.
  EXPECT_EQ(job.throughput, (std::map<std::string, double>{{"rtx2080ti", 4}, {"v100-32g", 6}}));
  EXPECT_DOUBLE_EQ(job.work, 3600 * 4);

  auto jsonl = ParseWorkloadJsonl(
      R"({"name": "a", "stacks": ["cuda"], "work": 1, "throughput": {"rtx2080ti": 2}})", "w.jsonl",
      cluster.catalog);
  ASSERT_TRUE(jsonl.ok()) << jsonl.status().message();
  EXPECT_EQ(jsonl->jobs[0].throughput.at("rtx2080ti"), 2);

  // Without the cluster (the built-in catalog) the same file is rejected.
  const std::string msg = YamlError(yaml);
  EXPECT_THAT(msg, StartsWith("w.yaml:4:18: jobs[0].throughput.2080TI: unknown device type "
                              "'2080TI' (expected one of: xeon-8380, "));
  EXPECT_THAT(msg, Not(HasSubstr("rtx2080ti")));

  // LoadWorkload passes the catalog on.
  const std::string path = ::testing::TempDir() + "/workload_reader_test_rtx.yaml";
  ASSERT_TRUE(util::WriteFile(path, yaml).ok());
  auto loaded = LoadWorkload(path, cluster.catalog);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->jobs[0].throughput.count("rtx2080ti"), 1u);
  EXPECT_FALSE(LoadWorkload(path).ok());
}

TEST(WorkloadReaderCatalogTest, UnknownTypeListsTheClustersNames) {
  const Cluster cluster = ClusterWithRtx2080Ti();
  const std::string names = cluster.catalog.NameList();
  ASSERT_THAT(names, HasSubstr("rtx2080ti"));
  auto result =
      ParseWorkloadYaml(OneJob("    throughput: {gtx-9999: 2}\n"), "w.yaml", cluster.catalog);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "w.yaml:5:18: jobs[0].throughput.gtx-9999: unknown device type 'gtx-9999' (expected "
            "one of: " +
                names + ")");
  result = ParseWorkloadYaml(R"(jobs:
  - name: a
    stacks: [cuda]
    throughput: {rtx2080ti: 2}
    duration: 1h
    reference_device: gtx-9999
)",
                             "w.yaml", cluster.catalog);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "w.yaml:6:23: jobs[0].reference_device: unknown device type 'gtx-9999' (expected one "
            "of: " +
                names + ")");
}

TEST(WorkloadReaderTest, SeedDayCoversTheDayWithEveryKindOfJob) {
  auto day = LoadWorkload(kSourceDir + "/examples/workloads/seed-day.yaml");
  ASSERT_TRUE(day.ok()) << day.status().message();
  int services = 0, cpu_only = 0, cuda_only = 0, cpus_too = 0, night = 0, working_day = 0;
  for (const Job& j : day->jobs) {
    std::vector<std::string> stacks;
    for (const auto& s : j.stacks) stacks.push_back(s.name);
    if (j.kind == JobKind::kRealtime) {
      ++services;
      EXPECT_FALSE(j.pinned_devices.empty()) << j.name;
      EXPECT_FALSE(j.preemptible) << j.name;
    }
    if (stacks == std::vector<std::string>{"x86_64"}) ++cpu_only;
    if (stacks == std::vector<std::string>{"cuda"}) ++cuda_only;
    if (stacks.size() == 4) ++cpus_too;  // cuda, rocm, cann and x86_64
    const double hour = j.arrival_s / 3600;
    EXPECT_LT(hour, 24) << j.name;
    if (hour >= 9 && hour < 18) ++working_day;
    if (hour >= 19 || hour < 5) ++night;
  }
  EXPECT_EQ(services, 3);
  EXPECT_EQ(cpu_only, 12);
  EXPECT_EQ(cuda_only, 15);  // 12 fine-tunes, 2 pre-training runs, the chat service
  EXPECT_EQ(cpus_too, 40);   // batch inference and embedding refreshes
  EXPECT_GT(working_day, night);
  EXPECT_EQ(day->jobs.size(), 175u);
}

// `command` is what the daemon's local backend runs; with it, a job may leave its size out.
TEST(WorkloadReaderTest, ACommandIsAnArgvAndLetsTheSizeGo) {
  auto with_work =
      ParseWorkloadYaml(OneJob("    command: [python3, train.py, --epochs, '3']\n"), "w.yaml");
  ASSERT_TRUE(with_work.ok()) << with_work.status().ToString();
  EXPECT_EQ(with_work->jobs[0].command,
            (std::vector<std::string>{"python3", "train.py", "--epochs", "3"}));
  auto no_work =
      ParseWorkloadJsonl(R"({"name":"c","stacks":["cuda"],"command":["sleep","1"]})", "w.jsonl");
  ASSERT_TRUE(no_work.ok()) << no_work.status().ToString();
  EXPECT_EQ(no_work->jobs[0].work, 0);
  EXPECT_THAT(JsonlError(R"({"name":"c","stacks":["cuda"]})"), HasSubstr("work: is missing"));
  EXPECT_THAT(YamlError(OneJob("    command: []\n")), HasSubstr("command: is empty"));
  EXPECT_THAT(YamlError(OneJob("    command: python3 train.py\n")), HasSubstr("command"));
  EXPECT_THAT(YamlError(OneJob("    command: ['', x]\n")), HasSubstr("command[0]: is ''"));
}

}  // namespace
}  // namespace hetsched::model::io
