// PowerController: one cluster's node power as a driver (the simulator, later the daemon) runs
// it: the node state machine with Slurm's timeouts, the policy's wake and suspend decisions
// applied to it, device caps, and the energy the nodes draw.
//
// Pure state and decisions: it owns no clock or event queue. The driver passes `now_s` (never
// decreasing) and the facts it knows (demand, busy devices, boots that completed), carries out
// the commands it gets back, and calls again at the times it is told: next_check_s of the
// commands and each command's deadline_s (drive::PowerDriver keeps those timers).
// Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "power/cap_curve.h"
#include "power/energy_meter.h"
#include "power/node_power.h"
#include "power/power_manager.h"
#include "power/power_options.h"
#include "util/status.h"

namespace hetsched::power {

// What the driver knows about demand at a decision, as plain data (the simulator builds it
// from the scheduler's state; power never sees the scheduler).
struct DemandView {
  // By node id: usable devices as (type id, count): not failed, not reserved for pinned jobs.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> usable;
  std::vector<int32_t> warm_free;  // by type id: free usable devices on powered-on nodes
  std::vector<Demand> demands;     // queued jobs, in the order they should be served
};

// A node to power off or on now. The controller has moved it to kSuspending / kBooting already.
struct NodeCommand {
  int32_t node = -1;
  // Passed back with OnSuspended / OnBooted / OnResumeTimeout; an older attempt is stale.
  uint32_t attempt = 0;
  // Suspend: the node is off by then (its shutdown time). Resume: a node not up by then
  // (ResumeTimeout) is to be reported with OnResumeTimeout, which marks it down.
  double deadline_s = 0;
};

struct PowerCommands {
  std::vector<NodeCommand> suspend;
  std::vector<NodeCommand> resume;
  // Call Decide again then (an idle node reaches SuspendTime, a rate window or a SuspendTimeout
  // ends); infinity when nothing is pending.
  double next_check_s = std::numeric_limits<double>::infinity();
};

class PowerController {
 public:
  // Checks `options` against `cluster` (ValidatePowerOptions). Every node starts on and idle
  // at `start_s` (a daemon's clock does not start at 0), when energy counting starts too.
  // `cluster` is not owned and must outlive the controller.
  static util::Result<PowerController> Create(const model::Cluster& cluster,
                                              const PowerOptions& options, double start_s = 0);

  PowerController(const PowerController&) = delete;
  PowerController& operator=(const PowerController&) = delete;
  PowerController(PowerController&&) = default;
  PowerController& operator=(PowerController&&) = default;

  bool suspends() const { return parts_.suspends; }  // idle-timeout or consolidate
  bool caps() const { return parts_.caps; }

  // Books the current draw up to `now_s`. The calls below that change the draw do so first;
  // a driver that reads the meter between changes calls this at each time it looks.
  void Advance(double now_s) { meter_.Advance(now_s); }

  // Devices start (at power fraction `cap_power` of their cap) or stop work; their nodes turn
  // on-busy or on-idle (the idle timer starts then).
  void SetBusy(const std::vector<model::DeviceId>& devices, bool busy, double cap_power,
               double now_s);
  // Devices an inference service's replicas hold (sim/serving.h), drawing `draw` (a fraction
  // of peak power: the replica's mean while held); 0 gives them back. A held device keeps its
  // node on-busy, whatever SetBusy says, and draws at least `draw`.
  void SetServiceDraw(const std::vector<model::DeviceId>& devices, double draw, double now_s);
  // The cap a job starting on `type` at `now_s` gets (ChooseCap with --cap-max-slowdown);
  // full power when caps are off.
  CapPoint CapFor(model::DeviceTypeId type, std::optional<double> deadline_s, double now_s,
                  double seconds_at_full) const;

  // The policy's suspends and resumes at `now_s`, applied to the node states: the driver must
  // carry out every command (the rate limits count them as done), and must stop placing work
  // on suspended nodes. Under a policy that never suspends, no commands.
  PowerCommands Decide(DemandView demand, double now_s);

  // Reports from the driver. Each returns false, changing nothing, when `attempt` is stale or
  // the node is no longer in the state the report is about.
  bool OnSuspended(int32_t node, uint32_t attempt, double now_s);  // suspending -> off
  // booting -> on-idle: the driver may place work there again.
  bool OnBooted(int32_t node, uint32_t attempt, double now_s);
  // booting -> down (Slurm marks such a node DOWN; final).
  bool OnResumeTimeout(int32_t node, uint32_t attempt, double now_s);

  // Node `node` was appended to the cluster (model::AddNode): on and idle from `now_s`.
  void AddNode(int32_t node, double now_s);

  // The driver found node `node` off (a daemon restarting after it suspended the node, a
  // cluster whose nodes are powered down): on-idle -> off at once, resumable from now. False
  // when the node is not on-idle.
  bool AssumeOff(int32_t node, double now_s);

  const NodePower& node(int32_t n) const { return nodes_[n]; }
  // Capacity may still come up by itself: a node is booting, or the last Decide left queued
  // jobs waiting for a node it could not wake yet (rate limit, SuspendTimeout).
  bool CapacityPending() const { return booting_ > 0 || wake_blocked_; }
  int64_t transitions() const { return transitions_; }      // suspends plus resumes
  int64_t boot_failures() const { return boot_failures_; }  // resumes that timed out
  const EnergyMeter& meter() const { return meter_; }

 private:
  PowerController(const model::Cluster& cluster, PolicyParts parts, const PowerOptions& options,
                  double start_s);

  // Extends the per-node and per-device tables to the cluster's size: new nodes on and idle
  // from `now_s` (excluded when options name them), new devices idle at full cap.
  void Grow(double now_s);
  // Re-books node `n`'s draw for its current state and devices.
  void RefreshNode(int32_t n);
  // A legal move of node `n` (asserted), with its draw re-booked.
  void Transition(int32_t n, NodeState to, double now_s);

  const model::Cluster* cluster_;
  PolicyParts parts_;
  PowerOptions options_;
  PowerManager manager_;
  EnergyMeter meter_;
  std::vector<CapCurve> curves_;  // by type id, when caps are on
  std::vector<NodePower> nodes_;
  std::vector<char> excluded_;           // per node: never suspended
  std::vector<int32_t> node_busy_;       // per node: devices busy or held by a service
  std::vector<NodeState> booked_state_;  // per node: the state its draw is booked under
  std::vector<double> booked_base_w_;    // per node
  std::vector<double> booked_dev_w_;     // per device
  std::vector<char> device_busy_;        // per device
  std::vector<double> device_cap_;       // per device: power fraction of its cap
  std::vector<double> service_draw_;     // per device: SetServiceDraw's, 0 when not held
  bool Active(size_t d) const { return device_busy_[d] || service_draw_[d] > 0; }
  // Books `touched` nodes' busy / idle state and draw after devices changed.
  void RefreshBusyNodes(std::vector<int32_t> touched, double now_s);
  int64_t booting_ = 0;
  bool wake_blocked_ = false;
  int64_t transitions_ = 0;
  int64_t boot_failures_ = 0;
};

}  // namespace hetsched::power
