#include "model/io/cluster_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "testing/build_paths.h"
#include "util/file.h"

namespace hetsched::model::io {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kSource = HETSCHED_SOURCE_DIR;

// A valid two-rack cluster; tests append or replace lines to break one thing at a time.
const char* kGood = R"(name: tiny
network: {core_latency: 3us}
racks:
  - {name: r1, uplink_bandwidth: 400Gb/s, latency: 1us}
  - {name: r2, uplink_bandwidth: 400Gb/s, latency: 1us}
nodes:
  - name: gpu-[01-02]
    rack: r1
    devices:
      - {type: a100-80g, count: 4}
      - {type: xeon-8380, count: 2}
    islands:
      - {kind: nvlink, members: [0, 1, 2, 3], bandwidth: 300GB/s, latency: 2us}
    pcie_switches:
      - {members: [0, 1], bandwidth: 31.5GB/s, latency: 1us}
    nic: {bandwidth: 200Gb/s, latency: 1us}
    host_memory: 1TiB
    cores: 64
    base_power: 1kW
    boot_time: 3m
    shutdown_time: 60s
    labels: {team: ml}
  - name: cpu
    count: 3
    rack: r2
    devices: [{type: epyc-7763, count: 2}]
    host_link: {bandwidth: 100GB/s, latency: 0.2us}
    nic: {bandwidth: 100Gb/s, latency: 3us}
)";

std::string Error(const std::string& text) {
  util::Result<Cluster> c = ParseClusterYaml(text, "c.yaml");
  EXPECT_FALSE(c.ok()) << "accepted:\n" << text;
  if (c.ok()) return "";
  EXPECT_EQ(c.status().code(), util::StatusCode::kInvalidArgument);
  return c.status().message();
}

