#include "model/request_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "model/io/azure_trace_reader.h"
#include "testing/build_paths.h"

namespace hetsched::model {
namespace {

using ::testing::HasSubstr;

constexpr double kDay = 86400;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string CurveError(std::vector<std::pair<double, double>> points) {
  auto result = MakeRateCurve(std::move(points));
  EXPECT_FALSE(result.ok());
  return result.ok() ? "" : result.status().message();
}

RateCurve Constant(double rps) { return RateCurve{{{0, rps}}}; }

// n requests one second apart from 0, request i with i input and 10 i output tokens.
std::vector<InferenceRequest> EvenTrace(int n) {
  std::vector<InferenceRequest> trace;
  for (int i = 0; i < n; ++i) trace.push_back({static_cast<double>(i), i, 10 * i});
  return trace;
}

std::vector<double> Arrivals(const std::vector<InferenceRequest>& requests) {
  std::vector<double> out;
  for (const InferenceRequest& r : requests) out.push_back(r.arrival_s);
  return out;
}

void ExpectSortedWithin(const std::vector<InferenceRequest>& requests, double start, double end) {
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_GE(requests[i].arrival_s, start) << i;
    EXPECT_LT(requests[i].arrival_s, end) << i;
    if (i > 0) {
      EXPECT_GE(requests[i].arrival_s, requests[i - 1].arrival_s) << i;
    }
  }
}

size_t CountIn(const std::vector<InferenceRequest>& requests, double from, double to) {
  size_t n = 0;
  for (const InferenceRequest& r : requests) n += r.arrival_s >= from && r.arrival_s < to;
  return n;
}

TEST(RateCurveTest, IntegralOfTwoPointCurveIsExact) {
  // 1 req/s at midnight rising to 3 at noon, falling back to 1 at the next midnight.
  const RateCurve curve{{{0, 1}, {43200, 3}}};
  ASSERT_TRUE(curve.Validate().ok());
  EXPECT_DOUBLE_EQ(curve.RateAt(21600), 2);
  EXPECT_DOUBLE_EQ(curve.RateAt(64800), 2);
  EXPECT_DOUBLE_EQ(curve.Integral(0, 21600), 21600 * 1.5);
  EXPECT_DOUBLE_EQ(curve.Integral(0, 43200), 43200 * 2);
  EXPECT_DOUBLE_EQ(curve.Integral(21600, 64800), 43200 * 2.5);
  EXPECT_DOUBLE_EQ(curve.Integral(0, 2 * kDay), 2 * kDay * 2);
  // Across midnight: 23:00 -> 01:00, the rate going 7/6 -> 1 -> 7/6.
  EXPECT_DOUBLE_EQ(curve.Integral(kDay - 3600, kDay + 3600), 2 * 3600 * (1 + 7.0 / 6) / 2);
  EXPECT_DOUBLE_EQ(curve.Integral(100, 100), 0);
  EXPECT_DOUBLE_EQ(curve.Integral(200, 100), 0);
  EXPECT_DOUBLE_EQ(curve.Peak(), 3);
  EXPECT_DOUBLE_EQ(curve.Mean(), 2);
}

TEST(RateCurveTest, WrapsAroundMidnightAndRepeatsEveryDay) {
  // 0 at 06:00, 4 at 18:00; midnight lies halfway on the segment from 18:00 back to 06:00.
  const RateCurve curve{{{21600, 0}, {64800, 4}}};
  ASSERT_TRUE(curve.Validate().ok());
  EXPECT_DOUBLE_EQ(curve.RateAt(0), 2);
  EXPECT_DOUBLE_EQ(curve.RateAt(kDay), 2);
  EXPECT_DOUBLE_EQ(curve.RateAt(75600), 3);
  EXPECT_DOUBLE_EQ(curve.RateAt(10800), 1);
  EXPECT_DOUBLE_EQ(curve.RateAt(-21600), 4);
  EXPECT_DOUBLE_EQ(curve.RateAt(3 * kDay + 21600), 0);
  EXPECT_DOUBLE_EQ(curve.RateAt(5 * kDay + 43200), 2);
  EXPECT_DOUBLE_EQ(curve.Integral(0, 21600), 21600 * 1.0);
  EXPECT_DOUBLE_EQ(curve.Integral(-21600, 0), 21600 * 3.0);
  EXPECT_DOUBLE_EQ(curve.Integral(7 * kDay, 7 * kDay + 21600), 21600 * 1.0);
  EXPECT_NEAR(curve.Integral(0.25 * kDay, 10.25 * kDay), 10 * kDay * 2, 1e-6);
  EXPECT_DOUBLE_EQ(curve.Mean(), 2);
  EXPECT_DOUBLE_EQ(curve.Peak(), 4);
}

TEST(RateCurveTest, OnePointIsAConstantRate) {
  const RateCurve curve = Constant(2.5);
  ASSERT_TRUE(curve.Validate().ok());
  EXPECT_DOUBLE_EQ(curve.RateAt(-1e6), 2.5);
  EXPECT_DOUBLE_EQ(curve.Integral(-100, 100), 500);
  EXPECT_DOUBLE_EQ(curve.Mean(), 2.5);
  EXPECT_DOUBLE_EQ(curve.Peak(), 2.5);
  // A single point anywhere in the day is constant too.
  EXPECT_DOUBLE_EQ((RateCurve{{{5000, 1.5}}}.Integral(0, kDay)), 1.5 * kDay);
}

TEST(RateCurveTest, MakeRateCurveNamesTheOffendingPoint) {
  EXPECT_EQ(CurveError({{0, 1}, {7200, 1}, {3600, 1}}),
            "points[2]: time 3600 s is not after the previous point's 7200 s");
  EXPECT_EQ(CurveError({{0, 1}, {0, 2}}),
            "points[1]: time 0 s is not after the previous point's 0 s");
  EXPECT_EQ(CurveError({}),
            "points: none (expected at least one (seconds since midnight, requests/s) point)");
  EXPECT_EQ(CurveError({{0, 1}, {86400, 1}}),
            "points[1]: time 86400 s is outside a day (expected seconds since midnight in "
            "[0, 86400))");
  EXPECT_THAT(CurveError({{-1, 1}}), HasSubstr("points[0]: time -1 s is outside a day"));
  EXPECT_THAT(CurveError({{kNan, 1}}), HasSubstr("points[0]: time nan s is outside a day"));
  EXPECT_EQ(CurveError({{0, 1}, {60, -2}}),
            "points[1]: rate -2 requests/s is negative (expected a finite rate >= 0)");
  EXPECT_EQ(CurveError({{0, kInf}}),
            "points[0]: rate inf requests/s is not finite (expected a finite rate >= 0)");
  EXPECT_THAT(CurveError({{0, kNan}}), HasSubstr("points[0]: rate nan requests/s is not finite"));
  EXPECT_EQ(CurveError({{0, 0}, {60, 0}}), "points: every rate is 0 (expected some rate > 0)");
  auto ok = MakeRateCurve({{0, 0}, {3600, 5}});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->points.size(), 2u);
}

