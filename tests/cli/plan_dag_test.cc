// `hetsched plan dag` and `hetsched gen-dag` end to end: output, JSON, exit statuses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_runner.h"

namespace {

using hetsched::testing::CliRun;

// `stderr_too` folds stderr into the output.
CliRun Hetsched(const std::string& args, bool stderr_too = false) {
  return hetsched::testing::RunHetsched(
      args, stderr_too ? hetsched::testing::Stderr::kMerge : hetsched::testing::Stderr::kDrop);
}

const std::string kSample = std::string(HETSCHED_SOURCE_DIR) + "/data/dag/topcuoglu2002.json";
const std::string kBad = std::string(HETSCHED_SOURCE_DIR) + "/tests/data/dag/";

TEST(PlanDagCli, TableShowsScheduleMakespanSpeedupAndSlr) {
  CliRun r = Hetsched("plan dag " + kSample);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("makespan: 80"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("speedup: 1.587"), std::string::npos) << r.out;  // 127 / 80
  EXPECT_NE(r.out.find("SLR: "), std::string::npos);
  EXPECT_NE(r.out.find("n10   P2            73      80"), std::string::npos) << r.out;
}

TEST(PlanDagCli, JsonForOneAlgorithmAndForAll) {
  CliRun r = Hetsched("plan dag " + kSample + " --algo cpop --json");
  ASSERT_EQ(r.status, 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["algo"], "cpop");
  EXPECT_EQ(j["makespan"], 86.0);
  ASSERT_EQ(j["schedule"].size(), 10u);
  EXPECT_TRUE(j["schedule"][0].contains("processor"));

  r = Hetsched("plan dag " + kSample + " --algo all --json --iterations 200");
  ASSERT_EQ(r.status, 0);
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 5u);
  const double exact = j["results"][4]["makespan"];
  EXPECT_TRUE(j["results"][4]["optimal"].get<bool>());
  for (const auto& run : j["results"]) EXPECT_LE(exact, run["makespan"].get<double>() + 1e-9);
}

TEST(PlanDagCli, BadInputExitsWithTwoAndPointsAtTheValue) {
  CliRun r = Hetsched("plan dag " + kBad + "negative_cost.json", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("negative_cost.json:8:41: tasks[3].cost.P2:"), std::string::npos) << r.out;
  for (const char* f : {"cycle.json", "unknown_task.json", "non_numeric_cost.json",
                        "nobody_can_run.json", "empty.json", "syntax_error.json", "missing.json"}) {
    EXPECT_EQ(Hetsched("plan dag " + kBad + f).status, 2) << f;
  }
  EXPECT_EQ(Hetsched("plan dag " + kSample + " --algo fastest").status, 2);
  EXPECT_EQ(Hetsched("plan dag " + kBad + "example.stg").status, 2);  // no --procs
  EXPECT_EQ(Hetsched("plan dag " + kBad + "example.stg --procs 2").status, 0);
}

TEST(PlanDagCli, GenDagWritesAGraphPlanDagReads) {
  const std::string path = ::testing::TempDir() + "/gen_dag_cli.json";
  CliRun r =
      Hetsched("gen-dag --tasks 40 --ccr 2 --alpha 1 --beta 0.5 --procs 3 --seed 9 -o " + path);
  ASSERT_EQ(r.status, 0);
  r = Hetsched("plan dag " + path + " --algo peft --json");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["schedule"].size(), 40u);
  EXPECT_EQ(Hetsched("gen-dag --tasks 10 --beta 2").status, 2);
}

}  // namespace
