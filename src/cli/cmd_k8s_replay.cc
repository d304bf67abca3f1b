// `hetsched k8s-replay`: what the kube-scheduler extender would change on a cluster, replayed
// in virtual time against kube-scheduler's default placement (k8s/replay.h,
// docs/kubernetes.md). The nodes are a NodeList (`kubectl get nodes -o json` of a real cluster
// works); the pods a seeded stream.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/data_dir.h"
#include "daemon/api/serve_config.h"
#include "k8s/replay.h"
#include "util/file.h"

namespace hetsched::cli {
namespace {

struct ReplayFlags {
  std::string nodes;
  std::string config;  // a `serve --backend kubernetes` config: its kubernetes: block
  int32_t pods = 800;
  double interarrival_s = 90;
  uint64_t seed = 1;
  double weight = 5;
  std::string scorers;  // empty: the config's, else speed
  bool json = false;
};

// The two runs side by side, over one horizon: the later run's end, every node on until then.
struct Comparison {
  svc::k8s::ReplayResult runs[2];  // kube-scheduler alone, then with hetsched
  double horizon_s = 0;
  int64_t completed_by_both = 0;
  // Average JCT over the pods both runs completed: pods one run gave up on do not flatter it.
  double common_jct_h[2] = {0, 0};
};

Comparison Compare(svc::k8s::ReplayResult plain, svc::k8s::ReplayResult extended) {
  Comparison c;
  c.horizon_s = std::max(plain.makespan_s, extended.makespan_s);
  double sum[2] = {0, 0};
  for (size_t i = 0; i < plain.jct_by_pod.size(); ++i) {
    if (plain.jct_by_pod[i] < 0 || extended.jct_by_pod[i] < 0) continue;
    ++c.completed_by_both;
    sum[0] += plain.jct_by_pod[i];
    sum[1] += extended.jct_by_pod[i];
  }
  for (int k = 0; k < 2 && c.completed_by_both > 0; ++k) {
    c.common_jct_h[k] = sum[k] / c.completed_by_both / 3600;
  }
  c.runs[0] = std::move(plain);
  c.runs[1] = std::move(extended);
  return c;
}

// The shipped example by its name in the source tree, wherever the binary finds it.
std::string NodesShown(const ReplayFlags& f) {
  return f.nodes.empty() ? "examples/k8s/mixed-cluster.json" : f.nodes;
}

void PrintJson(const ReplayFlags& f, const Comparison& c) {
  nlohmann::ordered_json out = {{"nodes", NodesShown(f)},
                                {"completed_by_both", c.completed_by_both},
                                {"pods", f.pods},
                                {"seed", f.seed},
                                {"horizon_h", c.horizon_s / 3600}};
  nlohmann::ordered_json left_out = nlohmann::ordered_json::array();
  for (const auto& [node, problem] : c.runs[0].left_out) {
    left_out.push_back({{"node", node}, {"problem", problem}});
  }
  out["left_out"] = std::move(left_out);
  for (int k = 0; k < 2; ++k) {
    const svc::k8s::ReplayResult& r = c.runs[k];
    out[k == 0 ? "kube_scheduler" : "with_hetsched"] = {
        {"completed", r.completed},
        {"failed_starts", r.failed_starts},
        {"failed_jobs", r.failed_jobs},
        {"never_placed", r.never_placed},
        {"wasted_device_h", r.wasted_device_h},
        {"avg_jct_h", r.avg_jct_s / 3600},
        {"p99_jct_h", r.p99_jct_s / 3600},
        {"avg_jct_h_completed_by_both", c.common_jct_h[k]},
        {"makespan_h", r.makespan_s / 3600},
        {"energy_kwh", r.EnergyKwh(c.horizon_s)},
        {"empty_node_h", r.EmptyNodeHours(c.horizon_s)},
        {"placed_by_type", r.placed_by_type}};
  }
  std::printf("%s\n", out.dump(2).c_str());
}

void PrintTable(const ReplayFlags& f, const Comparison& c) {
  const double horizon = c.horizon_s;
  std::printf("%d pods on %d nodes (%s), seed %llu; energy and empty nodes over %.1f h\n\n", f.pods,
              c.runs[0].nodes, NodesShown(f).c_str(), static_cast<unsigned long long>(f.seed),
              horizon / 3600);
  const auto& left_out = c.runs[0].left_out;
  if (!left_out.empty()) {
    std::printf("left out, hetsched cannot describe them:\n");
    for (const auto& [node, problem] : left_out)
      std::printf("  %s: %s\n", node.c_str(), problem.c_str());
    std::printf("\n");
  }
  std::printf("%-34s %16s %16s\n", "", "kube-scheduler", "+ hetsched");
  auto row = [&](const char* name, auto get, const char* format) {
    std::printf("%-34s %16s %16s\n", name,
                fmt::format(fmt::runtime(format), get(c.runs[0])).c_str(),
                fmt::format(fmt::runtime(format), get(c.runs[1])).c_str());
  };
  using R = svc::k8s::ReplayResult;
  row(
      "pods completed", [](const R& r) { return r.completed; }, "{}");
  row(
      "failed starts (image cannot run)", [](const R& r) { return r.failed_starts; }, "{}");
  row(
      "jobs given up (back-off limit)", [](const R& r) { return r.failed_jobs; }, "{}");
  row(
      "never placed", [](const R& r) { return r.never_placed; }, "{}");
  row(
      "device-hours lost to failed starts", [](const R& r) { return r.wasted_device_h; }, "{:.1f}");
  row(
      "average JCT (h)", [](const R& r) { return r.avg_jct_s / 3600; }, "{:.2f}");
  row(
      "p99 JCT (h)", [](const R& r) { return r.p99_jct_s / 3600; }, "{:.2f}");
  std::printf("%-34s %16.2f %16.2f\n",
              fmt::format("average JCT, {} done by both (h)", c.completed_by_both).c_str(),
              c.common_jct_h[0], c.common_jct_h[1]);
  row(
      "makespan (h)", [](const R& r) { return r.makespan_s / 3600; }, "{:.1f}");
  row(
      "energy, all nodes on (kWh)", [&](const R& r) { return r.EnergyKwh(horizon); }, "{:.0f}");
  row(
      "empty node-hours", [&](const R& r) { return r.EmptyNodeHours(horizon); }, "{:.0f}");
  std::printf("\npod starts per node type (failed starts included):\n");
  for (int k = 0; k < 2; ++k) {
    std::string line;
    for (const auto& [type, n] : c.runs[k].placed_by_type) line += fmt::format(" {}={}", type, n);
    std::printf("  %-15s%s\n", k == 0 ? "kube-scheduler" : "+ hetsched", line.c_str());
  }
}

// The extender's settings as `serve --backend kubernetes` reads them from --config (the
// product mapping, cpu_type, rack_label, scorers, packing, locality), --scorers over them.
util::Result<svc::ServeConfig::Kubernetes> ExtenderSettings(const ReplayFlags& f) {
  svc::ServeConfig::Kubernetes k;
  if (!f.config.empty()) {
    ASSIGN_OR_RETURN(const svc::ServeConfig c, svc::LoadServeConfig(f.config));
    k = c.kubernetes;
  }
  if (!f.scorers.empty()) k.scorers = f.scorers;
  return k;
}

int RunReplay(const ReplayFlags& f) {
  if (f.pods < 1 || f.pods > 1000000 || !(f.interarrival_s > 0) || !(f.weight >= 0)) {
    return ReportError(util::Status::InvalidArgument(
        "--pods must be 1 to 1000000, --interarrival > 0 and --weight >= 0"));
  }
  auto settings = ExtenderSettings(f);
  if (!settings.ok()) return ReportError(settings.status());
  const std::string path = f.nodes.empty() ? ExamplePath("k8s/mixed-cluster.json") : f.nodes;
  auto text = util::ReadFile(path);
  if (!text.ok()) return ReportError(text.status());
  auto list = svc::k8s::ParseNodeList(*text, settings->mapping.rack_label);
  if (!list.ok()) {
    return ReportError(util::Status::InvalidArgument(path + ": " + list.status().message()));
  }
  const auto pods = svc::k8s::GeneratePods(f.pods, f.interarrival_s, f.seed);
  svc::k8s::ReplayOptions o;
  o.seed = f.seed;
  o.extender_weight = f.weight;
  o.extender.mapping = settings->mapping;
  o.extender.scorers = settings->scorers;
  o.extender.packing_weight = settings->packing;
  o.extender.locality_weight = settings->locality;
  auto plain = svc::k8s::Replay(list->items, pods, o);
  if (!plain.ok() && plain.status().code() == util::StatusCode::kInvalidArgument) {
    return ReportError(
        util::Status::InvalidArgument(NodesShown(f) + ": " + plain.status().message()));
  }
  if (!plain.ok()) return ReportError(plain.status());
  o.use_extender = true;
  auto extended = svc::k8s::Replay(list->items, pods, o);
  if (!extended.ok()) return ReportError(extended.status());
  const Comparison c = Compare(std::move(*plain), std::move(*extended));
  if (f.json) {
    PrintJson(f, c);
  } else {
    PrintTable(f, c);
  }
  return kExitOk;
}

}  // namespace

void AddK8sReplayCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<ReplayFlags>();
  auto* cmd = app.add_subcommand(
      "k8s-replay",
      "Replay a seeded stream of pods on a Kubernetes cluster's nodes in virtual time, placed by "
      "a model of kube-scheduler's defaults and again with hetsched's extender consulted "
      "(docs/kubernetes.md): failed starts, JCT, energy, empty nodes");
  cmd->add_option("--nodes", flags->nodes,
                  "a NodeList as JSON (`kubectl get nodes -o json`); default: the shipped "
                  "mixed NVIDIA/AMD/Ascend/CPU example, examples/k8s/mixed-cluster.json");
  cmd->add_option("--config", flags->config,
                  "a `serve --backend kubernetes` config file: its kubernetes: block maps "
                  "products to catalog types (device_types) and sets cpu_type, rack_label, "
                  "scorers, packing and locality")
      ->type_name("FILE");
  cmd->add_option("--pods", flags->pods, "pods in the stream (default 800)");
  cmd->add_option("--interarrival", flags->interarrival_s,
                  "mean seconds between pods (default 90)");
  cmd->add_option("--seed", flags->seed, "seed of the stream and of kube-scheduler's tie breaks");
  cmd->add_option("--weight", flags->weight,
                  "the extender's weight in kube-scheduler's config (default 5)");
  cmd->add_option("--scorers", flags->scorers,
                  "the extender's type scorers, as kubernetes.scorers (default: the --config "
                  "file's, else speed; e.g. speed:1,speed-per-cost:0.5)");
  cmd->add_flag("--json", flags->json, "print JSON");
  cmd->callback([flags, &result] { result.exit_code = RunReplay(*flags); });
}

}  // namespace hetsched::cli
