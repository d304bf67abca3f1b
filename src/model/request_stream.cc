#include "model/request_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace hetsched::model {
namespace {

using util::Result;
using util::Status;

// Longer windows are surely a unit mistake (ms for s); the Poisson path walks every segment of
// every day in the window, so an absurd window would also run for ages on a tiny rate.
constexpr double kMaxWindowS = 100 * 365 * kSecondsPerDay;

// One day of a curve as knots from 0 to 24 h (both ends included, the wrap-around value at
// each end) with the expected requests from midnight to each knot. Built once per call so the
// per-request work is a binary search.
class DayCurve {
 public:
  explicit DayCurve(const RateCurve& curve) {
    const auto& p = curve.points;
    if (p.size() <= 1) {
      const double rate = p.empty() ? 0 : p.front().second;
      times_ = {0, kSecondsPerDay};
      rates_ = {rate, rate};
    } else {
      // Midnight lies on the segment from the last point (a day earlier) to the first.
      const auto& [t_last, r_last] = p.back();
      const auto& [t_first, r_first] = p.front();
      const double wrap = r_last + (r_first - r_last) * (kSecondsPerDay - t_last) /
                                       (t_first + kSecondsPerDay - t_last);
      if (t_first > 0) {
        times_.push_back(0);
        rates_.push_back(wrap);
      }
      for (const auto& [t, r] : p) {
        times_.push_back(t);
        rates_.push_back(r);
      }
      times_.push_back(kSecondsPerDay);
      rates_.push_back(t_first > 0 ? wrap : r_first);
    }
    cumulative_.assign(times_.size(), 0);
    for (size_t j = 1; j < times_.size(); ++j) {
      cumulative_[j] =
          cumulative_[j - 1] + (times_[j] - times_[j - 1]) * (rates_[j - 1] + rates_[j]) / 2;
    }
  }

  size_t segments() const { return times_.size() - 1; }
  double start(size_t j) const { return times_[j]; }
  double end(size_t j) const { return times_[j + 1]; }
  double total() const { return cumulative_.back(); }

  // Rate at `x` seconds into segment j.
  double RateIn(size_t j, double x) const {
    const double len = times_[j + 1] - times_[j];
    if (!(len > 0)) return rates_[j];
    return rates_[j] + (rates_[j + 1] - rates_[j]) * std::clamp(x / len, 0.0, 1.0);
  }

  // Index of the segment holding time of day `x` in [0, 24 h].
  size_t SegmentAt(double x) const {
    const auto it = std::upper_bound(times_.begin(), times_.end(), x);
    const size_t j = it == times_.begin() ? 0 : static_cast<size_t>(it - times_.begin()) - 1;
    return std::min(j, segments() - 1);
  }

  double Rate(double x) const {
    const size_t j = SegmentAt(x);
    return RateIn(j, x - times_[j]);
  }

  // Expected requests from midnight to time of day `x`.
  double Cumulative(double x) const {
    const size_t j = SegmentAt(x);
    const double dx = std::max(0.0, x - times_[j]);
    return cumulative_[j] + dx * (rates_[j] + RateIn(j, dx)) / 2;
  }

  // The time of day at which Cumulative reaches `w` in [0, total()). Where the rate is 0 for a
  // while Cumulative is flat; the latest such time is taken, so nothing lands at rate 0.
  double InverseCumulative(double w) const {
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), w);
    size_t j = it == cumulative_.begin() ? 0 : static_cast<size_t>(it - cumulative_.begin()) - 1;
    j = std::min(j, segments() - 1);
    const double len = times_[j + 1] - times_[j];
    const double ra = rates_[j];
    const double slope = (rates_[j + 1] - ra) / len;
    const double need = std::max(0.0, w - cumulative_[j]);
    // ra x + slope x^2 / 2 = need, in the form that does not cancel when slope is tiny.
    const double root = std::sqrt(std::max(0.0, ra * ra + 2 * slope * need));
    const double denom = ra + root;
    const double x = denom > 0 ? 2 * need / denom : 0;
    return times_[j] + std::clamp(x, 0.0, len);
  }

 private:
  std::vector<double> times_;
  std::vector<double> rates_;
  std::vector<double> cumulative_;
};

// Splits `t` into whole days and the time of day in [0, 24 h).
void SplitDay(double t, double* day, double* x) {
  *day = std::floor(t / kSecondsPerDay);
  *x = t - *day * kSecondsPerDay;
  if (*x >= kSecondsPerDay) {  // rounding just below a day boundary
    *day += 1;
    *x = 0;
  }
  if (*x < 0) *x = 0;
}

