// Ratings from one simulated replica (sim/serving.h, ReplicaLimit): a shape whose replica, alone
// in the simulation, carries more than the model's rating is rated up to the SLO's percentile of
// that limit; one that carries less keeps the model's rating; each shape is simulated once per
// run. And the arrivals it is probed with (AtConstantRate).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "model/io/cluster_reader.h"
#include "model/io/workload_reader.h"
#include "sim/serving.h"

namespace hetsched::sim {
namespace {

// One node of `gpus` A100s, NVLink between them.
model::Cluster A100s(int gpus) {
  const std::string island =
      gpus > 1 ? "islands: [{kind: nvlink, members: all, bandwidth: 300GB/s, latency: 0s}]" : "";
  auto c = model::io::ParseClusterYaml(fmt::format(R"(
name: one
racks: [{{name: r0, uplink_bandwidth: 100GB/s, latency: 0s}}]
nodes:
  - name: nv0
    rack: r0
    devices: [{{type: a100-80g, count: {}}}]
    {}
    host_link: {{bandwidth: 32GB/s, latency: 0s}}
    nic: {{bandwidth: 25GB/s, latency: 0s}}
)",
                                                   gpus, island),
                                       "one.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

// llama-7b on CUDA at a constant `rate` (requests/s).
model::Workload Service(const model::Cluster& c, double rate) {
  auto w = model::io::ParseWorkloadYaml(fmt::format(R"(
jobs:
  - name: chat
    kind: service
    model: llama-7b
    stacks: ["cuda>=12.0"]
    slo: {{ttft: 2s, tpot: 100ms}}
    rate: [[0h, {}]]
    tokens: {{input: 1000, output: 100}}
)",
                                                    rate),
                                        "w.yaml", c.catalog);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return std::move(w).value();
}

// `per_burst` requests of 1,000 prompt and 100 output tokens at once, bursts evenly spaced so
// that `rate` requests/s arrive, over [0, end_s).
std::vector<model::InferenceRequest> Bursts(double rate, int per_burst, double end_s) {
  std::vector<model::InferenceRequest> reqs;
  for (double t = 0; t < end_s; t += per_burst / rate) {
    for (int k = 0; k < per_burst; ++k) reqs.push_back({t, 1000, 100});
  }
  return reqs;
}

// Serves `reqs`, arriving at `rate` requests/s, over [0, horizon_s).
ServingResult Serve(const model::Cluster& c, double rate,
                    const std::vector<model::InferenceRequest>& reqs, double horizon_s) {
  const model::Workload w = Service(c, rate);
  ServingOptions o;
  o.horizon_s = horizon_s;
  auto r = SimulateServing(c, {&w.jobs[0]}, {reqs}, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : ServingResult{};
}

// The rating in the first "above their rating" note.
double NotedRating(const ServingResult& r) {
  for (const std::string& note : r.notes) {
    const size_t at = note.find("above their rating of ");
    if (at != note.npos) return std::stod(note.substr(at + 22));
  }
  ADD_FAILURE() << "no note of replicas above their rating";
  return 0;
}

TEST(ReplicaLimit, ARateOneReplicaCarriesAboveTheModelsRatingRaisesIt) {
  const model::Cluster c = A100s(1);
  // Evenly spaced arrivals: one replica carries them well past the model's rating (its M/M/1
  // queue assumes Poisson's spread).
  const ServingResult probe = Serve(c, 1, Bursts(1, 1, 1200), 1200);
  ASSERT_EQ(probe.replica_limits.size(), 1u);
  const ReplicaLimit& limit = probe.replica_limits[0];
  EXPECT_EQ(limit.service, "chat");
  EXPECT_EQ(limit.device_type, "a100-80g");
  EXPECT_GT(limit.limit, 1.05 * limit.model_rating) << limit.model_rating;
  EXPECT_LE(limit.limit, 2 * limit.model_rating);
  // Loaded past both on the one GPU, the replica is rated at 99 % (the SLO's percentile) of
  // the limit, not at the model's rating.
  const ServingResult over = Serve(c, 1.2 * limit.limit, Bursts(1.2 * limit.limit, 1, 1200), 1200);
  ASSERT_EQ(over.replica_limits.size(), 1u);
  EXPECT_NEAR(NotedRating(over), 0.99 * over.replica_limits[0].limit, 0.01);
}

TEST(ReplicaLimit, ARateOneReplicaMissesTheSloAtKeepsTheModelsRating) {
  const model::Cluster c = A100s(1);
  // Bursts of 40 prompts at once: the last of each waits for 39 prefills, past the 2 s TTFT
  // target at any rate, so the replica misses the SLO at the model's rating.
  const ServingResult probe = Serve(c, 1, Bursts(1, 40, 1200), 1200);
  ASSERT_EQ(probe.replica_limits.size(), 1u);
  const ReplicaLimit& limit = probe.replica_limits[0];
  EXPECT_EQ(limit.limit, 0);
  EXPECT_EQ(limit.runs, 1);  // the search stops at the model's rating
  const ServingResult over =
      Serve(c, 2 * limit.model_rating, Bursts(2 * limit.model_rating, 40, 900), 900);
  EXPECT_NEAR(NotedRating(over), limit.model_rating, 0.01);
}

TEST(ReplicaLimit, TooFewRequestsForThePercentileKeepTheModelsRating) {
  // 900 requests: the p99 of a probe would rest on 9 requests beyond it, not 10.
  const model::Cluster c = A100s(1);
  const ServingResult r = Serve(c, 1, Bursts(1, 1, 900), 900);
  ASSERT_EQ(r.replica_limits.size(), 1u);
  EXPECT_EQ(r.replica_limits[0].runs, 0);
  EXPECT_EQ(r.replica_limits[0].limit, 0);
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("not run, 900 requests are too few") != n.npos;
  }));
}

