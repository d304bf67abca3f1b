// HTML pages and the charts of simulations and plans: self-contained output, escaping, values
// drawn where they belong.
#include "report/html.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "model/io/cluster_reader.h"
#include "model/model_spec.h"
#include "plan/model_partition.h"
#include "report/count.h"
#include "report/html_plan.h"
#include "report/html_sim.h"
#include "report/svg.h"

namespace hetsched::report {
namespace {

using testing::Count;

TEST(HtmlPage, SelfContainedAndEscaped) {
  HtmlPage page("Report <1> & co", "sub \"title\"");
  page.AddSection("First <section>", "intro & more");
  page.AddTable({"metric", "value"}, {{"a<b", "12.5 %"}, {"name", "text"}});
  LineChartSpec spec;
  spec.id = "c";
  spec.series.push_back({"s", "#000", {0, 1}, {0, 1}, false, false});
  page.AddChart(LineChart(spec));
  page.AddSection("Second", "");
  page.AddText("x > y");
  const std::string html = page.Render();
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<title>Report &lt;1&gt; &amp; co</title>"), std::string::npos);
  EXPECT_NE(html.find("sub &quot;title&quot;"), std::string::npos);
  EXPECT_NE(html.find("<h2>First &lt;section&gt;</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>a&lt;b</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">12.5 %</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>text</td>"), std::string::npos);
  EXPECT_NE(html.find("<p>x &gt; y</p>"), std::string::npos);
  EXPECT_EQ(Count(html, "<section>"), 2);
  EXPECT_EQ(Count(html, "</section>"), 2);
  // Nothing is fetched: no external scripts, styles, images or fonts.
  EXPECT_EQ(Count(html, "<script"), 1);
  for (const char* ref : {"src=", "href=", "@import", "url(", "https://"}) {
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  }
  // The self-check script and the element it fills.
  EXPECT_NE(html.find("id=\"render-check\" data-status=\"pending\""), std::string::npos);
  EXPECT_NE(html.find("getBBox"), std::string::npos);
  EXPECT_TRUE(html.ends_with("</html>\n"));
}

TEST(HtmlPage, EmptyPageIsStillADocument) {
  const std::string html = HtmlPage("t", "").Render();
  EXPECT_EQ(Count(html, "<section>"), 0);
  EXPECT_EQ(Count(html, "</section>"), 0);
  EXPECT_NE(html.find("</main>"), std::string::npos);
}

model::Cluster Gpus() {
  auto c = model::io::LoadCluster("a100-80g=8:per_node=8,epyc-7763=4:per_node=2");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::move(c).value();
}

sim::SimResult TwoSamples() {
  sim::SimResult r;
  r.policy = "fifo";
  r.end_s = 3600;
  sim::Timeline& t = r.timeline;
  t.sample_s = 3600;
  t.types = {"a100-80g", "epyc-7763"};
  t.type_total = {8, 4};
  t.nodes = {"n0", "n1", "n2"};
  t.samples.push_back({0, {4, 0}, 3, 1, 1000});
  t.samples.push_back({3600, {8, 2}, 0, 2, 5000});
  t.runs.push_back({0, 0, {0}, 8, 0, 3600, sim::RunEnd::kCompleted});
  t.runs.push_back({1, 1, {1, 2}, 2, 600, 720, sim::RunEnd::kFailed});
  return r;
}

TEST(SimCharts, UtilizationIsPercentOfEachType) {
  const model::Cluster cluster = Gpus();
  const sim::SimResult r = TwoSamples();
  const std::string svg = UtilizationChart(cluster, {"run", &r, "#000", false}, "u");
  // 900 x 300 chart: plot x in [64, 880], y in [34, 258] for 0..100 %.
  // a100: 4 of 8 = 50 % at 0 h, 8 of 8 = 100 % at 1 h.
  EXPECT_NE(svg.find("points=\"64,146 880,34\""), std::string::npos) << svg;
  // epyc: 0 of 4, then 2 of 4 = 50 %.
  EXPECT_NE(svg.find("points=\"64,258 880,146\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-series=\"a100-80g (8)\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"epyc-7763 (4)\""), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#76b900\""), std::string::npos);  // NVIDIA green
}

TEST(SimCharts, SharedTimeAxis) {
  const model::Cluster cluster = Gpus();
  const sim::SimResult r = TwoSamples();
  // The axis runs to 2 h: the last sample (1 h) lands halfway, x = 64 + 816 / 2 = 472.
  const std::string svg = UtilizationChart(cluster, {"run", &r, "#000", false}, "u", 2);
  EXPECT_NE(svg.find("points=\"64,146 472,34\""), std::string::npos) << svg;
}

TEST(SimCharts, GanttPutsFailedRunsInTheirOwnSeriesAndNamesJobs) {
  const model::Cluster cluster = Gpus();
  const sim::SimResult r = TwoSamples();
  model::Workload w;
  w.jobs.resize(2);
  w.jobs[0].name = "train<7b>";
  w.jobs[1].name = "etl";
  const std::string svg = NodeGanttChart(cluster, {"run", &r, "#000", false}, &w, "g");
  EXPECT_NE(svg.find("train&lt;7b&gt;: 8 x a100-80g"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("train<7b>"), std::string::npos);
  // The failed run held two nodes: two bars in the failed series, none left for epyc.
  const size_t failed = svg.find("data-series=\"failed run");
  ASSERT_NE(failed, std::string::npos);
  EXPECT_EQ(Count(svg.substr(failed, svg.find("</g>", failed) - failed), "<rect"), 2);
  EXPECT_NE(svg.find("data-series=\"epyc-7763\" data-empty=\"true\""), std::string::npos);
  EXPECT_NE(svg.find("etl: 2 x epyc-7763"), std::string::npos);
}

TEST(SimCharts, PowerAndQueueOneLinePerRun) {
  const sim::SimResult a = TwoSamples();
  sim::SimResult b = TwoSamples();
  const std::vector<SimRun> runs = {{"base", &a, "#888", true}, {"het", &b, "#1f77b4", false}};
  const std::string power = PowerChart(runs, "p");
  EXPECT_EQ(Count(power, "data-series="), 2);
  EXPECT_NE(power.find(">power (kW)<"), std::string::npos);
  EXPECT_NE(power.find("stroke-dasharray"), std::string::npos);
  const std::string queue = QueueChart(runs, "q");
  EXPECT_EQ(Count(queue, "data-series="), 2);
  EXPECT_NE(queue.find(">jobs waiting<"), std::string::npos);
}

TEST(SimCharts, UtilizationSummaryWeightsByDeviceCount) {
  const model::Cluster cluster = Gpus();
  sim::SimResult r;
  r.utilization = {{"a100-80g", 0.5}, {"epyc-7763", 0.25}};
  const UtilizationSummary s = SummarizeUtilization(cluster, r);
  EXPECT_DOUBLE_EQ(s.accelerator, 0.5);
  EXPECT_DOUBLE_EQ(s.cpu, 0.25);
  auto mixed = model::io::LoadCluster("a100-80g=8:per_node=8,mi250x=24:per_node=8");
  ASSERT_TRUE(mixed.ok());
  r.utilization = {{"a100-80g", 1.0}, {"mi250x", 0.2}};
  const UtilizationSummary m = SummarizeUtilization(*mixed, r);
  EXPECT_DOUBLE_EQ(m.accelerator, (8 * 1.0 + 24 * 0.2) / 32);
  EXPECT_TRUE(std::isnan(m.cpu));
}

TEST(SimCharts, VendorColours) {
  auto c = model::io::LoadCluster("a100-80g=8,h100-80g=8,mi250x=8,epyc-7763=2");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto colors = DeviceTypeColors(*c);
  ASSERT_EQ(colors.size(), 4u);
  EXPECT_EQ(colors.at("mi250x"), "#d62728");
  // Two NVIDIA types: both from the green family, and not the same shade.
  EXPECT_NE(colors.at("a100-80g"), colors.at("h100-80g"));
  EXPECT_TRUE(colors.at("a100-80g") == "#76b900" || colors.at("h100-80g") == "#76b900");
}

TEST(SimCharts, ComparisonHasOneChartPerMetricAndABarPerRun) {
  const model::Cluster cluster = Gpus();
  sim::SimResult a = TwoSamples(), b = TwoSamples();
  a.energy_kwh = 100;
  b.energy_kwh = 40;
  a.checkpoint_save_device_hours = 1.5;
  a.restore_device_hours = 3;
  a.restart_device_hours = 0.5;
  const auto charts =
      ComparisonCharts(cluster, {{"base", &a, "#888", true}, {"het", &b, "#1f77b4", false}});
  ASSERT_EQ(charts.size(), 10u);
  for (const std::string& svg : charts) EXPECT_EQ(Count(svg, "data-series="), 2);
  // What preemptions cost, summed: save, restore and restarts.
  EXPECT_NE(charts[7].find(">5.0 h<"), std::string::npos) << charts[7];
  const std::string& energy = charts[8];
  EXPECT_NE(energy.find(">100 kWh<"), std::string::npos);
  EXPECT_NE(energy.find(">40 kWh<"), std::string::npos);
}

TEST(PlanCharts, EveryDeviceOfEveryStageIsDrawnOnce) {
  auto cluster = model::io::LoadCluster("a100-80g=8:per_node=8,mi250x=8:per_node=8");
  ASSERT_TRUE(cluster.ok());
  auto spec = model::MakePreset("llama-7b", {});
  ASSERT_TRUE(spec.ok());
  auto p = plan::PlanModelPartition(*spec, *cluster, {});
  ASSERT_TRUE(p.ok()) << p.status().message();
  const std::string svg = ModelPlanChart(*cluster, *spec, *p, "mp", "plan <x>");
  EXPECT_EQ(Count(svg, "data-series=\"stage "), static_cast<int>(p->stages.size()));
  // Each used device is a cell titled "node/index type: stage i (...)"; the rest are unused.
  EXPECT_EQ(Count(svg, ": stage "), p->devices_used);
  EXPECT_EQ(Count(svg, ": unused</title>"), 16 - p->devices_used);
  EXPECT_NE(svg.find("plan &lt;x&gt;"), std::string::npos);
  const auto rows = ModelPlanRows(*spec, *p);
  ASSERT_EQ(rows.size(), p->stages.size());
  EXPECT_EQ(rows[0].size(), ModelPlanHeaders().size());
}

TEST(PlanCharts, DagGanttOneLanePerProcessor) {
  model::TaskGraph g;
  g.name = "tiny";
  g.processors = {{"P0", "a100-80g"}, {"P1", ""}};
  g.tasks = {{"t<0>", {1, 2}}, {"t1", {3, 1}}};
  g.edges = {{0, 1, 0}};
  ASSERT_TRUE(g.Finalize().ok());
  plan::Schedule s;
  s.placements = {{0, 0, 1}, {1, 1, 2}};
  s.makespan = 2;
  const std::string svg = DagScheduleChart(g, s, "dag", "heft");
  EXPECT_NE(svg.find(">P0 (a100-80g)<"), std::string::npos);
  EXPECT_NE(svg.find(">P1<"), std::string::npos);
  EXPECT_NE(svg.find("t&lt;0&gt;: 0.000 to 1.000"), std::string::npos);
  EXPECT_EQ(Count(svg, "data-series="), 2);  // a100-80g and untyped "tasks"
  EXPECT_NE(svg.find("makespan 2.000"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::report
