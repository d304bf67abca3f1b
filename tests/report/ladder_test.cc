#include "report/ladder.h"

#include <gtest/gtest.h>

#include <deque>
#include <limits>
#include <string>
#include <vector>

namespace hetsched::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A run's result with only what the ladder reads.
sim::SimResult RunResult(double avg_jct_h, double p99_jct_h, double kwh, double usd,
                         int64_t completed = 10, int64_t failed = 0, int64_t compat = 0) {
  sim::SimResult r;
  r.avg_jct_s = avg_jct_h * 3600;
  r.p99_jct_s = p99_jct_h * 3600;
  r.energy_kwh = kwh;
  r.energy_cost = usd;
  r.jobs_total = 10;
  r.jobs_completed = completed;
  r.jobs_failed = failed;
  r.compat_failures = compat;
  return r;
}

// Rungs pointing into `results` (a deque: the pointers stay valid as it grows).
class Ladder {
 public:
  Ladder& Add(std::string name, bool mixed_hardware, sim::SimResult result) {
    results_.push_back(std::move(result));
    LadderRow row;
    row.key = "rung" + std::to_string(rows_.size() + 1);
    row.name = std::move(name);
    row.mixed_hardware = mixed_hardware;
    row.result = &results_.back();
    rows_.push_back(row);
    return *this;
  }
  const std::vector<LadderRow>& rows() const { return rows_; }

 private:
  std::deque<sim::SimResult> results_;
  std::vector<LadderRow> rows_;
};

TEST(LadderChanges, PhrasesEachMetricThatMovesWithItsUnitOnce) {
  const sim::SimResult before = RunResult(2.59, 5, 100, 20, 10, 0, 3);
  const sim::SimResult after = RunResult(1.15, 5, 100, 20, 9, 1, 0);
  EXPECT_EQ(
      LadderChanges(before, after),
      (std::vector<std::string>{"average JCT 2.59 -> 1.15 h (-56 %)", "jobs completed 10 -> 9",
                                "jobs failed 0 -> 1", "incompatible starts 3 -> 0"}));
  EXPECT_TRUE(LadderChanges(before, before).empty());
}

TEST(LadderChanges, ThresholdIsInclusiveInBothDirections) {
  const sim::SimResult base = RunResult(10, 20, 100, 50);
  // Exactly 2 % up or down counts; 1.9 % does not.
  EXPECT_EQ(LadderChanges(base, RunResult(10, 20, 102, 50)),
            (std::vector<std::string>{"energy 100 -> 102 kWh (+2 %)"}));
  EXPECT_EQ(LadderChanges(base, RunResult(10, 20, 98, 50)),
            (std::vector<std::string>{"energy 100 -> 98 kWh (-2 %)"}));
  EXPECT_TRUE(LadderChanges(base, RunResult(10, 20, 101.9, 50)).empty());
  EXPECT_TRUE(LadderChanges(base, RunResult(10.19, 20.3, 98.1, 49.1)).empty());
  EXPECT_EQ(LadderChanges(base, RunResult(10, 20.4, 100, 50)),
            (std::vector<std::string>{"p99 JCT 20.00 -> 20.40 h (+2 %)"}));
}

TEST(LadderChanges, FromZeroAnyChangeCountsWithoutAPercentage) {
  const sim::SimResult free_power = RunResult(1, 2, 100, 0);
  EXPECT_EQ(LadderChanges(free_power, RunResult(1, 2, 100, 0.5)),
            (std::vector<std::string>{"electricity cost 0.00 -> 0.50 USD"}));
  EXPECT_TRUE(LadderChanges(free_power, free_power).empty());
  // No job completed on either side: the JCTs are 0 there and nothing changed.
  EXPECT_TRUE(LadderChanges(RunResult(0, 0, 5, 1, 0), RunResult(0, 0, 5, 1, 0)).empty());
}

TEST(LadderChanges, MissingValuesOnBothSidesAreNoChange) {
  // A metric neither run has (not a number on both sides) did not change; one that appears or
  // disappears did.
  sim::SimResult a = RunResult(1, 2, 100, 10), b = RunResult(1, 2, 100, 10);
  a.energy_cost = b.energy_cost = kNaN;
  EXPECT_TRUE(LadderChanges(a, b).empty());
  b.energy_cost = 10;
  EXPECT_EQ(LadderChanges(a, b).size(), 1u);
}

TEST(LadderVerdict, NoMixedHardwareRungNoVerdict) {
  Ladder l;
  l.Add("(1) naive", true, RunResult(10, 20, 100, 10))
      .Add("(2) + power", false, RunResult(5, 20, 50, 5));
  // The first rung is the baseline: its flag is not a piece.
  EXPECT_EQ(LadderVerdict(l.rows()), "");
  EXPECT_TRUE(MixedHardwarePiecesBuyNothing(l.rows()));
}

TEST(LadderVerdict, MixedHardwarePiecesThatChangeSomethingAreNamed) {
  Ladder l;
  l.Add("(1) naive", false, RunResult(10, 20, 100, 10, 8, 2, 4))
      .Add("(2) + stack filter", true, RunResult(10, 20, 100, 10, 10, 0, 0))
      .Add("(3) + type choice", true, RunResult(10.1, 20, 100, 10, 10, 0, 0))
      .Add("(4) + power", false, RunResult(10.1, 20, 50, 5, 10, 0, 0));
  EXPECT_FALSE(MixedHardwarePiecesBuyNothing(l.rows()));
  EXPECT_EQ(LadderVerdict(l.rows()),
            "The pieces for mixed hardware change the outcome here: (2) + stack filter (jobs "
            "completed 8 -> 10, jobs failed 2 -> 0, incompatible starts 4 -> 0).");
}

