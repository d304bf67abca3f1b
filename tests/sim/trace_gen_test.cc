#include "sim/trace_gen.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "model/io/gavel_reader.h"
#include "testing/build_paths.h"

namespace hetsched::sim {
namespace {

const model::ThroughputProfile& Profile() {
  static const auto profile = model::io::LoadGavelThroughputs(
      std::string(HETSCHED_SOURCE_DIR) + "/data/gavel/simulation_throughputs.json");
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return *profile;
}

TEST(GavelTrace, FollowsGavelsJobMix) {
  GavelTraceOptions o;
  o.rate_per_hour = 4;
  o.jobs = 4000;
  o.seed = 3;
  auto w = GenerateGavelTrace(Profile(), o);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->jobs.size(), 4000u);
  std::set<std::string> types;
  int long_jobs = 0;
  for (size_t i = 0; i < w->jobs.size(); ++i) {
    const model::Job& j = w->jobs[i];
    EXPECT_EQ(j.id.value(), static_cast<int32_t>(i));
    EXPECT_EQ(j.gang_size, 1);
    types.insert(j.job_type);
    const double v100 = *Profile().Isolated(j.job_type, 1, "v100-32g");
    const double duration = j.work / v100;
    EXPECT_GE(duration, 60 * 31.6 - 1);  // 60 x 10^1.5
    EXPECT_LE(duration, 60 * 1e4 + 1);
    if (duration > 60 * 1e3) ++long_jobs;
    if (i > 0) {
      EXPECT_GE(j.arrival_s, w->jobs[i - 1].arrival_s);
    }
  }
  EXPECT_EQ(types.size(), 26u);
  EXPECT_NEAR(long_jobs / 4000.0, 0.2, 0.03);
  // Mean inter-arrival 3600 / rate = 900 s.
  EXPECT_NEAR(w->jobs.back().arrival_s / 3999, 900, 60);
  // Same seed, same trace.
  auto again = GenerateGavelTrace(Profile(), o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->jobs[1234].work, w->jobs[1234].work);
  EXPECT_EQ(again->jobs[1234].arrival_s, w->jobs[1234].arrival_s);
}

TEST(GavelTrace, MultiGpuScalesOnlyDistributedTemplates) {
  GavelTraceOptions o;
  o.rate_per_hour = 1;
  o.jobs = 3000;
  o.multi_gpu = true;
  auto w = GenerateGavelTrace(Profile(), o);
  ASSERT_TRUE(w.ok());
  std::map<int, int> scales;
  for (const model::Job& j : w->jobs) {
    scales[j.gang_size]++;
    if (j.gang_size > 1) {
      EXPECT_TRUE(Profile().Isolated(j.job_type, j.gang_size, "v100-32g").has_value());
    }
  }
  EXPECT_GT(scales[2], 0);
  EXPECT_GT(scales[4], scales[2]);  // 0.15 vs 0.1 of the distributed templates
  EXPECT_GT(scales[8], 0);
}

TEST(GavelTrace, BadOptionsAreErrors) {
  GavelTraceOptions o;
  o.rate_per_hour = 0;
  EXPECT_FALSE(GenerateGavelTrace(Profile(), o).ok());
  o.rate_per_hour = 1;
  o.jobs = 0;
  EXPECT_FALSE(GenerateGavelTrace(Profile(), o).ok());
  o.jobs = 10;
  o.reference_device = "tpu-v9";
  EXPECT_FALSE(GenerateGavelTrace(Profile(), o).ok());
}

}  // namespace
}  // namespace hetsched::sim