// Expected requests in [t0, t1).
double Expected(const DayCurve& day, double t0_s, double t1_s) {
  if (!(t1_s > t0_s)) return 0;
  double d0 = 0, x0 = 0, d1 = 0, x1 = 0;
  SplitDay(t0_s, &d0, &x0);
  SplitDay(t1_s, &d1, &x1);
  return std::max(0.0, (d1 - d0) * day.total() + day.Cumulative(x1) - day.Cumulative(x0));
}

// Maps u requests of the unit-rate process after `start_s` to the time where the curve's
// integral from start_s reaches u.
class Warp {
 public:
  Warp(const DayCurve& day, double start_s) : day_(day) {
    SplitDay(start_s, &start_day_, &base_);
    base_ = day_.Cumulative(base_);
  }

  double TimeOf(double u) const {
    const double w = base_ + u;
    double days = std::floor(w / day_.total());
    double rest = w - days * day_.total();
    if (rest >= day_.total()) {
      days += 1;
      rest = 0;
    }
    rest = std::max(rest, 0.0);
    return (start_day_ + days) * kSecondsPerDay + day_.InverseCumulative(rest);
  }

 private:
  const DayCurve& day_;
  double start_day_ = 0;
  double base_ = 0;  // expected requests from midnight of start's day to start
};

// Uniform in [0, 1) and exponential with mean 1 from the raw generator, not the std::
// distributions, whose algorithms differ between standard libraries: the same seed gives the
// same requests everywhere.
double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
double Exponential(std::mt19937_64& rng) { return -std::log1p(-Uniform(rng)); }

Status CheckWindow(double start_s, double end_s) {
  if (!std::isfinite(start_s) || !std::isfinite(end_s)) {
    return Status::InvalidArgument(fmt::format(
        "window [{}, {}) s: is not finite (expected finite start and end times)", start_s, end_s));
  }
  if (end_s < start_s) {
    return Status::InvalidArgument(fmt::format(
        "window [{}, {}) s: ends before it starts (expected end >= start)", start_s, end_s));
  }
  return Status::Ok();
}

// The window would hold `count` requests (about that many when `about`), above the limit.
Status TooMany(double start_s, double end_s, double count, bool about, size_t max_requests) {
  return Status::InvalidArgument(
      fmt::format("window [{}, {}) s: would hold {}{:.0f} requests, more than max_requests {} "
                  "(expected a shorter window or a lower rate)",
                  start_s, end_s, about ? "about " : "", count, max_requests));
}

// The limit was hit while drawing (a Poisson draw above its mean, or rounding).
Status LimitReached(double start_s, double end_s, size_t max_requests) {
  return Status::InvalidArgument(
      fmt::format("window [{}, {}) s: holds more than max_requests {} requests (expected a "
                  "shorter window or a lower rate)",
                  start_s, end_s, max_requests));
}

// A checked copy of a trace, in arrival order.
Result<std::vector<InferenceRequest>> SortedTrace(const std::vector<InferenceRequest>& trace,
                                                  std::string_view name) {
  for (size_t i = 0; i < trace.size(); ++i) {
    const InferenceRequest& r = trace[i];
    if (!std::isfinite(r.arrival_s)) {
      return Status::InvalidArgument(fmt::format(
          "{}[{}]: arrival {} s is not finite (expected a time in seconds)", name, i, r.arrival_s));
    }
    if (r.input_tokens < 0 || r.output_tokens < 0) {
      return Status::InvalidArgument(
          fmt::format("{}[{}]: {} input and {} output tokens (expected token counts >= 0)", name, i,
                      r.input_tokens, r.output_tokens));
    }
  }
  std::vector<InferenceRequest> sorted = trace;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const InferenceRequest& a, const InferenceRequest& b) {
                     return a.arrival_s < b.arrival_s;
                   });
  return sorted;
}

// How many of `offsets` (sorted, from 0 up to below `period`) fall in [0, length) when repeated
// every `period`. Returned as a double so an absurd count does not overflow.
double LoopedCount(const std::vector<double>& offsets, double period, double length) {
  const double n = static_cast<double>(offsets.size());
  const double loops = std::floor(length / period);
  const double rest = length - loops * period;
  const auto inside = std::lower_bound(offsets.begin(), offsets.end(), rest) - offsets.begin();
  return loops * n + static_cast<double>(inside);
}

