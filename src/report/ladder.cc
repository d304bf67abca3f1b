#include "report/ladder.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>

#include "report/svg.h"

namespace hetsched::report {
namespace {

// (after - before) / before; NaN when before is 0 or either is not a number.
double Relative(double before, double after) {
  if (!std::isfinite(before) || !std::isfinite(after) || before == 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return (after - before) / before;
}

// A continuous metric counts as changed at kNegligibleChange or more; from 0, any change counts.
// A value missing (not a number) on both sides did not change; one that appears or goes did.
bool Counts(double before, double after) {
  const double rel = Relative(before, after);
  if (std::isnan(rel)) return before != after && !(std::isnan(before) && std::isnan(after));
  return std::abs(rel) >= kNegligibleChange;
}

std::string Percent(double rel) {
  return std::isnan(rel) ? "" : fmt::format(" ({:+.0f} %)", 100 * rel);
}

std::string Hours(double s) { return fmt::format("{:.2f} h", s / 3600); }
std::string Kwh(double kwh) { return fmt::format("{:.0f} kWh", kwh); }
std::string Usd(double usd) { return fmt::format("{:.2f} USD", usd); }

// One metric of a run, with how it is printed.
struct Metric {
  std::string label;  // in sentences: "average JCT"
  std::string key;    // in the JSON's "change"
  std::function<double(const sim::SimResult&)> value;
  std::function<std::string(double)> text;
};

const std::vector<Metric>& ContinuousMetrics() {
  static const std::vector<Metric> metrics = {
      {"average JCT", "avg_jct", [](const sim::SimResult& r) { return r.avg_jct_s; }, Hours},
      {"p99 JCT", "p99_jct", [](const sim::SimResult& r) { return r.p99_jct_s; }, Hours},
      {"energy", "energy", [](const sim::SimResult& r) { return r.energy_kwh; }, Kwh},
      {"electricity cost", "energy_cost", [](const sim::SimResult& r) { return r.energy_cost; },
       Usd},
  };
  return metrics;
}

// "2.59 -> 1.15 h (-56 %)": the unit once, after the second value.
std::string FromTo(const Metric& m, double before, double after) {
  const std::string a = m.text(before), b = m.text(after);
  const size_t space = a.rfind(' ');
  return fmt::format("{} -> {}{}", a.substr(0, space), b, Percent(Relative(before, after)));
}

// The text of one table cell: the value, and its change from the row above padded to one
// width (blank on the first row), so that the values line up in a right-aligned column.
std::string Cell(const Metric& m, const sim::SimResult& r, const sim::SimResult* above) {
  const double v = m.value(r);
  const std::string change = above != nullptr ? Percent(Relative(m.value(*above), v)) : "";
  return m.text(v) + fmt::format("{:>9}", change);
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// The rung with the largest fall of `m` against the rung above, or -1 when none falls.
int LargestFall(const std::vector<LadderRow>& rows, const Metric& m) {
  int best = -1;
  double fall = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const double d = m.value(*rows[i - 1].result) - m.value(*rows[i].result);
    if (d > fall) {
      fall = d;
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace

std::vector<std::string> LadderChanges(const sim::SimResult& before, const sim::SimResult& after) {
  std::vector<std::string> out;
  for (const Metric& m : ContinuousMetrics()) {
    const double a = m.value(before), b = m.value(after);
    if (Counts(a, b)) out.push_back(m.label + " " + FromTo(m, a, b));
  }
  const auto count = [&](const std::string& label, int64_t a, int64_t b) {
    if (a != b) out.push_back(fmt::format("{} {} -> {}", label, a, b));
  };
  count("jobs completed", before.jobs_completed, after.jobs_completed);
  count("jobs failed", before.jobs_failed, after.jobs_failed);
  count("incompatible starts", before.compat_failures, after.compat_failures);
  return out;
}

std::vector<std::string> LadderHeaders() {
  return {"",       "avg JCT",         "p99 JCT", "completed", "failed", "incompatible starts",
          "energy", "electricity cost"};
}

std::vector<std::vector<std::string>> LadderTableRows(const std::vector<LadderRow>& rows) {
  const std::vector<Metric>& m = ContinuousMetrics();
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const sim::SimResult& r = *rows[i].result;
    const sim::SimResult* above = i > 0 ? rows[i - 1].result : nullptr;
    out.push_back({rows[i].name, Cell(m[0], r, above), Cell(m[1], r, above),
                   fmt::format("{} of {}", r.jobs_completed, r.jobs_total),
                   std::to_string(r.jobs_failed), std::to_string(r.compat_failures),
                   Cell(m[2], r, above), Cell(m[3], r, above)});
  }
  return out;
}

std::string LadderSummary(const std::vector<LadderRow>& rows) {
  if (rows.size() < 2) return "";
  std::string out = fmt::format(
      "What each piece changed ({:.0f} % or more in JCT, energy or cost, or any job count):\n",
      100 * kNegligibleChange);
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto changes = LadderChanges(*rows[i - 1].result, *rows[i].result);
    out +=
        fmt::format("  {}: {}\n", rows[i].name, changes.empty() ? "nothing" : Join(changes, ", "));
  }
  const sim::SimResult& first = *rows.front().result;
  const sim::SimResult& last = *rows.back().result;
  for (const Metric& m : {ContinuousMetrics()[0], ContinuousMetrics()[2]}) {
    const int i = LargestFall(rows, m);
    if (i < 0) {
      out += fmt::format("No piece lowers {}.\n", m.label);
      continue;
    }
    out += fmt::format("Largest fall in {}: {}, {} (all pieces: {}).\n", m.label, rows[i].name,
                       FromTo(m, m.value(*rows[i - 1].result), m.value(*rows[i].result)),
                       FromTo(m, m.value(first), m.value(last)));
  }
  return out;
}

bool MixedHardwarePiecesBuyNothing(const std::vector<LadderRow>& rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].mixed_hardware && !LadderChanges(*rows[i - 1].result, *rows[i].result).empty()) {
      return false;
    }
  }
  return true;
}

std::string LadderVerdict(const std::vector<LadderRow>& rows) {
  std::vector<std::string> mixed, mixed_changed, other_changed;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto changes = LadderChanges(*rows[i - 1].result, *rows[i].result);
    const std::string what = fmt::format("{} ({})", rows[i].name, Join(changes, ", "));
    if (rows[i].mixed_hardware) {
      mixed.push_back(rows[i].name);
      if (!changes.empty()) mixed_changed.push_back(what);
    } else if (!changes.empty()) {
      other_changed.push_back(what);
    }
  }
  if (mixed.empty()) return "";
  if (!mixed_changed.empty()) {
    return fmt::format("The pieces for mixed hardware change the outcome here: {}.",
                       Join(mixed_changed, "; "));
  }
  std::string out = fmt::format(
      "The pieces for mixed hardware, {}, change nothing here (under {:.0f} % in JCT, energy "
      "and cost, and the same job counts): this cluster does not need a heterogeneous "
      "scheduler.",
      Join(mixed, " and "), 100 * kNegligibleChange);
  if (other_changed.empty()) {
    out += " Nor does any other piece change anything.";
  } else {
    out += fmt::format(" What does change comes from pieces that are not about mixed hardware: {}.",
                       Join(other_changed, "; "));
  }
  return out;
}

