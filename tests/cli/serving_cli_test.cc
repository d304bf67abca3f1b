// `hetsched plan service` and `simulate` with services, end to end: the check against the
// shipped measurements, sizing, the JSON fields, and bad input with exit status 2.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_runner.h"

namespace {

using hetsched::testing::CliRun;

CliRun Hetsched(const std::string& args) { return hetsched::testing::RunHetsched(args); }

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/serving_cli_test_" + name;
  std::ofstream(path) << text;
  return path;
}

// `simulate --quiet` of workload `trace` on eight A100s with `flags`.
CliRun Simulate(const std::string& trace, const std::string& flags) {
  return Hetsched("simulate --cluster a100-80g=8:per_node=4 --trace " + trace + " --quiet " +
                  flags);
}

// Simulate(trace, flags) writing its --json to a file named after `name`: the parsed result,
// or null (and a failed expectation) when the run fails.
nlohmann::json SimulateJson(const std::string& trace, const std::string& flags,
                            const std::string& name) {
  const std::string json = ::testing::TempDir() + "/serving_cli_test_" + name + ".json";
  const CliRun r = Simulate(trace, flags + " --json " + json);
  EXPECT_EQ(r.status, 0) << r.out;
  if (r.status != 0) return nullptr;
  std::ifstream in(json);
  return nlohmann::json::parse(in);
}

TEST(PlanServiceCli, CheckFitsBothMeasuredTypesWithinTheirErrors) {
  CliRun r = Hetsched("plan service --check --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["calibration"].contains("a100-80g"));
  ASSERT_TRUE(j["calibration"].contains("h100-80g"));
  ASSERT_EQ(j["errors"].size(), 6u);  // Llama 2 70B on two types at tp 2, 4, 8
  for (const auto& e : j["errors"]) {
    // The fit is closer than the bare roofline, and decode within 10 %.
    EXPECT_LT(e["tpot_error_fitted_pct"].get<double>(), 10) << e.dump();
    EXPECT_LT(e["tpot_error_fitted_pct"].get<double>(), e["tpot_error_roofline_pct"].get<double>());
    EXPECT_LT(e["ttft_error_fitted_pct"].get<double>(), e["ttft_error_roofline_pct"].get<double>());
  }
}

TEST(PlanServiceCli, SizesReplicasAndSaysWhyATypeCannot) {
  CliRun r = Hetsched("plan service llama-70b");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("no (tp 8: the weights (138 GB) do not fit in 8 x 13 GB)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fitted to 315 measurements on a100-80gb"), std::string::npos);
  CliRun bad = Hetsched("plan service llama-70b --tpot fast");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--tpot: 'fast' (expected a positive duration such as 100ms)"),
            std::string::npos)
      << bad.out;
}

// A workload of one service at 2 requests/s all day.
constexpr const char* kChat = R"(
jobs:
  - name: chat
    kind: service
    model: llama-7b
    stacks: [cuda]
    rate: [[0h, 2]]
    tokens: {input: 500, output: 50}
)";

TEST(SimulateServingCli, ReportsAttainmentCostAndLending) {
  const std::string w = Write("w.yaml", std::string(kChat) + R"(  - name: train
    stacks: [cuda]
    throughput: {a100-80g: 1}
    work: 3600
)");
  const std::string json = ::testing::TempDir() + "/serving_cli_test_out.json";
  CliRun r = Simulate(w, "--json " + json);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("service chat"), std::string::npos) << r.out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  EXPECT_GT(j["slo_attainment"].get<double>(), 0.99);
  EXPECT_GT(j["serving_cost_usd"].get<double>(), 0);
  EXPECT_GT(j["serving_energy_kwh"].get<double>(), 0);
  EXPECT_TRUE(j.contains("lent_device_hours"));
  EXPECT_EQ(j["serving"]["mode"], "hetsched");
  EXPECT_EQ(j["jobs_completed"].get<int>(), 1);

  // The report's runs are labelled with the training job's name (their ids skip services).
  const std::string html = ::testing::TempDir() + "/serving_cli_test_out.html";
  CliRun h = Simulate(w, "--html " + html);
  ASSERT_EQ(h.status, 0) << h.out;
  std::ifstream page(html);
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("train: 1 x a100-80g"), std::string::npos);
  EXPECT_EQ(text.find("chat: 1 x a100-80g"), std::string::npos);

  CliRun bad = Simulate(w, "--serving biggest");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--serving"), std::string::npos) << bad.out;
}

// --serving single:TYPE: every replica on TYPE; a type the cluster lacks is refused.
TEST(SimulateServingCli, ASingleTypeBaselineAndATypeTheClusterLacks) {
  const std::string w = Write("single.yaml", kChat);
  const auto j = SimulateJson(w, "--serving single:a100-80g --serving-horizon 900", "single");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["serving"]["mode"], "single:a100-80g");
  EXPECT_EQ(j["serving"]["plans"]["solved"].get<int>(), 3) << j["serving"];
  CliRun bad = Simulate(w, "--serving single:mi250x");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--serving: single:mi250x: the cluster has no device of type mi250x "
                         "(its types: a100-80g)"),
            std::string::npos)
      << bad.out;
}

// --serving-horizon: the service takes requests over that span instead of a day.
TEST(SimulateServingCli, AServingHorizonBoundsTheRequests) {
  const std::string w = Write("horizon.yaml", kChat);
  const auto j = SimulateJson(w, "--serving-horizon 600", "horizon");
  ASSERT_FALSE(j.is_null());
  // 2 requests/s for 600 s (Poisson arrivals): about 1200, not a day's 172800.
  EXPECT_GT(j["serving"]["requests"].get<int>(), 1000) << j["serving"];
  EXPECT_LT(j["serving"]["requests"].get<int>(), 1400) << j["serving"];
  CliRun bad = Simulate(w, "--serving-horizon 0");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--serving-horizon"), std::string::npos) << bad.out;
}

// --serving-risk-share: a share of the error budget; each service reports what its requests
// earned (1 % of them at p99) and what its plans put at risk (nothing on one type).
TEST(SimulateServingCli, EachServiceReportsItsErrorBudgetAndTheShareIsChecked) {
  const std::string w = Write("risk.yaml", kChat);
  const auto j = SimulateJson(w, "--serving-horizon 600 --serving-risk-share 0.25", "risk");
  ASSERT_FALSE(j.is_null());
  const auto& chat = j["serving"]["services"][0];
  EXPECT_DOUBLE_EQ(chat["error_budget"]["earned"].get<double>(),
                   chat["requests"].get<double>() / 100)
      << chat;
  EXPECT_DOUBLE_EQ(chat["error_budget"]["spent"].get<double>(), 0) << chat;
  EXPECT_EQ(j["serving"]["plans"]["risk_left"].get<int>(), 0) << j["serving"]["plans"];
  CliRun bad = Simulate(w, "--serving-risk-share 1.5");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--serving-risk-share: Value 1.5 not in range"), std::string::npos)
      << bad.out;
}

TEST(SimulateServingCli, AnSloNoTypeMeetsExitsWithTheLine) {
  const std::string w = Write("slo.yaml", R"(
jobs:
  - name: chat
    kind: service
    model: llama-70b
    stacks: [cuda]
    slo: {ttft: 2s, tpot: 1ms}
    rate: [[0h, 1]]
    tokens: {input: 500, output: 50}
)");
  CliRun r = Simulate(w, "");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(w + ":3:5: jobs[0]: service 'chat': no device type meets its SLO"),
            std::string::npos)
      << r.out;
}

}  // namespace
