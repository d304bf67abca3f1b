// `hetsched plan dag` and `hetsched gen-dag` end to end: output, JSON, exit statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "testing/build_paths.h"
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
  EXPECT_TRUE(j["results"][4]["proved_optimal"].get<bool>());
  EXPECT_EQ(j["results"][4]["lower_bound"], 73.0);
  EXPECT_TRUE(j["results"][4]["stopped_by"].is_null());
  EXPECT_TRUE(j["results"][3].contains("proved_optimal"));  // best
  EXPECT_TRUE(j["results"][3].contains("lower_bound"));
  EXPECT_FALSE(j["results"][0].contains("proved_optimal"));  // heft proves nothing
  for (const auto& run : j["results"]) EXPECT_LE(exact, run["makespan"].get<double>() + 1e-9);
}

// A graph `exact` cannot prove in a fraction of a second (60 tasks, transfers ten times the
// costs): every search returns within its time limit with the best schedule found so far.
TEST(PlanDagCli, TimeLimitEndsExactAndBestWithAValidScheduleAndABound) {
  const std::string path = ::testing::TempDir() + "/plan_dag_hard.json";
  ASSERT_EQ(Hetsched("gen-dag --tasks 60 --ccr 10 --procs 4 --seed 3 -o " + path).status, 0);
  CliRun r = Hetsched("plan dag " + path + " --algo exact --time-limit 0.3 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["proved_optimal"].get<bool>());
  EXPECT_EQ(j["stopped_by"], "time limit");
  EXPECT_EQ(j["schedule"].size(), 60u);
  EXPECT_GT(j["lower_bound"].get<double>(), 0);
  EXPECT_LT(j["lower_bound"].get<double>(), j["makespan"].get<double>());

  // --algo all: each search gets its own limit, and the text says what was and was not proved.
  r = Hetsched("plan dag " + path + " --algo all --time-limit 0.3");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("lower bound"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOT proved optimal: the time limit (0.3 s) ran out"), std::string::npos)
      << r.out;
  r = Hetsched("plan dag " + path + " --algo best --time-limit 0.3");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("not proved optimal: time limit (0.3 s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower bound: "), std::string::npos) << r.out;
}

TEST(PlanDagCli, ExactProvesTheSampleAndSaysSo) {
  CliRun r = Hetsched("plan dag " + kSample + " --algo exact");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("lower bound: 73 (proved optimal)"), std::string::npos) << r.out;
  r = Hetsched("plan dag " + kSample + " --algo exact --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["proved_optimal"].get<bool>());
  EXPECT_EQ(j["lower_bound"], 73.0);
  EXPECT_EQ(j["makespan"], 73.0);
}

TEST(PlanDagCli, BadLimitsExitWithTwoAndNameTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--time-limit -1", "--time-limit -1: expected a number of seconds > 0"},
      {"--time-limit 0", "--time-limit 0: expected a number of seconds > 0"},
      {"--time-limit 1e9", "--time-limit 1e+09: expected a number of seconds > 0 and <= 1e+06"},
      {"--max-nodes -5", "--max-nodes -5: expected a whole number >= 0"},
      {"--iterations -3", "--iterations -3: expected a whole number >= 0"},
      {"--procs -2", "--procs -2: expected a whole number >= 1"},
  };
  for (const auto& [flag, message] : cases) {
    CliRun r = Hetsched("plan dag " + kSample + " --algo exact " + flag, true);
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_NE(r.out.find(message), std::string::npos) << flag << ": " << r.out;
  }
  EXPECT_EQ(Hetsched("plan dag " + kSample + " --time-limit soon").status, 2);
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

// --cluster: the processors are the cluster's devices (node/index), costs are keyed by device
// type or device name, and a transfer takes latency + bytes / bottleneck bandwidth along the
// topology path (docs/dag-format.md, docs/cluster-format.md).
class PlanDagClusterCli : public ::testing::Test {
 protected:
  // Rack ra: node a with two A100s in an NVLink island (100 GB/s, 1 us) and one L40S outside it
  // (host link 20 GB/s, 2 us). Rack rb: node b with one L40S. NICs 10 GB/s, 5 us; rack uplinks
  // 100 GB/s, 1 us; core 3 us. So a/0 -> a/1 runs over the island, a/0 -> a/2 over the host
  // link, and a/0 -> b/0 over the NICs (the bottleneck) through both racks and the core.
  void SetUp() override {
    dir_ = ::testing::TempDir();
    cluster_ = dir_ + "/plan_dag_cluster.yaml";
    std::ofstream(cluster_) << R"(name: two-racks
network: {core_latency: 3us}
racks:
  - {name: ra, uplink_bandwidth: 100GB/s, latency: 1us}
  - {name: rb, uplink_bandwidth: 100GB/s, latency: 1us}
nodes:
  - name: a
    rack: ra
    devices: [{type: a100-80g, count: 2}, {type: l40s, count: 1}]
    islands: [{kind: nvlink, members: [0, 1], bandwidth: 100GB/s, latency: 1us}]
    host_link: {bandwidth: 20GB/s, latency: 2us}
    nic: {bandwidth: 10GB/s, latency: 5us}
  - name: b
    rack: rb
    devices: [{type: l40s, count: 1}]
    nic: {bandwidth: 10GB/s, latency: 5us}
)";
  }

  // Writes a two-task DAG: `src` runs only on a/0 (1 s), `dst` only on `dst_on` (2 s), and
  // src sends 1 GB to dst.
  std::string PairDag(const std::string& dst_on) {
    const std::string path =
        dir_ + "/plan_dag_pair_" + dst_on.substr(0, 1) + dst_on.substr(dst_on.size() - 1) + ".json";
    std::ofstream(path) << R"({"tasks": [{"id": "src", "cost": {"a/0": 1}},
                                        {"id": "dst", "cost": {")"
                        << dst_on << R"(": 2}}],
                              "edges": [{"from": "src", "to": "dst", "bytes": "1GB"}]})";
    return path;
  }

  // The planned start of `dst` after src finishes at 1 s.
  double DstStart(const std::string& dst_on) {
    CliRun r = Hetsched("plan dag " + PairDag(dst_on) + " --cluster " + cluster_ + " --json");
    EXPECT_EQ(r.status, 0) << r.out;
    if (r.status != 0) return NAN;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const auto& row : j["schedule"]) {
      if (row["task"] == "dst") {
        EXPECT_EQ(row["processor"], dst_on);
        EXPECT_NEAR(row["finish"].get<double>() - row["start"].get<double>(), 2.0, 1e-12);
        return row["start"].get<double>();
      }
    }
    ADD_FAILURE() << "no dst in " << r.out;
    return NAN;
  }

  std::string dir_, cluster_;
};