Result<std::vector<InferenceRequest>> WarpTrace(const DayCurve& day, double start_s, double end_s,
                                                const std::vector<InferenceRequest>& sizes,
                                                size_t max_requests) {
  ASSIGN_OR_RETURN(std::vector<InferenceRequest> trace, SortedTrace(sizes, "sizes"));
  const size_t n = trace.size();
  const double first = trace.front().arrival_s;
  const double span = trace.back().arrival_s - first;
  // Position of each request within a loop in the unit-rate process: (a - first) / P * n with
  // P = span * n / (n - 1), i.e. (n - 1) (a - first) / span. A trace whose requests all arrive
  // together stays a burst of n at the start of each loop.
  std::vector<double> position(n, 0);
  if (span > 0) {
    for (size_t i = 0; i < n; ++i) {
      position[i] = static_cast<double>(n - 1) * ((trace[i].arrival_s - first) / span);
    }
  }
  const Warp warp(day, start_s);
  const double expected = Expected(day, start_s, end_s);
  const double count = LoopedCount(position, static_cast<double>(n), expected);
  if (count > static_cast<double>(max_requests)) {
    return TooMany(start_s, end_s, count, false, max_requests);
  }
  std::vector<InferenceRequest> out;
  out.reserve(static_cast<size_t>(count) + 1);
  double last = start_s;
  for (double loop = 0;; loop += static_cast<double>(n)) {
    for (size_t i = 0; i < n; ++i) {
      // Rounding in the inversion may step back by an ulp; arrivals stay sorted.
      const double t = std::max(last, warp.TimeOf(loop + position[i]));
      if (t >= end_s) return out;
      if (out.size() == max_requests) {
        return LimitReached(start_s, end_s, max_requests);
      }
      out.push_back({t, trace[i].input_tokens, trace[i].output_tokens});
      last = t;
    }
  }
}

Result<std::vector<InferenceRequest>> Poisson(const DayCurve& day, double start_s, double end_s,
                                              int32_t input_tokens, int32_t output_tokens,
                                              uint64_t seed, size_t max_requests) {
  std::mt19937_64 rng(seed);
  std::vector<InferenceRequest> out;
  double first_day = 0, x = 0;
  SplitDay(start_s, &first_day, &x);
  // Thinning segment by segment, each against its own highest rate (at one of its ends, the
  // rate being linear), so few candidates are thrown away however peaked the day is. The
  // exponential gaps are memoryless, so restarting at each segment boundary is exact.
  for (double d = first_day; d * kSecondsPerDay < end_s; d += 1) {
    const double midnight = d * kSecondsPerDay;
    for (size_t j = 0; j < day.segments(); ++j) {
      const double a = std::max(start_s, midnight + day.start(j));
      const double b = std::min(end_s, midnight + day.end(j));
      if (!(b > a)) continue;
      const double seg_start = midnight + day.start(j);
      const double top = std::max(day.RateIn(j, a - seg_start), day.RateIn(j, b - seg_start));
      if (!(top > 0)) continue;
      for (double t = a + Exponential(rng) / top; t < b; t += Exponential(rng) / top) {
        if (Uniform(rng) * top >= day.RateIn(j, t - seg_start)) continue;
        if (out.size() == max_requests) {
          return LimitReached(start_s, end_s, max_requests);
        }
        out.push_back({t, input_tokens, output_tokens});
      }
    }
  }
  return out;
}

}  // namespace

double RateCurve::RateAt(double t_s) const {
  if (points.empty() || !std::isfinite(t_s)) return 0;
  double day = 0, x = 0;
  SplitDay(t_s, &day, &x);
  return DayCurve(*this).Rate(x);
}

double RateCurve::Integral(double t0_s, double t1_s) const {
  if (points.empty()) return 0;
  return Expected(DayCurve(*this), t0_s, t1_s);
}

double RateCurve::Peak() const {
  double peak = 0;
  for (const auto& [t, r] : points) peak = std::max(peak, r);
  return peak;
}

double RateCurve::Mean() const {
  if (points.empty()) return 0;
  return DayCurve(*this).total() / kSecondsPerDay;
}

Status RateCurve::Validate() const {
  if (points.empty()) {
    return Status::InvalidArgument(
        "points: none (expected at least one (seconds since midnight, requests/s) point)");
  }
  bool any_positive = false;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& [t, r] = points[i];
    if (!(t >= 0 && t < kSecondsPerDay)) {
      return Status::InvalidArgument(
          fmt::format("points[{}]: time {} s is outside a day (expected seconds since midnight "
                      "in [0, 86400))",
                      i, t));
    }
    if (i > 0 && !(t > points[i - 1].first)) {
      return Status::InvalidArgument(
          fmt::format("points[{}]: time {} s is not after the previous point's {} s", i, t,
                      points[i - 1].first));
    }
    if (!std::isfinite(r) || r < 0) {
      return Status::InvalidArgument(
          fmt::format("points[{}]: rate {} requests/s is {} (expected a finite rate >= 0)", i, r,
                      std::isfinite(r) ? "negative" : "not finite"));
    }
    any_positive = any_positive || r > 0;
  }
  if (!any_positive) {
    return Status::InvalidArgument("points: every rate is 0 (expected some rate > 0)");
  }
  return Status::Ok();
}

Result<RateCurve> MakeRateCurve(std::vector<std::pair<double, double>> points) {
  RateCurve curve{std::move(points)};
  RETURN_IF_ERROR(curve.Validate());
  return curve;
}

