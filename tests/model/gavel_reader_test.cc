#include "model/io/gavel_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "testing/build_paths.h"

namespace hetsched::model::io {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kGavelDir = std::string(HETSCHED_SOURCE_DIR) + "/data/gavel";

std::string TraceError(const std::string& text) {
  auto result = ParseGavelTrace(text, "t.trace");
  EXPECT_FALSE(result.ok()) << "parsed:\n" << text;
  return result.ok() ? "" : result.status().message();
}

std::string ThroughputError(const std::string& text) {
  auto result = ParseGavelThroughputs(text, "t.json");
  EXPECT_FALSE(result.ok()) << "parsed:\n" << text;
  return result.ok() ? "" : result.status().message();
}

// A 10-column line; fields joined by tabs.
std::string TenColumns(const std::string& steps = "100", const std::string& scale = "1",
                       const std::string& weight = "1", const std::string& slo = "-1",
                       const std::string& arrival = "0") {
  return "ResNet-18 (batch size 16)\tpython3 main.py\timage_classification\t--num_steps\t1\t" +
         steps + "\t" + scale + "\t" + weight + "\t" + slo + "\t" + arrival + "\n";
}

class GavelThroughputsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto result = LoadGavelThroughputs(kGavelDir + "/simulation_throughputs.json");
    ASSERT_TRUE(result.ok()) << result.status().message();
    profile_ = new ThroughputProfile(std::move(result).value());
  }
  static void TearDownTestSuite() {
    delete profile_;
    profile_ = nullptr;
  }
  static ThroughputProfile* profile_;
};
ThroughputProfile* GavelThroughputsTest::profile_ = nullptr;

TEST_F(GavelThroughputsTest, ShippedFileHasGavelsJobTypesAndScales) {
  ASSERT_NE(profile_, nullptr);
  // The *_unconsolidated worker types are skipped; k80/p100/v100 map to catalog names.
  EXPECT_EQ(profile_->DeviceTypes(), (std::vector<std::string>{"k80", "p100", "v100-32g"}));
  const std::vector<std::string> types = profile_->JobTypes();
  EXPECT_EQ(types.size(), 26u);
  for (const std::string& device : profile_->DeviceTypes()) {
    std::map<int, int> per_scale;
    for (const std::string& type : types) {
      for (int scale : {1, 2, 4, 8}) {
        if (profile_->Isolated(type, scale, device)) ++per_scale[scale];
      }
    }
    EXPECT_EQ(per_scale, (std::map<int, int>{{1, 26}, {2, 19}, {4, 19}, {8, 19}})) << device;
  }
}

TEST_F(GavelThroughputsTest, KnownValuesMatchTheFile) {
  ASSERT_NE(profile_, nullptr);
  EXPECT_DOUBLE_EQ(*profile_->Isolated("ResNet-18 (batch size 16)", 1, "v100-32g"),
                   32.353384328946916);
  EXPECT_DOUBLE_EQ(*profile_->Isolated("ResNet-18 (batch size 16)", 1, "k80"), 4.795294551566172);
  EXPECT_DOUBLE_EQ(*profile_->Isolated("ResNet-18 (batch size 16)", 1, "p100"), 35.869203207990005);
  auto pair = profile_->Colocated("ResNet-18 (batch size 16)", 1, "ResNet-18 (batch size 64)", 1,
                                  "v100-32g");
  ASSERT_TRUE(pair.has_value());
  EXPECT_DOUBLE_EQ(pair->first, 32.353384328946916);
  EXPECT_DOUBLE_EQ(pair->second, 24.093231895382736);
  EXPECT_FALSE(profile_->Isolated("ResNet-18 (batch size 16)", 3, "v100-32g").has_value());
  EXPECT_FALSE(profile_->Isolated("A3C", 2, "v100-32g").has_value());
}

