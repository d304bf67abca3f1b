// libFuzzer target for the fault file (simulate --faults, serve --faults): any bytes must give
// faults or an InvalidArgument naming "faults.csv:LINE"; never a crash or a hang. Accepted faults
// name the cluster's nodes and devices, at times >= 0, start failures on whole nodes only.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/io/cluster_reader.h"
#include "sim/faults.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const hetsched::model::Cluster cluster =
      *hetsched::model::io::LoadCluster("v100=4:per_node=2,k80=2");
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto faults = hetsched::sim::ParseFaults(text, "faults.csv", cluster);
  if (!faults.ok()) {
    if (faults.status().code() != hetsched::util::StatusCode::kInvalidArgument) std::abort();
    if (faults.status().message().rfind("faults.csv:", 0) != 0) std::abort();
    return 0;
  }
  for (const hetsched::sim::Fault& f : *faults) {
    if (!(f.time_s >= 0) || !(f.duration_s >= 0)) std::abort();
    if (!f.node.valid() || f.node.value() >= static_cast<int32_t>(cluster.nodes.size())) {
      std::abort();
    }
    if (f.device.valid() && (f.start_failure || cluster.device(f.device).node != f.node)) {
      std::abort();
    }
  }
  return 0;
}
