#include "cost/job_speed.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/catalog.h"
#include "model/compatibility.h"

namespace hetsched::cost {
namespace {

model::Job MakeJob(const std::string& job_type = "ResNet-50", int gang = 1) {
  model::Job job;
  job.name = "j";
  job.job_type = job_type;
  job.gang_size = gang;
  return job;
}

const model::DeviceType& V100() { return *model::DeviceCatalog::BuiltIn().Find("v100-32g"); }

model::DeviceType Simple() {
  model::DeviceType t;
  t.name = "simple";
  t.fp32_tflops = 10;
  t.fp16_tflops = 100;
  t.memory_bandwidth = 1e12;
  t.efficiency = 0.5;
  return t;
}

TEST(JobSpeed, JobThroughputByAliasIgnoringCase) {
  model::Job job = MakeJob();
  job.throughput["V100"] = 4.0;  // Gavel's name for the v100-32g
  std::optional<StepTime> t = EstimateStepTime(job, V100(), nullptr);
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->seconds, 0.25);
  EXPECT_EQ(t->source, SpeedSource::kJobThroughput);
  EXPECT_EQ(SpeedSourceName(t->source), "job");
}

// Job::unit_speed_assumed stands for the table the daemon used to give an unmeasured job: 1
// step/s on each type that runs it (its stacks, its memory), nothing elsewhere.
TEST(JobSpeed, AnAssumedUnitSpeedReadsAsAThroughputOfOneOnTheTypesThatRunTheJob) {
  model::Job assumed = MakeJob("");
  assumed.stacks = {{"cuda", ""}};
  assumed.memory_per_worker = 40ull << 30;
  assumed.unit_speed_assumed = true;
  model::Job table = assumed;
  table.unit_speed_assumed = false;
  const model::DeviceCatalog& catalog = model::DeviceCatalog::BuiltIn();
  for (const model::DeviceType& type : catalog.types()) {
    if (model::TypeRunsJob(type, assumed)) table.throughput[type.name] = 1;
  }
  // Both kinds of type are in the catalog: some run the job, some do not.
  ASSERT_GT(table.throughput.size(), 0u);
  ASSERT_LT(table.throughput.size(), catalog.types().size());
  for (const model::DeviceType& type : catalog.types()) {
    const std::optional<StepTime> want = EstimateStepTime(table, type, nullptr);
    const std::optional<StepTime> got = EstimateStepTime(assumed, type, nullptr);
    ASSERT_EQ(got.has_value(), want.has_value()) << type.name;
    if (!want) continue;
    EXPECT_EQ(got->seconds, want->seconds) << type.name;
    EXPECT_EQ(got->source, want->source) << type.name;
  }
}

TEST(JobSpeed, ProfileWhenTheJobHasNoMeasurement) {
  model::ThroughputProfile profile;
  profile.SetIsolated("ResNet-50", 1, "v100", 2.0);
  std::optional<StepTime> t = EstimateStepTime(MakeJob(), V100(), &profile);
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->seconds, 0.5);
  EXPECT_EQ(t->source, SpeedSource::kProfile);
}

TEST(JobSpeed, ProfileIsLookedUpAtTheGangSize) {
  model::ThroughputProfile profile;
  profile.SetIsolated("ResNet-50", 4, "v100-32g", 8.0);
  EXPECT_DOUBLE_EQ(*StepSeconds(MakeJob("ResNet-50", 4), V100(), &profile), 0.125);
  EXPECT_FALSE(StepSeconds(MakeJob("ResNet-50", 2), V100(), &profile).has_value());
}

TEST(JobSpeed, JobThroughputWinsOverProfile) {
  model::ThroughputProfile profile;
  profile.SetIsolated("ResNet-50", 1, "v100", 2.0);
  model::Job job = MakeJob();
  job.throughput["v100-32g"] = 5.0;
  EXPECT_DOUBLE_EQ(*StepSeconds(job, V100(), &profile), 0.2);
}

TEST(JobSpeed, RooflineFromOpsWhenNothingIsMeasured) {
  model::Job job = MakeJob();
  job.ops = model::OperatorLoad{1e12, 1'000'000'000ull, true};
  std::optional<StepTime> t = EstimateStepTime(job, Simple(), nullptr);
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->seconds, 0.02);  // 1e12 / (100e12 x 0.5)
  EXPECT_EQ(t->source, SpeedSource::kRoofline);
  job.ops->low_precision = false;
  EXPECT_DOUBLE_EQ(*StepSeconds(job, Simple(), nullptr), 0.2);  // fp32: 1e12 / 5e12
}

TEST(JobSpeed, MeasurementForAnotherTypeDoesNotApply) {
  model::Job job = MakeJob();
  job.throughput["k80"] = 1.0;
  EXPECT_FALSE(StepSeconds(job, V100(), nullptr).has_value());
}

TEST(JobSpeed, ZeroThroughputMeansNoProgress) {
  model::Job job = MakeJob();
  job.throughput["v100"] = 0.0;
  EXPECT_TRUE(std::isinf(*StepSeconds(job, V100(), nullptr)));
}

TEST(JobSpeed, InvalidMeasurementFallsThrough) {
  model::Job job = MakeJob();
  job.throughput["v100"] = -1.0;
  job.ops = model::OperatorLoad{1e12, 0, true};
  std::optional<StepTime> t = EstimateStepTime(job, V100(), nullptr);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->source, SpeedSource::kRoofline);
  EXPECT_DOUBLE_EQ(t->seconds, 1e12 / (125e12 * V100().efficiency));
}

}  // namespace
}  // namespace hetsched::cost
