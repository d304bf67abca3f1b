#include "obs/metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace hetsched::svc {
namespace {

TEST(MetricsTest, RendersFamiliesInRegistrationOrderAndSamplesByLabelValues) {
  MetricsRegistry r;
  auto requests = r.AddCounter("hetsched_requests_total", "HTTP requests served.");
  auto placements =
      r.AddCounter("hetsched_placements_total", "Placements made.", {"device_type", "node"});
  auto queued = r.AddGauge("hetsched_queued_jobs", "Jobs waiting to start.");
  auto power = r.AddGauge("hetsched_node_power_watts", "Modeled node power.", {"node"});
  auto latency =
      r.AddHistogram("hetsched_request_seconds", "Request latency.", {0.25, 1, 2.5}, {"route"});
  auto ticks = r.AddHistogram("hetsched_tick_seconds", "Control loop tick.", {1});
  ASSERT_TRUE(requests.ok() && placements.ok() && queued.ok() && power.ok() && latency.ok() &&
              ticks.ok());

  requests->Get({})->Inc();
  requests->Get({})->Inc(2);
  placements->Get({"v100", "n2"})->Inc();
  placements->Get({"a100", "n1"})->Inc(4);
  queued->Get({})->Set(7);
  queued->Get({})->Add(-2.5);
  Histogram h = *latency->Get({"/v1/jobs"});
  for (double v : {0.25, 1.0, 2.0, 3.0}) h.Observe(v);  // 0.25 and 1 sit on bucket edges

  EXPECT_EQ(r.Render(),
            "# HELP hetsched_requests_total HTTP requests served.\n"
            "# TYPE hetsched_requests_total counter\n"
            "hetsched_requests_total 3\n"
            "# HELP hetsched_placements_total Placements made.\n"
            "# TYPE hetsched_placements_total counter\n"
            "hetsched_placements_total{device_type=\"a100\",node=\"n1\"} 4\n"
            "hetsched_placements_total{device_type=\"v100\",node=\"n2\"} 1\n"
            "# HELP hetsched_queued_jobs Jobs waiting to start.\n"
            "# TYPE hetsched_queued_jobs gauge\n"
            "hetsched_queued_jobs 4.5\n"
            "# HELP hetsched_node_power_watts Modeled node power.\n"
            "# TYPE hetsched_node_power_watts gauge\n"
            "# HELP hetsched_request_seconds Request latency.\n"
            "# TYPE hetsched_request_seconds histogram\n"
            "hetsched_request_seconds_bucket{route=\"/v1/jobs\",le=\"0.25\"} 1\n"
            "hetsched_request_seconds_bucket{route=\"/v1/jobs\",le=\"1\"} 2\n"
            "hetsched_request_seconds_bucket{route=\"/v1/jobs\",le=\"2.5\"} 3\n"
            "hetsched_request_seconds_bucket{route=\"/v1/jobs\",le=\"+Inf\"} 4\n"
            "hetsched_request_seconds_sum{route=\"/v1/jobs\"} 6.25\n"
            "hetsched_request_seconds_count{route=\"/v1/jobs\"} 4\n"
            "# HELP hetsched_tick_seconds Control loop tick.\n"
            "# TYPE hetsched_tick_seconds histogram\n"
            "hetsched_tick_seconds_bucket{le=\"1\"} 0\n"
            "hetsched_tick_seconds_bucket{le=\"+Inf\"} 0\n"
            "hetsched_tick_seconds_sum 0\n"
            "hetsched_tick_seconds_count 0\n");
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  MetricsRegistry r;
  auto jobs = r.AddGauge("jobs", "back\\slash \"quoted\"\nsecond line", {"name"});
  ASSERT_TRUE(jobs.ok());
  jobs->Get({"a\\b\"c\nd"})->Set(1);
  EXPECT_EQ(r.Render(),
            "# HELP jobs back\\\\slash \"quoted\"\\nsecond line\n"
            "# TYPE jobs gauge\n"
            "jobs{name=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(MetricsTest, PrintsNumbersAsPrometheusParsesThem) {
  MetricsRegistry r;
  auto g = r.AddGauge("g", "h", {"case"});
  ASSERT_TRUE(g.ok());
  const double inf = std::numeric_limits<double>::infinity();
  g->Get({"a"})->Set(inf);
  g->Get({"b"})->Set(-inf);
  g->Get({"c"})->Set(std::nan(""));
  g->Get({"d"})->Set(1e15);  // integral: no exponent
  g->Get({"e"})->Set(1e21);
  g->Get({"f"})->Set(1e-7);
  g->Get({"g"})->Set(0.1);  // shortest form that reads back as the same double
  g->Get({"h"})->Set(-0.5);
  EXPECT_EQ(r.Render(),
            "# HELP g h\n"
            "# TYPE g gauge\n"
            "g{case=\"a\"} +Inf\n"
            "g{case=\"b\"} -Inf\n"
            "g{case=\"c\"} NaN\n"
            "g{case=\"d\"} 1000000000000000\n"
            "g{case=\"e\"} 1e+21\n"
            "g{case=\"f\"} 1e-07\n"
            "g{case=\"g\"} 0.1\n"
            "g{case=\"h\"} -0.5\n");
}

TEST(MetricsTest, CounterIgnoresNegativeAndNaNIncrements) {
  MetricsRegistry r;
  Counter c = *r.AddCounter("c_total", "h")->Get({});
  c.Inc(2.5);
  c.Inc(-1);
  c.Inc(std::nan(""));
  c.Inc();
  EXPECT_EQ(c.Value(), 3.5);
}

TEST(MetricsTest, HistogramCountsInfinitiesAtTheEndsAndIgnoresNaN) {
  MetricsRegistry r;
  Histogram h = *r.AddHistogram("h", "x", {0, 10})->Get({});
  const double inf = std::numeric_limits<double>::infinity();
  h.Observe(-inf);  // first bucket
  h.Observe(0);     // first bucket: le is inclusive
  h.Observe(10.5);  // only +Inf
  h.Observe(std::nan(""));
  h.Observe(inf);
  EXPECT_EQ(r.Render(),
            "# HELP h x\n"
            "# TYPE h histogram\n"
            "h_bucket{le=\"0\"} 2\n"
            "h_bucket{le=\"10\"} 2\n"
            "h_bucket{le=\"+Inf\"} 4\n"
            "h_sum NaN\n"  // -Inf + Inf
            "h_count 4\n");
}

TEST(MetricsTest, SameLabelValuesShareOneSample) {
  MetricsRegistry r;
  auto f = r.AddCounter("c_total", "h", {"device_type"});
  ASSERT_TRUE(f.ok());
  f->Get({"v100"})->Inc();
  f->Get({"v100"})->Inc();
  f->Get({"a100"})->Inc();
  EXPECT_EQ(f->Get({"v100"})->Value(), 2);
  EXPECT_EQ(f->Get({"a100"})->Value(), 1);
}

TEST(MetricsTest, ConcurrentUpdatesAreExact) {
  MetricsRegistry r;
  auto counters = r.AddCounter("c_total", "h", {"k"});
  auto gauges = r.AddGauge("g", "h");
  auto histograms = r.AddHistogram("h", "h", {1}, {"k"});
  ASSERT_TRUE(counters.ok() && gauges.ok() && histograms.ok());
  constexpr int kThreads = 8;
  constexpr int kIterations = 50000;

  std::atomic<bool> done{false};
  std::thread renderer([&] {
    while (!done.load()) EXPECT_FALSE(r.Render().empty());
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      // Every thread creates or finds the same samples concurrently.
      Counter c = *counters->Get({"x"});
      Gauge g = *gauges->Get({});
      Histogram h = *histograms->Get({"x"});
      for (int i = 0; i < kIterations; ++i) {
        c.Inc();
        g.Add(1);
        h.Observe(i % 2 == 0 ? 0.5 : 2);  // sums stay exact in binary
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done = true;
  renderer.join();

  EXPECT_EQ(counters->Get({"x"})->Value(), kThreads * kIterations);
  EXPECT_EQ(gauges->Get({})->Value(), kThreads * kIterations);
  const std::string text = r.Render();
  EXPECT_NE(text.find("h_bucket{k=\"x\",le=\"1\"} 200000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_bucket{k=\"x\",le=\"+Inf\"} 400000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_sum{k=\"x\"} 500000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_count{k=\"x\"} 400000\n"), std::string::npos) << text;
}

TEST(MetricsTest, RejectsBadMetricNames) {
  MetricsRegistry r;
  for (const char* name : {"", "1abc", "a-b", "a b", "caf\xC3\xA9"}) {
    auto f = r.AddCounter(name, "h");
    ASSERT_FALSE(f.ok()) << name;
    EXPECT_EQ(f.status().code(), util::StatusCode::kInvalidArgument);
    EXPECT_NE(f.status().message().find("[a-zA-Z_:][a-zA-Z0-9_:]*"), std::string::npos);
  }
  for (const char* name : {"a", "_a", ":a", "a:b_c9", "Z"}) {
    EXPECT_TRUE(r.AddCounter(name, "h").ok()) << name;
  }
}

TEST(MetricsTest, RejectsBadLabelNames) {
  MetricsRegistry r;
  for (const char* label : {"", "1a", "a:b", "a-b", "__reserved"}) {
    auto f = r.AddGauge("g", "h", {"ok", label});
    ASSERT_FALSE(f.ok()) << label;
    EXPECT_NE(f.status().message().find(std::string("\"") + label + "\""), std::string::npos)
        << f.status().message();
  }
  EXPECT_FALSE(r.AddGauge("g", "h", {"node", "node"}).ok());
  EXPECT_FALSE(r.AddHistogram("h", "h", {1}, {"le"}).ok());
  // The failures above registered nothing; "le" is reserved for histograms only.
  EXPECT_TRUE(r.AddGauge("g", "h", {"_a", "le"}).ok());
  EXPECT_TRUE(r.AddHistogram("h", "h", {1}, {"node"}).ok());
}

TEST(MetricsTest, RejectsDuplicateFamilies) {
  MetricsRegistry r;
  ASSERT_TRUE(r.AddCounter("x", "h").ok());
  auto again = r.AddGauge("x", "h");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), "metric x is already registered");
}

TEST(MetricsTest, RejectsBadBucketBounds) {
  MetricsRegistry r;
  const double inf = std::numeric_limits<double>::infinity();
  for (const std::vector<double>& bounds :
       std::vector<std::vector<double>>{{1, 1}, {2, 1}, {std::nan("")}, {1, inf}, {-inf, 1}}) {
    EXPECT_FALSE(r.AddHistogram("h", "h", bounds).ok());
  }
  EXPECT_TRUE(r.AddHistogram("h", "h", {}).ok());  // only +Inf
}

TEST(MetricsTest, GetRejectsWrongArityAndInvalidUtf8) {
  MetricsRegistry r;
  auto f = r.AddCounter("c_total", "h", {"device_type", "node"});
  ASSERT_TRUE(f.ok());
  auto too_few = f->Get({"v100"});
  ASSERT_FALSE(too_few.ok());
  EXPECT_EQ(too_few.status().message(),
            "metric c_total: 1 label values given for labels (device_type, node)");
  EXPECT_FALSE(f->Get({"v100", "n1", "extra"}).ok());
  EXPECT_FALSE(f->Get({"v100", "n\xFF"}).ok());
  EXPECT_FALSE(f->Get({"\xE2\x82", "n1"}).ok());  // truncated euro sign
  EXPECT_TRUE(f->Get({"v100", "Ger\xC3\xA4t \xE2\x82\xAC"}).ok());
  EXPECT_FALSE(r.AddGauge("g", "bad \xC0\xAF help").ok());
}

}  // namespace
}  // namespace hetsched::svc
