#include "backends/local/device_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "testing/smi_samples.h"

namespace hetsched::svc {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMiB = 1024 * 1024;

std::string Sample(const std::string& name) { return hetsched::testing::SmiSample(name); }

std::string ErrorOf(const util::Result<std::vector<ProbedDevice>>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), util::StatusCode::kInvalidArgument);
  return r.status().message();
}

std::vector<int32_t> Indices(const std::vector<ProbedDevice>& devices) {
  std::vector<int32_t> out;
  for (const ProbedDevice& d : devices) out.push_back(d.index);
  return out;
}

// ---- nvidia-smi

TEST(ParseNvidiaSmiCsv, ReadsTheRecordedQuery) {
  auto r = ParseNvidiaSmiCsv(Sample("nvidia-smi-a100x4.csv"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_THAT(Indices(*r), ElementsAre(0, 1, 2, 3));
  const ProbedDevice& d = (*r)[1];
  EXPECT_EQ(d.vendor, "nvidia");
  EXPECT_EQ(d.model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(d.memory_bytes, 81920 * kMiB);
  EXPECT_EQ(d.uuid, "GPU-9a7c21d4-36e0-4f5b-b8d2-c1e07f4a6d93");
}

TEST(ParseNvidiaSmiCsv, UnreportedMemoryIsZero) {
  auto r = ParseNvidiaSmiCsv(Sample("nvidia-smi-gb10.csv"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].model, "NVIDIA GB10");
  EXPECT_EQ((*r)[0].memory_bytes, 0u);
  auto na_uuid = ParseNvidiaSmiCsv("0, Tesla T4, 15360, [N/A]\n");
  ASSERT_TRUE(na_uuid.ok());
  EXPECT_EQ((*na_uuid)[0].uuid, "");
}

TEST(ParseNvidiaSmiCsv, ToleratesBlankLinesCrlfAndCommasInNames) {
  auto r = ParseNvidiaSmiCsv("\r\n0, Odd, Name, 1024, GPU-a\r\n\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].model, "Odd, Name");
  EXPECT_EQ((*r)[0].memory_bytes, 1024 * kMiB);
  EXPECT_EQ((*r)[0].uuid, "GPU-a");
  auto empty = ParseNvidiaSmiCsv("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ParseNvidiaSmiCsv, NamesTheLineAndWhatWasExpected) {
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv("0, A100, 81920, GPU-a\n1, A100, 81920\n")),
              StartsWith("line 2: expected 4 comma-separated fields"));
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv("index, name, memory.total [MiB], uuid\n")),
              HasSubstr("line 1: index 'index' is not a non-negative integer (a header line"));
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv("-1, A100, 81920, GPU-a\n")),
              StartsWith("line 1: index '-1'"));
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv("0, A100, 81920 MiB, GPU-a\n")),
              HasSubstr("line 1: memory.total '81920 MiB' is not a whole number of MiB"));
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv("0, A100, 99999999999999999999, GPU-a\n")),
              StartsWith("line 1: memory.total"));
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv("0, A100, 1, GPU-a\n0, A100, 1, GPU-b\n")),
              StartsWith("line 2: index 0 appears twice"));
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv("0, , 1, GPU-a\n")), StartsWith("line 1: the name"));
  EXPECT_THAT(ErrorOf(ParseNvidiaSmiCsv(
                  "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")),
              StartsWith("line 1: expected 4 comma-separated fields"));
}

// ---- rocm-smi

