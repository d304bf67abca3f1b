// EnergyMeter: integrates a cluster's piecewise-constant power draw over virtual time into
// energy by node state and by device type (plus the nodes' base draw), electricity cost at a
// time-of-day tariff, and peak power. The caller changes the draw only after Advance(now).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "power/node_power.h"
#include "power/tariff.h"

namespace hetsched::power {

class EnergyMeter {
 public:
  // `types`: names of the device-type buckets (indexed by catalog type id); the nodes' base
  // draw goes to its own bucket, kBaseName.
  // Energy is counted from `start_s` on.
  EnergyMeter(std::vector<std::string> types, Tariff tariff, double start_s = 0);

  static constexpr const char* kBaseName = "node-base";

  // Books the current draw from the last Advance up to `now_s` (no-op when not later).
  void Advance(double now_s);
  // Changes the draw from now on: `watts` (may be negative) in node state `state`, drawn by
  // device type `type` (-1: a node's base).
  void Add(NodeState state, int32_t type, double watts);

  double watts() const { return total_w_; }
  double joules() const { return joules_; }
  double kwh() const;
  double cost() const { return cost_; }
  double peak_watts() const { return peak_w_; }
  // kWh by node state name and by device type name (kBaseName for base draw); empty
  // buckets are left out.
  std::map<std::string, double> KwhByState() const;
  std::map<std::string, double> KwhByType() const;

 private:
  std::vector<std::string> types_;
  Tariff tariff_;
  double last_s_ = 0;
  double total_w_ = 0;
  double joules_ = 0;
  double cost_ = 0;
  double peak_w_ = 0;
  std::vector<double> state_w_, state_j_;  // by NodeState
  std::vector<double> type_w_, type_j_;    // by type id; the last slot is the base draw
};

}  // namespace hetsched::power
