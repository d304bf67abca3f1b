// `hetsched simulate`, `compare` and `gen-trace` end to end: tables, JSON, early stops, the
// naive baseline against the default on the seed day, and bad flags (exit status 2, named).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "testing/cli_runner.h"
#include "util/file.h"

namespace {

using hetsched::testing::CliRun;
using hetsched::testing::RunHetsched;
using hetsched::testing::Stderr;

const std::string kSeed =
    "--cluster examples/clusters/seed-startup.yaml --trace examples/workloads/seed-day.yaml -q";

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/simulate_test_" + name;
}

nlohmann::json ReadJson(const std::string& path) {
  auto text = hetsched::util::ReadFile(path);
  EXPECT_TRUE(text.ok()) << path;
  return nlohmann::json::parse(text.ok() ? *text : "null");
}

void ExpectAllAccounted(const nlohmann::json& j) {
  EXPECT_EQ(j["jobs_completed"].get<int>() + j["jobs_failed"].get<int>() +
                j["jobs_unfinished"].get<int>(),
            j["jobs_total"].get<int>());
}

TEST(SimulateCli, SmallWorkloadPrintsATableAndWritesJson) {
  const std::string json = TempPath("small.json");
  CliRun r = RunHetsched(
      "simulate --cluster examples/clusters/seed-startup.yaml "
      "--trace examples/workloads/small-mixed.yaml -q --json " +
      json);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("default (srpt-het-fair)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("avg_jct_h"), std::string::npos) << r.out;
  const auto j = ReadJson(json);
  EXPECT_EQ(j["jobs_total"], 12);
  ExpectAllAccounted(j);
}

TEST(SimulateCli, DefaultBeatsTheNaiveBaselineOnTheSeedDay) {
  const std::string naive = TempPath("naive.json"), ours = TempPath("default.json");
  ASSERT_EQ(
      RunHetsched("simulate " + kSeed + " --policy fifo --ignore-compat --json " + naive).status,
      0);
  ASSERT_EQ(RunHetsched("simulate " + kSeed + " --json " + ours).status, 0);
  const auto a = ReadJson(naive), b = ReadJson(ours);
  ExpectAllAccounted(a);
  ExpectAllAccounted(b);
  EXPECT_EQ(a["jobs_completed"], 175);
  EXPECT_EQ(b["jobs_completed"], 175);
  // The naive baseline puts CUDA-only and CPU-only jobs on devices they cannot run.
  EXPECT_GT(a["compat_failures"].get<int>(), 0);
  EXPECT_GT(a["wasted_device_hours"].get<double>(), 0);
  EXPECT_EQ(b["compat_failures"], 0);
  EXPECT_LT(b["avg_jct_s"].get<double>(), a["avg_jct_s"].get<double>());
  EXPECT_LT(b["makespan_s"].get<double>(), a["makespan_s"].get<double>());
}

TEST(SimulateCli, UntilAndMaxRoundsStopEarly) {
  const std::string until = TempPath("until.json"), rounds = TempPath("rounds.json");
  ASSERT_EQ(RunHetsched("simulate " + kSeed + " --until 12h --json " + until).status, 0);
  const auto a = ReadJson(until);
  EXPECT_EQ(a["stopped_early"], "until");
  EXPECT_DOUBLE_EQ(a["end_s"].get<double>(), 43200);
  EXPECT_GT(a["jobs_unfinished"].get<int>(), 0);
  ExpectAllAccounted(a);
  ASSERT_EQ(
      RunHetsched("simulate " + kSeed + " --round 6m --max-rounds 10 --json " + rounds).status, 0);
  const auto b = ReadJson(rounds);
  EXPECT_EQ(b["stopped_early"], "max-rounds");
  EXPECT_EQ(b["decisions"], 10);
  ExpectAllAccounted(b);
}

TEST(SimulateCli, BadFlagsAreNamed) {
  CliRun r = RunHetsched("simulate " + kSeed + " --round -5");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--round: expected a number >= 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("got '-5'"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --until soon");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--until"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --placement random");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--placement: unknown placement 'random' (expected topology or agnostic)"),
            std::string::npos)
      << r.out;
  r = RunHetsched("simulate " + kSeed + " --mtbf -1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--mtbf"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --policy shortest");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("shortest"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("las-het"), std::string::npos) << "lists the known policies: " << r.out;
  r = RunHetsched("simulate --cluster examples/clusters/seed-startup.yaml --trace nowhere.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("nowhere.yaml"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --mtbf 3600");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--mttr"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --estimates psychic");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--estimates 'psychic': unknown mode (known: workload, none, "
                       "lognormal:SIGMA, user-limit:FACTOR, history, oracle)"),
            std::string::npos)
      << r.out;
  r = RunHetsched("simulate " + kSeed + " --estimates lognormal:-2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("bad parameter '-2'"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --checkpoint-save -30");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--checkpoint-save"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --restore nan");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--restore: expected a number >= 0"), std::string::npos) << r.out;
  // A quantum shorter than one preemption's cost would spend more time stopping than running.
  r = RunHetsched("simulate " + kSeed + " --preempt-quantum 60");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--preempt-quantum 60: below what one preemption costs (--checkpoint-save "
                       "30 + --restore 60 = 90 s)"),
            std::string::npos)
      << r.out;
  r = RunHetsched("simulate " + kSeed + " --preempt-quantum -1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--preempt-quantum"), std::string::npos) << r.out;
  for (const char* bad : {"-0.1", "inf", "0.2x"}) {
    r = RunHetsched("simulate " + kSeed + " --plan-incumbency " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.out.find("--plan-incumbency: expected a finite number >= 0, got '" +
                         std::string(bad) + "'"),
              std::string::npos)
        << r.out;
  }
}