TEST_F(PlanDagClusterCli, TransfersFollowTheTopology) {
  // 1 GB over the island: 1 us + 1e9 / 100e9 s.
  EXPECT_NEAR(DstStart("a/1"), 1 + 1e-6 + 0.01, 1e-9);
  // Same node, outside the island: the host link, 2 us + 1e9 / 20e9 s.
  EXPECT_NEAR(DstStart("a/2"), 1 + 2e-6 + 0.05, 1e-9);
  // Different racks: both NICs (5 us each), both racks (1 us each) and the core (3 us); the
  // 10 GB/s NICs are the bottleneck.
  EXPECT_NEAR(DstStart("b/0"), 1 + 15e-6 + 0.1, 1e-9);
}

TEST_F(PlanDagClusterCli, ScheduleIsValidOnTheClustersDevices) {
  // A fork-join of type-keyed costs: the A100s are faster, the L40S run only `side`.
  const std::string dag = dir_ + "/plan_dag_fork.json";
  std::ofstream(dag) << R"({"tasks": [
      {"id": "load",  "cost": {"a100-80g": 1, "l40s": 2}},
      {"id": "left",  "cost": {"a100-80g": 4, "l40s": 8}},
      {"id": "right", "cost": {"a100-80g": 4, "l40s": 8}},
      {"id": "side",  "cost": {"l40s": 3}},
      {"id": "join",  "cost": {"a100-80g": 1, "l40s": 2}}],
    "edges": [{"from": "load", "to": "left", "bytes": "2GB"},
              {"from": "load", "to": "right", "bytes": "2GB"},
              {"from": "load", "to": "side"},
              {"from": "left", "to": "join", "bytes": "1GB"},
              {"from": "right", "to": "join", "bytes": "1GB"},
              {"from": "side", "to": "join"}]})";
  const std::map<std::string, std::string> type_of = {
      {"a/0", "a100-80g"}, {"a/1", "a100-80g"}, {"a/2", "l40s"}, {"b/0", "l40s"}};
  const std::map<std::string, std::map<std::string, double>> cost = {
      {"load", {{"a100-80g", 1}, {"l40s", 2}}},
      {"left", {{"a100-80g", 4}, {"l40s", 8}}},
      {"right", {{"a100-80g", 4}, {"l40s", 8}}},
      {"side", {{"l40s", 3}}},
      {"join", {{"a100-80g", 1}, {"l40s", 2}}}};
  for (const char* algo : {"heft", "cpop", "peft", "best", "exact"}) {
    CliRun r = Hetsched("plan dag " + dag + " --cluster " + cluster_ + " --json --algo " + algo);
    ASSERT_EQ(r.status, 0) << algo << ": " << r.out;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["schedule"].size(), 5u) << algo;
    std::map<std::string, nlohmann::json> row;
    double makespan = 0;
    for (const auto& x : j["schedule"]) {
      const std::string task = x["task"], proc = x["processor"];
      ASSERT_TRUE(type_of.count(proc)) << algo << ": " << proc << " is not a device of the cluster";
      const auto& c = cost.at(task);
      ASSERT_TRUE(c.count(type_of.at(proc))) << algo << ": " << task << " cannot run on " << proc;
      EXPECT_NEAR(x["finish"].get<double>() - x["start"].get<double>(), c.at(type_of.at(proc)),
                  1e-9)
          << algo << " " << task;
      makespan = std::max(makespan, x["finish"].get<double>());
      row[task] = x;
    }
    EXPECT_NEAR(j["makespan"].get<double>(), makespan, 1e-9) << algo;
    // Precedence: a child starts after its parent finishes (plus the transfer between devices).
    for (const auto& [parent, child] :
         std::vector<std::pair<std::string, std::string>>{{"load", "left"},
                                                          {"load", "right"},
                                                          {"load", "side"},
                                                          {"left", "join"},
                                                          {"right", "join"},
                                                          {"side", "join"}}) {
      EXPECT_GE(row[child]["start"].get<double>(), row[parent]["finish"].get<double>() - 1e-12)
          << algo << ": " << parent << " -> " << child;
    }
    // No overlap on a device.
    std::map<std::string, std::vector<std::pair<double, double>>> busy;
    for (const auto& [task, x] : row) {
      busy[x["processor"]].push_back({x["start"].get<double>(), x["finish"].get<double>()});
    }
    for (auto& [proc, spans] : busy) {
      std::sort(spans.begin(), spans.end());
      for (size_t k = 1; k < spans.size(); ++k) {
        EXPECT_GE(spans[k].first, spans[k - 1].second - 1e-12) << algo << " on " << proc;
      }
    }
  }
  // The text output names the cluster's four devices as the processors.
  CliRun r = Hetsched("plan dag " + dag + " --cluster " + cluster_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("5 tasks, 6 edges, 4 processors"), std::string::npos) << r.out;
}

TEST_F(PlanDagClusterCli, BadClusterOrUnrunnableTaskExitsWithTwo) {
  const std::string dag = PairDag("a/1");
  CliRun r = Hetsched("plan dag " + dag + " --cluster " + dir_ + "/no-such-cluster.yaml", true);
  EXPECT_EQ(r.status, 2) << r.out;
  // A task keyed only by a device type the cluster does not have: no processor can run it.
  const std::string tpu = dir_ + "/plan_dag_tpu.json";
  std::ofstream(tpu) << R"({"tasks": [{"id": "t", "cost": {"tpu-v5e": 1}}], "edges": []})";
  r = Hetsched("plan dag " + tpu + " --cluster " + cluster_, true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("plan_dag_tpu.json:"), std::string::npos) << r.out;
}

}  // namespace