TEST(RateCurveTest, DiurnalCurvePeaksWhereAskedAndBottomsOutTwelveHoursLater) {
  const RateCurve curve = DiurnalCurve(1, 5, 14 * 3600);
  ASSERT_TRUE(curve.Validate().ok());
  ASSERT_EQ(curve.points.size(), 24u);
  EXPECT_EQ(curve.points.front().first, 0);
  EXPECT_EQ(curve.RateAt(14 * 3600), 5);
  EXPECT_EQ(curve.RateAt(2 * 3600), 1);
  EXPECT_EQ(curve.Peak(), 5);
  EXPECT_NEAR(curve.Mean(), 3, 1e-12);
  EXPECT_NEAR(curve.RateAt(8 * 3600), 3, 1e-12);  // a quarter day from the peak: halfway
  for (const auto& [t, r] : curve.points) {
    EXPECT_GE(r, 1) << t;
    EXPECT_LE(r, 5) << t;
  }
  // Off the hour and before midnight: sampled on the grid through the peak.
  const RateCurve late = DiurnalCurve(0, 2, -1800);  // 23:30
  ASSERT_TRUE(late.Validate().ok());
  EXPECT_EQ(late.points.front().first, 1800);
  EXPECT_EQ(late.RateAt(kDay - 1800), 2);
  EXPECT_EQ(late.RateAt(11 * 3600 + 1800), 0);
  EXPECT_NEAR(late.Mean(), 1, 1e-12);
  EXPECT_FALSE(DiurnalCurve(1, 2, kNan).Validate().ok());
  EXPECT_FALSE(DiurnalCurve(-1, 2, 0).Validate().ok());
}