TEST(SimulateCli, OracleEstimatesAreLabelled) {
  CliRun r = RunHetsched("simulate " + kSeed + " --estimates oracle");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("oracle (true sizes)"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("oracle"), std::string::npos) << r.out;
}

TEST(CompareCli, PoliciesSideBySide) {
  const std::string json = TempPath("compare.json");
  CliRun r =
      RunHetsched("compare " + kSeed + " --policies fifo-het,las-het,default --json " + json);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  for (const char* p : {"fifo-het", "las-het", "default (srpt-het-fair)"}) {
    EXPECT_NE(header.find(p), std::string::npos) << p << "\n" << r.out;
  }
  const auto j = ReadJson(json);
  ASSERT_EQ(j.size(), 3u);
  for (const auto& one : j) ExpectAllAccounted(one);
  EXPECT_EQ(RunHetsched("compare " + kSeed + " --policies fifo,nope").status, 2);
}

TEST(GenTraceCli, WritesGavelLinesDeterministically) {
  const std::string a = TempPath("a.trace"), b = TempPath("b.trace");
  ASSERT_EQ(RunHetsched("gen-trace --rate 2 --jobs 50 --seed 7 --multi-gpu -o " + a).status, 0);
  ASSERT_EQ(RunHetsched("gen-trace --rate 2 --jobs 50 --seed 7 --multi-gpu -o " + b).status, 0);
  const auto ta = hetsched::util::ReadFile(a), tb = hetsched::util::ReadFile(b);
  ASSERT_TRUE(ta.ok() && tb.ok());
  EXPECT_EQ(*ta, *tb);
  std::istringstream lines(*ta);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    EXPECT_EQ(std::count(line.begin(), line.end(), '\t'), 9) << line;
  }
  EXPECT_EQ(count, 50);
  // Another seed gives another trace, and the trace simulates on Gavel's cluster.
  ASSERT_EQ(RunHetsched("gen-trace --rate 2 --jobs 50 --seed 8 --multi-gpu -o " + b).status, 0);
  EXPECT_NE(*ta, *hetsched::util::ReadFile(b));
  const std::string json = TempPath("gen.json");
  ASSERT_EQ(RunHetsched("simulate --cluster examples/clusters/gavel-108.yaml --trace " + a +
                        " -q --json " + json)
                .status,
            0);
  const auto j = ReadJson(json);
  EXPECT_EQ(j["jobs_total"], 50);
  EXPECT_EQ(j["jobs_completed"], 50);
  CliRun bad = RunHetsched("gen-trace --rate -1 --jobs 5");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("rate"), std::string::npos) << bad.out;
}

