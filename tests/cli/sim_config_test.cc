// simulate's --config file (cli/sim_config.h): every section read, each bad field located, the
// class weights applied to jobs, and flags on the command line winning over the file.
#include "cli/sim_config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "testing/cli_runner.h"
#include "util/file.h"

namespace hetsched::cli {
namespace {

TEST(SimConfig, ReadsEverySection) {
  auto c = ParseSimConfig(R"(training:
  policy: fifo-het
  scorers: {speed: 1, energy: 0.5}
  preempt_interval: 10m
  elastic: false
services:
  placement: strongest
  interval: 600
  training_value: {a100-80g: 1.5, mi250x: 0}
classes:
  batch: {priority: -1, weight: 0.5}
  training: {weight: 2}
)",
                          "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c->policy, "fifo-het");
  EXPECT_EQ(*c->scorers, "speed:1,energy:0.5");
  EXPECT_DOUBLE_EQ(*c->preempt_interval_s, 600);
  EXPECT_FALSE(*c->elastic);
  EXPECT_EQ(*c->serving, "strongest");
  EXPECT_DOUBLE_EQ(*c->serving_interval_s, 600);
  ASSERT_EQ(c->training_value.size(), 2u);
  EXPECT_DOUBLE_EQ(c->training_value.at("a100-80g").value, 1.5);
  EXPECT_EQ(c->training_value.at("a100-80g").where.line, 9);
  ASSERT_EQ(c->classes.size(), 2u);
  EXPECT_EQ(c->classes.at(model::JobKind::kBatch).priority, -1);
  EXPECT_DOUBLE_EQ(c->classes.at(model::JobKind::kBatch).weight, 0.5);
  EXPECT_DOUBLE_EQ(c->classes.at(model::JobKind::kTraining).weight, 2);

  model::Workload w;
  w.jobs.resize(3);
  w.jobs[0].kind = model::JobKind::kBatch;
  w.jobs[0].priority = 3;
  w.jobs[1].kind = model::JobKind::kTraining;
  w.jobs[2].kind = model::JobKind::kInference;
  ApplyClasses(*c, w);
  EXPECT_EQ(w.jobs[0].priority, 2);
  EXPECT_DOUBLE_EQ(w.jobs[0].priority_weight, 0.5);
  EXPECT_DOUBLE_EQ(w.jobs[1].priority_weight, 2);
  EXPECT_EQ(w.jobs[2].priority, 0);
  EXPECT_DOUBLE_EQ(w.jobs[2].priority_weight, 1);

  EXPECT_TRUE(ParseSimConfig("", "empty.yaml").ok());
}

TEST(SimConfig, BadFieldsAreLocated) {
  const std::pair<const char*, const char*> cases[] = {
      {"training:\n  policy: nope\n", "c.yaml:2:11: training.policy: 'nope' is unknown"},
      {"training:\n  scorer: speed\n",
       "c.yaml:2:3: training.scorer: unknown field (expected one "
       "of: elastic, policy, preempt_interval, scorers)"},
      {"training:\n  scorers: {speed: 1, fast: 2}\n", "c.yaml:2:12: training.scorers:"},
      {"training:\n  preempt_interval: -5\n",
       "c.yaml:2:21: training.preempt_interval: '-5' is not a duration (expected a duration"},
      {"training:\n  elastic: maybe\n",
       "c.yaml:2:12: training.elastic: 'maybe' is not a boolean (expected true or false)"},
      {"services:\n  placement: cheapest\n",
       "c.yaml:2:14: services.placement: 'cheapest' is unknown (expected hetsched, strongest, "
       "static-peak or single:TYPE)"},
      {"services:\n  interval: 5s\n",
       "c.yaml:2:13: services.interval: '5s' is not a duration (expected a "
       "duration from 10 s to 86400 s"},
      {"services:\n  training_value: [a100-80g]\n",
       "c.yaml:2:19: services.training_value: is not a mapping (expected {a100-80g: 1})"},
      {"services:\n  training_value: {a100-80g: -1}\n",
       "c.yaml:2:30: services.training_value.a100-80g: is '-1' (expected a number from 0 to "
       "1000"},
      {"classes:\n  service: {priority: 1}\n",
       "c.yaml:2:3: classes.service: is not a job kind of training work"},
      {"classes:\n  batch: {priority: 1.5}\n",
       "c.yaml:2:21: classes.batch.priority: is '1.5' (expected a whole number"},
      {"classes:\n  batch: {weight: 0}\n",
       "c.yaml:2:19: classes.batch.weight: is '0' (expected a number above 0"},
      {"policy: fifo\n",
       "c.yaml:1:1: policy: unknown field (expected one of: classes, fair_share, services, "
       "tenants, training)"},
      {"tenants:\n  - {name: a, weight: -1}\n", "c.yaml:2:23: tenants[0].weight: "},
      {"fair_share: {half_life: 1h}\n",
       "c.yaml:1:13: fair_share: is given without tenants (expected a tenants: list beside it)"},
      {"training: [\n", "c.yaml:"},
      // A key given twice would say two things and mean one.
      {"training:\n  elastic: true\n  elastic: false\n",
       "c.yaml:3:3: training.elastic: appears twice (first at line 2) (expected each key once)"},
      {"classes:\n  batch: {weight: 2}\n  batch: {weight: 3}\n",
       "c.yaml:3:3: classes.batch: appears twice (first at line 2)"},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    auto c = ParseSimConfig(text, "c.yaml");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), util::StatusCode::kInvalidArgument);
    EXPECT_EQ(c.status().message().rfind(expected, 0), 0u) << c.status().message();
  }
}

