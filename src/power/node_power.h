// Node power states and draws: a node is on (busy or idle), suspending, off, booting, or down
// (a boot that never completed). Which transitions are legal, and the watts a node's base
// (chassis, host CPUs, fans) and each of its devices draw in each state.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "model/cluster.h"
#include "model/device_type.h"

namespace hetsched::power {

enum class NodeState : uint8_t { kOnBusy, kOnIdle, kSuspending, kOff, kBooting, kDown };
inline constexpr int kNodeStateCount = 6;
inline constexpr std::array<NodeState, kNodeStateCount> kAllNodeStates = {
    NodeState::kOnBusy, NodeState::kOnIdle,  NodeState::kSuspending,
    NodeState::kOff,    NodeState::kBooting, NodeState::kDown};

std::string_view NodeStateName(NodeState state);  // "on-busy", "on-idle", ...
// On: the scheduler may place work there.
inline bool IsOn(NodeState s) { return s == NodeState::kOnBusy || s == NodeState::kOnIdle; }

// Legal moves: on-idle <-> on-busy, on-idle -> suspending -> off -> booting -> on-idle, and
// booting -> down (its resume timed out).
bool CanTransition(NodeState from, NodeState to);

// One node's power state and the times the policies need.
struct NodePower {
  NodeState state = NodeState::kOnIdle;
  double since_s = 0;         // entered `state`
  double idle_since_s = 0;    // became idle (no busy device), for kOnIdle
  double resumable_at_s = 0;  // off: a resume may be issued from then (SuspendTimeout)
  uint32_t boot_attempt = 0;  // counts resumes; stale boot events carry an older number

  // Moves to `to` at `now_s`; false (and no change) when the move is not legal.
  bool Enter(NodeState to, double now_s);
  // How long the state lasts before the next one by itself: shutdown_s while suspending,
  // boot_s while booting; 0 for the other states, which last until something changes them.
  static double Duration(const model::Node& node, NodeState state);
};

// Base draw of `node` in `state`: base_watts while on, suspending or booting; off or down,
// standby_fraction x base_watts (the BMC and wake-on-LAN stay powered).
double BaseWatts(const model::Node& node, NodeState state, double standby_fraction);
// One device's draw: busy, its peak scaled by `cap_power` (the power fraction of its cap, see
// cap_curve.h) but never below idle; idle on a node that is on, suspending or booting, its idle
// watts; off or down, 0.
double DeviceWatts(const model::DeviceType& type, NodeState state, bool busy, double cap_power);

}  // namespace hetsched::power