// This trace's min-makespan LPs made Debian's CLP 1.17.6 abort (an assertion in its row-copy
// pricing) until the solver stopped keeping a row copy (sched/lp_solver.cc).
TEST(SimulateCli, MinMakespanLpsOfAMultiGpuTraceSolve) {
  const std::string trace = TempPath("mm.trace"), json = TempPath("mm.json");
  ASSERT_EQ(RunHetsched("gen-trace --jobs 300 --rate 6 --multi-gpu --seed 7 -o " + trace).status,
            0);
  const CliRun run = RunHetsched(
      "simulate -q --cluster v100=12,p100=12,k80=12 --policy "
      "min-makespan --trace " +
      trace + " --json " + json);
  ASSERT_EQ(run.status, 0) << run.out;
  const auto j = ReadJson(json);
  EXPECT_EQ(j["jobs_completed"], 300);
  ExpectAllAccounted(j);
}

TEST(SimulateCli, SpaceSharingPairsJobsAndReportsIt) {
  // A busy Gavel trace on a small cluster: jobs wait, so pairs form.
  const std::string trace = TempPath("share.trace"), json = TempPath("share.json");
  ASSERT_EQ(RunHetsched("gen-trace --rate 20 --jobs 60 --seed 3 -o " + trace).status, 0);
  const std::string base =
      "simulate --cluster v100=2,p100=2,k80=2 --trace " + trace + " --round 360 -q --json " + json;
  CliRun r = RunHetsched(base + " --space-sharing");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("pairs_formed"), std::string::npos) << r.out;
  auto j = ReadJson(json);
  ExpectAllAccounted(j);
  EXPECT_EQ(j["space_sharing"], true);
  EXPECT_GT(j["pairs_formed"].get<int>(), 0);
  EXPECT_GT(j["shared_device_hours"].get<double>(), 0);
  // Without the flag: no pairing and no space-sharing fields.
  r = RunHetsched(base);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("pairs_formed"), std::string::npos) << r.out;
  j = ReadJson(json);
  EXPECT_FALSE(j.contains("pairs_formed"));
  // compare takes it too, for every policy.
  r = RunHetsched("compare --cluster v100=2,p100=2,k80=2 --trace " + trace +
                  " --round 360 -q --space-sharing --policies default,maxmin-het --json " + json);
  ASSERT_EQ(r.status, 0) << r.out;
  j = ReadJson(json);
  ASSERT_EQ(j.size(), 2u);
  for (const auto& one : j) EXPECT_GT(one["pairs_formed"].get<int>(), 0);
}

TEST(SimulateCli, SpaceSharingWithoutPairEntriesIsAnError) {
  // The seed day's jobs bring their own throughputs: no profile, no pair entries.
  CliRun r = RunHetsched("simulate " + kSeed + " --space-sharing");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--space-sharing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pair (co-located) entries"), std::string::npos) << r.out;
}

TEST(SimulateCli, MaxJobsPerLpMustBePositive) {
  CliRun r = RunHetsched("simulate " + kSeed + " --policy maxmin-het --max-jobs-per-lp 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--max-jobs-per-lp 0: expected a whole number >= 1"), std::string::npos)
      << r.out;
  r = RunHetsched("simulate " + kSeed + " --policy maxmin-het --max-jobs-per-lp many");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--max-jobs-per-lp"), std::string::npos) << r.out;
  EXPECT_EQ(RunHetsched("simulate " + kSeed + " --policy maxmin-het --max-jobs-per-lp 5").status,
            0);
}

