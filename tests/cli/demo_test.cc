// `hetsched demo` end to end, the --html pages of simulate and plan, and the report checked in a
// real browser: Debian's chromium, headless, loads the demo's report.html; the page's own script
// measures every chart's series; the test reads the verdicts from the dumped DOM and keeps a
// screenshot in <build>/test-artifacts/demo-report.png.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "testing/build_paths.h"
#include "testing/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using hetsched::testing::CliRun;
using hetsched::testing::RunHetsched;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

// A fresh folder under the build tree for one test's output.
fs::path OutDir(const std::string& name) {
  const fs::path dir = fs::path(HETSCHED_BINARY).parent_path() / "test-artifacts" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The row of the demo's table that starts with `label`, or "".
std::string Row(const std::string& out, const std::string& label) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(label)) return line;
  }
  return "";
}

const std::string kSmall = "--workload examples/workloads/small-mixed.yaml";

TEST(DemoCli, SmallWorkloadTableAndReport) {
  const fs::path dir = OutDir("demo-small");
  CliRun r = RunHetsched("demo -q --no-plan " + kSmall + " --out " + dir.string(),
                         hetsched::testing::Stderr::kDrop);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("cluster seed-startup (39 nodes), workload small-mixed"), std::string::npos)
      << r.out;
  for (const char* label : {"GPU/NPU utilization", "CPU utilization", "average JCT", "p99 JCT",
                            "starts failed on incompatible devices", "device-hours wasted on them",
                            "energy", "electricity cost"}) {
    EXPECT_NE(Row(r.out, label), "") << label << "\n" << r.out;
  }
  // hetsched never starts a job on a device whose stack it cannot run: its column reads 0.
  const std::string failed = Row(r.out, "starts failed on incompatible devices");
  EXPECT_TRUE(std::regex_search(failed, std::regex(R"(\s0\s*$)"))) << failed;
  EXPECT_NE(r.out.find("report: " + (dir / "report.html").string()), std::string::npos);
  const std::string html = ReadAll(dir / "report.html");
  for (const char* chart : {"utilization-0", "utilization-1", "gantt-0", "gantt-1", "power",
                            "queue", "cmp-energy", "cmp-compat", "ladder-avg-jct", "ladder-energy",
                            "homogeneous-avg-jct", "homogeneous-energy"}) {
    EXPECT_NE(html.find(std::string("data-chart=\"") + chart + "\""), std::string::npos) << chart;
  }
  EXPECT_EQ(html.find("model-plan-"), std::string::npos);  // --no-plan
}

TEST(DemoCli, PlansTheLargestModelWholeClusterAndNvidiaAlone) {
  const fs::path dir = OutDir("demo-plan");
  CliRun r =
      RunHetsched("demo -q " + kSmall + " --out " + dir.string(), hetsched::testing::Stderr::kDrop);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("NVIDIA servers only (a100-80g)"), std::string::npos) << r.out;
  const std::string used = Row(r.out, "accelerators used");
  // The NVIDIA-only plan uses a100s only; the whole-cluster plan more than one type.
  EXPECT_NE(used.find("mi250x"), std::string::npos) << used;
  EXPECT_TRUE(std::regex_search(used, std::regex(R"(\d+ x a100-80g\s*$)"))) << used;
  const std::string html = ReadAll(dir / "report.html");
  EXPECT_NE(html.find("data-chart=\"model-plan-0\""), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"model-plan-1\""), std::string::npos);
}

TEST(DemoCli, RunsFromAnyDirectoryWithItsDefaults) {
  const fs::path dir = OutDir("demo-default");
  // Not from the source tree: the shipped examples are found through the built-in path.
  const std::string cmd =
      "cd / && " + std::string(HETSCHED_BINARY) + " demo --no-plan --out " + dir.string() + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("workload seed-day"), std::string::npos) << out;
  // Progress lines on stderr, one per step.
  EXPECT_NE(out.find("[1/4] loading"), std::string::npos) << out;
  EXPECT_NE(out.find("[2/4] ablation ladder"), std::string::npos) << out;
  EXPECT_NE(out.find("[4/4] homogeneous contrast"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(dir / "report.html"));
}