std::vector<std::string> LadderCharts(const std::vector<LadderRow>& rows,
                                      const std::string& id_prefix) {
  struct Chart {
    std::string id, title, unit, color;
    int decimals;
    std::function<double(const sim::SimResult&)> value;
  };
  const std::vector<Chart> charts = {
      {"avg-jct", "Average job completion time", " h", "#1f77b4", 2,
       [](const sim::SimResult& r) { return r.avg_jct_s / 3600; }},
      {"p99-jct", "p99 job completion time", " h", "#4a8fc4", 2,
       [](const sim::SimResult& r) { return r.p99_jct_s / 3600; }},
      {"compat", "Starts failed on incompatible devices", "", "#1d2733", 0,
       [](const sim::SimResult& r) { return static_cast<double>(r.compat_failures); }},
      {"energy", "Energy over the common horizon", " kWh", "#e08e1b", 0,
       [](const sim::SimResult& r) { return r.energy_kwh; }},
      {"cost", "Electricity cost over the common horizon", " USD", "#b06a0c", 2,
       [](const sim::SimResult& r) { return r.energy_cost; }},
  };
  std::vector<std::string> out;
  for (const Chart& c : charts) {
    BarChartSpec spec;
    spec.id = id_prefix + "-" + c.id;
    spec.title = c.title;
    spec.unit = c.unit;
    spec.decimals = c.decimals;
    spec.width = 440;
    BarSeries s{c.title, c.color, {}};
    for (const LadderRow& row : rows) {
      spec.categories.push_back(row.name);
      s.values.push_back(c.value(*row.result));
    }
    spec.series.push_back(std::move(s));
    out.push_back(BarChart(spec));
  }
  return out;
}

nlohmann::json LadderJson(const std::vector<LadderRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const LadderRow& row = rows[i];
    const sim::SimResult& r = *row.result;
    nlohmann::json j;
    j["step"] = i + 1;
    j["key"] = row.key;
    j["name"] = row.name;
    j["adds"] = row.adds;
    j["mixed_hardware"] = row.mixed_hardware;
    j["command"] = row.command;
    j["policy"] = r.policy;
    j["power_policy"] = r.power_policy;
    j["horizon_s"] = r.horizon_s;
    j["end_s"] = r.end_s;
    j["avg_jct_s"] = r.avg_jct_s;
    j["p99_jct_s"] = r.p99_jct_s;
    j["jobs_total"] = r.jobs_total;
    j["jobs_completed"] = r.jobs_completed;
    j["jobs_failed"] = r.jobs_failed;
    j["jobs_unfinished"] = r.jobs_unfinished;
    j["compat_failures"] = r.compat_failures;
    j["wasted_device_hours"] = r.wasted_device_hours;
    j["energy_kwh"] = r.energy_kwh;
    j["energy_cost"] = r.energy_cost;
    if (i == 0) {
      j["change"] = nullptr;
      j["changed"] = nlohmann::json::array();
    } else {
      const sim::SimResult& above = *rows[i - 1].result;
      nlohmann::json change;
      for (const Metric& m : ContinuousMetrics()) {
        const double x = Relative(m.value(above), m.value(r));
        change[m.key] = std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x);
      }
      j["change"] = std::move(change);
      j["changed"] = LadderChanges(above, r);
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace hetsched::report
