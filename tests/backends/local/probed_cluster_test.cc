#include "backends/local/probed_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/local/device_probe.h"
#include "testing/smi_samples.h"
#include "testing/temp_dir.h"

namespace hetsched::svc {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Sample(const std::string& name) { return hetsched::testing::SmiSample(name); }

std::vector<ProbedDevice> Parsed(util::Result<std::vector<ProbedDevice>> r) {
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<ProbedDevice>{};
}

// Excerpts of /proc/cpuinfo: one processor block each is enough, plus the lines that count.
constexpr const char* kEpyc7763TwoSockets =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
    "model name\t: AMD EPYC 7763 64-Core Processor\nphysical id\t: 0\ncpu cores\t: 64\n\n"
    "processor\t: 1\nvendor_id\t: AuthenticAMD\n"
    "model name\t: AMD EPYC 7763 64-Core Processor\nphysical id\t: 1\ncpu cores\t: 64\n\n";
// A cloud VM that hides the part number (this project's build machine prints this).
constexpr const char* kVmEpyc =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nphysical id\t: 0\n\n"
    "processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nphysical id\t: 0\n\n";
constexpr const char* kXeonGold =
    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
    "model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\nphysical id\t: 0\n\n";
// aarch64 kernels print no "model name" or "physical id" per processor.
constexpr const char* kNeoverse =
    "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n\n"
    "processor\t: 1\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n\n";

HostInfo Host(const char* cpuinfo, std::string arch = "x86_64", std::string name = "gpu-box-1") {
  HostInfo h;
  h.hostname = std::move(name);
  h.arch = std::move(arch);
  ParseCpuInfo(cpuinfo, &h);
  return h;
}

// The node's devices as "type" per position.
std::vector<std::string> Types(const model::Cluster& c) {
  std::vector<std::string> out;
  for (size_t i = 0; i < c.devices.size(); ++i) {
    out.push_back(c.type_of(model::DeviceId(static_cast<int32_t>(i))).name);
  }
  return out;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// ---- /proc/cpuinfo

TEST(ProbedClusterCpuInfo, ReadsModelVendorSocketsAndCpus) {
  HostInfo h = Host(kEpyc7763TwoSockets);
  EXPECT_EQ(h.cpu_vendor, "AuthenticAMD");
  EXPECT_EQ(h.cpu_model, "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(h.sockets, 2);
  EXPECT_EQ(h.logical_cpus, 2);
  h = Host(kNeoverse, "aarch64");
  EXPECT_EQ(h.cpu_model, "");
  EXPECT_EQ(h.cpu_vendor, "");
  EXPECT_EQ(h.sockets, 1) << "no physical id: one socket";
  EXPECT_EQ(h.logical_cpus, 2);
  h = Host("garbage without colons\n\n:\n");
  EXPECT_EQ(h.logical_cpus, 0);
  EXPECT_EQ(h.sockets, 1);
}

TEST(ProbedClusterCpuInfo, ThisMachineHasAHostnameAndAnArchitecture) {
  auto h = ProbeHost();
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_FALSE(h->hostname.empty());
  EXPECT_FALSE(h->arch.empty());
  EXPECT_GE(h->logical_cpus, 1) << "Linux has /proc/cpuinfo";
}

// ---- accelerator models

TEST(ProbedClusterModels, MapsTheRecordedModelsThatTheCatalogDescribes) {
  for (const ProbedDevice& d : Parsed(ParseNvidiaSmiCsv(Sample("nvidia-smi-a100x4.csv")))) {
    auto t = CatalogTypeForAccelerator(d);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(*t, "a100-80g");
  }
  for (const ProbedDevice& d : Parsed(ParseRocmSmiJson(Sample("rocm-smi-mi100-rocm5.json")))) {
    auto t = CatalogTypeForAccelerator(d);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(*t, "mi100") << "'" << d.model << "'";
  }
  for (const ProbedDevice& d : Parsed(ParseNpuSmiInfo(Sample("npu-smi-910b3x8.txt")))) {
    auto t = CatalogTypeForAccelerator(d);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(*t, "ascend-910b");
  }
  for (const ProbedDevice& d : Parsed(ParseNpuSmiInfo(Sample("npu-smi-310p3.txt")))) {
    auto t = CatalogTypeForAccelerator(d);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(*t, "ascend-310p");
  }
  // Names as other nvidia-smi versions and parts print them.
  for (const auto& [model, type] :
       std::vector<std::pair<std::string, std::string>>{{"Tesla V100-SXM2-32GB", "v100-32g"},
                                                        {"tesla t4", "t4"},
                                                        {"  NVIDIA H100 80GB HBM3 ", "h100-80g"},
                                                        {"NVIDIA GeForce RTX 4090", "rtx-4090"}}) {
    auto t = CatalogTypeForAccelerator({"nvidia", 0, model, 0, ""});
    ASSERT_TRUE(t.ok()) << model << ": " << t.status().ToString();
    EXPECT_EQ(*t, type) << model;
  }
  auto mi300 = CatalogTypeForAccelerator({"amd", 3, "AMD Instinct MI300X", 0, ""});
  ASSERT_TRUE(mi300.ok());
  EXPECT_EQ(*mi300, "mi300x");
}

TEST(ProbedClusterModels, RefusesModelsTheCatalogDoesNotDescribe) {
  auto expect_refused = [](const ProbedDevice& d, const std::string& says) {
    auto t = CatalogTypeForAccelerator(d);
    ASSERT_FALSE(t.ok()) << d.model << " -> " << *t;
    EXPECT_EQ(t.status().code(), util::StatusCode::kNotFound);
    EXPECT_THAT(t.status().message(), HasSubstr("'" + d.model + "'"));
    EXPECT_THAT(t.status().message(), HasSubstr(says));
  };
  // Recorded: a GB10, MI210s and Atlas A3 dies have no catalog type.
  expect_refused(Parsed(ParseNvidiaSmiCsv(Sample("nvidia-smi-gb10.csv")))[0],
                 "nvidia-smi device 0 'NVIDIA GB10': no catalog type is this model");
  expect_refused(Parsed(ParseRocmSmiJson(Sample("rocm-smi-mi210-rocm6.json")))[1],
                 "rocm-smi device 1");
  expect_refused(Parsed(ParseNpuSmiInfo(Sample("npu-smi-atlas-a3.txt")))[0], "gives no variant");
  // No h200 in the catalog; other variants of listed parts have other figures.
  expect_refused({"nvidia", 0, "NVIDIA H200", 0, ""}, "no catalog type is this model");
  expect_refused({"nvidia", 0, "NVIDIA A100 80GB PCIe", 0, ""}, "no catalog type");
  expect_refused({"nvidia", 0, "Tesla V100-SXM2-16GB", 0, ""}, "no catalog type");
  expect_refused({"huawei", 0, "910B4", 0, ""}, "npu-smi device 0");
  // The MI250X's dies are listed one by one; the catalog type is the module.
  expect_refused({"amd", 0, "AMD Instinct MI250X", 0, ""}, "each of its two dies");
  // A part number is a whole word, and a model counts only for its own vendor.
  expect_refused({"amd", 0, "AMD Instinct MI1000", 0, ""}, "no catalog type");
  expect_refused({"nvidia", 0, "AMD Instinct MI100", 0, ""}, "no catalog type");
}

// ---- the node

TEST(ProbedClusterBuild, FourA100sAndTheirCpuMakeOneNode) {
  const auto gpus = Parsed(ParseNvidiaSmiCsv(Sample("nvidia-smi-a100x4.csv")));
  auto p = BuildProbedCluster(Host(kEpyc7763TwoSockets), gpus);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->cluster.nodes.size(), 1u);
  EXPECT_EQ(p->cluster.nodes[0].name, "gpu-box-1");
  EXPECT_THAT(Types(p->cluster), ElementsAre("a100-80g", "a100-80g", "a100-80g", "a100-80g",
                                             "epyc-7763", "epyc-7763"));
  EXPECT_THAT(p->notes,
              ElementsAre("cpu: 'AMD EPYC 7763 64-Core Processor' is epyc-7763 (x2 sockets)",
                          "nvidia-smi: 4 x 'NVIDIA A100-SXM4-80GB' -> a100-80g (devices 0-3 of "
                          "nvidia)",
                          "node 'gpu-box-1': a100-80g x4 (node devices 0-3), epyc-7763 x2 (node "
                          "devices 4-5)"));
  // The YAML is the same cluster, for `hetsched validate` or --cluster.
  EXPECT_THAT(p->yaml, HasSubstr("- {type: a100-80g, count: 4}"));
  EXPECT_THAT(p->yaml, HasSubstr("- {type: epyc-7763, count: 2}"));
}

TEST(ProbedClusterBuild, VendorsKeepTheirOwnNumbering) {
  // As ProbeDevices reports them: nvidia-smi's, then rocm-smi's, then npu-smi's; a tool may
  // list out of order.
  std::vector<ProbedDevice> devices = {
      {"nvidia", 1, "Tesla T4", 0, ""},
      {"nvidia", 0, "Tesla T4", 0, ""},
      {"amd", 0, "AMD Instinct MI300X", 0, ""},
      {"huawei", 0, "310P3", 0, ""},
      {"huawei", 1, "310P3", 0, ""},
  };
  auto p = BuildProbedCluster(Host(kXeonGold), devices);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_THAT(Types(p->cluster),
              ElementsAre("t4", "t4", "mi300x", "ascend-310p", "ascend-310p", "xeon-8380"));
  const std::string notes = Joined(p->notes);
  EXPECT_THAT(notes, HasSubstr("nvidia-smi: 2 x 'Tesla T4' -> t4 (devices 0-1 of nvidia)"));
  EXPECT_THAT(notes, HasSubstr("rocm-smi: 1 x 'AMD Instinct MI300X' -> mi300x (devices 0 of amd)"));
  EXPECT_THAT(notes, HasSubstr("npu-smi: 2 x '310P3' -> ascend-310p (devices 0-1 of huawei)"));
  // An Intel CPU the catalog does not list: the catalog's Intel CPU stands in, and says so.
  EXPECT_THAT(notes, HasSubstr("cpu: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz' (GenuineIntel, 1 "
                               "logical CPUs) is no catalog CPU type; using xeon-8380"));
  EXPECT_THAT(notes, HasSubstr("not this CPU's"));
}

TEST(ProbedClusterBuild, AVirtualMachineCpuGetsItsVendorsCatalogCpu) {
  auto p = BuildProbedCluster(Host(kVmEpyc, "x86_64", "vm"), {});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_THAT(Types(p->cluster), ElementsAre("epyc-7763"));
  EXPECT_THAT(p->notes[0], StartsWith("cpu: 'AMD EPYC' (AuthenticAMD, 2 logical CPUs) is no "
                                      "catalog CPU type; using epyc-7763, the catalog's AMD"));
  EXPECT_EQ(p->notes.back(), "node 'vm': epyc-7763 x1 (node devices 0)");
}

TEST(ProbedClusterBuild, ACpuNoCatalogTypeRunsIsLeftOutUnlessItIsAllThereIs) {
  const auto gpus = Parsed(ParseNvidiaSmiCsv("0, NVIDIA H100 80GB HBM3, 81559, GPU-a\n"));
  auto p = BuildProbedCluster(Host(kNeoverse, "aarch64"), gpus);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_THAT(Types(p->cluster), ElementsAre("h100-80g"));
  EXPECT_THAT(Joined(p->notes), HasSubstr("the node gets no CPU device"));

  auto alone = BuildProbedCluster(Host(kNeoverse, "aarch64"), {});
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().code(), util::StatusCode::kInvalidArgument);
  EXPECT_THAT(alone.status().message(),
              AllOf(HasSubstr("offers nothing to schedule on"), HasSubstr("--cluster")));
}

TEST(ProbedClusterBuild, AnUnknownAcceleratorIsAnErrorNamingEveryUnknownModel) {
  std::vector<ProbedDevice> devices = {
      {"nvidia", 0, "NVIDIA H200", 0, ""},
      {"nvidia", 1, "NVIDIA A100-SXM4-80GB", 0, ""},
      {"amd", 0, "AMD Instinct MI210", 0, ""},
  };
  auto p = BuildProbedCluster(Host(kEpyc7763TwoSockets), devices);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), util::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(),
              AllOf(HasSubstr("nvidia-smi device 0 'NVIDIA H200'"),
                    HasSubstr("rocm-smi device 0 'AMD Instinct MI210'"), Not(HasSubstr("A100")),
                    HasSubstr("describe this machine with --cluster")));
}

