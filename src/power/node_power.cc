#include "power/node_power.h"

#include <algorithm>

namespace hetsched::power {

std::string_view NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kOnBusy:
      return "on-busy";
    case NodeState::kOnIdle:
      return "on-idle";
    case NodeState::kSuspending:
      return "suspending";
    case NodeState::kOff:
      return "off";
    case NodeState::kBooting:
      return "booting";
    case NodeState::kDown:
      return "down";
  }
  return "?";
}

bool CanTransition(NodeState from, NodeState to) {
  switch (from) {
    case NodeState::kOnBusy:
      return to == NodeState::kOnIdle;
    case NodeState::kOnIdle:
      return to == NodeState::kOnBusy || to == NodeState::kSuspending;
    case NodeState::kSuspending:
      return to == NodeState::kOff;
    case NodeState::kOff:
      return to == NodeState::kBooting;
    case NodeState::kBooting:
      return to == NodeState::kOnIdle || to == NodeState::kDown;
    case NodeState::kDown:
      return false;
  }
  return false;
}

bool NodePower::Enter(NodeState to, double now_s) {
  if (!CanTransition(state, to)) return false;
  if (to == NodeState::kOnIdle) idle_since_s = now_s;
  if (to == NodeState::kBooting) ++boot_attempt;
  state = to;
  since_s = now_s;
  return true;
}

double NodePower::Duration(const model::Node& node, NodeState state) {
  if (state == NodeState::kSuspending) return node.shutdown_s;
  if (state == NodeState::kBooting) return node.boot_s;
  return 0;
}

double BaseWatts(const model::Node& node, NodeState state, double standby_fraction) {
  if (state == NodeState::kOff || state == NodeState::kDown) {
    return node.base_watts * standby_fraction;
  }
  return node.base_watts;
}

double DeviceWatts(const model::DeviceType& type, NodeState state, bool busy, double cap_power) {
  if (state == NodeState::kOff || state == NodeState::kDown) return 0;
  if (busy && IsOn(state)) return std::max(type.idle_watts, type.peak_watts * cap_power);
  return type.idle_watts;
}

}  // namespace hetsched::power
