#include "exec/launch.h"

#include <map>

namespace hetsched::exec {

int32_t VendorIndex(const model::Cluster& cluster, model::DeviceId d) {
  const model::Device& dev = cluster.device(d);
  const model::DeviceType& type = cluster.catalog.Get(dev.type);
  int32_t index = 0;
  for (int32_t i = 0; i < dev.local_index; ++i) {
    const model::DeviceType& other = cluster.type_of(cluster.device_of(dev.node, i));
    if (other.vendor == type.vendor && other.kind != model::DeviceKind::kCpu) ++index;
  }
  return index;
}

std::vector<LaunchSpec> SpecsPerNode(const model::Cluster& cluster,
                                     const std::vector<model::DeviceId>& devices) {
  std::map<model::NodeId, LaunchSpec> by_node;
  for (model::DeviceId d : devices) {
    const model::Device& dev = cluster.device(d);
    LaunchSpec& spec = by_node[dev.node];
    if (spec.node.empty()) {
      const model::DeviceType& type = cluster.catalog.Get(dev.type);
      spec.node = cluster.node(dev.node).name;
      spec.device_type = type.name;
      spec.vendor = type.kind == model::DeviceKind::kCpu ? "" : type.vendor;
    }
    spec.node_devices.push_back(dev.local_index);
    spec.visible_devices.push_back(VendorIndex(cluster, d));
  }
  std::vector<LaunchSpec> out;
  out.reserve(by_node.size());
  for (auto& [node, spec] : by_node) out.push_back(std::move(spec));
  return out;
}

}  // namespace hetsched::exec
