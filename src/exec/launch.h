// Launch specs for a placement: a gang's devices split into one LaunchSpec per node, each
// device named as the node and the vendor's runtime number it. Shared by every driver so that
// they hand backends the same thing for the same placement.
#pragma once

#include <vector>

#include "exec/backend.h"
#include "model/cluster.h"

namespace hetsched::exec {

// The number the vendor's runtime gives device `d`: its position among the devices of its node
// that are of the same vendor and not CPUs (devices are listed in the node in that order, see
// LaunchSpec::visible_devices). O(devices of the node).
int32_t VendorIndex(const model::Cluster& cluster, model::DeviceId d);

// One spec per node `devices` (all of one type) span, by node id, with node, device_type,
// vendor ("" for CPUs: no vendor's *_VISIBLE_DEVICES numbers them), node_devices and
// visible_devices filled in; the caller fills in the rest. O(devices x devices per node).
std::vector<LaunchSpec> SpecsPerNode(const model::Cluster& cluster,
                                     const std::vector<model::DeviceId>& devices);

}  // namespace hetsched::exec