TEST(ProbedClusterBuild, GapsInAVendorsNumberingAreRefused) {
  std::vector<ProbedDevice> devices = {{"nvidia", 0, "Tesla T4", 0, ""},
                                       {"nvidia", 2, "Tesla T4", 0, ""}};
  auto p = BuildProbedCluster(Host(kXeonGold), devices);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              AllOf(HasSubstr("nvidia-smi reports device 2 where device 1 was expected"),
                    HasSubstr("--cluster")));
  devices[1].index = 0;
  p = BuildProbedCluster(Host(kXeonGold), devices);
  ASSERT_FALSE(p.ok()) << "index 0 twice";
}

TEST(ProbedClusterBuild, AHostnameThatIsNoNodeNameIsRefused) {
  auto p = BuildProbedCluster(Host(kXeonGold, "x86_64", "bad host"), {});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), AllOf(HasSubstr("'bad host'"), HasSubstr("--cluster")));
  p = BuildProbedCluster(Host(kXeonGold, "x86_64", "node-7.lab_b"), {});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
}

// ---- the whole probe, with fake vendor tools on the search path

class ProbeLocalClusterTest : public ::testing::Test {
 protected:
  // A fake tool printing `output` (any arguments), then running `then`.
  void FakeTool(const std::string& name, const std::string& output,
                const std::string& then = "exit 0") {
    const std::string out = dir_.File(name + ".out");
    std::ofstream(out) << output;
    const std::string path = dir_.File(name);
    std::ofstream(path) << "#!/bin/sh\ncat '" << out << "'\n" << then << "\n";
    fs::permissions(path, fs::perms::owner_all);
  }
  hetsched::testing::TempDir dir_;
};

