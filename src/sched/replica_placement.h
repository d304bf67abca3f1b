// Where an inference service's replicas go and which ones go away: the replica shapes a service
// may use on a cluster (device types whose stacks run it and whose memory and speed meet its
// SLO), the node and devices a new replica takes, and, given the replica counts a plan
// (sched/replica_plan.h) asks for, which live replicas drain and which replicas start. Pure
// decisions over plain data: the simulator's serving loop (sim/serving.h) applies them, and a
// daemon's serving loop can call the same functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cost/serving.h"
#include "model/cluster.h"
#include "model/job.h"
#include "util/status.h"

namespace hetsched::sched {

// A way to build a replica of one service: `tp` devices of one type on one node.
struct ServiceShape {
  model::DeviceTypeId type;
  int32_t tp = 1;
  double link_bandwidth = 0;  // between its devices: the node's first island, else its host link
  double usd_per_hour = 0;    // all tp devices: price (plus training value) and energy at peak
};

// What a service asks of a replica: its model, SLO, and the requests it is sized for (mean
// tokens, and the prompt length at the SLO's percentile, which one replica must prefill in time).
struct ReplicaSizing {
  cost::ServedModel served;
  cost::ServingSlo slo;
  double mean_input = 1;
  double mean_output = 1;
  double long_input = 0;
};

// What the placement counts in a device-hour besides the type's price.
struct ReplicaPricing {
  double usd_per_kwh = 0;  // energy, at the type's peak draw
  // By type name: a device-hour's worth to the training queue, as a multiple of its price.
  const std::map<std::string, double>* training_value = nullptr;  // none when null
};

// One shape per device type of `cluster` that runs `job` (model::TypeRunsJob: its stacks): the
// tensor-parallel degree (1, 2, 4, ... up to the most devices of the type one node holds) with
// the least cost per request/s among those whose replica meets the SLO (cost::ReplicaOptions:
// the weights and a request's KV cache fit, the steps meet TPOT, prefill meets TTFT). Types in
// id order. InvalidArgument when no type's stacks match ("its stacks match no device type of
// the cluster") or no compatible type meets the SLO (saying, per type, why its widest replica
// misses); the caller names the service.
util::Result<std::vector<ServiceShape>> ChooseServiceShapes(
    const model::Cluster& cluster, const model::Job& job, const ReplicaSizing& sizing,
    const cost::ServingCalibrations& calibrations, const ReplicaPricing& pricing);

// ChooseServiceShapes' shape for `type` alone: the `single:TYPE` baseline. InvalidArgument when
// the cluster has no device of the type ("the cluster has no device of type ..."), the job's
// stacks do not run on it ("its stacks (cuda>=12.0) do not run on mi250x") or no tp meets the
// SLO (saying why the widest misses); the caller names the service.
util::Result<std::vector<ServiceShape>> ShapesOnType(const model::Cluster& cluster,
                                                     const model::Job& job,
                                                     model::DeviceTypeId type,
                                                     const ReplicaSizing& sizing,
                                                     const cost::ServingCalibrations& calibrations,
                                                     const ReplicaPricing& pricing);

// The shapes on the strongest type (fp16 peak) among `shapes`: the `strongest` baseline.
std::vector<ServiceShape> StrongestShapes(const model::DeviceCatalog& catalog,
                                          std::vector<ServiceShape> shapes);

// Best fit for a new replica of `tp` devices of `type`: the node with the fewest free devices of
// the type that still has `tp` (the first such node on a tie), so replicas pack onto few
// machines and whole nodes stay free for training. Returns that node's first `tp` free devices
// of the type, or nothing when no node has room. `held[d]` is non-zero for a device some
// replica holds.
std::vector<model::DeviceId> PlaceReplica(const model::Cluster& cluster,
                                          const std::vector<char>& held, model::DeviceTypeId type,
                                          int32_t tp);

// A replica that takes requests now, with the requests it has queued or running.
struct LiveReplica {
  int32_t id = 0;  // the caller's
  int64_t outstanding = 0;
};
// The live replicas of one service in one shape.
struct ShapeReplicas {
  int32_t tp = 1;
  std::vector<LiveReplica> live;
};

struct ReplicaChanges {
  std::vector<std::vector<int32_t>> drain;         // per service: ids of replicas to drain
  std::vector<std::pair<int32_t, int32_t>> start;  // (service, shape) per replica to start
};

// From the live replicas (per service and shape) to `target` counts (per service and shape):
// where a shape has more than its target, the least loaded go first (they finish soonest; order
// among equal loads unspecified), per service in shape order; where it has fewer, one start per
// missing replica, the widest first (so narrower ones fill the gaps they leave), otherwise in
// service and shape order.
ReplicaChanges ChangesToward(const std::vector<std::vector<ShapeReplicas>>& live,
                             const std::vector<std::vector<int32_t>>& target);

}  // namespace hetsched::sched
