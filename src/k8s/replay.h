// Replay: what hetsched's extender changes on a Kubernetes cluster, in virtual time
// (`hetsched k8s-replay`, docs/kubernetes.md). A stream of pods is scheduled on a cluster's
// nodes twice: by a model of kube-scheduler's defaults (resource fit, then the node with the
// most CPU left: NodeResourcesFit's LeastAllocated score, ties broken at random), and by the
// same model with hetsched's Extender consulted on every pod as kube-scheduler would consult it
// (filter, then prioritize with the configured weight). The extender runs with its node cache,
// fed with each bind and each pod's end. A pod placed where its image cannot run (a CUDA newer
// than the node's driver, more device memory than the device has) fails after its start-up
// time, and its Job makes a new pod after a back-off, up to a limit: kube-scheduler does not
// know, the extender does.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "k8s/extender.h"
#include "k8s/objects.h"
#include "util/status.h"

namespace hetsched::svc::k8s {

// One pod of the stream: what it asks for and, for the replay only, how long it really runs.
struct ReplayPod {
  std::string name;
  std::string kind;  // a label for reports: llm-train, cv-train, ...
  double arrival_s = 0;
  std::string resource;  // accelerator resource ("" for a CPU pod)
  int32_t count = 0;
  double cpu = 1;                                  // cores requested
  std::map<std::string, std::string> annotations;  // hetsched.io/ stacks, throughput, memory
  // Steps to do, and steps/s per catalog type (the truth the replay runs pods at).
  double work = 0;
  std::map<std::string, double> speed;
};

// A seeded stream: LLM training on 8 GPUs that needs CUDA 12.2 and 60 GiB per GPU, vision
// training on 4 GPUs, batch inference on 1 GPU, ROCm and CANN training, CPU ETL.
std::vector<ReplayPod> GeneratePods(int32_t count, double mean_interarrival_s, uint64_t seed);

struct ReplayOptions {
  bool use_extender = false;
  ExtenderOptions extender;    // node_cache is turned on
  double extender_weight = 5;  // kube-scheduler multiplies the extender's 0..10 by weight x 10
  double startup_s = 60;       // image pull and start before a pod runs (or crashes)
  int32_t backoff_limit = 6;   // failed pods a Job makes again before it gives up
  double node_base_w = 200;    // a node's draw besides its devices (host CPUs, fans)
  uint64_t seed = 1;
};

struct ReplayResult {
  int64_t pods = 0;
  int64_t completed = 0;
  int64_t failed_starts = 0;   // pods placed where they could not run
  int64_t failed_jobs = 0;     // gave up after backoff_limit failed starts
  int64_t never_placed = 0;    // still pending at the end
  double wasted_device_h = 0;  // accelerator-hours held by pods that failed to start
  double avg_jct_s = 0;        // completed pods: arrival to end
  double p99_jct_s = 0;
  double makespan_s = 0;           // last end
  std::vector<double> jct_by_pod;  // per pod of the stream, -1 when it did not complete
  // Linear in the horizon (every node on throughout, busy devices at peak): EnergyKwh(h).
  double busy_device_s_excess_j = 0;  // sum over busy device-seconds of (peak - idle) watts
  double idle_w = 0;                  // all nodes' draw with every device idle
  double occupied_node_s = 0;         // node-seconds with at least one pod
  int32_t nodes = 0;                  // the nodes replayed: the list's, less those left out
  // Nodes hetsched cannot describe (several models, no model label, a stack label that does
  // not read), left out of the run, with why. Their devices' speed and power are unknown.
  std::vector<std::pair<std::string, std::string>> left_out;
  // Device type -> pods started on nodes of that type, failed starts included.
  std::map<std::string, int64_t> placed_by_type;
  double EnergyKwh(double horizon_s) const {
    return (idle_w * horizon_s + busy_device_s_excess_j) / 3.6e6;
  }
  double EmptyNodeHours(double horizon_s) const {
    return (nodes * horizon_s - occupied_node_s) / 3600;
  }
};

// kInvalidArgument for an extender that cannot be made, for nodes whose device product maps to
// no catalog type (naming each, for options.extender.mapping.device_types), and for a list
// with no node a pod could be placed on (empty, or none schedulable once those left out are).
util::Result<ReplayResult> Replay(const std::vector<Node>& nodes,
                                  const std::vector<ReplayPod>& pods, const ReplayOptions& options);

}  // namespace hetsched::svc::k8s
