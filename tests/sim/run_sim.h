// Test helpers for the simulator: run a simulation that must succeed, and check that every job
// is accounted for.
#pragma once

#include <gtest/gtest.h>

#include "sim/engine.h"

namespace hetsched::testing {

inline sim::SimResult RunSim(const model::Cluster& c, const model::Workload& w, sim::SimOptions o,
                             const model::ThroughputProfile* profile = nullptr) {
  auto r = sim::Simulate(c, w, profile, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : sim::SimResult{};
}

inline void ExpectAllAccounted(const sim::SimResult& r) {
  EXPECT_EQ(r.jobs_completed + r.jobs_failed + r.jobs_unfinished, r.jobs_total);
}

}  // namespace hetsched::testing