TEST(GavelThroughputsBadInputTest, RejectsBadValuesWithTheirKeyPath) {
  EXPECT_EQ(ThroughputError(R"js({"k80": {"('A3C', 1)": {"null": -1}}})js"),
            "t.json: k80.('A3C', 1).null: is -1 (expected a non-negative number of steps/s)");
  EXPECT_THAT(ThroughputError(R"js({"k80": {"('A3C', 1)": {"null": 1, "('B', 1)": [1, -2]}}})js"),
              HasSubstr("k80.('A3C', 1).('B', 1)[1]: is -2"));
  EXPECT_THAT(ThroughputError(R"js({"k80": {"('A3C', 1)": {"null": 1, "('B', 1)": [1]}}})js"),
              HasSubstr("(expected [own, partner] steps/s)"));
  EXPECT_THAT(ThroughputError(R"js({"k80": {"('A3C', 1)": {"null": "fast"}}})js"),
              HasSubstr("k80.('A3C', 1).null: is \"fast\""));
  EXPECT_THAT(ThroughputError(R"js({"k80": {"('A3C', 1)": {"('B', 1)": [1, 1]}}})js"),
              HasSubstr("has no \"null\" entry"));
  for (const char* key :
       {"A3C", "('A3C', 0)", "('A3C', x)", "(A3C, 1)", "('A3C',1)", "('A3C', 1", "('', 1)",
        "('A'C', 1)", "('A3C', 99999999999)", "('A3C', 01)", "('A3C', -1)"}) {
    const std::string json = "{\"k80\": {\"" + std::string(key) + "\": {\"null\": 1}}}";
    EXPECT_THAT(ThroughputError(json), HasSubstr("is not a job type key")) << key;
  }
}

TEST(GavelThroughputsBadInputTest, RejectsUnknownWorkerTypesAndBadJson) {
  const std::string unknown = ThroughputError(R"js({"tpu-v9": {}})js");
  EXPECT_THAT(unknown, StartsWith("t.json: tpu-v9: unknown worker type 'tpu-v9'"));
  EXPECT_THAT(unknown, HasSubstr("v100-32g"));
  EXPECT_THAT(ThroughputError("{\n  \"k80\": {\n    \"x\": nope\n}"),
              StartsWith("t.json:3:11: not valid JSON"));
  EXPECT_THAT(ThroughputError("[]"), HasSubstr("not an object"));
  EXPECT_THAT(ThroughputError(R"({"v100": {}, "V100-32G": {}})"),
              HasSubstr("names device type 'v100-32g' like"));
  EXPECT_THAT(ThroughputError(R"js({"k80_unconsolidated": {}})js"), HasSubstr("no throughputs"));
}

TEST(GavelTraceTest, EveryShippedTraceLoads) {
  const std::vector<std::pair<std::string, size_t>> traces = {
      {"msr-seed0/0e4a51", 1181},
      {"msr-seed0/103959", 986},
      {"msr-seed0/11cb48", 2000},
      {"msr-seed0/23dbec", 9},
      {"msr-seed0/2869ce", 533},
      {"msr-seed0/51b7ef", 18},
      {"msr-seed0/6214e9", 2000},
      {"msr-seed0/6c71a0", 2000},
      {"msr-seed0/795a4c", 3},
      {"msr-seed0/7f04ca", 972},
      {"msr-seed0/925e2b", 4},
      {"msr-seed0/b436b2", 2000},
      {"msr-seed0/e13805", 607},
      {"msr-seed0/ed69ec", 951},
      {"msr-seed0/ee9e8c", 2000},
      {"physical_cluster/artifact_evaluation", 15},
      {"physical_cluster/debug", 14},
      {"physical_cluster/debug_v2", 14},
      {"physical_cluster/highmem_test", 8},
      {"physical_cluster/max_min_fairness", 96},
      {"physical_cluster/medium_test", 20},
      {"physical_cluster/minimize_makespan", 100},
      {"physical_cluster/small_test", 20}};
  for (const auto& [name, count] : traces) {
    auto result = LoadGavelTrace(kGavelDir + "/traces/" + name + ".trace");
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(result->jobs.size(), count) << name;
    for (size_t i = 0; i < result->jobs.size(); ++i) {
      const Job& job = result->jobs[i];
      EXPECT_EQ(job.id, JobId(static_cast<int32_t>(i)));
      EXPECT_GT(job.work, 0);
      EXPECT_GE(job.gang_size, 1);
      if (i > 0) {
        EXPECT_LE(result->jobs[i - 1].arrival_s, job.arrival_s);
      }
    }
  }
}