TEST(ParseRocmSmiJson, ReadsRocm5Keys) {
  auto r = ParseRocmSmiJson(Sample("rocm-smi-mi100-rocm5.json"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  const ProbedDevice& d = (*r)[1];
  EXPECT_EQ(d.vendor, "amd");
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(d.model, "Arcturus GL-XL [AMD Instinct MI100]");
  EXPECT_EQ(d.memory_bytes, 34342961152u);
  EXPECT_EQ(d.uuid, "0x1d94e07a63b5f218");
}

TEST(ParseRocmSmiJson, ReadsRocm6Keys) {
  auto r = ParseRocmSmiJson(Sample("rocm-smi-mi210-rocm6.json"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_THAT(Indices(*r), ElementsAre(0, 1));
  EXPECT_EQ((*r)[0].model, "AMD Instinct MI210");
  EXPECT_EQ((*r)[0].memory_bytes, 68702699520u);
  EXPECT_EQ((*r)[0].uuid, "0x8c2f7e51a9d3b064");
}

TEST(ParseRocmSmiJson, SkipsWarningsAndNonCardKeysAndSortsByIndex) {
  auto r = ParseRocmSmiJson(
      "WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/"
      "runtime_status\n\n"
      "{\"system\": {\"Driver version\": \"6.7.0\"},\n"
      " \"card10\": {\"Card Series\": \"X\", \"VRAM Total Memory (B)\": \"N/A\"},\n"
      " \"card2\": {\"Device Name\": \"Phoenix3\", \"VRAM Total Memory (B)\": 536870912}}\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(Indices(*r), ElementsAre(2, 10));
  EXPECT_EQ((*r)[0].model, "Phoenix3");
  EXPECT_EQ((*r)[0].memory_bytes, 536870912u);
  EXPECT_EQ((*r)[1].memory_bytes, 0u);
  EXPECT_EQ((*r)[1].uuid, "");
  auto none = ParseRocmSmiJson("{}");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ParseRocmSmiJson, NamesWhereAndWhatWasExpected) {
  EXPECT_THAT(ErrorOf(ParseRocmSmiJson("WARNING: No JSON data to report\n")),
              StartsWith("expected a JSON object of cards"));
  EXPECT_THAT(ErrorOf(ParseRocmSmiJson("note\n{\n  \"card0\": {\n    \"Card Series\": x\n")),
              StartsWith("line 4: invalid JSON: "));
  EXPECT_THAT(ErrorOf(ParseRocmSmiJson("{\"card0\": {\"Card Series\": \"X\"}")),
              StartsWith("line 1: invalid JSON"));
  EXPECT_THAT(ErrorOf(ParseRocmSmiJson("{\"card0\": 3}")),
              StartsWith("\"card0\": expected an object"));
  EXPECT_THAT(ErrorOf(ParseRocmSmiJson("{\"card0\": {\"VRAM Total Memory (B)\": \"1\"}}")),
              HasSubstr("\"card0\": no product name (expected \"Card Series\""));
  EXPECT_THAT(ErrorOf(ParseRocmSmiJson("{\"card0\": {\"Card Series\": \"X\"}}")),
              HasSubstr("no \"VRAM Total Memory (B)\" (run rocm-smi with --showmeminfo vram)"));
  EXPECT_THAT(ErrorOf(ParseRocmSmiJson(
                  "{\"card0\": {\"Card Series\": \"X\", \"VRAM Total Memory (B)\": \"16 GB\"}}")),
              HasSubstr("\"card0\": \"VRAM Total Memory (B)\" '\"16 GB\"' is not a whole number"));
}

// ---- npu-smi

TEST(ParseNpuSmiInfo, Reads910bTableAndSkipsTheProcesses) {
  auto r = ParseNpuSmiInfo(Sample("npu-smi-910b3x8.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 8u);
  EXPECT_THAT(Indices(*r), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  for (const ProbedDevice& d : *r) {
    EXPECT_EQ(d.vendor, "huawei");
    EXPECT_EQ(d.model, "910B3");
    EXPECT_EQ(d.memory_bytes, 65536 * kMiB) << "the HBM total, also where used is 58626/";
    EXPECT_EQ(d.uuid, "");
  }
}

TEST(ParseNpuSmiInfo, Reads310pTableByDeviceColumn) {
  auto r = ParseNpuSmiInfo(Sample("npu-smi-310p3.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_THAT(Indices(*r), ElementsAre(0, 1));
  EXPECT_EQ((*r)[1].model, "310P3");
  EXPECT_EQ((*r)[1].memory_bytes, 21534 * kMiB) << "Memory-Usage(MB), there is no HBM column";
}

TEST(ParseNpuSmiInfo, ReadsA3TableByPhyIdWithTwoChipsPerNpu) {
  auto r = ParseNpuSmiInfo(Sample("npu-smi-atlas-a3.txt"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(Indices(*r), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ((*r)[3].model, "Ascend910");
  EXPECT_EQ((*r)[3].memory_bytes, 65536 * kMiB);
}

TEST(ParseNpuSmiInfo, NamesTheLineAndWhatWasExpected) {
  const std::string header =
      "| NPU   Name                | Health        | Power(W)    Temp(C)           "
      "Hugepages-Usage(page)|\n"
      "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB) "
      "       |\n";
  const std::string npu0 = "| 0     910B3  | OK   | 94.3   53   0    / 0   |\n";
  const std::string chip0 = "| 0            | 0000:C1:00.0  | 0    0    / 0    4487 / 65536 |\n";
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo("")), StartsWith("no device table"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo("npu-smi: command failed\n")), StartsWith("no device table"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header.substr(0, header.find('\n') + 1))),
              StartsWith("line 1: the header row has no second row"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header.substr(0, header.find('\n') + 1) +
                                      "| Card | Bus-Id | AICore(%) |\n")),
              StartsWith("line 2: expected the header's second row"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header.substr(0, header.find('\n') + 1) +
                                      "| Chip  Slot | Bus-Id | AICore(%) Memory-Usage(MB) |\n")),
              StartsWith("line 2: unknown column 'Slot' after Chip"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header.substr(0, header.find('\n') + 1) +
                                      "| Chip | Bus-Id | AICore(%) |\n")),
              StartsWith("line 2: expected a Memory-Usage(MB) or HBM-Usage(MB) column"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header + npu0)),
              StartsWith("line 3: the NPU row has no chip row after it"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header + "| x 910B3 | OK | 1 |\n")),
              StartsWith("line 3: expected an NPU row"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header + npu0 + "| 0  7  | 0000:C1:00.0 | 0 1/2 3/4 |\n")),
              StartsWith("line 4: expected the chip row of the NPU on line 3"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header + npu0 + "| 0 | 0000:C1:00.0 | 0  4487 / 65536 |\n")),
              StartsWith("line 4: expected 2 \"used / total\" figures"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header + npu0 + "| 0 | 0000:C1:00.0 | 0 0 / 0 4487 / x |\n")),
              StartsWith("line 4: expected 2"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header + npu0 + chip0 + npu0 + chip0)),
              StartsWith("line 6: device 0 appears twice"));
  EXPECT_THAT(ErrorOf(ParseNpuSmiInfo(header + npu0 +
                                      "| 0 | 0000:C1:00.0 | 0 0 / 0 1 / 18446744073709551615 |\n")),
              StartsWith("line 4: memory total 18446744073709551615 MB is out of range"));
  // After the devices, the process table ends the parse: what follows is not read.
  auto with_processes = ParseNpuSmiInfo(header + npu0 + chip0 +
                                        "| NPU Chip | Process id | Process name | Memory |\n"
                                        "| garbage |\n");
  ASSERT_TRUE(with_processes.ok()) << with_processes.status().ToString();
  EXPECT_EQ(with_processes->size(), 1u);
  auto ok = ParseNpuSmiInfo(header + npu0 + chip0);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->size(), 1u);
}

