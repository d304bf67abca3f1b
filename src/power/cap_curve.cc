#include "power/cap_curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>

namespace hetsched::power {
namespace {

// Fitted from data/zeus (see cap_curve.h); {cap / max limit, throughput, power} per limit.
// V100: limits 100..250 W (68 workloads); A40: 100..300 W (53); P100: 125..250 W (45);
// RTX 6000: 100..260 W (52).
const CapCurve kV100{{{0.4000, 0.7764, 0.6456},
                      {0.5000, 0.8663, 0.7172},
                      {0.6000, 0.9263, 0.7849},
                      {0.7000, 0.9603, 0.8453},
                      {0.8000, 0.9733, 0.9044},
                      {0.9000, 0.9958, 0.9560},
                      {1.0000, 1.0000, 1.0000}}};
const CapCurve kA40{{{100.0 / 300, 0.5550, 0.6408},
                     {125.0 / 300, 0.6712, 0.7101},
                     {150.0 / 300, 0.8005, 0.7484},
                     {175.0 / 300, 0.9254, 0.8135},
                     {200.0 / 300, 0.9656, 0.8561},
                     {225.0 / 300, 0.9878, 0.9112},
                     {250.0 / 300, 0.9967, 0.9502},
                     {275.0 / 300, 0.9956, 0.9794},
                     {1.0000, 1.0000, 1.0000}}};
const CapCurve kP100{{{0.5000, 0.9495, 0.8503},
                      {0.6000, 0.9748, 0.9055},
                      {0.7000, 0.9810, 0.9509},
                      {0.8000, 0.9973, 0.9806},
                      {0.9000, 0.9960, 1.0001},
                      {1.0000, 1.0000, 1.0000}}};
const CapCurve kRtx6000{{{100.0 / 260, 0.6629, 0.6260},
                         {125.0 / 260, 0.8445, 0.6979},
                         {150.0 / 260, 0.9068, 0.7623},
                         {175.0 / 260, 0.9445, 0.8235},
                         {200.0 / 260, 0.9718, 0.8831},
                         {225.0 / 260, 0.9870, 0.9364},
                         {250.0 / 260, 0.9904, 0.9818},
                         {1.0000, 1.0000, 1.0000}}};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The Zeus GPU a catalog name stands for ("v100-32g" -> "v100", "quadro-rtx-6000" -> "rtx6000").
std::string ZeusName(std::string_view name) {
  std::string n = Lower(name);
  n.erase(std::remove(n.begin(), n.end(), '-'), n.end());
  for (const char* key : {"v100", "a40", "p100", "rtx6000"}) {
    if (n.find(key) != std::string::npos) return key;
  }
  return "";
}

// The Zeus GPU a type's name or one of its aliases names; empty when none.
std::string ZeusKeyFor(const model::DeviceType& type) {
  std::string key = ZeusName(type.name);
  for (const auto& alias : type.aliases) {
    if (key.empty()) key = ZeusName(alias);
  }
  return key;
}

}  // namespace

CapPoint CapCurve::At(double cap) const {
  if (points.empty()) return {};
  if (cap <= points.front().cap) return points.front();
  for (size_t i = 1; i < points.size(); ++i) {
    const CapPoint& a = points[i - 1];
    const CapPoint& b = points[i];
    if (cap <= b.cap) {
      const double f = (cap - a.cap) / (b.cap - a.cap);
      return {cap, a.throughput + f * (b.throughput - a.throughput),
              a.power + f * (b.power - a.power)};
    }
  }
  return points.back();
}

CapPoint CapCurve::MostEfficient(double min_throughput) const {
  CapPoint best;  // cap 1
  double best_energy = 1;
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (it->throughput + 1e-12 < min_throughput || it->throughput <= 0) continue;
    const double energy = it->power / it->throughput;
    if (energy < best_energy - 1e-12) {
      best = *it;
      best_energy = energy;
    }
  }
  return best;
}

util::Status ValidateCapCurve(const CapCurve& curve) {
  if (curve.points.empty()) return util::Status::InvalidArgument("power cap curve: no points");
  double prev = 0;
  for (const CapPoint& p : curve.points) {
    if (!(p.cap > prev) || p.cap > 1) {
      return util::Status::InvalidArgument(fmt::format(
          "power cap curve: cap {} (expected increasing fractions of the limit in (0, 1])", p.cap));
    }
    if (!(p.throughput > 0) || p.throughput > 1.05 || !(p.power > 0) || p.power > 1.05) {
      return util::Status::InvalidArgument(
          fmt::format("power cap curve: at cap {} throughput {} power {} (expected fractions "
                      "in (0, 1.05])",
                      p.cap, p.throughput, p.power));
    }
    prev = p.cap;
  }
  if (curve.points.back().cap != 1) {
    return util::Status::InvalidArgument("power cap curve: the last point must be at cap 1");
  }
  return util::Status::Ok();
}

CapCurve ZeusCurve(std::string_view gpu) {
  if (gpu == "v100") return kV100;
  if (gpu == "a40") return kA40;
  if (gpu == "p100") return kP100;
  if (gpu == "rtx6000") return kRtx6000;
  return {};
}

CapCurve DefaultAcceleratorCurve() {
  CapCurve out;
  for (int i = 5; i <= 10; ++i) {
    const double cap = i / 10.0;
    CapPoint p{cap, 0, 0};
    for (const CapCurve* c : {&kV100, &kA40, &kP100, &kRtx6000}) {
      const CapPoint q = c->At(cap);
      p.throughput += q.throughput / 4;
      p.power += q.power / 4;
    }
    out.points.push_back(p);
  }
  out.points.back() = {1, 1, 1};
  return out;
}

CapCurve CurveFor(const model::DeviceType& type) {
  if (!type.power_cap_curve.empty()) {
    CapCurve own;
    for (const model::PowerCapPoint& p : type.power_cap_curve) {
      own.points.push_back({p.cap, p.throughput, p.power});
    }
    return own;
  }
  if (type.kind == model::DeviceKind::kCpu) return CapCurve{{{1, 1, 1}}};
  const std::string key = ZeusKeyFor(type);
  return key.empty() ? DefaultAcceleratorCurve() : ZeusCurve(key);
}

std::string CurveSource(const model::DeviceType& type) {
  if (!type.power_cap_curve.empty()) return "catalog";
  if (type.kind == model::DeviceKind::kCpu) return "none (CPU, not capped)";
  const std::string key = ZeusKeyFor(type);
  return key.empty() ? "default (mean of the Zeus curves)" : "zeus " + key;
}

}  // namespace hetsched::power
