#include "model/catalog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hetsched::model {
namespace {

const std::vector<std::string> kRequired = {"xeon-8380", "epyc-7763", "k80",         "p100",
                                            "v100-32g",  "t4",        "a100-40g",    "a100-80g",
                                            "h100-80g",  "l40s",      "rtx-4090",    "mi100",
                                            "mi250x",    "mi300x",    "ascend-910b", "ascend-310p"};

TEST(BuiltInCatalog, HasEveryRequiredType) {
  const DeviceCatalog& catalog = DeviceCatalog::BuiltIn();
  for (const std::string& name : kRequired) {
    const DeviceType* t = catalog.Find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->name, name);
  }
}

TEST(BuiltInCatalog, EveryTypeHasPlausibleFigures) {
  for (const DeviceType& t : DeviceCatalog::BuiltIn().types()) {
    SCOPED_TRACE(t.name);
    EXPECT_GT(t.idle_watts, 0);
    EXPECT_GE(t.peak_watts, t.idle_watts);
    EXPECT_GT(t.memory_bytes, 0u);
    EXPECT_GT(t.memory_bandwidth, 0);
    EXPECT_FALSE(t.stacks.empty());
    EXPECT_FALSE(t.vendor.empty());
    EXPECT_FALSE(t.source.empty());
    EXPECT_GT(t.efficiency, 0);
    EXPECT_LE(t.efficiency, 1);
    EXPECT_GT(t.price_per_hour, 0);
    EXPECT_GT(t.fp32_tflops + t.fp16_tflops + t.int8_tops, 0);
    // Matrix units never make a part slower at fp16 than at fp32.
    if (t.fp16_tflops > 0) {
      EXPECT_GE(t.fp16_tflops, t.fp32_tflops);
    }
  }
}

TEST(BuiltInCatalog, KindsAndStacksMatchVendors) {
  for (const DeviceType& t : DeviceCatalog::BuiltIn().types()) {
    SCOPED_TRACE(t.name);
    ASSERT_EQ(t.stacks.size(), 1u);
    const std::string& stack = t.stacks[0].name;
    if (t.kind == DeviceKind::kCpu) {
      EXPECT_EQ(stack, "x86_64");
    } else if (t.vendor == "nvidia") {
      EXPECT_EQ(stack, "cuda");
    } else if (t.vendor == "amd") {
      EXPECT_EQ(stack, "rocm");
    } else if (t.vendor == "huawei") {
      EXPECT_EQ(stack, "cann");
      EXPECT_EQ(t.kind, DeviceKind::kNpu);
    } else {
      ADD_FAILURE() << "unexpected vendor " << t.vendor;
    }
  }
}

TEST(BuiltInCatalog, CudaVersionsFollowArchitectureSupport) {
  const DeviceCatalog& catalog = DeviceCatalog::BuiltIn();
  // A CUDA 12 job cannot run on a K80 (Kepler stops at 11.4) but runs on a V100 and an H100;
  // a CUDA 13 job runs on Turing and newer only.
  std::vector<StackRequirement> cuda12 = {*ParseStackRequirement("cuda>=12.0")};
  std::vector<StackRequirement> cuda13 = {*ParseStackRequirement("cuda>=13.0")};
  EXPECT_FALSE(AnySatisfied(catalog.Find("k80")->stacks, cuda12));
  EXPECT_TRUE(AnySatisfied(catalog.Find("v100")->stacks, cuda12));
  EXPECT_FALSE(AnySatisfied(catalog.Find("v100")->stacks, cuda13));
  EXPECT_TRUE(AnySatisfied(catalog.Find("t4")->stacks, cuda13));
  EXPECT_TRUE(AnySatisfied(catalog.Find("h100-80g")->stacks, cuda13));
  EXPECT_FALSE(AnySatisfied(catalog.Find("mi300x")->stacks, cuda12));
}