TEST(LadderVerdict, NothingChangesAnywhere) {
  Ladder l;
  l.Add("(1) naive", false, RunResult(10, 20, 100, 10))
      .Add("(2) + stack filter", true, RunResult(10, 20, 100, 10))
      .Add("(3) + type choice", true, RunResult(10.1, 20.1, 101, 10.1))
      .Add("(4) + power", false, RunResult(10.1, 20.1, 100, 10.1));
  EXPECT_TRUE(MixedHardwarePiecesBuyNothing(l.rows()));
  EXPECT_EQ(LadderVerdict(l.rows()),
            "The pieces for mixed hardware, (2) + stack filter and (3) + type choice, change "
            "nothing here (under 2 % in JCT, energy and cost, and the same job counts): this "
            "cluster does not need a heterogeneous scheduler. Nor does any other piece change "
            "anything.");
}

TEST(LadderVerdict, OtherPiecesThatChangeSomethingAreCreditedApart) {
  Ladder l;
  l.Add("(1) naive", false, RunResult(10, 20, 100, 10))
      .Add("(2) + stack filter", true, RunResult(10, 20, 100, 10))
      .Add("(3) + power", false, RunResult(10, 20, 80, 10))
      .Add("(4) + queue", false, RunResult(5, 20, 80, 10));
  EXPECT_TRUE(MixedHardwarePiecesBuyNothing(l.rows()));
  const std::string v = LadderVerdict(l.rows());
  EXPECT_NE(v.find("this cluster does not need a heterogeneous scheduler. What does change comes "
                   "from pieces that are not about mixed hardware: (3) + power (energy 100 -> 80 "
                   "kWh (-20 %)); (4) + queue (average JCT 10.00 -> 5.00 h (-50 %))."),
            std::string::npos)
      << v;
}

TEST(LadderSummary, NeedsTwoRungs) {
  Ladder l;
  l.Add("(1) naive", false, RunResult(1, 1, 1, 1));
  EXPECT_EQ(LadderSummary(l.rows()), "");
}

TEST(LadderSummary, LargestFallTiesGoToTheEarlierRungAndRisesAreNotFalls) {
  Ladder l;
  // Average JCT falls by 2 h at rungs 2 and 3 (a tie) and rises at 4; energy only rises.
  l.Add("(1) naive", false, RunResult(10, 20, 100, 10))
      .Add("(2) a", false, RunResult(8, 20, 100, 10))
      .Add("(3) b", false, RunResult(6, 20, 110, 10))
      .Add("(4) c", false, RunResult(7, 20, 120, 10));
  EXPECT_EQ(LadderSummary(l.rows()),
            "What each piece changed (2 % or more in JCT, energy or cost, or any job count):\n"
            "  (2) a: average JCT 10.00 -> 8.00 h (-20 %)\n"
            "  (3) b: average JCT 8.00 -> 6.00 h (-25 %), energy 100 -> 110 kWh (+10 %)\n"
            "  (4) c: average JCT 6.00 -> 7.00 h (+17 %), energy 110 -> 120 kWh (+9 %)\n"
            "Largest fall in average JCT: (2) a, 10.00 -> 8.00 h (-20 %) (all pieces: 10.00 -> "
            "7.00 h (-30 %)).\n"
            "No piece lowers energy.\n");
}

TEST(LadderTable, CellsCarryTheChangeFromTheRowAbovePaddedToOneWidth) {
  Ladder l;
  l.Add("(1) naive", false, RunResult(2.59, 4, 100, 0, 9, 1, 2))
      .Add("(2) + x", false, RunResult(1.15, 4, 100, 0.5, 10, 0, 0));
  const auto rows = LadderTableRows(l.rows());
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0].size(), LadderHeaders().size());
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"(1) naive", "2.59 h         ", "4.00 h         ", "9 of 10",
                                      "1", "2", "100 kWh         ", "0.00 USD         "}));
  // From 0 USD no percentage: the cell is padded blank.
  EXPECT_EQ(rows[1],
            (std::vector<std::string>{"(2) + x", "1.15 h  (-56 %)", "4.00 h   (+0 %)", "10 of 10",
                                      "0", "0", "100 kWh   (+0 %)", "0.50 USD         "}));
}

TEST(LadderJson, ChangesAreRelativeToTheRungAboveAndNullWithoutABase) {
  Ladder l;
  l.Add("(1) naive", false, RunResult(10, 20, 100, 0))
      .Add("(2) + x", true, RunResult(5, 20, 100, 1));
  const nlohmann::json j = LadderJson(l.rows());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["step"], 1);
  EXPECT_EQ(j[0]["key"], "rung1");
  EXPECT_TRUE(j[0]["change"].is_null());
  EXPECT_TRUE(j[0]["changed"].empty());
  EXPECT_EQ(j[1]["step"], 2);
  EXPECT_EQ(j[1]["mixed_hardware"], true);
  EXPECT_DOUBLE_EQ(j[1]["change"]["avg_jct"].get<double>(), -0.5);
  EXPECT_DOUBLE_EQ(j[1]["change"]["p99_jct"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j[1]["change"]["energy"].get<double>(), 0);
  EXPECT_TRUE(j[1]["change"]["energy_cost"].is_null());  // from 0: no ratio
  EXPECT_EQ(j[1]["changed"],
            nlohmann::json(LadderChanges(*l.rows()[0].result, *l.rows()[1].result)));
  EXPECT_EQ(j[1]["changed"].size(), 2u);
}

}  // namespace
}  // namespace hetsched::report
