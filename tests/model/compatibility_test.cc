#include "model/compatibility.h"

#include <gtest/gtest.h>

#include "model/io/cluster_reader.h"
#include "util/units.h"

namespace hetsched::model {
namespace {

Cluster Shorthand(std::string_view spec) {
  util::Result<Cluster> c = io::ParseClusterShorthand(spec);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::move(c).value();
}

Job MakeJob(std::vector<std::string> stacks, uint64_t memory, int32_t gang) {
  Job job;
  job.name = "j";
  for (const std::string& s : stacks) job.stacks.push_back(*ParseStackRequirement(s));
  job.memory_per_worker = memory;
  job.gang_size = job.min_workers = job.max_workers = gang;
  return job;
}

std::vector<std::string> Names(const Cluster& c, const std::vector<DeviceTypeId>& ids) {
  std::vector<std::string> out;
  for (DeviceTypeId id : ids) out.push_back(c.catalog.Get(id).name);
  return out;
}

TEST(CompatibilityTest, StackMemoryAndGang) {
  Cluster c = Shorthand("k80=4,a100-80g=8:per_node=8,mi250x=2:per_node=2");
  using V = std::vector<std::string>;
  Job any_gpu = MakeJob({"cuda>=11.0", "rocm"}, 10 * util::kGiB, 2);
  EXPECT_EQ(Names(c, CompatibleTypes(c, any_gpu)), (V{"k80", "a100-80g", "mi250x"}));
  EXPECT_EQ(WhyNoDeviceFits(c, any_gpu), "");

  Job new_cuda = MakeJob({"cuda>=12.0"}, 1 * util::kGiB, 1);
  EXPECT_EQ(Names(c, CompatibleTypes(c, new_cuda)), (V{"a100-80g"}));

  Job big = MakeJob({"cuda", "rocm"}, 100 * util::kGiB, 1);
  EXPECT_EQ(Names(c, CompatibleTypes(c, big)), (V{"mi250x"}));

  Job wide = MakeJob({"rocm"}, 1 * util::kGiB, 4);
  EXPECT_TRUE(CompatibleTypes(c, wide).empty());
  EXPECT_EQ(WhyNoDeviceFits(c, wide),
            "needs 4 devices of one type at once; the cluster has at most 2 compatible devices of "
            "a type (mi250x)");
  // Elastic: the scheduler may run it at its minimum, so that is what must fit.
  wide.min_workers = 2;
  wide.max_workers = 8;
  EXPECT_EQ(WorkersNeeded(wide), 2);
  EXPECT_EQ(Names(c, CompatibleTypes(c, wide)), (V{"mi250x"}));
  wide.min_workers = 3;
  EXPECT_TRUE(CompatibleTypes(c, wide).empty());
}

TEST(CompatibilityTest, ReasonsNameWhatIsMissing) {
  Cluster c = Shorthand("k80=4,p100=2");
  EXPECT_EQ(WhyNoDeviceFits(c, MakeJob({"cuda>=13.0"}, 0, 1)),
            "needs cuda>=13.0; the cluster has cuda only up to 12.9 (p100)");
  EXPECT_EQ(WhyNoDeviceFits(c, MakeJob({"rocm>=6", "cann"}, 0, 1)),
            "needs rocm>=6 or cann; no device in the cluster runs rocm; no device in the cluster "
            "runs cann");
  EXPECT_EQ(WhyNoDeviceFits(c, MakeJob({"cuda"}, 96 * util::kGiB, 1)),
            "needs 96 GiB per worker; the largest compatible device has 16 GiB (p100)");
}

}  // namespace
}  // namespace hetsched::model