TEST(BuiltInCatalog, MatchesReferenceDatasheetFigures) {
  const DeviceCatalog& catalog = DeviceCatalog::BuiltIn();
  const DeviceType* h100 = catalog.Find("h100-80g");
  EXPECT_DOUBLE_EQ(h100->fp16_tflops, 989);
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h100->peak_watts, 700);
  EXPECT_EQ(h100->memory_bytes, 80ull << 30);
  const DeviceType* t4 = catalog.Find("t4");
  EXPECT_DOUBLE_EQ(t4->idle_watts, 17);
  EXPECT_DOUBLE_EQ(t4->peak_watts, 70);
  EXPECT_DOUBLE_EQ(catalog.Find("a100-80g")->memory_bandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(catalog.Find("xeon-8380")->memory_bandwidth, 204.8e9);
}

TEST(BuiltInCatalog, GavelAliasFindsV100) {
  const DeviceCatalog& catalog = DeviceCatalog::BuiltIn();
  ASSERT_NE(catalog.Find("v100"), nullptr);
  EXPECT_EQ(catalog.Find("v100")->name, "v100-32g");
  EXPECT_EQ(catalog.FindId("v100"), catalog.FindId("v100-32g"));
}

TEST(BuiltInCatalog, LookupIgnoresCase) {
  const DeviceCatalog& catalog = DeviceCatalog::BuiltIn();
  ASSERT_NE(catalog.Find("A100-80G"), nullptr);
  EXPECT_EQ(catalog.Find("A100-80G")->name, "a100-80g");
  EXPECT_EQ(catalog.Find("V100")->name, "v100-32g");
  EXPECT_EQ(catalog.Find("no-such-device"), nullptr);
}

TEST(BuiltInCatalog, NamesAndAliasesAreUnique) {
  const DeviceCatalog& catalog = DeviceCatalog::BuiltIn();
  for (size_t i = 0; i < catalog.size(); ++i) {
    const DeviceType& t = catalog.types()[i];
    EXPECT_EQ(catalog.FindId(t.name)->value(), static_cast<int32_t>(i)) << t.name;
    for (const std::string& alias : t.aliases) {
      EXPECT_EQ(catalog.FindId(alias)->value(), static_cast<int32_t>(i)) << alias;
    }
  }
}

TEST(DeviceCatalog, OverrideKeepsIdAndReplacesFigures) {
  DeviceCatalog catalog = DeviceCatalog::BuiltIn();
  const size_t size = catalog.size();
  DeviceTypeId id = *catalog.FindId("h100-80g");
  DeviceType changed = catalog.Get(id);
  changed.peak_watts = 500;
  EXPECT_EQ(catalog.Upsert(changed), id);
  EXPECT_EQ(catalog.size(), size);
  EXPECT_DOUBLE_EQ(catalog.Get(id).peak_watts, 500);
  // The built-in catalog itself is untouched.
  EXPECT_DOUBLE_EQ(DeviceCatalog::BuiltIn().Find("h100-80g")->peak_watts, 700);
}

TEST(DeviceCatalog, NewTypeGetsNextId) {
  DeviceCatalog catalog = DeviceCatalog::BuiltIn();
  DeviceType t;
  t.name = "My-Chip";
  DeviceTypeId id = catalog.Upsert(t);
  EXPECT_EQ(id.value(), static_cast<int32_t>(catalog.size()) - 1);
  EXPECT_EQ(catalog.Find("my-chip")->name, "my-chip");
}

TEST(DeviceType, PeakFlopsFallsBackToFp32) {
  const DeviceType* k80 = DeviceCatalog::BuiltIn().Find("k80");
  EXPECT_DOUBLE_EQ(k80->PeakFlops(Precision::kFp16), 4.37e12);
  EXPECT_DOUBLE_EQ(k80->PeakFlops(Precision::kInt8), 4.37e12);
  const DeviceType* a100 = DeviceCatalog::BuiltIn().Find("a100-40g");
  EXPECT_DOUBLE_EQ(a100->PeakFlops(Precision::kFp16), 312e12);
  EXPECT_DOUBLE_EQ(a100->PeakFlops(Precision::kInt8), 624e12);
}

}  // namespace
}  // namespace hetsched::model