TEST(GenerateRequestsTest, PoissonCountIsWithinFiveSigmaOfTheIntegral) {
  // 1 req/s for an hour: mean 3600, sigma 60.
  auto hour = GenerateRequests(Constant(1), 0, 3600, {}, 512, 128, 7);
  ASSERT_TRUE(hour.ok()) << hour.status().message();
  EXPECT_NEAR(static_cast<double>(hour->size()), 3600, 5 * 60);
  ExpectSortedWithin(*hour, 0, 3600);
  for (const InferenceRequest& r : *hour) {
    EXPECT_EQ(r.input_tokens, 512);
    EXPECT_EQ(r.output_tokens, 128);
  }
  // A ramp from 0 at midnight to 2 at noon and back, over a day: 86400 expected in all, and the
  // first quarter day holds 10800 of them.
  const RateCurve ramp{{{0, 0}, {43200, 2}}};
  auto day = GenerateRequests(ramp, 0, kDay, {}, 1, 1, 42);
  ASSERT_TRUE(day.ok()) << day.status().message();
  ExpectSortedWithin(*day, 0, kDay);
  EXPECT_NEAR(static_cast<double>(day->size()), 86400, 5 * std::sqrt(86400.0));
  EXPECT_NEAR(static_cast<double>(CountIn(*day, 0, 21600)), 10800, 5 * std::sqrt(10800.0));
  EXPECT_NEAR(static_cast<double>(CountIn(*day, 40000, 46400)), ramp.Integral(40000, 46400),
              5 * std::sqrt(ramp.Integral(40000, 46400)));
}

TEST(GenerateRequestsTest, PoissonIsDeterministicForASeed) {
  const RateCurve curve = DiurnalCurve(0.2, 1, 0);
  auto a = GenerateRequests(curve, 1000, 5000, {}, 1, 1, 3);
  auto b = GenerateRequests(curve, 1000, 5000, {}, 1, 1, 3);
  auto c = GenerateRequests(curve, 1000, 5000, {}, 1, 1, 4);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(Arrivals(*a), Arrivals(*b));
  EXPECT_NE(Arrivals(*a), Arrivals(*c));
  ExpectSortedWithin(*a, 1000, 5000);
}

TEST(GenerateRequestsTest, EvenTraceAtItsOwnRateComesBackUnchanged) {
  // 10 requests one second apart: period 10 s, mean rate 1 req/s.
  auto same = GenerateRequests(Constant(1), 0, 10, EvenTrace(10), 0, 0, 1);
  ASSERT_TRUE(same.ok()) << same.status().message();
  ASSERT_EQ(same->size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_NEAR((*same)[i].arrival_s, i, 1e-9);
    EXPECT_EQ((*same)[i].input_tokens, i);
    EXPECT_EQ((*same)[i].output_tokens, 10 * i);
  }
  // Shifted to the window's start, and looped with token counts cycled.
  auto looped = GenerateRequests(Constant(1), 1000, 1030, EvenTrace(10), 0, 0, 1);
  ASSERT_TRUE(looped.ok()) << looped.status().message();
  ASSERT_EQ(looped->size(), 30u);
  for (int i = 0; i < 30; ++i) {
    EXPECT_NEAR((*looped)[i].arrival_s, 1000 + i, 1e-9);
    EXPECT_EQ((*looped)[i].input_tokens, i % 10);
  }
}

TEST(GenerateRequestsTest, DoubleRateHalvesTheTimes) {
  auto fast = GenerateRequests(Constant(2), 0, 5, EvenTrace(10), 0, 0, 1);
  ASSERT_TRUE(fast.ok()) << fast.status().message();
  ASSERT_EQ(fast->size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_NEAR((*fast)[i].arrival_s, i / 2.0, 1e-9);
}

TEST(GenerateRequestsTest, KeepsTheTracesBursts) {
  // Two bursts of three, 10 s apart: period 12 s, mean rate 0.5 req/s.
  const std::vector<InferenceRequest> bursts = {{0, 1, 1},  {0, 2, 2},  {0, 3, 3},
                                                {10, 4, 4}, {10, 5, 5}, {10, 6, 6}};
  auto same = GenerateRequests(Constant(0.5), 0, 24, bursts, 0, 0, 1);
  ASSERT_TRUE(same.ok()) << same.status().message();
  const std::vector<double> want = {0, 0, 0, 10, 10, 10, 12, 12, 12, 22, 22, 22};
  ASSERT_EQ(same->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR((*same)[i].arrival_s, want[i], 1e-9) << i;
    EXPECT_EQ((*same)[i].input_tokens, static_cast<int32_t>(i % 6) + 1) << i;
  }
}

TEST(GenerateRequestsTest, UnsortedTraceIsSortedFirst) {
  const std::vector<InferenceRequest> trace = {{5, 1, 1}, {0, 2, 2}};
  auto out = GenerateRequests(Constant(1), 0, 2, trace, 0, 0, 1);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].input_tokens, 2);
  EXPECT_EQ((*out)[1].input_tokens, 1);
}

