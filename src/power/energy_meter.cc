#include "power/energy_meter.h"

#include <algorithm>

#include "cost/power.h"

namespace hetsched::power {

using cost::kJoulesPerKwh;

EnergyMeter::EnergyMeter(std::vector<std::string> types, Tariff tariff, double start_s)
    : types_(std::move(types)),
      tariff_(std::move(tariff)),
      last_s_(start_s),
      state_w_(kNodeStateCount, 0),
      state_j_(kNodeStateCount, 0),
      type_w_(types_.size() + 1, 0),
      type_j_(types_.size() + 1, 0) {}

void EnergyMeter::Advance(double now_s) {
  const double dt = now_s - last_s_;
  if (!(dt > 0)) return;
  // Sums of many +/- updates can leave a tiny negative residue: book it as 0.
  const double w = std::max(0.0, total_w_);
  joules_ += w * dt;
  cost_ += tariff_.Cost(w, last_s_, now_s);
  peak_w_ = std::max(peak_w_, w);
  for (size_t i = 0; i < state_w_.size(); ++i) state_j_[i] += std::max(0.0, state_w_[i]) * dt;
  for (size_t i = 0; i < type_w_.size(); ++i) type_j_[i] += std::max(0.0, type_w_[i]) * dt;
  last_s_ = now_s;
}

void EnergyMeter::Add(NodeState state, int32_t type, double watts) {
  total_w_ += watts;
  state_w_[static_cast<size_t>(state)] += watts;
  type_w_[type < 0 ? types_.size() : static_cast<size_t>(type)] += watts;
}

double EnergyMeter::kwh() const { return joules_ / kJoulesPerKwh; }

std::map<std::string, double> EnergyMeter::KwhByState() const {
  std::map<std::string, double> out;
  for (NodeState s : kAllNodeStates) {
    const double j = state_j_[static_cast<size_t>(s)];
    if (j > 0) out[std::string(NodeStateName(s))] = j / kJoulesPerKwh;
  }
  return out;
}

std::map<std::string, double> EnergyMeter::KwhByType() const {
  std::map<std::string, double> out;
  for (size_t i = 0; i < type_j_.size(); ++i) {
    if (type_j_[i] > 0)
      out[i < types_.size() ? types_[i] : kBaseName] += type_j_[i] / kJoulesPerKwh;
  }
  return out;
}

}  // namespace hetsched::power