const std::vector<std::string> kRungKeys = {"naive",  "stack-filter",     "device-type-choice",
                                            "policy", "power-management", "data-aware-placement"};
const std::vector<std::string> kRungNames = {
    "(1) naive",    "(2) + stack filter",     "(3) + device-type choice",
    "(4) + policy", "(5) + power management", "(6) + data-aware placement"};

// Every run of one ladder is booked to the same horizon, the latest end of them all rounded up
// to a whole second; the ladder
// has its six rungs in order, each with the command that reproduces it.
void ExpectOneLadder(const nlohmann::json& part) {
  const double horizon = part["horizon_s"].get<double>();
  ASSERT_EQ(part["runs"].size(), 6u) << part.dump();
  double latest_end = 0;
  for (const auto& run : part["runs"]) {
    EXPECT_EQ(run["horizon_s"].get<double>(), horizon) << run["name"];
    EXPECT_LE(run["end_s"].get<double>(), horizon) << run["name"];
    EXPECT_TRUE(run.contains("energy_kwh") && run.contains("avg_jct_s") &&
                run.contains("jobs_failed") && run.contains("compat_failures"));
    EXPECT_FALSE(run.contains("timeline"));
    latest_end = std::max(latest_end, run["end_s"].get<double>());
  }
  EXPECT_EQ(std::ceil(latest_end), horizon);  // the latest end, up to a whole second
  const auto& ladder = part["ladder"];
  ASSERT_EQ(ladder.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(ladder[i]["step"], i + 1);
    EXPECT_EQ(ladder[i]["key"], kRungKeys[i]);
    EXPECT_EQ(ladder[i]["name"], kRungNames[i]);
    EXPECT_EQ(ladder[i]["horizon_s"].get<double>(), horizon);
    EXPECT_EQ(ladder[i]["energy_kwh"], part["runs"][i]["energy_kwh"]);
    // The command ends with the horizon, as a number that reads back to the same double.
    const std::string command = ladder[i]["command"].get<std::string>();
    const size_t at = command.rfind("--horizon ");
    ASSERT_NE(at, std::string::npos) << command;
    EXPECT_EQ(std::stod(command.substr(at + 10)), horizon) << command;
    EXPECT_EQ(ladder[i]["change"].is_null(), i == 0);
  }
  EXPECT_NE(ladder[0]["command"].get<std::string>().find(
                "--policy fifo --ignore-compat --placement agnostic --power always-on"),
            std::string::npos);
  EXPECT_NE(ladder[5]["command"].get<std::string>().find(
                "--policy default --placement topology --power consolidate"),
            std::string::npos);
  // The verdict follows from the ladder.
  const bool nothing = part["mixed_hardware_pieces_buy_nothing"].get<bool>();
  EXPECT_EQ(part["verdict"].get<std::string>().find("does not need a heterogeneous scheduler") !=
                std::string::npos,
            nothing);
  EXPECT_EQ(nothing, ladder[1]["changed"].empty() && ladder[2]["changed"].empty());
}