TEST(GenerateRequestsTest, NothingLandsWhereTheRateIsZero) {
  // Zero until 06:00 and from 18:00 on, a triangle in between.
  const RateCurve curve{{{0, 0}, {21600, 0}, {43200, 1}, {64800, 0}}};
  ASSERT_TRUE(curve.Validate().ok());
  auto traced = GenerateRequests(curve, 0, 2 * kDay, EvenTrace(7), 0, 0, 1);
  auto poisson = GenerateRequests(curve, 0, 2 * kDay, {}, 0, 0, 1);
  for (const auto* result : {&traced, &poisson}) {
    ASSERT_TRUE(result->ok()) << result->status().message();
    ExpectSortedWithin(**result, 0, 2 * kDay);
    EXPECT_NEAR(static_cast<double>((*result)->size()), 2 * 21600, 5 * std::sqrt(43200.0));
    for (const InferenceRequest& r : **result) {
      const double x = std::fmod(r.arrival_s, kDay);
      EXPECT_GE(x, 21600) << r.arrival_s;
      EXPECT_LE(x, 64800) << r.arrival_s;
    }
  }
  // The trace path is exact: one request per unit of the integral.
  EXPECT_NEAR(static_cast<double>(traced->size()), 2 * 21600, 1);
}

TEST(GenerateRequestsTest, AzureTraceFollowsTheCurveAndKeepsItsTokens) {
  auto trace = io::LoadAzureTrace(std::string(HETSCHED_SOURCE_DIR) +
                                  "/data/inference/azure-llm-2023/AzureLLMInferenceTrace_code.csv");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const RateCurve curve = DiurnalCurve(0.5, 4, 15 * 3600);
  auto day = GenerateRequests(curve, 0, kDay, *trace, 0, 0, 1);
  ASSERT_TRUE(day.ok()) << day.status().message();
  ExpectSortedWithin(*day, 0, kDay);
  ASSERT_GT(day->size(), trace->size());
  for (size_t i = 0; i < day->size(); i += 997) {
    EXPECT_EQ((*day)[i].input_tokens, (*trace)[i % trace->size()].input_tokens) << i;
    EXPECT_EQ((*day)[i].output_tokens, (*trace)[i % trace->size()].output_tokens) << i;
  }
  // Any slice holds the curve's integral over it, give or take the trace's own burstiness: at
  // most twice the largest gap between a trace request's index and where an evenly spaced trace
  // would have it (about 1400 for this trace, whose rate sags in its last 20 minutes).
  const double n = static_cast<double>(trace->size());
  const double span = trace->back().arrival_s;
  double burstiness = 0;
  for (size_t i = 0; i < trace->size(); ++i) {
    burstiness = std::max(
        burstiness, std::abs(static_cast<double>(i) - (n - 1) * (*trace)[i].arrival_s / span));
  }
  EXPECT_GT(burstiness, 1000);
  EXPECT_LT(burstiness, 2000);
  for (double from = 0; from < kDay; from += 7200) {
    EXPECT_NEAR(static_cast<double>(CountIn(*day, from, from + 7200)),
                curve.Integral(from, from + 7200), 2 * burstiness + 1)
        << from;
  }
  EXPECT_NEAR(static_cast<double>(day->size()), curve.Integral(0, kDay), burstiness + 1);
}

