// SimOptions::horizon_s: a run booked to a common horizon past its last job. Idle machines
// keep drawing power (or are suspended, as the power policy does it) until the horizon,
// utilization's denominator is the horizon, and job times do not change.
#include <gtest/gtest.h>

#include "report/sim_json.h"
#include "sched/test_cluster.h"
#include "sim/engine.h"
#include "sim/run_sim.h"

namespace hetsched::sim {
namespace {

using testing::ExpectAllAccounted;
using testing::MakeJob;
using testing::RunSim;

// Two nodes of one "gpu" (50 W idle, 300 W busy) with a 100 W base, 180 s boot, 60 s shutdown;
// one job of 100 s on one of them.
struct Scenario {
  model::Cluster cluster = testing::MakePowerCluster(2, 1);
  model::Workload workload;
  Scenario() { workload.jobs = {MakeJob(0, 0, 100, {{"gpu", 1.0}})}; }
};

TEST(Horizon, AlwaysOnEnergyGrowsByIdleDrawAndUtilizationUsesTheHorizon) {
  Scenario s;
  SimOptions o;
  o.power.tariff = power::Tariff::Flat(0.5);
  const SimResult plain = RunSim(s.cluster, s.workload, o);
  o.horizon_s = 1000;
  o.timeline_sample_s = 100;
  const SimResult r = RunSim(s.cluster, s.workload, o);
  // Without a horizon: 550 W for 100 s. Past the job both nodes idle at 150 W for 900 s.
  EXPECT_DOUBLE_EQ(plain.horizon_s, 100);
  EXPECT_NEAR(plain.energy_kwh, 55000 / 3.6e6, 1e-12);
  EXPECT_DOUBLE_EQ(r.end_s, 100);
  EXPECT_DOUBLE_EQ(r.horizon_s, 1000);
  EXPECT_NEAR(r.energy_kwh - plain.energy_kwh, 2 * 150.0 * 900 / 3.6e6, 1e-12);
  EXPECT_NEAR(r.energy_cost, 0.5 * r.energy_kwh, 1e-12);
  EXPECT_NEAR(r.energy_by_state.at("on-idle"), (150.0 * 100 + 2 * 150.0 * 900) / 3.6e6, 1e-12);
  // 100 busy device-seconds over 2 devices x 1000 s, where the run alone had 2 x 100 s.
  EXPECT_DOUBLE_EQ(plain.utilization.at("gpu"), 0.5);
  EXPECT_DOUBLE_EQ(r.utilization.at("gpu"), 100.0 / 2000);
  // Job times are the same.
  EXPECT_EQ(r.jobs_completed, 1);
  EXPECT_DOUBLE_EQ(r.avg_jct_s, plain.avg_jct_s);
  EXPECT_DOUBLE_EQ(r.makespan_s, plain.makespan_s);
  // The timeline runs to the horizon, idle.
  ASSERT_FALSE(r.timeline.samples.empty());
  EXPECT_DOUBLE_EQ(r.timeline.samples.back().time_s, 1000);
  EXPECT_DOUBLE_EQ(r.timeline.samples.back().power_w, 300);
  const auto j = report::ToJson(r);
  EXPECT_DOUBLE_EQ(j.at("horizon_s").get<double>(), 1000);
  EXPECT_DOUBLE_EQ(j.at("end_s").get<double>(), 100);
  ExpectAllAccounted(r);
}

TEST(Horizon, IdleTimeoutStillSuspendsNodesPastTheLastJob) {
  // SuspendTime 300: node 1 (idle from 0) is suspended at 300 and off at 360; node 0 (idle
  // from 100, when the job ends) is suspended at 400 and off at 460. Both then draw 0.5 W
  // standby to the horizon at 1000. Without the horizon the run stops at 100, before either.
  Scenario s;
  SimOptions o;
  o.power.policy = "idle-timeout";
  o.power.suspend_time_s = 300;
  o.horizon_s = 1000;
  const SimResult r = RunSim(s.cluster, s.workload, o);
  EXPECT_EQ(r.node_power_transitions, 2);
  const double joules = 550.0 * 100                 // both nodes, the job running
                        + 150.0 * 360 + 0.5 * 540   // node 0: idle and suspending, then off
                        + 150.0 * 260 + 0.5 * 640;  // node 1 after the job's 100 s
  EXPECT_NEAR(r.energy_kwh, joules / 3.6e6, 1e-12);
  EXPECT_NEAR(r.energy_by_state.at("off"), 0.5 * (540 + 640) / 3.6e6, 1e-12);
  EXPECT_DOUBLE_EQ(r.end_s, 100);
  EXPECT_DOUBLE_EQ(r.horizon_s, 1000);
  ExpectAllAccounted(r);
}

TEST(Horizon, OneBeforeTheEndChangesNothing) {
  Scenario s;
  SimOptions o;
  const SimResult plain = RunSim(s.cluster, s.workload, o);
  o.horizon_s = 50;
  const SimResult r = RunSim(s.cluster, s.workload, o);
  EXPECT_DOUBLE_EQ(r.horizon_s, 100);
  EXPECT_DOUBLE_EQ(r.energy_kwh, plain.energy_kwh);
  EXPECT_DOUBLE_EQ(r.utilization.at("gpu"), plain.utilization.at("gpu"));
}

TEST(Horizon, RejectedWithOptionsThatStopARunEarly) {
  Scenario s;
  SimOptions o;
  o.horizon_s = 1000;
  o.until_s = 50;
  EXPECT_FALSE(Simulate(s.cluster, s.workload, nullptr, o).ok());
  o.until_s = 0;
  o.max_rounds = 1;
  EXPECT_FALSE(Simulate(s.cluster, s.workload, nullptr, o).ok());
  o.max_rounds = 0;
  o.measure = std::make_pair(0, 1);
  EXPECT_FALSE(Simulate(s.cluster, s.workload, nullptr, o).ok());
  o.measure.reset();
  o.horizon_s = -1;
  EXPECT_FALSE(Simulate(s.cluster, s.workload, nullptr, o).ok());
}

}  // namespace
}  // namespace hetsched::sim
