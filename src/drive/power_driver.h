// PowerDriver: carrying power::PowerController's decisions out on an exec::Backend, and turning
// the backend's node reports and the switches' deadlines into the controller's state, with one
// set of rules for both drivers (the simulator's engine and the daemon). The controller decides;
// the driver reads it the demand, switches the nodes it names, takes them out of and back into
// the scheduler's service, and keeps the timers of the switches under way. What only one driver
// does around a switch (the daemon's store and log) it does in its PowerEffects.
//
// The rules (docs/architecture.md, "What happens to a node's power"):
// - A decision reads the demand (drive::DemandOf) and carries out every command the controller
//   returns: suspends before resumes, all written ahead first (PowerEffects::RecordPower); a
//   node to suspend leaves the scheduler's service before the backend is asked to power it off.
// - A suspend is done at its shutdown deadline (the node is off). A backend whose reports of a
//   node going down mean the power-off is done (PowerRules::down_report_is_off, the simulator's
//   backend) completes it with that report instead, and no timer is kept.
// - A resume is done when the backend reports the node up before its resume timeout: the node
//   is back in the scheduler's service. A node not up by then is marked down (final).
// - Any other report about a node in the power books' hands (suspending, off, booting, down)
//   changes nothing: an up report of a node held off is reported back to the driver. A report
//   about a node that is on is not about power: the driver handles it (a failure, a repair).
// - A timer or report of an older switch of the node (its attempt) changes nothing.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "exec/backend.h"
#include "model/cluster.h"
#include "power/power_controller.h"
#include "sched/scheduler.h"
#include "util/status.h"

namespace hetsched::drive {

struct PowerRules {
  // The backend reports a node down when its power-off is done (the simulator's backend), not
  // when it begins (Slurm) or at once (the virtual backend).
  bool down_report_is_off = false;
};

// What a timer ends: a suspend (the node is off then) or a boot (the node is down then).
enum class PowerTimerKind : uint8_t { kShutdown, kResumeTimeout };

struct PowerTimer {
  int32_t node = -1;
  uint32_t attempt = 0;  // the controller's attempt of the switch it belongs to
  PowerTimerKind kind = PowerTimerKind::kShutdown;
  double due_s = 0;
};

// A node's change of power state the driver is told of (after the controller's state changed).
enum class NodeChange : uint8_t {
  kSuspending,  // out of service, about to be powered off
  kBooting,     // about to be powered on
  kOff,         // its suspend is done
  kUp,          // its boot completed: back in service
  kDown,        // not up within the resume timeout: marked down
};

// What a backend report of a node going up or down was, for the driver.
enum class NodeReport : uint8_t {
  kNotPower,  // the node is on in the power books: a failure or repair, the driver's to handle
  kBooted,    // its boot completed: back in service (a decision is due)
  kNoChange,  // about a switch under way or done, or stale: nothing changes
  kUpWhileHeldOff,  // up while the power books hold it off: not used until resumed through them
};

// What a driver does around the rules.
class PowerEffects {
 public:
  virtual ~PowerEffects() = default;
  // Before the backend hears of a decision's suspends and resumes (the daemon writes them ahead).
  virtual void RecordPower(const power::PowerCommands& commands, double now_s) {
    (void)commands, (void)now_s;
  }
  // A timer was armed: a driver with an event queue calls PowerDriver::OnTimer at `due_s`; a
  // polling driver calls Expire when next_timer_s() has passed.
  virtual void PowerTimerArmed(const PowerTimer& timer) { (void)timer; }
  virtual void NodePowerChanged(int32_t node, NodeChange change, double now_s) {
    (void)node, (void)change, (void)now_s;
  }
  // The backend refused to switch the node (`on`: power it on).
  virtual void PowerSwitchFailed(int32_t node, bool on, const util::Status& status) = 0;
};

// Not thread-safe; one caller (the driver's loop).
class PowerDriver {
 public:
  // None is owned; all outlive the driver.
  PowerDriver(const model::Cluster& cluster, sched::Scheduler& scheduler, exec::Backend& backend,
              power::PowerController& controller, PowerEffects& effects, PowerRules rules);

  // Asks the controller for its decision on the scheduler's demand at `now_s` and carries it
  // out. A driver calls it when next_check_s() has come or the demand may have changed.
  void Decide(double now_s);
  // Applies the timers due at `now_s` (next_timer_s() has passed). True when a node was marked
  // down (capacity changed).
  bool Expire(double now_s);
  // Applies `node`'s timer of switch `attempt` (an event driver's, at the timer's due time).
  // True when the node was marked down.
  bool OnTimer(int32_t node, uint32_t attempt, double now_s);
  // The backend reported `node` up or down.
  NodeReport Reported(int32_t node, bool up, double now_s);

  // A node the driver found off (a daemon restarting after it switched the node): off at once,
  // out of service, and the backend is asked again to power it off. False when the node was
  // not on and idle in the power books (nothing changed).
  bool FoundOff(int32_t node, double now_s);
  // A node that left the cluster: off in the power books, never switched again.
  bool Left(int32_t node, double now_s) { return controller_.AssumeOff(node, now_s); }

  // When the controller asked to decide again (infinity: when the demand changes).
  double next_check_s() const { return next_check_s_; }
  // The earliest timer (infinity: none). O(nodes switching).
  double next_timer_s() const;
  double NextDue() const { return std::min(next_check_s_, next_timer_s()); }

 private:
  void Arm(PowerTimer timer);
  void SwitchOff(const power::NodeCommand& c, double now_s);
  void SwitchOn(const power::NodeCommand& c, double now_s);

  const model::Cluster& cluster_;
  sched::Scheduler& sched_;
  exec::Backend& backend_;
  power::PowerController& controller_;
  PowerEffects& effects_;
  PowerRules rules_;
  std::vector<PowerTimer> timers_;  // by node; attempt 0 and node -1: none
  std::set<int32_t> timed_;         // nodes with a timer
  double next_check_s_ = 0;         // at once: every node starts on and idle
};

}  // namespace hetsched::drive
