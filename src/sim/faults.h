// Faults: device and node failures for the simulator, from a fault file or drawn from
// MTBF/MTTR rates with a seeded generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "util/status.h"

namespace hetsched::sim {

struct Fault {
  double time_s = 0;
  model::NodeId node;      // the whole node fails when `device` is not valid
  model::DeviceId device;  // one device
  double duration_s = 0;   // down for this long; +infinity: never comes back
  // Not down: every start on the node fails during [time_s, time_s + duration_s) (a broken
  // driver, a full disk). Node targets only.
  bool start_failure = false;
  // Not a failure: an inference service takes the device back for this long (sim/serving.h).
  // The job on it stops as on a fault, but it was told checkpoint_save_s ahead and wrote a
  // checkpoint: it loses the progress of that write only (sim/engine.cc, LoseRun); it is not
  // counted among faults.
  bool service = false;
  // service: what the replica's devices draw while held, as a fraction of peak power (their
  // mean: idle between iterations, peak during them).
  double service_draw = 0;
};

// Fault file: one fault per line, `time_s,target,duration_s[,kind]`, where target is a node
// name or `node/index` and kind is `down` (the default) or `start-failure` (node targets only);
// `#` starts a comment; blank lines are skipped. Durations take units ("2h"). Errors name
// file:line.
util::Result<std::vector<Fault>> ParseFaults(const std::string& text, const std::string& file_name,
                                             const model::Cluster& cluster);
util::Result<std::vector<Fault>> LoadFaults(const std::string& path, const model::Cluster& cluster);

}  // namespace hetsched::sim