TEST(SimulateCli, HorizonBooksEnergyAndUtilizationPastTheLastJob) {
  const std::string plain = TempPath("plain.json"), longer = TempPath("horizon.json");
  ASSERT_EQ(RunHetsched("simulate " + kSeed + " --json " + plain).status, 0);
  const auto a = ReadJson(plain);
  const double end_s = a["end_s"].get<double>();
  EXPECT_EQ(a["horizon_s"].get<double>(), end_s);
  CliRun r = RunHetsched("simulate " + kSeed + " --horizon 48h --json " + longer);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("horizon_h"), std::string::npos) << r.out;
  const auto b = ReadJson(longer);
  EXPECT_EQ(b["horizon_s"].get<double>(), 48 * 3600.0);
  EXPECT_EQ(b["end_s"].get<double>(), end_s);
  EXPECT_EQ(b["avg_jct_s"], a["avg_jct_s"]);
  EXPECT_GT(b["energy_kwh"].get<double>(), a["energy_kwh"].get<double>());
  // The same busy time over a longer span.
  const double ua = a["utilization"]["a100-80g"].get<double>();
  EXPECT_NEAR(b["utilization"]["a100-80g"].get<double>(), ua * end_s / (48 * 3600.0), 1e-9);
  // A horizon extends a run; --until stops one early: not both.
  r = RunHetsched("simulate " + kSeed + " --horizon 48h --until 10h");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--horizon"), std::string::npos) << r.out;
  r = RunHetsched("simulate " + kSeed + " --horizon -5");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--horizon"), std::string::npos) << r.out;
}

}  // namespace

TEST(SimulateCli, ElasticRangeResizesGavelJobsAndEveryJobCompletes) {
  const std::string trace = TempPath("elastic.trace"), json = TempPath("elastic.json");
  ASSERT_EQ(RunHetsched("gen-trace --jobs 120 --rate 2 --multi-gpu --seed 4 -o " + trace).status,
            0);
  const std::string base =
      "simulate -q --cluster v100=8,p100=8,k80=8 --round 360 --trace " + trace + " --json " + json;
  CliRun r = RunHetsched(base + " --no-elastic");
  ASSERT_EQ(r.status, 0) << r.out;
  auto fixed = ReadJson(json);
  EXPECT_EQ(fixed["jobs_completed"], 120);
  EXPECT_EQ(fixed["resizes"], 0);
  for (const char* policy : {"default", "fifo", "las-het"}) {
    SCOPED_TRACE(policy);
    r = RunHetsched(base + " --elastic-range 1:8 --policy " + policy);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("resizes"), std::string::npos) << r.out;
    const auto elastic = ReadJson(json);
    ExpectAllAccounted(elastic);
    EXPECT_EQ(elastic["jobs_completed"], 120);
    EXPECT_GT(elastic["resizes"].get<int>(), 0);
    EXPECT_GE(elastic["preemptions"].get<int>(), elastic["resizes"].get<int>());
  }
  // An LP policy runs them at their gang size, and simulate says so.
  r = RunHetsched(base + " --elastic-range 1:8 --policy max-throughput");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("plans fixed gangs"), std::string::npos) << r.out;
  EXPECT_EQ(ReadJson(json)["resizes"], 0);
}

TEST(SimulateCli, BadElasticRangeIsNamed) {
  for (const char* bad : {"8:1", "0:4", "4", "a:b", "1:8x", ":8"}) {
    SCOPED_TRACE(bad);
    const CliRun r = RunHetsched("simulate " + kSeed + " --elastic-range " + bad);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("--elastic-range '" + std::string(bad) +
                         "': expected MIN:MAX workers, whole numbers with 1 <= MIN <= MAX"),
              std::string::npos)
        << r.out;
  }
  const CliRun both = RunHetsched("simulate " + kSeed + " --elastic-range 1:8 --no-elastic");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.out.find("give one or neither"), std::string::npos) << both.out;
}
