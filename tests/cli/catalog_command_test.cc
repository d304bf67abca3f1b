// `hetsched catalog` end to end: the table, the JSON, a types file, and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_runner.h"

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

TEST(CatalogCli, BadTypesFileExitsWithStatus2) {
  EXPECT_EQ(Catalog("--types /nonexistent/types.yaml").status, 2);
  EXPECT_EQ(Catalog("--types " + std::string(HETSCHED_SOURCE_DIR) +
                    "/tests/data/device_types/bad_idle.yaml")
                .status,
            2);
}

}  // namespace
