#include "power/cap_curve.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "model/io/device_type_reader.h"
#include "power/power_manager.h"
#include "testing/build_paths.h"

namespace hetsched::power {
namespace {

// Recomputes the fit from the CSV: per workload, ratios to the values at the maximum limit,
// averaged per limit. Returns limit -> (throughput, power).
std::map<int, std::pair<double, double>> FitFromCsv(const std::string& gpu) {
  std::ifstream in(std::string(HETSCHED_SOURCE_DIR) + "/data/zeus/summary_power_" + gpu + ".csv");
  EXPECT_TRUE(in.good()) << gpu;
  std::string line;
  std::getline(in, line);  // header
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::map<int, std::pair<double, double>>> runs;
  int max_limit = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string f[7];
    for (auto& x : f) std::getline(ss, x, ',');
    const int limit = std::stoi(f[4]);
    max_limit = std::max(max_limit, limit);
    runs[{f[0], f[1], f[2], f[3]}][limit] = {std::stod(f[5]), std::stod(f[6])};
  }
  std::map<int, std::tuple<double, double, int>> sums;
  for (const auto& [key, by_limit] : runs) {
    const auto top = by_limit.find(max_limit);
    if (top == by_limit.end()) continue;
    for (const auto& [limit, tp] : by_limit) {
      auto& [thr, pow, n] = sums[limit];
      thr += top->second.first / tp.first;
      pow += tp.second / top->second.second;
      ++n;
    }
  }
  std::map<int, std::pair<double, double>> out;
  for (const auto& [limit, s] : sums) {
    const auto& [thr, pow, n] = s;
    out[limit] = {thr / n, pow / n};
  }
  return out;
}

TEST(CapCurve, FittedPointsMatchTheZeusCsvs) {
  const std::map<std::string, int> max_limit = {
      {"v100", 250}, {"a40", 300}, {"p100", 250}, {"rtx6000", 260}};
  for (const auto& [gpu, top] : max_limit) {
    const auto fit = FitFromCsv(gpu);
    const CapCurve curve = ZeusCurve(gpu);
    ASSERT_EQ(curve.points.size(), fit.size()) << gpu;
    size_t i = 0;
    for (const auto& [limit, tp] : fit) {
      const CapPoint& p = curve.points[i++];
      EXPECT_NEAR(p.cap, static_cast<double>(limit) / top, 1e-4) << gpu << " " << limit;
      EXPECT_NEAR(p.throughput, tp.first, 6e-5) << gpu << " " << limit;
      EXPECT_NEAR(p.power, tp.second, 6e-5) << gpu << " " << limit;
    }
    EXPECT_TRUE(ValidateCapCurve(curve).ok()) << gpu;
  }
}

TEST(CapCurve, InterpolatesLinearlyAndClampsAtTheEnds) {
  const CapCurve c{{{0.5, 0.8, 0.6}, {1, 1, 1}}};
  const CapPoint mid = c.At(0.75);
  EXPECT_DOUBLE_EQ(mid.throughput, 0.9);
  EXPECT_DOUBLE_EQ(mid.power, 0.8);
  EXPECT_DOUBLE_EQ(c.At(0.1).throughput, 0.8);
  EXPECT_DOUBLE_EQ(c.At(2).power, 1);
}

TEST(CapCurve, MostEfficientRespectsTheThroughputFloor) {
  // V100: energy per step power/throughput is lowest at cap 0.5 (0.7172 / 0.8663 = 0.8279;
  // 0.4 gives 0.8315); with at most 5 % throughput lost, cap 0.7 (0.8453 / 0.9603 = 0.8803)
  // beats 0.8 (0.9292) and 0.9 (0.9600).
  const CapCurve v100 = ZeusCurve("v100");
  EXPECT_DOUBLE_EQ(v100.MostEfficient(0).cap, 0.5);
  EXPECT_DOUBLE_EQ(v100.MostEfficient(0.95).cap, 0.7);
  EXPECT_DOUBLE_EQ(v100.MostEfficient(1).cap, 1);
}

TEST(CapCurve, DefaultCurveIsTheMeanOfTheFourGpus) {
  const CapCurve d = DefaultAcceleratorCurve();
  ASSERT_EQ(d.points.size(), 6u);
  // At cap 0.5: V100 0.8663, A40 0.8005 (150 W / 300 W), P100 0.9495, RTX 6000 between its
  // 125 W and 150 W points.
  const double rtx = 0.8445 + (0.5 - 125.0 / 260) / (25.0 / 260) * (0.9068 - 0.8445);
  EXPECT_NEAR(d.points[0].throughput, (0.8663 + 0.8005 + 0.9495 + rtx) / 4, 1e-12);
  EXPECT_TRUE(ValidateCapCurve(d).ok());
}

TEST(CapCurve, CurveForMatchesCatalogNamesAndLeavesCpusUncapped) {
  model::DeviceType v100;
  v100.name = "v100-32g";
  EXPECT_EQ(CurveFor(v100).points.size(), ZeusCurve("v100").points.size());
  model::DeviceType rtx;
  rtx.name = "quadro";
  rtx.aliases = {"rtx-6000"};
  EXPECT_DOUBLE_EQ(CurveFor(rtx).points[0].throughput, ZeusCurve("rtx6000").points[0].throughput);
  model::DeviceType a100;
  a100.name = "a100-80g";
  EXPECT_EQ(CurveFor(a100).points.size(), 6u);  // the default curve
  model::DeviceType cpu;
  cpu.name = "epyc-7763";
  cpu.kind = model::DeviceKind::kCpu;
  EXPECT_EQ(CurveFor(cpu).points.size(), 1u);
}

TEST(CapCurve, ValidateRejectsBadCurves) {
  EXPECT_FALSE(ValidateCapCurve({}).ok());
  EXPECT_FALSE(ValidateCapCurve({{{0.5, 0.9, 0.8}}}).ok());  // no cap 1
  EXPECT_FALSE(ValidateCapCurve({{{0.6, 0.9, 0.8}, {0.5, 0.8, 0.7}, {1, 1, 1}}}).ok());
  EXPECT_FALSE(ValidateCapCurve({{{0.5, -0.1, 0.8}, {1, 1, 1}}}).ok());
}

TEST(ChooseCap, DeadlineJobsGoAsLowAsTheDeadlineAllows) {
  const CapCurve v100 = ZeusCurve("v100");
  // 1000 s of work at full speed, 2000 s to the deadline: throughput 0.5 would do, so the most
  // efficient point of all (cap 0.5, throughput 0.8663).
  EXPECT_DOUBLE_EQ(ChooseCap(v100, 2000.0, 0, 1000, 0.05).cap, 0.5);
  // 1000 s to 1200 s: throughput >= 0.833 -> still cap 0.5; 1000 s to 1100 s: >= 0.909 ->
  // cap 0.6 (0.9263).
  EXPECT_DOUBLE_EQ(ChooseCap(v100, 1200.0, 0, 1000, 0.05).cap, 0.5);
  EXPECT_DOUBLE_EQ(ChooseCap(v100, 1100.0, 0, 1000, 0.05).cap, 0.6);
  // 1000 s to 1050 s: throughput >= 0.952 -> cap 0.7 (0.9603).
  EXPECT_DOUBLE_EQ(ChooseCap(v100, 1050.0, 0, 1000, 0.05).cap, 0.7);
  // Already late: full power.
  EXPECT_DOUBLE_EQ(ChooseCap(v100, 900.0, 0, 1000, 0.05).cap, 1);
  // No deadline: at most 5 % slower, or 20 % with a looser bound.
  EXPECT_DOUBLE_EQ(ChooseCap(v100, std::nullopt, 0, 1000, 0.05).cap, 0.7);
  EXPECT_DOUBLE_EQ(ChooseCap(v100, std::nullopt, 0, 1000, 0.25).cap, 0.5);
  EXPECT_DOUBLE_EQ(ChooseCap(v100, std::nullopt, 0, 1000, 0).cap, 1);
}

}  // namespace
}  // namespace hetsched::power