TEST(DemoCli, JsonHasOneHorizonTheLadderAndThePlans) {
  const fs::path dir = OutDir("demo-json");
  const fs::path json = dir / "demo.json";
  CliRun r =
      RunHetsched("demo -q " + kSmall + " --out " + dir.string() + " --json " + json.string(),
                  hetsched::testing::Stderr::kDrop);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("json: " + json.string()), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(ReadAll(json));
  ExpectOneLadder(j);
  EXPECT_EQ(j["baseline"], "naive");
  EXPECT_EQ(j["hetsched"], "data-aware-placement");
  EXPECT_EQ(j["workload"]["jobs"], 12);
  ASSERT_TRUE(j["homogeneous"].is_object());
  ExpectOneLadder(j["homogeneous"]);
  EXPECT_EQ(j["homogeneous"]["cluster"]["name"], "homogeneous-3gpu");
  // On three identical GPUs with CUDA jobs the pieces for mixed hardware change nothing.
  EXPECT_TRUE(j["homogeneous"]["mixed_hardware_pieces_buy_nothing"].get<bool>())
      << j["homogeneous"]["ladder"].dump(2);
  // The plans say which stacks their stages use; the whole cluster's crosses them.
  ASSERT_EQ(j["plans"].size(), 2u);
  const auto& whole = j["plans"][0];
  EXPECT_EQ(whole["scope"], "whole cluster");
  EXPECT_TRUE(whole["fits"].get<bool>());
  EXPECT_TRUE(whole["crosses_stacks"].get<bool>());
  const auto stacks = whole["stacks"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(stacks.begin(), stacks.end(), "CUDA"), stacks.end());
  EXPECT_NE(std::find(stacks.begin(), stacks.end(), "ROCm"), stacks.end());
  const auto& nvidia = j["plans"][1];
  EXPECT_EQ(nvidia["stacks"], nlohmann::json({"CUDA"}));
  EXPECT_FALSE(nvidia["crosses_stacks"].get<bool>());
  EXPECT_NE(j["plan_notes"]["crosses_stacks"].get<std::string>().find("activations"),
            std::string::npos);
  // The printed plan table says it too.
  EXPECT_NE(Row(r.out, "one pipeline across stacks").find("yes"), std::string::npos) << r.out;
}

TEST(DemoCli, EachRungIsReproducedBySimulate) {
  const fs::path dir = OutDir("demo-rungs");
  const fs::path json = dir / "demo.json";
  ASSERT_EQ(RunHetsched("demo -q --no-plan --no-homogeneous " + kSmall + " --out " + dir.string() +
                            " --json " + json.string(),
                        hetsched::testing::Stderr::kDrop)
                .status,
            0);
  const nlohmann::json j = nlohmann::json::parse(ReadAll(json));
  EXPECT_TRUE(j["homogeneous"].is_null());
  EXPECT_TRUE(j["plans"].empty());
  for (size_t i : {0u, 2u, 5u}) {
    const auto& rung = j["ladder"][i];
    std::string command = rung["command"].get<std::string>();
    ASSERT_TRUE(command.starts_with("hetsched simulate ")) << command;
    const fs::path out = dir / ("rung" + std::to_string(i) + ".json");
    CliRun r = RunHetsched(command.substr(9) + " -q --json " + out.string());
    ASSERT_EQ(r.status, 0) << command << "\n" << r.out;
    const nlohmann::json s = nlohmann::json::parse(ReadAll(out));
    EXPECT_EQ(s["horizon_s"], rung["horizon_s"]) << command;
    EXPECT_EQ(s["avg_jct_s"], rung["avg_jct_s"]) << command;
    EXPECT_EQ(s["energy_kwh"], rung["energy_kwh"]) << command;
    EXPECT_EQ(s["compat_failures"], rung["compat_failures"]) << command;
  }
}

TEST(DemoCli, BadInputIsExitStatus2) {
  CliRun r = RunHetsched("demo --cluster no-such-cluster.yaml --no-plan -q");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no-such-cluster.yaml"), std::string::npos) << r.out;
  r = RunHetsched("demo --workload examples/clusters/seed-startup.yaml --no-plan -q");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("seed-startup.yaml"), std::string::npos) << r.out;
}