TEST_F(ProbeLocalClusterTest, FakeNvidiaSmiGivesTheNodeItsGpus) {
  FakeTool("nvidia-smi", Sample("nvidia-smi-a100x4.csv"));
  std::vector<std::string> notes;
  auto p = ProbeLocalCluster({dir_.path().string(), 10}, &notes);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->cluster.nodes.size(), 1u);
  auto host = ProbeHost();
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(p->cluster.nodes[0].name, host->hostname);
  const std::vector<std::string> types = Types(p->cluster);
  ASSERT_GE(types.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(types.begin(), types.begin() + 4),
              ElementsAre("a100-80g", "a100-80g", "a100-80g", "a100-80g"));
  // The tools' notes come first, then the mapping's; the caller's copy is the same.
  EXPECT_THAT(notes[0], StartsWith("nvidia-smi: found 4 devices ("));
  EXPECT_EQ(notes[1], "rocm-smi: absent");
  EXPECT_EQ(notes[2], "npu-smi: absent");
  EXPECT_EQ(notes, p->notes);
  EXPECT_THAT(notes.back(), StartsWith("node '" + host->hostname + "': a100-80g x4"));
}

TEST_F(ProbeLocalClusterTest, AFailingToolStopsTheProbe) {
  FakeTool("nvidia-smi", "NVIDIA-SMI has failed because it couldn't communicate with the driver.\n",
           "exit 9");
  std::vector<std::string> notes;
  auto p = ProbeLocalCluster({dir_.path().string(), 10}, &notes);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), util::StatusCode::kUnavailable);
  EXPECT_THAT(p.status().message(),
              AllOf(HasSubstr("nvidia-smi: failed: exit status 9: NVIDIA-SMI has failed"),
                    HasSubstr("--cluster")));
  EXPECT_THAT(notes,
              ElementsAre(StartsWith("nvidia-smi: failed"), "rocm-smi: absent", "npu-smi: absent"));
}

TEST_F(ProbeLocalClusterTest, AnUnknownGpuStopsTheProbeNamingIt) {
  FakeTool("nvidia-smi", "0, NVIDIA H200, 143771, GPU-0a1b\n");
  std::vector<std::string> notes;
  auto p = ProbeLocalCluster({dir_.path().string(), 10}, &notes);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              AllOf(HasSubstr("'NVIDIA H200'"), HasSubstr("describe this machine with --cluster")));
  EXPECT_THAT(notes[0], StartsWith("nvidia-smi: found 1 device ("));
}

}  // namespace
}  // namespace hetsched::svc
