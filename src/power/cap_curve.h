// Device power caps: how throughput and power draw fall as a device's power limit is lowered
// (piecewise-linear curves over the cap as a fraction of the default limit), the curves fitted
// from the Zeus measurements, and the rule the `cap` policy picks a cap with.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/device_type.h"
#include "util/status.h"

namespace hetsched::power {

struct CapPoint {
  double cap = 1;         // power limit / the default (maximum) limit
  double throughput = 1;  // work per second / at the default limit
  double power = 1;       // average draw while busy / at the default limit
};

// A curve: points in increasing cap order, the last at cap 1 (throughput 1, power 1).
struct CapCurve {
  std::vector<CapPoint> points;

  // Throughput and power fractions at `cap` (linear between points, clamped to the ends).
  CapPoint At(double cap) const;
  // The lowest-energy point (power / throughput) with throughput >= min_throughput; the point
  // at cap 1 when none qualifies. Ties go to the higher cap (faster).
  CapPoint MostEfficient(double min_throughput) const;
};

// Checks a curve: >= 1 point, caps strictly increasing in (0, 1], the last cap 1, throughput
// and power fractions in (0, 1.05].
util::Status ValidateCapCurve(const CapCurve& curve);

// Curves fitted from data/zeus/summary_power_<gpu>.csv (Zeus, You et al., NSDI'23; Apache-2.0):
// for every workload (dataset, network, batch size, optimizer) time_per_epoch and
// average_power at each power limit are divided by the values at the GPU's maximum limit,
// and the ratios averaged per limit (throughput = time at max / time at limit). Names: "v100",
// "a40", "p100", "rtx6000". Empty curve for other names.
// Reproduced by tests/power/cap_curve_test.cc (CapCurve.FittedPointsMatchTheZeusCsvs).
CapCurve ZeusCurve(std::string_view gpu);
// The mean of the four Zeus curves at caps 0.5, 0.6, ..., 1.0 (P100 goes no lower than 0.5):
// the default for accelerators without a measured curve.
CapCurve DefaultAcceleratorCurve();
// The curve for a device type: its own `power_cap_curve` from the catalog when it has one
// (checked by the device-type reader); else its Zeus curve when its name or an alias names a
// measured GPU; else the default accelerator curve. CPUs without their own curve get a single
// point at cap 1 (not capped: Zeus has no CPU measurements).
CapCurve CurveFor(const model::DeviceType& type);
// Where CurveFor's curve comes from, in words: "catalog", "zeus v100", "default (mean of the
// Zeus curves)" or "none (CPU, not capped)".
std::string CurveSource(const model::DeviceType& type);

}  // namespace hetsched::power
