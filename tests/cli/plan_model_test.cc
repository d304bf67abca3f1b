// `hetsched plan model` end to end: exit statuses and messages for good and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/build_paths.h"
#include "testing/cli_runner.h"

namespace {

using hetsched::testing::CliRun;

CliRun Hetsched(const std::string& args) { return hetsched::testing::RunHetsched(args); }

const std::string kGpus = "--cluster a100-80g=16:per_node=8";

TEST(PlanModelCli, PlansAPreset) {
  CliRun r = Hetsched("plan model llama-7b " + kGpus);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Step time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a100-80g"), std::string::npos);
}

TEST(PlanModelCli, JsonHasStagesAndLinks) {
  CliRun r = Hetsched("plan model llama-13b --batch 256 --json " + kGpus);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["stages"].empty());
  EXPECT_GT(j["tokens_per_s"].get<double>(), 0);
  EXPECT_EQ(j["global_batch"].get<int>(), 256);
  EXPECT_TRUE(j["stages"][0].contains("memory_per_device"));
}

TEST(PlanModelCli, LayerFile) {
  CliRun r = Hetsched("plan model " + std::string(HETSCHED_SOURCE_DIR) +
                      "/examples/models/gpt-1.3b.yaml " + kGpus);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("gpt-1.3b"), std::string::npos);
}

TEST(PlanModelCli, TooBigSaysWhy) {
  CliRun r = Hetsched("plan model gpt3-175b --cluster a100-80g=8:per_node=8");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("does not fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("needs at least"), std::string::npos) << r.out;
}

TEST(PlanModelCli, MaxModel) {
  CliRun r = Hetsched("plan model --max-model llama " + kGpus);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Largest llama preset"), std::string::npos) << r.out;
}

TEST(PlanModelCli, BadInputExitsTwo) {
  struct Case {
    std::string args, expected;
  };
  const Case cases[] = {
      {"plan model llama-9b " + kGpus,
       "unknown model 'llama-9b' (known: llama-7b, llama-13b, llama-70b, gpt3-175b, llama-405b)"},
      {"plan model llama-7b --batch 0 " + kGpus, "--batch must be at least 1"},
      {"plan model " + std::string(HETSCHED_SOURCE_DIR) + "/tests/data/models/bad_layer.yaml " +
           kGpus,
       "bad_layer.yaml:8:23: layers[0].activation_bytes:"},
      {"plan model llama-7b --cluster xeon-8380=4:per_node=2", "has no accelerator"},
      {"plan model llama-7b --only-type mi250x " + kGpus, "has no accelerator of type 'mi250x'"},
      {"plan model --max-model bert " + kGpus, "unknown model family 'bert'"},
      {"plan model /nonexistent/m.yaml " + kGpus, "/nonexistent/m.yaml"},
  };
  for (const Case& c : cases) {
    CliRun r = Hetsched(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << c.args << "\n" << r.out;
  }
}

}  // namespace
