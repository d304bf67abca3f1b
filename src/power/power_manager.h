// PowerManager: the node power policies. Given the nodes' power states, the free powered-on
// devices and what the queue still needs, it decides which nodes to suspend and which to
// resume, and when it next wants to be asked. Pure decision code: no clock, no I/O;
// PowerController (power_controller.h) applies its actions to the nodes' states.
//
//  idle-timeout  Slurm's power saving: a node idle for suspend_time_s is suspended (at most
//                suspend_rate per minute, never one in exclude_nodes); queued jobs that no
//                powered-on or booting device can take resume off nodes (at most resume_rate
//                per minute, not before SuspendTimeout after their suspend).
//  consolidate   idle-timeout plus: `headroom` free devices per type are kept powered on beyond
//                the queue's needs (woken ahead when short, never suspended below it), so
//                arrivals rarely wait for a boot. The scheduler's best-fit placement (fullest
//                node that fits) packs work onto few nodes so that whole nodes empty out.
//  cap           (see ChooseCap) lowers device power caps; combinable: idle-timeout+cap.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "power/cap_curve.h"
#include "power/node_power.h"
#include "power/power_options.h"

namespace hetsched::power {

struct NodeView {
  NodeState state = NodeState::kOnIdle;
  double idle_since_s = 0;    // for kOnIdle
  double resumable_at_s = 0;  // for kOff
  // Usable devices by type (type id, count): not failed, not reserved for pinned jobs.
  std::vector<std::pair<int32_t, int32_t>> devices;
  bool excluded = false;  // never suspended
};

// One queued job: its gang size and the device types it may use, preferred first; or, for a
// job pinned to reserved devices, the nodes holding them.
struct Demand {
  int32_t gang = 1;
  std::vector<int32_t> types;
  std::vector<int32_t> pinned_nodes;
};

struct PowerView {
  double now_s = 0;
  std::vector<NodeView> nodes;     // by node id
  std::vector<int32_t> warm_free;  // by type id: free usable devices on powered-on nodes
  std::vector<Demand> demands;     // queued jobs, in the order they should be served
};

struct PowerActions {
  std::vector<int32_t> suspend;  // node ids (on-idle now)
  std::vector<int32_t> resume;   // node ids (off now)
  // Ask again at this time (an idle node reaches suspend_time_s, a rate-limit window or a
  // SuspendTimeout ends); infinity when nothing is pending.
  double next_check_s = std::numeric_limits<double>::infinity();
  // Queued jobs need a node that could not be resumed yet (rate limit, SuspendTimeout).
  bool wake_blocked = false;
};

// Not thread-safe. Remembers its recent suspends and resumes for the rate limits.
class PowerManager {
 public:
  PowerManager(PolicyParts parts, const PowerOptions& options);

  // Decisions at view.now_s. The caller applies every action it returns (the rate limits
  // count them as done).
  PowerActions Decide(const PowerView& view);

 private:
  // How many more actions the window allows at `now_s` (rate 0: unlimited).
  static size_t Allowed(std::deque<double>& window, int32_t rate, double now_s);

  PolicyParts parts_;
  PowerOptions options_;
  std::deque<double> suspends_, resumes_;  // action times within the last minute
};

// The cap policy: the cap point a job runs at on a device type with `curve`. A job with a
// deadline gets the lowest-energy cap with which it still meets the deadline at `now_s` when
// `seconds_at_full` of work remain at full speed (the full cap when even that misses it); a job
// without one the lowest-energy cap that costs at most max_slowdown of its throughput.
CapPoint ChooseCap(const CapCurve& curve, std::optional<double> deadline_s, double now_s,
                   double seconds_at_full, double max_slowdown);

}  // namespace hetsched::power