TEST(GavelTraceTest, TenColumnLineBecomesAJob) {
  auto result = LoadGavelTrace(kGavelDir + "/traces/physical_cluster/artifact_evaluation.trace");
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Job& job = result->jobs[0];
  EXPECT_EQ(job.name, "job-0");
  EXPECT_EQ(job.kind, JobKind::kTraining);
  EXPECT_EQ(job.job_type, "ResNet-50 (batch size 64)");
  EXPECT_DOUBLE_EQ(job.work, 2931);
  EXPECT_EQ(job.gang_size, 1);
  EXPECT_EQ(job.min_workers, 1);
  EXPECT_EQ(job.max_workers, 1);
  EXPECT_DOUBLE_EQ(job.priority_weight, 1);
  EXPECT_FALSE(job.slo_factor.has_value());
  EXPECT_FALSE(job.deadline_s.has_value());
  EXPECT_DOUBLE_EQ(job.arrival_s, 0);
  ASSERT_EQ(job.stacks.size(), 1u);
  EXPECT_EQ(job.stacks[0].name, "cuda");
  EXPECT_TRUE(job.preemptible);
  EXPECT_EQ(result->jobs[1].gang_size, 2);  // Transformer (batch size 16), scale factor 2
}

TEST(GavelTraceTest, SevenColumnLineBecomesAJob) {
  auto result = LoadGavelTrace(kGavelDir + "/traces/msr-seed0/0e4a51.trace");
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Job& second = result->jobs[1];
  EXPECT_EQ(second.name, "job-1");
  EXPECT_EQ(second.job_type, "Recommendation (batch size 8192)");
  EXPECT_DOUBLE_EQ(second.work, 10000);
  EXPECT_DOUBLE_EQ(second.arrival_s, 6);
  EXPECT_EQ(second.gang_size, 1);
  EXPECT_DOUBLE_EQ(second.priority_weight, 1);
}

TEST(GavelTraceTest, SortsByArrivalAndKeepsFileOrderNames) {
  auto result = ParseGavelTrace(TenColumns("10", "1", "1", "-1", "50") +
                                    TenColumns("20", "1", "1", "-1", "5") +
                                    TenColumns("30", "1", "1", "-1", "50"),
                                "t.trace");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->jobs[0].name, "job-1");
  EXPECT_EQ(result->jobs[1].name, "job-0");
  EXPECT_EQ(result->jobs[2].name, "job-2");
  EXPECT_EQ(result->jobs[0].id, JobId(0));
}

TEST(GavelTraceTest, FormatRoundTripsThroughTheParser) {
  auto original = LoadGavelTrace(kGavelDir + "/traces/msr-seed0/2869ce.trace");
  ASSERT_TRUE(original.ok()) << original.status().message();
  // Give some jobs SLOs, weights and fractional arrivals the 7-column format lacks.
  for (size_t i = 0; i < original->jobs.size(); i += 3) {
    original->jobs[i].slo_factor = 1.5 + static_cast<double>(i) / 7;
    original->jobs[i].priority_weight = 0.25 * static_cast<double>(i % 5 + 1);
    original->jobs[i].arrival_s += 0.1;
  }
  const std::string text = FormatGavelTrace(*original);
  auto parsed = ParseGavelTrace(text, "round.trace");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->jobs.size(), original->jobs.size());
  for (size_t i = 0; i < parsed->jobs.size(); ++i) {
    const Job& a = original->jobs[i];
    const Job& b = parsed->jobs[i];
    EXPECT_EQ(a.job_type, b.job_type);
    EXPECT_EQ(a.gang_size, b.gang_size);
    EXPECT_EQ(a.work, b.work);
    EXPECT_EQ(a.priority_weight, b.priority_weight);
    EXPECT_EQ(a.slo_factor, b.slo_factor);
    EXPECT_EQ(a.arrival_s, b.arrival_s);  // exact: shortest round-trip formatting
  }
  EXPECT_EQ(FormatGavelTrace(*parsed), text);
}

TEST(GavelTraceTest, FormatWritesWholeStepsAndCleansSeparators) {
  Workload w;
  Job job;
  job.name = "my\tjob";
  job.job_type = "odd\ntype";
  job.work = 10.2;
  job.gang_size = 4;
  job.arrival_s = 1.5;
  w.jobs.push_back(job);
  EXPECT_EQ(FormatGavelTrace(w), "odd type\tmy job\t.\t--num_steps\t0\t11\t4\t1\t-1\t1.5\n");
}

