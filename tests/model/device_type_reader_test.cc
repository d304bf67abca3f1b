#include "model/io/device_type_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "testing/build_paths.h"

namespace hetsched::model::io {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A complete new type; `extra` lines (4-space indented fields) are appended after line 10.
// Lines: 1 device_types:, 2 name, 3 vendor, 4 kind, 5 stacks, 6 fp16_tflops, 7 memory,
// 8 memory_bandwidth, 9 idle_power, 10 peak_power.
std::string NewType(const std::string& replace_key = "", const std::string& replace_value = "",
                    const std::string& extra = "") {
  const std::vector<std::pair<std::string, std::string>> fields = {{"name", "x1"},
                                                                   {"vendor", "acme"},
                                                                   {"kind", "gpu"},
                                                                   {"stacks", "[\"cuda 12.2\"]"},
                                                                   {"fp16_tflops", "100"},
                                                                   {"memory", "16GiB"},
                                                                   {"memory_bandwidth", "500GB/s"},
                                                                   {"idle_power", "20W"},
                                                                   {"peak_power", "200W"}};
  std::string doc = "device_types:\n";
  bool first = true;
  for (const auto& [key, value] : fields) {
    doc += first ? "  - " : "    ";
    first = false;
    if (key == replace_key) {
      if (replace_value.empty()) {
        doc += "# " + key + " removed\n";
        continue;
      }
      doc += key + ": " + replace_value + "\n";
    } else {
      doc += key + ": " + value + "\n";
    }
  }
  return doc + extra;
}

std::string ErrorOf(const std::string& doc) {
  util::Result<DeviceCatalog> catalog = ParseDeviceTypesDocument(doc, "types.yaml");
  EXPECT_FALSE(catalog.ok()) << doc;
  if (catalog.ok()) return "";
  EXPECT_EQ(catalog.status().code(), util::StatusCode::kInvalidArgument);
  return catalog.status().message();
}

TEST(DeviceTypeReader, ReadsACompleteNewType) {
  util::Result<DeviceCatalog> catalog = ParseDeviceTypesDocument(
      NewType("", "",
              "    price_per_hour: 1.5\n    efficiency: 0.8\n    aliases: [X-One]\n"
              "    int8_tops: 400\n    fp32_tflops: 12.5\n    source: my lab\n"),
      "types.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  EXPECT_EQ(catalog->size(), DeviceCatalog::BuiltIn().size() + 1);
  const DeviceType* t = catalog->Find("x-one");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "x1");
  EXPECT_EQ(t->vendor, "acme");
  EXPECT_EQ(t->kind, DeviceKind::kGpu);
  ASSERT_EQ(t->stacks.size(), 1u);
  EXPECT_EQ(t->stacks[0].name, "cuda");
  EXPECT_EQ(t->stacks[0].version, "12.2");
  EXPECT_DOUBLE_EQ(t->fp32_tflops, 12.5);
  EXPECT_DOUBLE_EQ(t->fp16_tflops, 100);
  EXPECT_DOUBLE_EQ(t->int8_tops, 400);
  EXPECT_EQ(t->memory_bytes, 16ull << 30);
  EXPECT_DOUBLE_EQ(t->memory_bandwidth, 500e9);
  EXPECT_DOUBLE_EQ(t->idle_watts, 20);
  EXPECT_DOUBLE_EQ(t->peak_watts, 200);
  EXPECT_DOUBLE_EQ(t->price_per_hour, 1.5);
  EXPECT_DOUBLE_EQ(t->efficiency, 0.8);
  EXPECT_EQ(t->source, "my lab");
  EXPECT_FALSE(t->estimated);
}

TEST(DeviceTypeReader, NewTypeWithoutEfficiencyIsMarkedEstimated) {
  util::Result<DeviceCatalog> catalog = ParseDeviceTypesDocument(NewType(), "types.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  EXPECT_TRUE(catalog->Find("x1")->estimated);
  EXPECT_DOUBLE_EQ(catalog->Find("x1")->efficiency, DeviceType{}.efficiency);
}

TEST(DeviceTypeReader, LoadsTheLabFileFromDisk) {
  util::Result<DeviceCatalog> catalog =
      LoadDeviceTypesFile(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/device_types/lab.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  const DeviceType* x1 = catalog->Find("x1");
  ASSERT_NE(x1, nullptr);
  EXPECT_EQ(x1->name, "acme-x1");
  EXPECT_EQ(x1->kind, DeviceKind::kAsic);
  ASSERT_EQ(x1->stacks.size(), 2u);
  EXPECT_EQ(x1->stacks[1].name, "aarch64");
  EXPECT_EQ(x1->stacks[1].version, "");
  EXPECT_DOUBLE_EQ(catalog->Find("h100-80g")->peak_watts, 500);
}

TEST(DeviceTypeReader, OverrideOfOneFieldKeepsTheRestAndTheId) {
  const DeviceCatalog& builtin = DeviceCatalog::BuiltIn();
  util::Result<DeviceCatalog> catalog = ParseDeviceTypesDocument(
      "device_types:\n  - name: H100-80G\n    peak_power: 600W\n", "types.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  EXPECT_EQ(catalog->size(), builtin.size());
  EXPECT_EQ(catalog->FindId("h100-80g"), builtin.FindId("h100-80g"));
  const DeviceType* before = builtin.Find("h100-80g");
  const DeviceType* after = catalog->Find("h100-80g");
  EXPECT_DOUBLE_EQ(after->peak_watts, 600);
  EXPECT_DOUBLE_EQ(after->idle_watts, before->idle_watts);
  EXPECT_DOUBLE_EQ(after->fp16_tflops, before->fp16_tflops);
  EXPECT_EQ(after->memory_bytes, before->memory_bytes);
  EXPECT_EQ(after->aliases, before->aliases);
  EXPECT_EQ(after->source, before->source);
  EXPECT_EQ(catalog->Find("h100")->name, "h100-80g");  // aliases still resolve
}

TEST(DeviceTypeReader, ParsesIntoAnExistingCatalog) {
  DeviceCatalog catalog = DeviceCatalog::BuiltIn();
  auto list = ParseYamlDocument("- name: t4\n  price_per_hour: 0.5\n", "cluster.yaml");
  ASSERT_TRUE(list.ok());
  ASSERT_TRUE(ParseDeviceTypesYaml(*list, "cluster.yaml", catalog).ok());
  EXPECT_DOUBLE_EQ(catalog.Find("t4")->price_per_hour, 0.5);
}

TEST(DeviceTypeReader, EmptyListAddsNothing) {
  DeviceCatalog catalog = DeviceCatalog::BuiltIn();
  auto empty = ParseYamlDocument("device_types:", "c.yaml");
  auto none = ParseYamlDocument("[]", "c.yaml");
  ASSERT_TRUE(empty.ok() && none.ok());
  EXPECT_TRUE(ParseDeviceTypesYaml((*empty)["device_types"], "c.yaml", catalog).ok());
  EXPECT_TRUE(ParseDeviceTypesYaml(*none, "c.yaml", catalog).ok());
  EXPECT_EQ(catalog.size(), DeviceCatalog::BuiltIn().size());
}

TEST(DeviceTypeReader, FailureLeavesTheCatalogUnchanged) {
  DeviceCatalog catalog = DeviceCatalog::BuiltIn();
  auto list = ParseYamlDocument("- name: t4\n  peak_power: 60W\n- name: k80\n  colour: red\n",
                                "cluster.yaml");
  ASSERT_TRUE(list.ok());
  util::Status st = ParseDeviceTypesYaml(*list, "cluster.yaml", catalog);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), StartsWith("cluster.yaml:4:3: device_types[1].colour: unknown field"));
  EXPECT_DOUBLE_EQ(catalog.Find("t4")->peak_watts, 70);
}

// ---- bad input: every message names file:line:column and the field ----

TEST(DeviceTypeReaderErrors, NegativePeakPower) {
  EXPECT_THAT(ErrorOf(NewType("peak_power", "-5W")),
              StartsWith("types.yaml:10:17: device_types[0].peak_power: '-5W' is negative"));
}

TEST(DeviceTypeReaderErrors, ZeroPeakPower) {
  EXPECT_EQ(ErrorOf(NewType("peak_power", "0W")),
            "types.yaml:10:17: device_types[0].peak_power: must be positive "
            "(expected watts like 700W)");
}

TEST(DeviceTypeReaderErrors, PeakBelowIdle) {
  EXPECT_EQ(ErrorOf(NewType("peak_power", "10W")),
            "types.yaml:10:17: device_types[0].peak_power: peak power 10 W is below idle power "
            "20 W (expected peak_power >= idle_power)");
}

TEST(DeviceTypeReaderErrors, OverrideRaisingIdleAbovePeak) {
  EXPECT_EQ(ErrorOf("device_types:\n  - name: t4\n    idle_power: 100W\n"),
            "types.yaml:3:17: device_types[0].idle_power: peak power 70 W is below idle power "
            "100 W (expected peak_power >= idle_power)");
}

TEST(DeviceTypeReaderErrors, EfficiencyOutsideUnitInterval) {
  EXPECT_EQ(ErrorOf(NewType("", "", "    efficiency: 0\n")),
            "types.yaml:11:17: device_types[0].efficiency: 0 is outside (0, 1] "
            "(expected a fraction of peak in (0, 1], like 0.6)");
  EXPECT_THAT(ErrorOf(NewType("", "", "    efficiency: 1.5\n")),
              StartsWith("types.yaml:11:17: device_types[0].efficiency: 1.5 is outside (0, 1]"));
  EXPECT_THAT(ErrorOf(NewType("", "", "    efficiency: -0.2\n")),
              StartsWith("types.yaml:11:17: device_types[0].efficiency: -0.2 is outside"));
}

TEST(DeviceTypeReaderErrors, UnknownFieldListsTheKnownOnes) {
  EXPECT_EQ(ErrorOf(NewType("", "", "    colour: red\n")),
            "types.yaml:11:5: device_types[0].colour: unknown field (expected one of name, "
            "aliases, vendor, kind, stacks, fp32_tflops, fp16_tflops, int8_tops, memory, "
            "memory_bandwidth, idle_power, peak_power, price_per_hour, efficiency, source, "
            "estimated or power_cap_curve)");
}

TEST(DeviceTypeReaderErrors, UnknownKind) {
  EXPECT_EQ(ErrorOf(NewType("kind", "tpu")),
            "types.yaml:4:11: device_types[0].kind: unknown device kind 'tpu' "
            "(expected cpu, gpu, npu or asic)");
}

TEST(DeviceTypeReaderErrors, BadStacks) {
  EXPECT_THAT(ErrorOf(NewType("stacks", "[\"cuda>=12\"]")),
              StartsWith("types.yaml:5:14: device_types[0].stacks[0]: 'cuda>=12': a device runs "
                         "one version of a stack"));
  EXPECT_THAT(ErrorOf(NewType("stacks", "[\"cuda 12.x\"]")),
              StartsWith("types.yaml:5:14: device_types[0].stacks[0]: 'cuda 12.x' has version"));
  EXPECT_THAT(ErrorOf(NewType("stacks", "[]")),
              StartsWith("types.yaml:5:13: device_types[0].stacks: is empty"));
  EXPECT_THAT(ErrorOf(NewType("stacks", "cuda 12.2")),
              StartsWith("types.yaml:5:13: device_types[0].stacks: is 'cuda 12.2' (expected a "
                         "list"));
  EXPECT_THAT(ErrorOf(NewType("stacks", "[\"cuda 12.2\", \"cuda 11.8\"]")),
              StartsWith("types.yaml:5:27: device_types[0].stacks[1]: stack 'cuda' is listed "
                         "twice"));
  EXPECT_THAT(ErrorOf(NewType("stacks", "[[cuda]]")),
              StartsWith("types.yaml:5:14: device_types[0].stacks[0]: is a list"));
}

TEST(DeviceTypeReaderErrors, MissingRequiredFieldOfANewType) {
  EXPECT_EQ(ErrorOf(NewType("memory", "")),
            "types.yaml:2:5: device_types[0].memory: missing for new device type 'x1' "
            "(expected bytes like 80GiB)");
  EXPECT_THAT(ErrorOf(NewType("stacks", "")),
              StartsWith("types.yaml:2:5: device_types[0].stacks: missing"));
}

TEST(DeviceTypeReaderErrors, MissingName) {
  EXPECT_THAT(ErrorOf("device_types:\n  - vendor: acme\n"),
              StartsWith("types.yaml:2:5: device_types[0].name: missing"));
}

TEST(DeviceTypeReaderErrors, BadNumbersAndUnits) {
  EXPECT_THAT(ErrorOf(NewType("memory", "16GX")),
              StartsWith("types.yaml:7:13: device_types[0].memory: unknown unit 'GX' in '16GX'"));
  EXPECT_THAT(ErrorOf(NewType("memory", "0GiB")),
              StartsWith("types.yaml:7:13: device_types[0].memory: must be positive"));
  EXPECT_THAT(ErrorOf(NewType("memory_bandwidth", "fast")),
              StartsWith("types.yaml:8:23: device_types[0].memory_bandwidth: 'fast' is not a "
                         "bandwidth"));
  EXPECT_THAT(ErrorOf(NewType("fp16_tflops", "abc")),
              StartsWith("types.yaml:6:18: device_types[0].fp16_tflops: 'abc' is not a number"));
  EXPECT_THAT(ErrorOf(NewType("fp16_tflops", "nan")),
              StartsWith("types.yaml:6:18: device_types[0].fp16_tflops: 'nan' is not a finite"));
  EXPECT_THAT(ErrorOf(NewType("fp16_tflops", "-3")),
              StartsWith("types.yaml:6:18: device_types[0].fp16_tflops: -3 is out of range"));
  EXPECT_THAT(ErrorOf(NewType("fp16_tflops", "[1]")),
              StartsWith("types.yaml:6:18: device_types[0].fp16_tflops: is a list"));
  EXPECT_THAT(ErrorOf(NewType("", "", "    price_per_hour: -1\n")),
              StartsWith("types.yaml:11:21: device_types[0].price_per_hour: -1 is out of range"));
  EXPECT_THAT(ErrorOf(NewType("", "", "    estimated: maybe\n")),
              StartsWith("types.yaml:11:16: device_types[0].estimated: 'maybe' is not a boolean"));
}

TEST(DeviceTypeReaderErrors, NoPositivePeak) {
  EXPECT_THAT(ErrorOf(NewType("fp16_tflops", "0")),
              StartsWith("types.yaml:6:18: device_types[0].fp16_tflops: device type 'x1' has no "
                         "positive peak throughput"));
}

TEST(DeviceTypeReaderErrors, NamesAndAliases) {
  EXPECT_THAT(ErrorOf(NewType("name", "'bad name!'")),
              StartsWith("types.yaml:2:11: device_types[0].name: 'bad name!' is not a valid name"));
  EXPECT_EQ(ErrorOf("device_types:\n  - name: v100\n    peak_power: 250W\n"),
            "types.yaml:2:11: device_types[0].name: 'v100' is an alias of device type 'v100-32g' "
            "(expected 'v100-32g' to override that type, or a name not yet in the catalog)");
  EXPECT_THAT(ErrorOf(NewType("", "", "    aliases: [a100-40g]\n")),
              StartsWith("types.yaml:11:15: device_types[0].aliases[0]: 'a100-40g' already names "
                         "device type 'a100-40g'"));
  EXPECT_THAT(ErrorOf(NewType("", "", "    aliases: [x1]\n")),
              StartsWith("types.yaml:11:15: device_types[0].aliases[0]: 'x1' is the type's own "
                         "name"));
  EXPECT_THAT(ErrorOf("device_types:\n  - name: t4\n    price_per_hour: 1\n  - name: T4\n"),
              StartsWith("types.yaml:4:11: device_types[1].name: device type 't4' is already "
                         "defined at line 2 of this list"));
}

TEST(DeviceTypeReaderErrors, WrongShapes) {
  EXPECT_THAT(ErrorOf("device_types:\n  - just-a-string\n"),
              StartsWith("types.yaml:2:5: device_types[0]: is 'just-a-string' (expected a map"));
  EXPECT_THAT(ErrorOf("device_types: {a: 1}\n"),
              StartsWith("types.yaml:1:15: device_types: is a map (expected a list"));
  EXPECT_THAT(ErrorOf("devices: []\n"),
              StartsWith("types.yaml:1:1: devices: unknown top-level field"));
  EXPECT_THAT(ErrorOf("- name: t4\n"), StartsWith("types.yaml:1:1: the document is a list"));
  EXPECT_THAT(ErrorOf(""), StartsWith("types.yaml: the document is empty"));
  EXPECT_THAT(ErrorOf("other: 1\n"), HasSubstr("unknown top-level field"));
}

TEST(DeviceTypeReaderErrors, InvalidYamlHasALocation) {
  EXPECT_THAT(ErrorOf("device_types:\n  - name: [t4\n"),
              StartsWith("types.yaml:3:1: not valid YAML"));
}

TEST(DeviceTypeReaderErrors, DuplicateFieldInOneEntry) {
  EXPECT_THAT(
      ErrorOf("device_types:\n  - name: t4\n    price_per_hour: 1\n    price_per_hour: 2\n"),
      StartsWith(
          "types.yaml:4:5: device_types[0].price_per_hour: appears twice (first at line 3)"));
}

TEST(DeviceTypeReaderErrors, TooManyEntries) {
  std::string doc = "device_types:\n";
  for (size_t i = 0; i <= kMaxDeviceTypesPerList; ++i) doc += "  - x\n";
  EXPECT_EQ(ErrorOf(doc),
            "types.yaml:2:3: device_types: has 10001 entries (expected at most 10000)");
}

TEST(DeviceTypeReaderErrors, MissingFileIsNotFound) {
  util::Result<DeviceCatalog> catalog = LoadDeviceTypesFile("/nonexistent/types.yaml");
  ASSERT_FALSE(catalog.ok());
  EXPECT_EQ(catalog.status().code(), util::StatusCode::kNotFound);
}

}  // namespace
}  // namespace hetsched::model::io