namespace hetsched::power {
namespace {

TEST(CapCurve, CatalogCurveOverridesTheDefault) {
  auto catalog = model::io::ParseDeviceTypesDocument(
      "device_types:\n"
      "  - name: a100-80g\n"
      "    power_cap_curve:\n"
      "      - {cap: 0.6, throughput: 0.9, power: 0.7}\n"
      "      - {cap: 1, throughput: 1, power: 1}\n",
      "types.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  const CapCurve c = CurveFor(*catalog->Find("a100-80g"));
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_DOUBLE_EQ(c.points[0].cap, 0.6);
  EXPECT_DOUBLE_EQ(c.points[0].power, 0.7);
  // 0.7 / 0.9 = 0.778 energy per step with 10 % lost: chosen when 10 % is allowed.
  EXPECT_DOUBLE_EQ(ChooseCap(c, std::nullopt, 0, 100, 0.1).cap, 0.6);
}

TEST(CapCurve, BadCatalogCurvesAreFileLineColumnErrors) {
  struct Bad {
    const char* curve;
    const char* says;
  };
  for (const Bad& b :
       {Bad{"[{cap: 0.5, throughput: 0.9, power: 0.8}]",
            "4:14: device_types[0].power_cap_curve[0].cap: the last point is at cap 0.5"},
        Bad{"[{cap: 1, throughput: 1, power: 1}, {cap: 0.5, throughput: 1, power: 1}]",
            "4:49: device_types[0].power_cap_curve[1].cap: 0.5 does not increase on 1"},
        Bad{"[{cap: 1, throughput: 1, power: -1}]",
            "device_types[0].power_cap_curve[0].power: -1 is outside (0, 1.05]"},
        Bad{"[{cap: 1, throughput: 1}]", "power_cap_curve[0].power: is missing"},
        Bad{"[{cap: 1, throughput: 1, power: 1, watts: 3}]", "has an unknown field 'watts'"},
        Bad{"[{cap: one, throughput: 1, power: 1}]", "'one' is not a number"},
        Bad{"0.7", "device_types[0].power_cap_curve: is '0.7'"}, Bad{"[]", "has no points"}}) {
    auto catalog = model::io::ParseDeviceTypesDocument(
        std::string("device_types:\n  - name: a100-80g\n    power_cap_curve:\n      ") + b.curve +
            "\n",
        "types.yaml");
    ASSERT_FALSE(catalog.ok()) << b.curve;
    EXPECT_NE(catalog.status().message().find(b.says), std::string::npos)
        << b.curve << ": " << catalog.status().message();
    EXPECT_NE(catalog.status().message().find("types.yaml:"), std::string::npos);
  }
}

}  // namespace
}  // namespace hetsched::power
