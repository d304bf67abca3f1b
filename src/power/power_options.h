// PowerOptions: how the power manager (src/power) runs a cluster's nodes: the policy by name and
// its knobs, and the electricity prices and carbon intensity energy is accounted with.
// The simulator takes them in sim::SimOptions::power; the daemon will take the same.
#pragma once

#include <string>

namespace hetsched::power {

struct PowerOptions {
  // always-on | idle-timeout | consolidate | cap (see power/policy.h for what each does).
  std::string policy = "always-on";
};

}  // namespace hetsched::power
