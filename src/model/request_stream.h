// Streams of LLM inference requests for the simulator: a request rate that follows the time of
// day, and arrivals drawn from it, either as a Poisson process or by replaying a recorded trace
// (io/azure_trace_reader.h) bent to the rate so its bursts and token mix survive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/status.h"

namespace hetsched::model {

inline constexpr double kSecondsPerDay = 86400;

struct InferenceRequest {
  double arrival_s = 0;
  int32_t input_tokens = 0;   // prompt (context) tokens
  int32_t output_tokens = 0;  // generated tokens
};

// A request rate (requests/s) over the time of day, piecewise linear between points, repeating
// every 24 h (the value at 24 h wraps to the first point). Points sorted by time in [0, 86400).
// One point means a constant rate. The functions below assume Validate() passed.
struct RateCurve {
  std::vector<std::pair<double, double>> points;  // (seconds since midnight, requests/s)

  // The rate at `t_s`; periodic, so t may be negative or beyond 24 h.
  double RateAt(double t_s) const;
  // Expected requests in [t0, t1): the exact integral of the piecewise-linear rate; 0 when
  // t1 <= t0.
  double Integral(double t0_s, double t1_s) const;
  // Highest rate over a day (at one of the points: the curve is linear in between).
  double Peak() const;
  // Mean rate over a day.
  double Mean() const;
  // At least one point; times finite, strictly increasing, within [0, 86400); rates finite and
  // >= 0, at least one > 0. Errors name the point: "points[2]: time 3600 s is not after the
  // previous point's 7200 s".
  util::Status Validate() const;
};

// The curve through `points`, which must already be in time order (nothing is sorted, so a
// mistyped time is reported rather than silently moved); Validate()'s error otherwise.
util::Result<RateCurve> MakeRateCurve(std::vector<std::pair<double, double>> points);

// A cosine-shaped day between `trough_rps` and `peak_rps`, highest at `peak_at_s` (seconds since
// midnight, taken modulo 24 h) and lowest 12 h later, sampled every hour starting at peak_at_s so
// both extremes are points of the curve. Its Mean() is (trough + peak) / 2. Not validated: call
// Validate() on curves built from user input.
RateCurve DiurnalCurve(double trough_rps, double peak_rps, double peak_at_s);

// Requests over [start_s, end_s) whose expected count follows `curve`, sorted by arrival.
//  - `sizes` non-empty (a recorded trace, e.g. from LoadAzureTrace): the trace is looped end to
//    end with period P = last - first arrival + mean gap (the mean gap stands for the gap
//    between the last request of one loop and the first of the next). A request at trace time a
//    in loop k sits at u = k n + (a - first) / P n in a unit-rate process (n = trace size, so u
//    counts requests), and lands at the time t where curve.Integral(start_s, t) = u (where the
//    rate is 0 for a while, at the end of that stretch: nothing lands where the rate is 0).
//    Token counts are the trace's, in its order, cycled. This keeps the trace's burstiness and
//    token mix while its mean rate follows the curve: a trace played over a constant curve at
//    its own mean rate n / P comes back unchanged (shifted to start_s). The trace is sorted by
//    arrival (stably) first if it is not. Over less than a loop's worth of requests the count
//    also follows the trace's own swings (Azure's code trace runs at a third of its peak rate
//    in its last 20 minutes): a slice differs from the integral by at most twice the trace's
//    largest drift from even spacing, counted in requests.
//  - `sizes` empty: a non-homogeneous Poisson process, drawn by thinning with a
//    std::mt19937_64 seeded with `seed` (deterministic for a seed on every platform); every
//    request has `input_tokens` and `output_tokens`.
// InvalidArgument when the curve is invalid, the window is not finite, ends before it starts
// or is longer than 100 years, a trace arrival is not finite, a token count is negative, or the
// result would hold more than `max_requests` (the message gives the count).
util::Result<std::vector<InferenceRequest>> GenerateRequests(
    const RateCurve& curve, double start_s, double end_s,
    const std::vector<InferenceRequest>& sizes, int32_t input_tokens, int32_t output_tokens,
    uint64_t seed, size_t max_requests = 20'000'000);

// Replays `trace` as it is, shifted so its first request arrives at start_s, looped with the
// period of GenerateRequests (last - first arrival + mean gap) until end_s. Sorted by arrival.
// InvalidArgument as for GenerateRequests, and for an empty trace or one whose requests all
// arrive at the same time (it has no period to loop with).
util::Result<std::vector<InferenceRequest>> LoopTrace(const std::vector<InferenceRequest>& trace,
                                                      double start_s, double end_s,
                                                      size_t max_requests = 20'000'000);

}  // namespace hetsched::model