// kGood with the first occurrence of `from` replaced by `to`.
std::string With(const std::string& from, const std::string& to) {
  std::string text = kGood;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ClusterReaderTest, ParsesAllFields) {
  util::Result<Cluster> r = ParseClusterYaml(kGood, "c.yaml");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Cluster& c = *r;
  EXPECT_EQ(c.name, "tiny");
  EXPECT_DOUBLE_EQ(c.network_latency_s, 3e-6);
  ASSERT_EQ(c.racks.size(), 2u);
  EXPECT_DOUBLE_EQ(c.racks[0].uplink_bandwidth, 50e9);
  ASSERT_EQ(c.nodes.size(), 5u);
  EXPECT_EQ(c.nodes[0].name, "gpu-01");
  EXPECT_EQ(c.nodes[1].name, "gpu-02");
  EXPECT_EQ(c.nodes[2].name, "cpu-1");
  EXPECT_EQ(c.nodes[4].name, "cpu-3");
  EXPECT_EQ(c.racks[0].nodes.size(), 2u);
  EXPECT_EQ(c.racks[1].nodes.size(), 3u);
  ASSERT_EQ(c.devices.size(), 2u * 6 + 3u * 2);

  const Node& g = c.nodes[1];
  EXPECT_EQ(g.first_device.value(), 6);
  EXPECT_EQ(g.device_count, 6);
  ASSERT_EQ(g.islands.size(), 1u);
  EXPECT_EQ(g.islands[0].kind, LinkKind::kNvlink);
  EXPECT_DOUBLE_EQ(g.islands[0].bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(g.islands[0].latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(g.host_bandwidth, 31.5e9);  // documented default: PCIe 4.0 x16
  EXPECT_DOUBLE_EQ(g.host_latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(g.nic_bandwidth, 25e9);
  EXPECT_EQ(g.host_memory_bytes, 1ull << 40);
  EXPECT_EQ(g.cores, 64);
  EXPECT_DOUBLE_EQ(g.base_watts, 1000);
  EXPECT_DOUBLE_EQ(g.boot_s, 180);
  EXPECT_DOUBLE_EQ(g.shutdown_s, 60);
  EXPECT_EQ(g.labels.at("team"), "ml");
  // Devices of gpu-02: 4 A100 in the island (two also under the switch), then 2 CPU sockets.
  const DeviceTypeId a100 = *c.catalog.FindId("a100-80g");
  const DeviceTypeId xeon = *c.catalog.FindId("xeon-8380");
  for (int i = 0; i < 6; ++i) {
    const Device& d = c.device(c.device_of(NodeId(1), i));
    EXPECT_EQ(d.node, NodeId(1));
    EXPECT_EQ(d.local_index, i);
    EXPECT_EQ(d.type, i < 4 ? a100 : xeon);
    EXPECT_EQ(d.island, i < 4 ? 0 : -1);
    EXPECT_EQ(d.pcie_switch, i < 2 ? 0 : -1);
  }
  EXPECT_DOUBLE_EQ(c.nodes[2].host_bandwidth, 100e9);
  EXPECT_EQ(c.FindNode("cpu-2"), NodeId(3));
  EXPECT_EQ(c.FindRack("r2"), RackId(1));
}

TEST(ClusterReaderTest, ExpandsNamePatterns) {
  auto names = [](const std::string& entry) {
    std::string text =
        "name: p\nracks: [{name: r, uplink_bandwidth: 1Gb/s, latency: 1us}]\n"
        "nodes:\n  - {" +
        entry + ", devices: [{type: t4, count: 1}], nic: {bandwidth: 1Gb/s, latency: 1us}}\n";
    util::Result<Cluster> c = ParseClusterYaml(text, "p.yaml");
    std::vector<std::string> out;
    if (!c.ok()) {
      out.push_back(c.status().message());
      return out;
    }
    for (const Node& n : c->nodes) out.push_back(n.name);
    return out;
  };
  using V = std::vector<std::string>;
  // Inside a YAML flow map `[` starts a list, so patterns are quoted there.
  EXPECT_EQ(names("name: 'n[8-11]'"), (V{"n8", "n9", "n10", "n11"}));
  EXPECT_EQ(names("name: 'n[08-11]'"), (V{"n08", "n09", "n10", "n11"}));
  EXPECT_EQ(names("name: \"gpu-nv-[01-04]\""),
            (V{"gpu-nv-01", "gpu-nv-02", "gpu-nv-03", "gpu-nv-04"}));
  EXPECT_EQ(names("name: 'r[1-2]-gpu'"), (V{"r1-gpu", "r2-gpu"}));
  EXPECT_EQ(names("name: 'n[7-7]'"), (V{"n7"}));
  EXPECT_EQ(names("name: solo"), (V{"solo"}));
  EXPECT_EQ(names("name: ws, count: 2"), (V{"ws-1", "ws-2"}));
  V twelve = names("name: ws, count: 12");
  ASSERT_EQ(twelve.size(), 12u);
  EXPECT_EQ(twelve.front(), "ws-01");
  EXPECT_EQ(twelve.back(), "ws-12");
  EXPECT_THAT(names("name: 'n[3-1]'")[0],
              StartsWith("p.yaml:4:12: nodes[0].name: 'n[3-1]': range runs backwards"));
  EXPECT_THAT(names("name: 'n[1-2][3-4]'")[0],
              StartsWith("p.yaml:4:12: nodes[0].name: 'n[1-2][3-4]' is not a valid name pattern"));
  EXPECT_THAT(names("name: 'n[a-b]'")[0],
              StartsWith("p.yaml:4:12: nodes[0].name: 'n[a-b]': range bounds must be whole"));
  EXPECT_THAT(names("name: 'n x'")[0],
              StartsWith("p.yaml:4:12: nodes[0].name: 'n x' is not a valid node name"));
  EXPECT_THAT(names("name: 'n[1-2]', count: 2")[0],
              StartsWith("p.yaml:4:29: nodes[0].count: a name pattern already says how many"));
}

TEST(ClusterReaderTest, HugePatternIsRejectedWithoutAllocating) {
  auto start = std::chrono::steady_clock::now();
  std::string msg = Error(With("gpu-[01-02]", "n[1-999999999]"));
  EXPECT_THAT(msg, StartsWith("c.yaml:7:11: nodes[0].name: 'n[1-999999999]' expands to 999999999 "
                              "nodes, more than one entry may hold (expected at most 100000"));
  EXPECT_THAT(Error(With("gpu-[01-02]", "n[1-9999999999]")),
              StartsWith("c.yaml:7:11: nodes[0].name: 'n[1-9999999999]': range bounds must be"));
  // Within the per-entry limit but over the cluster's device limit.
  std::string big = With("gpu-[01-02]", "n[1-100000]");
  big.replace(big.find("count: 4}"), 9, "count: 4000}");
  EXPECT_THAT(Error(big),
              StartsWith("c.yaml:7:5: nodes[0]: too many devices (expected at most 10000000"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(ClusterReaderTest, RejectsMalformedYaml) {
  EXPECT_THAT(Error("name: x\nracks: [a, b\n"), StartsWith("c.yaml:3:1: not valid YAML: "));
  EXPECT_THAT(Error("name: x\n  bad: indent: here\n"), StartsWith("c.yaml:2:"));
  EXPECT_THAT(Error(""), StartsWith("c.yaml:1:1: the file is empty"));
  EXPECT_THAT(Error("- a\n- b\n"), StartsWith("c.yaml:1:1: (document): is not a map"));
  EXPECT_THAT(Error(std::string(5000, '[')), HasSubstr("not valid YAML"));
}

// Storage servers (in a rack or on the core) and the spine's capacity, and bad entries.
TEST(ClusterReaderTest, ParsesStorageAndTheSpine) {
  std::string text = With("network: {core_latency: 3us}",
                          "network: {core_latency: 3us, spine_bandwidth: 800Gb/s}");
  text.replace(text.find("nodes:"), 6,
               "storage:\n  - {name: nas, rack: r2, bandwidth: 100Gb/s}\n"
               "  - {name: lake, bandwidth: 50GB/s}\nnodes:");
  util::Result<Cluster> r = ParseClusterYaml(text, "c.yaml");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->spine_bandwidth, 100e9);
  ASSERT_EQ(r->storage.size(), 2u);
  EXPECT_EQ(r->storage[0].name, "nas");
  EXPECT_EQ(r->storage[0].rack, *r->FindRack("r2"));
  EXPECT_DOUBLE_EQ(r->storage[0].bandwidth, 12.5e9);
  EXPECT_FALSE(r->storage[1].rack.valid());
  EXPECT_TRUE(r->FindStorage("lake").has_value());

  EXPECT_THAT(
      Error(With("nodes:", "storage:\n  - {name: nas, rack: r9, bandwidth: 1GB/s}\nnodes:")),
      StartsWith("c.yaml:7:23: storage[0].rack: no rack 'r9' (expected one of the racks "
                 "above)"));
  EXPECT_THAT(Error(With("nodes:", "storage:\n  - {name: r1, bandwidth: 1GB/s}\nnodes:")),
              StartsWith("c.yaml:7:12: storage[0].name: 'r1' already names a storage or rack"));
  EXPECT_THAT(Error(With("nodes:", "storage:\n  - {name: nas}\nnodes:")),
              StartsWith("c.yaml:7:5: storage[0].bandwidth: missing required field"));
  EXPECT_THAT(Error(With("nodes:", "storage:\n  - {name: nas, bandwidth: fast}\nnodes:")),
              StartsWith("c.yaml:7:28: storage[0].bandwidth: 'fast' is not a bandwidth"));
}

TEST(ClusterReaderTest, RejectsUnknownFields) {
  EXPECT_THAT(Error(With("network:", "netwrk:")),
              StartsWith("c.yaml:2:1: netwrk: unknown field (expected one of: name, network, "
                         "device_types, racks, storage, nodes)"));
  EXPECT_THAT(
      Error(With("    cores: 64", "    corse: 64")),
      StartsWith("c.yaml:18:5: nodes[0].corse: unknown field (expected one of: name, count"));
  EXPECT_THAT(Error(With("{type: a100-80g, count: 4}", "{type: a100-80g, cnt: 4}")),
              StartsWith("c.yaml:10:26: nodes[0].devices[0].cnt: unknown field (expected one of: "
                         "type, count)"));
  EXPECT_THAT(Error(With("latency: 2us}", "latency: 2us, speed: 1}")),
              StartsWith("c.yaml:13:81: nodes[0].islands[0].speed: unknown field"));
  EXPECT_THAT(Error(With("    cores: 64", "    cores: 64\n    cores: 65")),
              StartsWith("c.yaml:19:5: nodes[0].cores: appears twice (first at line 18)"));
}

TEST(ClusterReaderTest, RejectsUnknownDeviceType) {
  std::string msg = Error(With("type: a100-80g", "type: a100-81g"));
  EXPECT_THAT(msg, StartsWith("c.yaml:10:16: nodes[0].devices[0].type: unknown device type "
                              "'a100-81g' (expected one of: "));
  EXPECT_THAT(msg, HasSubstr("a100-80g"));
  EXPECT_THAT(msg, HasSubstr("ascend-910b"));
}

TEST(ClusterReaderTest, RejectsBadCounts) {
  EXPECT_THAT(Error(With("count: 4}", "count: -4}")),
              StartsWith("c.yaml:10:33: nodes[0].devices[0].count: '-4' is negative (expected a "
                         "whole number from 1 to 4096)"));
  EXPECT_THAT(Error(With("count: 4}", "count: 0}")),
              StartsWith("c.yaml:10:33: nodes[0].devices[0].count: is zero"));
  EXPECT_THAT(Error(With("count: 4}", "count: 99999999999999999999999}")),
              StartsWith("c.yaml:10:33: nodes[0].devices[0].count: '99999999999999999999999' is "
                         "too large"));
  EXPECT_THAT(Error(With("count: 4}", "count: 2.5}")),
              StartsWith("c.yaml:10:33: nodes[0].devices[0].count: '2.5' is not a whole number"));
  EXPECT_THAT(Error(With("count: 3", "count: 200000")),
              StartsWith("c.yaml:24:12: nodes[1].count: '200000' is too large (expected a whole "
                         "number from 1 to 100000)"));
  EXPECT_THAT(Error(With("cores: 64", "cores: -1")), StartsWith("c.yaml:18:12: nodes[0].cores: "));
}

TEST(ClusterReaderTest, RejectsBadQuantities) {
  EXPECT_THAT(Error(With("bandwidth: 200Gb/s", "bandwidth: 200GB")),
              StartsWith("c.yaml:16:22: nodes[0].nic.bandwidth: unknown unit 'GB' in '200GB'"));
  EXPECT_THAT(Error(With("bandwidth: 200Gb/s", "bandwidth: 0Gb/s")),
              StartsWith("c.yaml:16:22: nodes[0].nic.bandwidth: is zero (expected a positive "
                         "bandwidth"));
  EXPECT_THAT(Error(With("host_memory: 1TiB", "host_memory: -1TiB")),
              StartsWith("c.yaml:17:18: nodes[0].host_memory: '-1TiB' is negative"));
  EXPECT_THAT(Error(With("host_memory: 1TiB", "host_memory: 1e30TiB")),
              StartsWith("c.yaml:17:18: nodes[0].host_memory: "));
  EXPECT_THAT(Error(With("boot_time: 3m", "boot_time: soon")),
              StartsWith("c.yaml:20:16: nodes[0].boot_time: 'soon' is not a duration"));
  EXPECT_THAT(Error(With("base_power: 1kW", "base_power: [1]")),
              StartsWith("c.yaml:19:17: nodes[0].base_power: is a list"));
}

TEST(ClusterReaderTest, RejectsMissingRequiredFields) {
  EXPECT_THAT(Error(With("    nic: {bandwidth: 200Gb/s, latency: 1us}\n", "")),
              StartsWith("c.yaml:7:5: nodes[0].nic: missing required field"));
  EXPECT_THAT(Error(With("nic: {bandwidth: 200Gb/s, latency: 1us}", "nic: {bandwidth: 200Gb/s}")),
              StartsWith("c.yaml:16:10: nodes[0].nic.latency: missing required field"));
  EXPECT_THAT(Error(With("    rack: r1\n", "")),
              StartsWith("c.yaml:7:5: nodes[0].rack: missing required field (expected the name of "
                         "one of the racks)"));
  EXPECT_THAT(Error(With("network: {core_latency: 3us}\n", "")),
              StartsWith("c.yaml:1:1: network: missing required field"));
  EXPECT_THAT(Error(With("name: tiny\n", "")),
              StartsWith("c.yaml:1:1: name: missing required field"));
  EXPECT_THAT(Error(With("{type: a100-80g, count: 4}", "{type: a100-80g}")),
              StartsWith("c.yaml:10:9: nodes[0].devices[0].count: missing required field"));
}

TEST(ClusterReaderTest, RejectsDuplicateNodeNames) {
  EXPECT_THAT(Error(With("  - name: cpu\n    count: 3", "  - name: gpu-[02-03]")),
              StartsWith("c.yaml:23:11: nodes[1].name: node name 'gpu-02' is already used by the "
                         "entry on line 7 (expected unique node names)"));
  EXPECT_THAT(Error(With("  - name: cpu\n    count: 3", "  - name: gpu-01")),
              StartsWith("c.yaml:23:11: nodes[1].name: node name 'gpu-01' is already used"));
  // The same expansion written twice in one file.
  std::string text = With("  - name: cpu\n", "  - name: gpu\n");
  text.replace(text.find("gpu-[01-02]"), 11, "gpu-[1-2]");
  EXPECT_THAT(Error(text), StartsWith("c.yaml:23:11: nodes[1].name: node name 'gpu-1' is already "
                                      "used by the entry on line 7"));
  EXPECT_THAT(Error(With("{name: r2,", "{name: r1,")),
              StartsWith("c.yaml:5:12: racks[1].name: rack 'r1' is defined twice"));
}

TEST(ClusterReaderTest, RejectsMissingRack) {
  EXPECT_THAT(Error(With("rack: r2", "rack: r9")),
              StartsWith("c.yaml:25:11: nodes[1].rack: no rack named 'r9' (expected one of the "
                         "racks: r1, r2)"));
}

TEST(ClusterReaderTest, RejectsBadIslands) {
  EXPECT_THAT(Error(With("members: [0, 1, 2, 3]", "members: [0, 1, 2, 6]")),
              StartsWith("c.yaml:13:43: nodes[0].islands[0].members[3]: device index 6 is out of "
                         "range: the node has 6 devices"));
  EXPECT_THAT(Error(With("members: [0, 1, 2, 3]", "members: [0, -1]")),
              StartsWith("c.yaml:13:37: nodes[0].islands[0].members[1]: '-1' is not a device "
                         "index"));
  EXPECT_THAT(
      Error(With("latency: 2us}\n",
                 "latency: 2us}\n      - {kind: xgmi, members: [3, 4], bandwidth: 1GB/s, "
                 "latency: 1us}\n")),
      StartsWith("c.yaml:14:32: nodes[0].islands[1].members[0]: device 3 is already in island 0 "
                 "(expected each device in at most one island)"));
  EXPECT_THAT(Error(With("members: [0, 1, 2, 3]", "members: [1, 1]")),
              StartsWith("c.yaml:13:37: nodes[0].islands[0].members[1]: device 1 is listed twice"));
  EXPECT_THAT(Error(With("members: [0, 1, 2, 3]", "members: [1]")),
              StartsWith("c.yaml:13:33: nodes[0].islands[0].members: needs at least 2 devices"));
  EXPECT_THAT(Error(With("members: [0, 1, 2, 3]", "members: [0, 1, 2, 3, 4, 5, 0]")),
              StartsWith("c.yaml:13:33: nodes[0].islands[0].members: lists 7 devices but the "
                         "node has 6"));
  EXPECT_THAT(Error(With("kind: nvlink", "kind: infiniband")),
              StartsWith("c.yaml:13:16: nodes[0].islands[0].kind: unknown link kind 'infiniband' "
                         "(expected nvlink, xgmi or hccs)"));
  EXPECT_THAT(Error(With("members: [0, 1]", "members: some")),
              StartsWith("c.yaml:15:19: nodes[0].pcie_switches[0].members: 'some'"));
}

TEST(ClusterReaderTest, RejectsEmptyClusters) {
  std::string text = kGood;
  text = text.substr(0, text.find("nodes:")) + "nodes: []\n";
  EXPECT_THAT(Error(text), StartsWith("c.yaml:6:8: nodes: the cluster has no nodes"));
  EXPECT_THAT(Error(With("devices: [{type: epyc-7763, count: 2}]", "devices: []")),
              StartsWith("c.yaml:26:14: nodes[1].devices: is empty or not a list"));
  EXPECT_THAT(Error(With("racks:\n  - {name: r1, uplink_bandwidth: 400Gb/s, latency: 1us}\n  - "
                         "{name: r2, uplink_bandwidth: 400Gb/s, latency: 1us}",
                         "racks: []")),
              StartsWith("c.yaml:3:8: racks: is empty or not a list"));
}

TEST(ClusterReaderTest, RandomBinaryFailsCleanly) {
  std::mt19937 rng(42);
  for (int round = 0; round < 20; ++round) {
    std::string bytes(16 * 1024, '\0');
    for (char& b : bytes) b = static_cast<char>(rng() & 0xff);
    util::Result<Cluster> c = ParseClusterYaml(bytes, "junk.bin");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), util::StatusCode::kInvalidArgument);
    EXPECT_THAT(c.status().message(), StartsWith("junk.bin:"));
  }
}

TEST(ClusterReaderTest, DeviceTypesSectionAddsTypes) {
  std::string text = With("network:", R"(device_types:
  - name: my-npu
    vendor: acme
    kind: npu
    stacks: ["acme 1.0"]
    fp16_tflops: 100
    memory: 32GiB
    memory_bandwidth: 1TB/s
    idle_power: 20W
    peak_power: 200W
    estimated: true
network:)");
  text = text.replace(text.find("type: xeon-8380"), 15, "type: my-npu");
  util::Result<Cluster> c = ParseClusterYaml(text, "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->type_of(DeviceId(4)).name, "my-npu");
  EXPECT_EQ(c->type_of(DeviceId(4)).memory_bytes, 32ull << 30);
  // Errors inside device_types come from its reader with the same format.
  EXPECT_THAT(Error(With("network:", "device_types:\n  - name: broken\nnetwork:")),
              StartsWith("c.yaml:3:5: device_types[0]"));
}

TEST(ClusterShorthandTest, OneDevicePerNode) {
  util::Result<Cluster> c = ParseClusterShorthand("v100=36,p100=36,k80=36");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->nodes.size(), 108u);
  EXPECT_EQ(c->devices.size(), 108u);
  EXPECT_EQ(c->racks.size(), 1u);
  EXPECT_EQ(c->nodes[0].name, "v100-01");
  EXPECT_EQ(c->nodes[107].name, "k80-36");
  EXPECT_EQ(c->type_of(DeviceId(0)).name, "v100-32g");
  EXPECT_EQ(c->type_of(DeviceId(107)).name, "k80");
}

TEST(ClusterShorthandTest, DevicesPerNode) {
  util::Result<Cluster> c = ParseClusterShorthand("a100-80g=32:per_node=8, xeon-8380=4:per_node=2");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->nodes.size(), 6u);
  EXPECT_EQ(c->nodes[3].name, "a100-80g-4");
  EXPECT_EQ(c->nodes[3].device_count, 8);
  EXPECT_EQ(c->nodes[3].first_device, DeviceId(24));
  EXPECT_EQ(c->nodes[5].name, "xeon-8380-2");
  EXPECT_EQ(c->device(DeviceId(35)).node, NodeId(5));
}

TEST(ClusterShorthandTest, ErrorsPointAtTheColumn) {
  auto err = [](std::string_view spec) {
    util::Result<Cluster> c = ParseClusterShorthand(spec);
    EXPECT_FALSE(c.ok()) << spec;
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_THAT(err("v100=abc"), StartsWith("<shorthand>:1:6: v100=abc: 'abc' is not a whole number "
                                          "(expected TYPE=COUNT[:per_node=N]"));
  EXPECT_THAT(err("v100=36,p100=-2"), StartsWith("<shorthand>:1:14: p100=-2: '-2' is not a whole"));
  EXPECT_THAT(err("v100=0"), StartsWith("<shorthand>:1:6: v100=0: is zero"));
  EXPECT_THAT(err("v100=99999999999999"), StartsWith("<shorthand>:1:6: v100=99999999999999: "
                                                     "'99999999999999' is not a whole number"));
  EXPECT_THAT(err("v100=20000000"), StartsWith("<shorthand>:1:6: v100=20000000: 20000000 is more "
                                               "than 10000000"));
  EXPECT_THAT(err("v100=3,gpu=2"), StartsWith("<shorthand>:1:8: gpu=2: unknown device type 'gpu' "
                                              "(expected one of: "));
  EXPECT_THAT(err("v100"), StartsWith("<shorthand>:1:1: v100: missing '=COUNT'"));
  EXPECT_THAT(err("v100=3,,k80=2"), StartsWith("<shorthand>:1:8: empty term"));
  EXPECT_THAT(err(""), StartsWith("<shorthand>:1:1: empty term"));
  EXPECT_THAT(err("v100=30:per_node=8"), StartsWith("<shorthand>:1:6: v100=30:per_node=8: 30 "
                                                    "devices do not fill whole nodes of 8"));
  EXPECT_THAT(err("v100=8:per_nod=2"), StartsWith("<shorthand>:1:8: v100=8:per_nod=2: unknown "
                                                  "option 'per_nod=2'"));
  EXPECT_THAT(err("v100=8:per_node=x"), StartsWith("<shorthand>:1:17: v100=8:per_node=x: 'x' is "
                                                   "not a whole number"));
  EXPECT_THAT(err("v100=1,v100-32g=2"), StartsWith("<shorthand>:1:8: v100-32g=2: device type "
                                                   "'v100-32g' appears twice"));
  EXPECT_THAT(err("k80=200000"), StartsWith("<shorthand>:1:5: k80=200000: 200000 nodes are more "
                                            "than 100000"));
}

TEST(LoadClusterTest, FileShorthandOrNotFound) {
  util::Result<Cluster> file = LoadCluster(kSource + "/examples/clusters/gavel-108.yaml");
  ASSERT_TRUE(file.ok()) << file.status().message();
  util::Result<Cluster> spec = LoadCluster("v100=36,p100=36,k80=36");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  // The example file spells out exactly what the shorthand assumes.
  ASSERT_EQ(file->nodes.size(), spec->nodes.size());
  ASSERT_EQ(file->devices.size(), spec->devices.size());
  ASSERT_EQ(file->racks.size(), spec->racks.size());
  EXPECT_DOUBLE_EQ(file->racks[0].latency_s, spec->racks[0].latency_s);
  EXPECT_DOUBLE_EQ(file->racks[0].uplink_bandwidth, spec->racks[0].uplink_bandwidth);
  for (size_t i = 0; i < file->nodes.size(); ++i) {
    const Node& a = file->nodes[i];
    const Node& b = spec->nodes[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.device_count, b.device_count);
    EXPECT_DOUBLE_EQ(a.nic_bandwidth, b.nic_bandwidth);
    EXPECT_DOUBLE_EQ(a.nic_latency_s, b.nic_latency_s);
    EXPECT_DOUBLE_EQ(a.host_bandwidth, b.host_bandwidth);
    EXPECT_EQ(file->type_of(a.first_device).name, spec->type_of(b.first_device).name);
  }

  util::Result<Cluster> missing = LoadCluster("no/such/cluster.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), util::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), StartsWith("no/such/cluster.yaml: no such cluster file"));
}

TEST(LoadClusterTest, EveryExampleParses) {
  for (const char* name : {"seed-startup", "gavel-108", "lab-mixed", "frontier-mixed"}) {
    util::Result<Cluster> c = LoadCluster(kSource + "/examples/clusters/" + name + ".yaml");
    EXPECT_TRUE(c.ok()) << name << ": " << c.status().message();
  }
  util::Result<Cluster> seed = LoadCluster(kSource + "/examples/clusters/seed-startup.yaml");
  ASSERT_TRUE(seed.ok());
  EXPECT_EQ(seed->nodes.size(), 39u);
  EXPECT_EQ(seed->devices.size(), 4u * 8 + 4u * 8 + 8u + 30u * 2);
}

}  // namespace
}  // namespace hetsched::model::io
