// libFuzzer target for the cluster readers: any bytes, read as a cluster YAML file and as a
// shorthand spec, must yield a consistent cluster or an InvalidArgument with a message.
// Never a crash, a hang, or an allocation the size limits should have refused.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/io/cluster_reader.h"

namespace {

using hetsched::model::Cluster;

// What every accepted cluster promises its users (topology, scheduler).
void CheckCluster(const hetsched::util::Result<Cluster>& result) {
  if (!result.ok()) {
    if (result.status().message().empty()) std::abort();
    if (result.status().code() != hetsched::util::StatusCode::kInvalidArgument) std::abort();
    return;
  }
  const Cluster& c = *result;
  if (c.nodes.empty() || c.devices.empty() || c.racks.empty()) std::abort();
  int32_t next = 0;
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    const hetsched::model::Node& node = c.nodes[n];
    if (node.first_device.value() != next || node.device_count <= 0) std::abort();
    if (!node.rack.valid() || node.rack.value() >= static_cast<int32_t>(c.racks.size())) {
      std::abort();
    }
    if (!(node.nic_bandwidth > 0) || !(node.host_bandwidth > 0)) std::abort();
    for (int32_t i = 0; i < node.device_count; ++i) {
      const hetsched::model::Device& d = c.devices[next + i];
      if (d.node.value() != static_cast<int32_t>(n) || d.local_index != i) std::abort();
      if (d.type.value() < 0 || d.type.value() >= static_cast<int32_t>(c.catalog.size())) {
        std::abort();
      }
      if (d.island >= static_cast<int32_t>(node.islands.size())) std::abort();
      if (d.pcie_switch >= static_cast<int32_t>(node.pcie_switches.size())) std::abort();
    }
    if (c.FindNode(node.name) != hetsched::model::NodeId(static_cast<int32_t>(n))) std::abort();
    next += node.device_count;
  }
  if (next != static_cast<int32_t>(c.devices.size())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckCluster(hetsched::model::io::ParseClusterYaml(text, "fuzz.yaml"));
  // Second path: the same bytes as a one-line shorthand.
  CheckCluster(hetsched::model::io::ParseClusterShorthand(text));
  return 0;
}