TEST(HtmlFlag, SimulateWritesAReport) {
  const fs::path dir = OutDir("simulate-html");
  CliRun r = RunHetsched(
      "simulate -q --cluster examples/clusters/seed-startup.yaml --trace "
      "examples/workloads/small-mixed.yaml --html " +
      (dir / "sim.html").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string html = ReadAll(dir / "sim.html");
  for (const char* chart : {"utilization-0", "gantt-0", "power", "queue"}) {
    EXPECT_NE(html.find(std::string("data-chart=\"") + chart + "\""), std::string::npos) << chart;
  }
  EXPECT_EQ(html.find("cmp-"), std::string::npos);  // one run: nothing to compare
}

TEST(HtmlFlag, PlanModelWritesAReport) {
  const fs::path dir = OutDir("plan-html");
  CliRun r = RunHetsched("plan model llama-7b --cluster a100-80g=16:per_node=8 --html " +
                         (dir / "plan.html").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string html = ReadAll(dir / "plan.html");
  EXPECT_NE(html.find("data-chart=\"model-plan\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"stage 0\""), std::string::npos);
}

TEST(HtmlFlag, PlanDagWritesAGanttPerAlgorithm) {
  const fs::path dir = OutDir("dag-html");
  CliRun r = RunHetsched(
      "plan dag data/dag/topcuoglu2002.json --algo all --max-nodes 100000 --iterations 2000 "
      "--html " +
      (dir / "dag.html").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string html = ReadAll(dir / "dag.html");
  for (const char* algo : {"heft", "cpop", "peft", "best", "exact"}) {
    EXPECT_NE(html.find(std::string("data-chart=\"dag-") + algo + "\""), std::string::npos) << algo;
  }
  // The sample has 10 tasks: each chart has a bar per task.
  EXPECT_EQ(Count(html, "<title>n1: "), 5);
}

TEST(HtmlFlag, UnwritablePathIsAnError) {
  CliRun r = RunHetsched("plan model llama-7b --cluster a100-80g=16:per_node=8 --html /proc/x/y");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("/proc/x/y"), std::string::npos) << r.out;
}

// The first of chromium / chromium-browser / google-chrome on PATH, or "".
std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string probe = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return name;
  }
  return "";
}

std::string Capture(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  return out;
}

TEST(DemoBrowser, EveryChartOfTheReportRendersInChromium) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed, so the HTML report was NOT checked in a browser "
                    "(install it with scripts/install-deps.sh or apt-get install chromium)";
  }
  // The real demo report: default cluster and workload, both plans.
  const fs::path dir = OutDir("demo-browser");
  CliRun r = RunHetsched("demo -q --out " + dir.string(), hetsched::testing::Stderr::kDrop);
  ASSERT_EQ(r.status, 0) << r.out;
  const fs::path page = dir / "report.html";
  const std::string html = ReadAll(page);
  const int charts = Count(html, "data-chart=\"");
  ASSERT_GE(charts, 14);  // 8 comparison bars, 2 utilization, 2 Gantt, power, queue, plans

  const std::string flags =
      " --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--user-data-dir=" +
      (dir / "profile").string() + " ";
  const std::string dom =
      Capture(chromium + flags + "--virtual-time-budget=10000 --dump-dom file://" + page.string() +
              " 2>/dev/null");
  ASSERT_NE(dom.find("id=\"render-check\""), std::string::npos) << "chromium printed no DOM";
  EXPECT_NE(dom.find("id=\"render-check\" data-status=\"ok\""), std::string::npos)
      << dom.substr(dom.find("render-check"), 3000);
  // One verdict per chart, each "ok": every series drew something with a non-empty box.
  std::smatch m;
  const std::regex verdict(
      R"(chart ([\w-]+): (\d+) series, (\d+) rendered, (\d+) empty: (ok|no data|FAIL[^\n<]*))");
  int seen = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), verdict);
       it != std::sregex_iterator(); ++it) {
    ++seen;
    const std::smatch& v = *it;
    EXPECT_EQ(v[5].str(), "ok") << v[0].str();
    EXPECT_GT(std::stoi(v[3].str()), 0) << v[0].str();
    EXPECT_EQ(std::stoi(v[3].str()) + std::stoi(v[4].str()), std::stoi(v[2].str())) << v[0].str();
  }
  EXPECT_EQ(seen, charts);

  // The screenshot is kept as an artifact next to the test binaries.
  const fs::path shot =
      fs::path(HETSCHED_BINARY).parent_path() / "test-artifacts" / "demo-report.png";
  fs::remove(shot);
  Capture(chromium + flags + "--window-size=1400,7000 --screenshot=" + shot.string() + " file://" +
          page.string() + " 2>&1");
  ASSERT_TRUE(fs::exists(shot)) << "no screenshot at " << shot;
  EXPECT_GT(fs::file_size(shot), 50'000u);  // a real page, not a blank one
  const std::string png = ReadAll(shot);
  EXPECT_TRUE(png.starts_with("\x89PNG")) << "not a PNG";
}

}  // namespace
