// `hetsched catalog` end to end: the table, the JSON, a types file, and bad input.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/build_paths.h"
#include "testing/cli_runner.h"
#include "util/file.h"

namespace {

using CommandOutput = hetsched::testing::CliRun;

// stderr is dropped so that stdout stays parseable JSON.
CommandOutput Catalog(const std::string& args) {
  return hetsched::testing::RunHetsched("catalog " + args, hetsched::testing::Stderr::kDrop);
}

TEST(CatalogCli, TableListsBuiltInTypes) {
  CommandOutput r = Catalog("");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("h100-80g"), std::string::npos);
  EXPECT_NE(r.out.find("ascend-910b"), std::string::npos);
  EXPECT_NE(r.out.find("cuda 11.4"), std::string::npos);  // the K80's stack
}

TEST(CatalogCli, JsonHasEveryField) {
  CommandOutput r = Catalog("--json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_GE(j.size(), 16u);
  for (const char* field :
       {"name", "aliases", "vendor", "kind", "stacks", "fp32_tflops", "fp16_tflops", "int8_tops",
        "memory_bytes", "memory_bandwidth_bytes_per_s", "idle_watts", "peak_watts",
        "price_per_hour_usd", "efficiency", "estimated", "source"}) {
    EXPECT_TRUE(j[0].contains(field)) << field;
  }
  bool found = false;
  for (const auto& t : j) {
    if (t["name"] == "v100-32g") {
      found = true;
      EXPECT_EQ(t["aliases"][0], "v100");
      EXPECT_EQ(t["stacks"][0], "cuda 12.9");
      EXPECT_EQ(t["memory_bytes"].get<uint64_t>(), 32ull << 30);
    }
  }
  EXPECT_TRUE(found);
}

TEST(CatalogCli, TypesFileAddsAndOverrides) {
  CommandOutput r = Catalog("--json --types " + std::string(HETSCHED_SOURCE_DIR) +
                            "/tests/data/device_types/lab.yaml");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  int seen = 0;
  for (const auto& t : j) {
    if (t["name"] == "acme-x1") {
      ++seen;
      EXPECT_EQ(t["kind"], "asic");
    }
    if (t["name"] == "h100-80g") {
      ++seen;
      EXPECT_EQ(t["peak_watts"].get<double>(), 500);
    }
  }
  EXPECT_EQ(seen, 2);
}

// Every type says where its power-cap curve comes from, and a types file can bring its own.
TEST(CatalogCli, PowerCapCurvesAndTheirSources) {
  const std::string path = ::testing::TempDir() + "/catalog-cap-curve.yaml";
  ASSERT_TRUE(hetsched::util::WriteFile(path, R"(device_types:
  - name: a100-80g
    power_cap_curve:
      - {cap: 0.6, throughput: 0.9, power: 0.7}
      - {cap: 1, throughput: 1, power: 1}
)")
                  .ok());
  CommandOutput r = Catalog("--json --types " + path);
  ASSERT_EQ(r.status, 0);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& t : nlohmann::json::parse(r.out)) by_name[t["name"]] = t;
  EXPECT_EQ(by_name["v100-32g"]["power_cap_curve_source"], "zeus v100");
  EXPECT_EQ(by_name["h100-80g"]["power_cap_curve_source"], "default (mean of the Zeus curves)");
  EXPECT_EQ(by_name["a100-80g"]["power_cap_curve_source"], "catalog");
  const nlohmann::json& own = by_name["a100-80g"]["power_cap_curve"];
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[0]["cap"], 0.6);
  EXPECT_EQ(own[0]["throughput"], 0.9);
  EXPECT_EQ(own[0]["power"], 0.7);
  for (const auto& [name, t] : by_name) {
    ASSERT_FALSE(t["power_cap_curve"].empty()) << name;
    EXPECT_EQ(t["power_cap_curve"].back()["cap"], 1) << name;  // every curve ends at cap 1
    if (t["kind"] == "cpu") {
      EXPECT_EQ(t["power_cap_curve_source"], "none (CPU, not capped)") << name;
    }
  }
  CommandOutput table = Catalog("--types " + path);
  ASSERT_EQ(table.status, 0);
  EXPECT_NE(table.out.find("zeus v100 0.4-1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("catalog 0.6-1"), std::string::npos) << table.out;
}

TEST(CatalogCli, BadTypesFileExitsWithStatus2) {
  EXPECT_EQ(Catalog("--types /nonexistent/types.yaml").status, 2);
  EXPECT_EQ(Catalog("--types " + std::string(HETSCHED_SOURCE_DIR) +
                    "/tests/data/device_types/bad_idle.yaml")
                .status,
            2);
}

}  // namespace