RateCurve DiurnalCurve(double trough_rps, double peak_rps, double peak_at_s) {
  constexpr double kHour = 3600;
  if (!std::isfinite(peak_at_s)) return RateCurve{{{peak_at_s, peak_rps}}};  // Validate fails
  double day = 0, peak_at = 0;
  SplitDay(peak_at_s, &day, &peak_at);
  // Sample on the hour grid through peak_at, so the peak and the trough are points; the angle
  // comes from whole hours, so cos is exactly 1 at the peak and -1 at the trough.
  const double offset = std::fmod(peak_at, kHour);
  const int peak_hour =
      std::clamp(static_cast<int>(std::lround((peak_at - offset) / kHour)), 0, 23);
  RateCurve curve;
  for (int h = 0; h < 24; ++h) {
    const int from_peak = (h - peak_hour + 24) % 24;
    const double c = std::cos(2 * std::numbers::pi * from_peak / 24);
    // Weighted this way the extremes come out as exactly peak_rps and trough_rps.
    curve.points.emplace_back(offset + h * kHour,
                              peak_rps * (1 + c) / 2 + trough_rps * (1 - c) / 2);
  }
  return curve;
}

Result<std::vector<InferenceRequest>> GenerateRequests(const RateCurve& curve, double start_s,
                                                       double end_s,
                                                       const std::vector<InferenceRequest>& sizes,
                                                       int32_t input_tokens, int32_t output_tokens,
                                                       uint64_t seed, size_t max_requests) {
  RETURN_IF_ERROR(curve.Validate());
  RETURN_IF_ERROR(CheckWindow(start_s, end_s));
  if (end_s - start_s > kMaxWindowS) {
    return Status::InvalidArgument(
        fmt::format("window [{}, {}) s: is longer than 100 years (expected a window of at most "
                    "{} s)",
                    start_s, end_s, kMaxWindowS));
  }
  if (sizes.empty() && (input_tokens < 0 || output_tokens < 0)) {
    return Status::InvalidArgument(fmt::format(
        "{} input and {} output tokens (expected token counts >= 0)", input_tokens, output_tokens));
  }
  const DayCurve day(curve);
  // Rates so small that a day's integral underflows to 0 give no requests (and would divide
  // by 0 below).
  if (!(day.total() > 0)) return std::vector<InferenceRequest>{};
  if (!sizes.empty()) return WarpTrace(day, start_s, end_s, sizes, max_requests);
  const double expected = Expected(day, start_s, end_s);
  if (expected > static_cast<double>(max_requests)) {
    return TooMany(start_s, end_s, expected, true, max_requests);
  }
  return Poisson(day, start_s, end_s, input_tokens, output_tokens, seed, max_requests);
}

Result<std::vector<InferenceRequest>> LoopTrace(const std::vector<InferenceRequest>& trace,
                                                double start_s, double end_s, size_t max_requests) {
  if (trace.empty()) {
    return Status::InvalidArgument("trace: no requests (expected at least one request)");
  }
  RETURN_IF_ERROR(CheckWindow(start_s, end_s));
  ASSIGN_OR_RETURN(std::vector<InferenceRequest> sorted, SortedTrace(trace, "trace"));
  if (!(end_s > start_s)) return std::vector<InferenceRequest>{};
  const size_t n = sorted.size();
  const double first = sorted.front().arrival_s;
  const double span = sorted.back().arrival_s - first;
  if (!(span > 0)) {
    return Status::InvalidArgument(
        fmt::format("trace: its {} request{} all arrive at {} s, so it has no period to loop "
                    "with (expected requests at two or more times)",
                    n, n == 1 ? "" : "s", first));
  }
  // The mean gap closes each loop, so the looped trace keeps the trace's mean rate.
  const double period = span + span / static_cast<double>(n - 1);
  std::vector<double> offset(n);
  for (size_t i = 0; i < n; ++i) offset[i] = sorted[i].arrival_s - first;
  const double count = LoopedCount(offset, period, end_s - start_s);
  if (count > static_cast<double>(max_requests)) {
    return TooMany(start_s, end_s, count, false, max_requests);
  }
  std::vector<InferenceRequest> out;
  out.reserve(static_cast<size_t>(count) + 1);
  for (double loop = 0;; loop += 1) {
    const double loop_start = start_s + loop * period;
    for (size_t i = 0; i < n; ++i) {
      const double t = loop_start + offset[i];
      if (t >= end_s) return out;
      if (out.size() == max_requests) {
        return LimitReached(start_s, end_s, max_requests);
      }
      out.push_back({t, sorted[i].input_tokens, sorted[i].output_tokens});
    }
  }
}

}  // namespace hetsched::model