// Truncated and corrupted samples: any result is fine, crashing (or a sanitizer report) is not.
TEST(DeviceProbeParsers, SurviveGarbage) {
  std::mt19937 rng(7);
  for (const char* name : {"nvidia-smi-a100x4.csv", "nvidia-smi-gb10.csv",
                           "rocm-smi-mi100-rocm5.json", "rocm-smi-mi210-rocm6.json",
                           "npu-smi-910b3x8.txt", "npu-smi-310p3.txt", "npu-smi-atlas-a3.txt"}) {
    const std::string sample = Sample(name);
    std::vector<std::string> inputs;
    for (size_t cut = 0; cut <= sample.size(); cut += 7) inputs.push_back(sample.substr(0, cut));
    for (int i = 0; i < 200; ++i) {
      std::string s = sample;
      for (int k = 0; k < 4; ++k) s[rng() % s.size()] = static_cast<char>(rng() % 256);
      inputs.push_back(std::move(s));
    }
    for (const std::string& in : inputs) {
      (void)ParseNvidiaSmiCsv(in);
      (void)ParseRocmSmiJson(in);
      (void)ParseNpuSmiInfo(in);
    }
  }
}

// ---- ProbeDevices

class ProbeDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hetsched_device_probe_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A fake tool: prints `output` (via a file) when called with exactly `args`, else exits 2.
  void FakeTool(const std::string& name, const std::string& args, const std::string& output,
                const std::string& then = "exit 0") {
    const std::string out = dir_ + "/" + name + ".out";
    std::ofstream(out) << output;
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n[ \"$*\" = \"" << args << "\" ] || exit 2\ncat '" << out
                        << "'\n"
                        << then << "\n";
    fs::permissions(path, fs::perms::owner_all);
  }

  std::string dir_;
};

