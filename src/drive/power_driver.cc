#include "drive/power_driver.h"

#include <algorithm>

#include "drive/power_demand.h"

namespace hetsched::drive {

using power::NodeState;

PowerDriver::PowerDriver(const model::Cluster& cluster, sched::Scheduler& scheduler,
                         exec::Backend& backend, power::PowerController& controller,
                         PowerEffects& effects, PowerRules rules)
    : cluster_(cluster),
      sched_(scheduler),
      backend_(backend),
      controller_(controller),
      effects_(effects),
      rules_(rules) {}

void PowerDriver::Decide(double now_s) {
  const power::PowerCommands c = controller_.Decide(DemandOf(sched_), now_s);
  next_check_s_ = c.next_check_s;
  if (c.suspend.empty() && c.resume.empty()) return;
  effects_.RecordPower(c, now_s);
  for (const power::NodeCommand& s : c.suspend) SwitchOff(s, now_s);
  for (const power::NodeCommand& r : c.resume) SwitchOn(r, now_s);
}

void PowerDriver::SwitchOff(const power::NodeCommand& c, double now_s) {
  sched_.SetNodeOn(model::NodeId(c.node), false);
  effects_.NodePowerChanged(c.node, NodeChange::kSuspending, now_s);
  if (auto st = backend_.SetNodePower(cluster_.nodes[c.node].name, false); !st.ok()) {
    effects_.PowerSwitchFailed(c.node, false, st);
  }
  if (!rules_.down_report_is_off) Arm({c.node, c.attempt, PowerTimerKind::kShutdown, c.deadline_s});
}

void PowerDriver::SwitchOn(const power::NodeCommand& c, double now_s) {
  effects_.NodePowerChanged(c.node, NodeChange::kBooting, now_s);
  if (auto st = backend_.SetNodePower(cluster_.nodes[c.node].name, true); !st.ok()) {
    effects_.PowerSwitchFailed(c.node, true, st);
  }
  Arm({c.node, c.attempt, PowerTimerKind::kResumeTimeout, c.deadline_s});
}

void PowerDriver::Arm(PowerTimer timer) {
  if (timers_.size() <= static_cast<size_t>(timer.node)) timers_.resize(timer.node + 1);
  timers_[timer.node] = timer;
  timed_.insert(timer.node);
  effects_.PowerTimerArmed(timer);
}

bool PowerDriver::OnTimer(int32_t node, uint32_t attempt, double now_s) {
  if (timed_.count(node) == 0 || timers_[node].attempt != attempt) return false;  // stale
  const PowerTimer t = timers_[node];
  timed_.erase(node);
  if (t.kind == PowerTimerKind::kShutdown) {
    if (controller_.OnSuspended(node, attempt, now_s)) {
      effects_.NodePowerChanged(node, NodeChange::kOff, now_s);
    }
    return false;
  }
  if (!controller_.OnResumeTimeout(node, attempt, now_s)) return false;
  // The jobs that waited for the node are served elsewhere.
  effects_.NodePowerChanged(node, NodeChange::kDown, now_s);
  return true;
}

bool PowerDriver::Expire(double now_s) {
  std::vector<PowerTimer> due;
  for (int32_t n : timed_) {
    if (timers_[n].due_s <= now_s) due.push_back(timers_[n]);
  }
  bool down = false;
  for (const PowerTimer& t : due) down = OnTimer(t.node, t.attempt, now_s) || down;
  return down;
}

double PowerDriver::next_timer_s() const {
  double next = std::numeric_limits<double>::infinity();
  for (int32_t n : timed_) next = std::min(next, timers_[n].due_s);
  return next;
}

NodeReport PowerDriver::Reported(int32_t node, bool up, double now_s) {
  const power::NodePower& p = controller_.node(node);
  switch (p.state) {
    case NodeState::kOnBusy:
    case NodeState::kOnIdle:
      return NodeReport::kNotPower;
    case NodeState::kBooting:
      // Down while booting: its resume timeout decides.
      if (!up || !controller_.OnBooted(node, p.boot_attempt, now_s)) return NodeReport::kNoChange;
      timed_.erase(node);
      sched_.SetNodeOn(model::NodeId(node), true);
      effects_.NodePowerChanged(node, NodeChange::kUp, now_s);
      return NodeReport::kBooted;
    case NodeState::kSuspending:
      if (!up && rules_.down_report_is_off &&
          controller_.OnSuspended(node, p.boot_attempt, now_s)) {
        timed_.erase(node);
        effects_.NodePowerChanged(node, NodeChange::kOff, now_s);
        return NodeReport::kNoChange;
      }
      break;
    case NodeState::kOff:
    case NodeState::kDown:
      break;
  }
  return up ? NodeReport::kUpWhileHeldOff : NodeReport::kNoChange;
}

bool PowerDriver::FoundOff(int32_t node, double now_s) {
  if (!controller_.AssumeOff(node, now_s)) return false;
  sched_.SetNodeOn(model::NodeId(node), false);
  // Told again, in case the daemon stopped before the backend heard.
  if (auto st = backend_.SetNodePower(cluster_.nodes[node].name, false); !st.ok()) {
    effects_.PowerSwitchFailed(node, false, st);
  }
  return true;
}

}  // namespace hetsched::drive