TEST(SimConfig, SimulateRunsTheFilesPolicyUnlessAFlagSaysOtherwise) {
  const std::string path = ::testing::TempDir() + "/sim_config_test.yaml";
  ASSERT_TRUE(util::WriteFile(path, "training:\n  policy: fifo-het\n  elastic: false\n").ok());
  const std::string base =
      "simulate -q --cluster examples/clusters/seed-startup.yaml --trace "
      "examples/workloads/small-mixed.yaml --config " +
      path;
  auto r = testing::RunHetsched(base);
  ASSERT_EQ(r.status, 0) << r.out;
  // The table's header names the policy that ran (its padding follows the longest row name).
  EXPECT_TRUE(std::regex_search(r.out, std::regex("metric +fifo-het"))) << r.out;
  r = testing::RunHetsched(base + " --policy las");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("metric +las\\b"))) << r.out;
  r = testing::RunHetsched(
      "simulate -q --cluster examples/clusters/seed-startup.yaml --trace "
      "examples/workloads/small-mixed.yaml --config /no/such.yaml");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--config: /no/such.yaml"), std::string::npos) << r.out;
}

TEST(SimConfig, ATrainingValueNamesADeviceTypeOfTheCluster) {
  const std::string path = ::testing::TempDir() + "/sim_config_types.yaml";
  ASSERT_TRUE(util::WriteFile(path, "services:\n  training_value: {h100-80g: 1}\n").ok());
  auto r = testing::RunHetsched(
      "simulate -q --cluster examples/clusters/seed-startup.yaml --trace "
      "examples/workloads/small-mixed.yaml --config " +
      path);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(path + ":2:20: services.training_value.h100-80g: is not a device type "
                              "of the cluster (expected one of: "),
            std::string::npos)
      << r.out;
}

TEST(SimConfig, TenantsSplitTheClusterAndShowInTheResults) {
  const std::string dir = ::testing::TempDir();
  const std::string config = dir + "/sim_config_tenants.yaml";
  ASSERT_TRUE(util::WriteFile(config,
                              "tenants:\n  - {name: vision, weight: 1}\n"
                              "  - {name: llm, weight: 3}\nfair_share: {reference_type: k80}\n")
                  .ok());
  std::string jobs;
  for (int i = 0; i < 24; ++i) {
    jobs += fmt::format(
        R"({{"name": "j{}", "stacks": ["cuda"], "work": 1e9, "throughput": {{"k80": 1, "v100": 3}}, )"
        R"("tenant": "{}"}})"
        "\n",
        i, i % 2 == 0 ? "vision" : "llm");
  }
  const std::string workload = dir + "/sim_config_tenants.jsonl";
  ASSERT_TRUE(util::WriteFile(workload, jobs).ok());
  const std::string json = dir + "/sim_config_tenants.json";
  auto r = testing::RunHetsched(
      "simulate -q --cluster k80=4,v100=4 --trace " + workload + " --config " + config +
      " --round 360 --restore 0 --checkpoint-save 0 --until 24h --json " + json);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("tenant llm +share 0\\.7"))) << r.out;
  const auto result = nlohmann::json::parse(util::ReadFile(json).value());
  const auto& llm = result.at("tenants").at("llm");
  EXPECT_NEAR(llm.at("normalized_share").get<double>(), 0.75, 0.75 * 0.05) << llm.dump();
  EXPECT_GT(llm.at("device_hours").at("v100-32g").get<double>(), 0);
  for (const char* key : {"avg_jct_s", "borrowed_device_hours", "lent_device_hours"}) {
    EXPECT_TRUE(llm.contains(key)) << key;
  }
}

TEST(SimConfig, AJobOfAnUnknownTenantIsRefusedWithTheKnownNames) {
  const std::string dir = ::testing::TempDir();
  const std::string config = dir + "/sim_config_unknown_tenant.yaml";
  ASSERT_TRUE(util::WriteFile(config, "tenants:\n  - {name: vision}\n  - {name: llm}\n").ok());
  const std::string workload = dir + "/sim_config_unknown_tenant.yaml.jobs.yaml";
  ASSERT_TRUE(util::WriteFile(workload,
                              "jobs:\n  - {name: a, stacks: [cuda], work: 10, tenant: vision}\n"
                              "  - {name: b, stacks: [cuda], work: 10, tenant: research}\n")
                  .ok());
  auto r = testing::RunHetsched("simulate -q --cluster v100=2 --trace " + workload + " --config " +
                                config);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(workload + ":3:5: jobs[1].tenant: 'research' is not a tenant (expected "
                                  "one of vision, llm)"),
            std::string::npos)
      << r.out;
  ASSERT_TRUE(util::WriteFile(config, "tenants:\n  - {name: vision, quota: {v100: 3}}\n").ok());
  r = testing::RunHetsched("simulate -q --cluster v100=2 --trace " + workload + " --config " +
                           config);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("tenant vision: quota.v100: 3 is more than the cluster's 2"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace hetsched::cli