TEST_F(ProbeDevicesTest, NoToolsNoDevicesNoError) {
  ProbeReport r = ProbeDevices({dir_, 5});
  EXPECT_TRUE(r.devices.empty());
  EXPECT_THAT(r.notes, ElementsAre("nvidia-smi: absent", "rocm-smi: absent", "npu-smi: absent"));
  EXPECT_TRUE(r.failed.empty());
}

TEST_F(ProbeDevicesTest, ThisMachineWithoutVendorToolsHasNoDevices) {
  ProbeReport r = ProbeDevices();
  ASSERT_EQ(r.notes.size(), 3u);
  bool any_tool = false;
  for (const std::string& note : r.notes) any_tool |= !note.ends_with(": absent");
  if (any_tool) GTEST_SKIP() << "this machine has vendor tools";
  EXPECT_TRUE(r.devices.empty());
}

TEST_F(ProbeDevicesTest, RunsEachToolWithItsArgumentsAndCollectsDevices) {
  FakeTool("nvidia-smi", "--query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits",
           Sample("nvidia-smi-a100x4.csv"));
  FakeTool("rocm-smi", "--showproductname --showmeminfo vram --showuniqueid --json",
           Sample("rocm-smi-mi210-rocm6.json"));
  FakeTool("npu-smi", "info", Sample("npu-smi-310p3.txt"));
  ProbeReport r = ProbeDevices({dir_, 10});
  ASSERT_EQ(r.devices.size(), 8u);
  EXPECT_EQ(r.devices[0].vendor, "nvidia");
  EXPECT_EQ(r.devices[4].vendor, "amd");
  EXPECT_EQ(r.devices[7].vendor, "huawei");
  EXPECT_THAT(r.notes, ElementsAre("nvidia-smi: found 4 devices (" + dir_ + "/nvidia-smi)",
                                   "rocm-smi: found 2 devices (" + dir_ + "/rocm-smi)",
                                   "npu-smi: found 2 devices (" + dir_ + "/npu-smi)"));
}

TEST_F(ProbeDevicesTest, AFailingToolIsANoteNotAnError) {
  FakeTool("nvidia-smi", "--query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits",
           "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
           "exit 9");
  FakeTool("rocm-smi", "--showproductname --showmeminfo vram --showuniqueid --json",
           "{\"card0\": {\"Card Series\": \"X\"}}\n");
  FakeTool("npu-smi", "info", Sample("npu-smi-910b3x8.txt"));
  ProbeReport r = ProbeDevices({dir_, 10});
  EXPECT_EQ(r.devices.size(), 8u);
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_EQ(r.notes[0],
            "nvidia-smi: failed: exit status 9: NVIDIA-SMI has failed because it couldn't "
            "communicate with the NVIDIA driver.");
  EXPECT_THAT(r.notes[1], StartsWith("rocm-smi: failed: \"card0\": no \"VRAM Total Memory"));
  EXPECT_THAT(r.notes[2], StartsWith("npu-smi: found 8 devices"));
  EXPECT_THAT(r.failed, ElementsAre("nvidia-smi", "rocm-smi"));
}

TEST_F(ProbeDevicesTest, AHangingToolIsKilledAtTheTimeout) {
  FakeTool("npu-smi", "info", "", "exec sleep 30");
  const auto start = std::chrono::steady_clock::now();
  ProbeReport r = ProbeDevices({dir_, 0.3});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(r.devices.empty());
  EXPECT_THAT(r.notes, ElementsAre("nvidia-smi: absent", "rocm-smi: absent",
                                   "npu-smi: failed: timed out after 0.3 s"));
  EXPECT_THAT(r.failed, ElementsAre("npu-smi"));
}

TEST_F(ProbeDevicesTest, AnUnexecutableFileIsNotATool) {
  std::ofstream(dir_ + "/nvidia-smi") << "not executable\n";
  fs::permissions(dir_ + "/nvidia-smi", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_directory(dir_ + "/rocm-smi");
  ProbeReport r = ProbeDevices({dir_, 5});
  EXPECT_THAT(r.notes, ElementsAre("nvidia-smi: absent", "rocm-smi: absent", "npu-smi: absent"));
}

}  // namespace
}  // namespace hetsched::svc