TEST(ReplicaLimit, EachShapeIsSimulatedOncePerRun) {
  // Two GPUs: shapes of tp 1 and 2; an hour of plans (12 of them) asks for each shape's rating
  // at every one.
  const model::Cluster c = A100s(2);
  const ServingResult r = Serve(c, 2, Bursts(2, 1, 3600), 3600);
  ASSERT_GE(r.replica_limits.size(), 1u);
  std::vector<int32_t> tps;
  for (const ReplicaLimit& l : r.replica_limits) {
    tps.push_back(l.tp);
    EXPECT_GE(l.runs, 1);
    EXPECT_LE(l.runs, 8);  // [rating, 2 x rating] to within 2 %: 2 ends and 6 halvings at most
  }
  std::sort(tps.begin(), tps.end());
  EXPECT_EQ(std::unique(tps.begin(), tps.end()), tps.end());
  int noted = 0;
  for (const std::string& note : r.notes)
    noted += note.find("replica alone in the simulation") != note.npos;
  EXPECT_EQ(noted, static_cast<int>(r.replica_limits.size()));
}

TEST(AtConstantRate, WarpsByTheRateCurveSoPoissonArrivalsComeOutAtTheRate) {
  auto curve = model::MakeRateCurve({{0, 1}, {43200, 9}});
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  auto day = model::GenerateRequests(*curve, 0, 86400, {}, 100, 10, 3);
  ASSERT_TRUE(day.ok()) << day.status().ToString();
  const auto at = AtConstantRate(*day, &*curve, 4, 20000);
  ASSERT_EQ(at.size(), 20000u);
  EXPECT_EQ(at.front().arrival_s, 0);
  // 19,999 gaps of a Poisson process at 4/s span 5,000 s, standard deviation 35 s.
  EXPECT_NEAR(at.back().arrival_s, 5000, 125);
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end(), [](const auto& a, const auto& b) {
    return a.arrival_s < b.arrival_s;
  }));
  EXPECT_EQ(at[5].input_tokens, 100);
}

TEST(AtConstantRate, WithoutACurveScalesTheArrivalsByTheirOwnMeanRate) {
  // Pairs at once, a pair every 2 s (1 request/s); at 4 requests/s, a pair every 0.5 s.
  const std::vector<model::InferenceRequest> reqs = {
      {10, 1, 2}, {10, 3, 4}, {12, 5, 6}, {12, 7, 8}, {14, 9, 10}};
  const auto at = AtConstantRate(reqs, nullptr, 4, 4);
  ASSERT_EQ(at.size(), 4u);
  // The first 4 span 2 s for 3 gaps: 1.5 requests/s, warped to 4.
  EXPECT_DOUBLE_EQ(at[1].arrival_s, 0);
  EXPECT_DOUBLE_EQ(at[2].arrival_s, 2 * 1.5 / 4);
  EXPECT_EQ(at[3].input_tokens, 7);
  EXPECT_TRUE(AtConstantRate(reqs, nullptr, 0, 4).empty());
  EXPECT_TRUE(AtConstantRate({}, nullptr, 1, 4).empty());
}

}  // namespace
}  // namespace hetsched::sim