TEST(GavelTraceTest, ApplyGavelSloTurnsFactorsIntoDeadlines) {
  ThroughputProfile profile;
  profile.SetIsolated("A", 2, "v100-32g", 4.0);
  Workload w;
  Job with;
  with.name = "with";
  with.job_type = "A";
  with.gang_size = 2;
  with.work = 400;
  with.arrival_s = 10;
  with.slo_factor = 1.5;
  Job without = with;
  without.name = "without";
  without.slo_factor.reset();
  w.jobs = {with, without};
  ASSERT_TRUE(ApplyGavelSlo(profile, &w).ok());
  EXPECT_DOUBLE_EQ(*w.jobs[0].deadline_s, 10 + 1.5 * 100);
  EXPECT_FALSE(w.jobs[1].deadline_s.has_value());

  w.jobs[0].deadline_s.reset();
  w.jobs[0].gang_size = 8;
  util::Status missing = ApplyGavelSlo(profile, &w);
  EXPECT_EQ(missing.code(), util::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("job 'with': no v100-32g throughput for ('A', 8)"));
  EXPECT_FALSE(w.jobs[0].deadline_s.has_value());
}

TEST(GavelTraceTest, SloAboveZeroIsKept) {
  auto result = ParseGavelTrace(TenColumns("100", "2", "3.5", "1.2", "7"), "t.trace");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_DOUBLE_EQ(*result->jobs[0].slo_factor, 1.2);
  EXPECT_DOUBLE_EQ(result->jobs[0].priority_weight, 3.5);
  EXPECT_EQ(result->jobs[0].gang_size, 2);
}

// ---- bad input -------------------------------------------------------------------------------

TEST(GavelTraceBadInputTest, WrongColumnCountNamesFileAndLine) {
  EXPECT_EQ(TraceError(TenColumns() + "\n" + "a\tb\tc\n"),
            "t.trace:3: has 3 tab-separated columns (expected 10 (job_type command working_dir "
            "num_steps_arg needs_data_dir total_steps scale_factor priority_weight SLO "
            "arrival_time) or 7 (job_type command num_steps_arg needs_data_dir total_steps "
            "arrival_time scale_factor))");
  EXPECT_THAT(TraceError(TenColumns() + "A\tcmd\t-n\t1\t100\t0\t1\n"),
              StartsWith("t.trace:2: has 7 columns but line 1 has 10 (expected one format per "
                         "file)"));
  EXPECT_THAT(TraceError("A" + std::string(40, '\t') + "\n"),
              StartsWith("t.trace:1: has more than 10"));
  EXPECT_THAT(TraceError("\n\n"), HasSubstr("no jobs"));
}

TEST(GavelTraceBadInputTest, BadFieldsNameLineColumnAndField) {
  // "ResNet-18 (batch size 16)\tpython3 main.py\timage_classification\t--num_steps\t1\t" is 77
  // bytes, so total_steps starts at column 78.
  EXPECT_EQ(TraceError(TenColumns("abc")),
            "t.trace:1:78: column 6 (total_steps): 'abc' is out of range or not an integer "
            "(expected a positive integer)");
  EXPECT_THAT(TraceError(TenColumns("0")), HasSubstr("column 6 (total_steps): '0'"));
  EXPECT_THAT(TraceError(TenColumns("-5")), HasSubstr("column 6 (total_steps): '-5'"));
  EXPECT_THAT(TraceError(TenColumns("99999999999999999999")), HasSubstr("total_steps"));
  EXPECT_THAT(TraceError(TenColumns("100", "0")), HasSubstr("column 7 (scale_factor): '0'"));
  EXPECT_THAT(TraceError(TenColumns("100", "1", "0")),
              HasSubstr("column 8 (priority_weight): is 0"));
  EXPECT_THAT(TraceError(TenColumns("100", "1", "1", "x")), HasSubstr("column 9 (SLO)"));
  EXPECT_THAT(TraceError(TenColumns("100", "1", "1", "-1", "-3")),
              HasSubstr("column 10 (arrival_time): is -3"));
  EXPECT_THAT(TraceError(TenColumns("100", "1", "1", "-1", "nan")),
              HasSubstr("column 10 (arrival_time): 'nan' is not a finite number"));
  EXPECT_THAT(TraceError("\tcmd\t-n\t1\t100\t0\t1\n"), HasSubstr("column 1 (job_type): is empty"));
  EXPECT_THAT(TraceError("A\tcmd\t-n\t2\t100\t0\t1\n"),
              HasSubstr("column 4 (needs_data_dir): '2'"));
}

TEST(GavelBadInputTest, LargeRandomBinaryFailsQuickly) {
  std::mt19937 rng(11);
  std::string junk(4 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ParseGavelTrace(junk, "junk.trace").ok());
  EXPECT_FALSE(ParseGavelThroughputs(junk, "junk.json").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace hetsched::model::io
