// The demo's ablation ladder: simulations of one cluster and workload that each add one piece of
// hetsched to the run above, all booked to the same horizon, as console table rows, HTML bar
// charts, JSON, and sentences saying which pieces changed something beyond a stated threshold.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/engine.h"

namespace hetsched::report {

// One rung of the ladder.
struct LadderRow {
  std::string key;      // stable name for JSON: "naive", "stack-filter", ...
  std::string name;     // as printed: "(1) naive", "(2) + stack filter", ...
  std::string adds;     // the piece, in words
  std::string command;  // a `hetsched simulate` command line that reproduces the run
  // A piece that only matters when the cluster mixes device types or software stacks (the
  // stack filter, the choice of device type), as opposed to queue policy, power or placement.
  bool mixed_hardware = false;
  const sim::SimResult* result = nullptr;  // not owned; outlives the row
};

// A change counts when average JCT, p99 JCT, energy or electricity cost moves by at least this
// fraction of the row above, or when the number of jobs completed, jobs failed or starts failed
// on incompatible devices differs at all.
inline constexpr double kNegligibleChange = 0.02;

// What `after` changed against `before`, one phrase per metric that counts ("average JCT
// 2.59 -> 1.15 h (-56 %)"); empty when nothing does.
std::vector<std::string> LadderChanges(const sim::SimResult& before, const sim::SimResult& after);

// The console and HTML table: one row per rung with average and p99 JCT, jobs completed and
// failed, starts failed on incompatible devices, energy and cost, each continuous metric with
// its change from the row above.
std::vector<std::string> LadderHeaders();
std::vector<std::vector<std::string>> LadderTableRows(const std::vector<LadderRow>& rows);

// What each piece changed and which rung gave most of the average-JCT gain and of the energy
// saving, as plain sentences (one per line).
std::string LadderSummary(const std::vector<LadderRow>& rows);

// Whether the pieces marked mixed_hardware changed nothing (LadderChanges empty for each).
bool MixedHardwarePiecesBuyNothing(const std::vector<LadderRow>& rows);
// The verdict on the cluster, computed from the ladder: it says plainly that the cluster does
// not need a heterogeneous scheduler when MixedHardwarePiecesBuyNothing, and which other pieces
// still changed something.
std::string LadderVerdict(const std::vector<LadderRow>& rows);

// Bar charts, a bar per rung: average JCT, p99 JCT, incompatible starts, energy, cost. Chart
// ids are `id_prefix` + "-avg-jct" and so on.
std::vector<std::string> LadderCharts(const std::vector<LadderRow>& rows,
                                      const std::string& id_prefix);

// The ladder as a JSON array, one object per rung (fields: docs/report.md, "The demo's JSON").
nlohmann::json LadderJson(const std::vector<LadderRow>& rows);

}  // namespace hetsched::report