TEST(GenerateRequestsTest, RejectsBadArguments) {
  auto message = [](const util::Result<std::vector<InferenceRequest>>& r) {
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(message(GenerateRequests(RateCurve{}, 0, 10, {}, 1, 1, 1)),
            "points: none (expected at least one (seconds since midnight, requests/s) point)");
  EXPECT_EQ(message(GenerateRequests(Constant(1), kNan, 10, {}, 1, 1, 1)),
            "window [nan, 10) s: is not finite (expected finite start and end times)");
  EXPECT_EQ(message(GenerateRequests(Constant(1), 10, 5, {}, 1, 1, 1)),
            "window [10, 5) s: ends before it starts (expected end >= start)");
  EXPECT_THAT(message(GenerateRequests(Constant(1e-9), 0, 1e12, {}, 1, 1, 1)),
              HasSubstr("is longer than 100 years"));
  EXPECT_EQ(message(GenerateRequests(Constant(1), 0, 10, {}, -1, 1, 1)),
            "-1 input and 1 output tokens (expected token counts >= 0)");
  EXPECT_EQ(message(GenerateRequests(Constant(1), 0, kDay, {}, 1, 1, 1, 1000)),
            "window [0, 86400) s: would hold about 86400 requests, more than max_requests 1000 "
            "(expected a shorter window or a lower rate)");
  EXPECT_EQ(message(GenerateRequests(Constant(1), 0, 100, EvenTrace(10), 0, 0, 1, 50)),
            "window [0, 100) s: would hold 100 requests, more than max_requests 50 (expected a "
            "shorter window or a lower rate)");
  EXPECT_EQ(message(GenerateRequests(Constant(1), 0, 100, {{kInf, 1, 1}}, 0, 0, 1)),
            "sizes[0]: arrival inf s is not finite (expected a time in seconds)");
  EXPECT_EQ(message(GenerateRequests(Constant(1), 0, 100, {{0, 1, 1}, {1, 1, -4}}, 0, 0, 1)),
            "sizes[1]: 1 input and -4 output tokens (expected token counts >= 0)");
  auto empty = GenerateRequests(Constant(1), 5, 5, {}, 1, 1, 1);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  // Exactly at the limit the 100 requests of the trace path fit.
  auto limit = GenerateRequests(Constant(1), 0, 100, EvenTrace(10), 0, 0, 1, 100);
  ASSERT_TRUE(limit.ok()) << limit.status().message();
  EXPECT_EQ(limit->size(), 100u);
}

TEST(GenerateRequestsTest, PoissonStopsAtMaxRequests) {
  // 1000 expected and a limit of 1000: about half the seeds draw more.
  int over = 0, under = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto result = GenerateRequests(Constant(1), 0, 1000, {}, 1, 1, seed, 1000);
    if (result.ok()) {
      EXPECT_LE(result->size(), 1000u);
      ++under;
    } else {
      EXPECT_EQ(result.status().message(),
                "window [0, 1000) s: holds more than max_requests 1000 requests (expected a "
                "shorter window or a lower rate)");
      ++over;
    }
  }
  EXPECT_GT(over, 0);
  EXPECT_GT(under, 0);
}

TEST(LoopTraceTest, ReplaysShiftedAndLoopedWithTheMeanGap) {
  // Arrivals 0, 1, 3: span 3 s, mean gap 1.5 s, period 4.5 s.
  const std::vector<InferenceRequest> trace = {{3, 3, 30}, {0, 1, 10}, {1, 2, 20}};
  auto looped = LoopTrace(trace, 100, 110);
  ASSERT_TRUE(looped.ok()) << looped.status().message();
  const std::vector<double> want = {100, 101, 103, 104.5, 105.5, 107.5, 109};
  ASSERT_EQ(looped->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_DOUBLE_EQ((*looped)[i].arrival_s, want[i]) << i;
    EXPECT_EQ((*looped)[i].input_tokens, static_cast<int32_t>(i % 3) + 1) << i;
    EXPECT_EQ((*looped)[i].output_tokens, 10 * (static_cast<int32_t>(i % 3) + 1)) << i;
  }
  auto same = LoopTrace(EvenTrace(10), 0, 10);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(Arrivals(*same), Arrivals(EvenTrace(10)));
}

TEST(LoopTraceTest, RejectsTracesWithoutAPeriodAndTooManyRequests) {
  auto message = [](const util::Result<std::vector<InferenceRequest>>& r) {
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(message(LoopTrace({}, 0, 10)), "trace: no requests (expected at least one request)");
  EXPECT_EQ(message(LoopTrace({{5, 1, 1}}, 0, 10)),
            "trace: its 1 request all arrive at 5 s, so it has no period to loop with (expected "
            "requests at two or more times)");
  EXPECT_THAT(message(LoopTrace({{2, 1, 1}, {2, 1, 1}}, 0, 10)),
              HasSubstr("its 2 requests all arrive at 2 s"));
  EXPECT_EQ(message(LoopTrace(EvenTrace(2), 0, 1000, 999)),
            "window [0, 1000) s: would hold 1000 requests, more than max_requests 999 (expected a "
            "shorter window or a lower rate)");
  EXPECT_EQ(message(LoopTrace(EvenTrace(2), 3, 1, 999)),
            "window [3, 1) s: ends before it starts (expected end >= start)");
  EXPECT_EQ(message(LoopTrace({{0, 1, 1}, {kNan, 1, 1}}, 0, 10)),
            "trace[1]: arrival nan s is not finite (expected a time in seconds)");
  auto full = LoopTrace(EvenTrace(2), 0, 1000, 1000);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->size(), 1000u);
  auto empty = LoopTrace({{5, 1, 1}}, 3, 3);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace hetsched::model
