// `hetsched plan model NAME --cluster FILE`: partition a model (a preset or a layer file) into
// pipeline stages over the cluster's accelerators; `--max-model FAMILY` finds the largest preset
// of a family the cluster can train.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/command.h"
#include "model/io/cluster_reader.h"
#include "model/io/layer_file_reader.h"
#include "model/model_spec.h"
#include "plan/largest_model.h"
#include "plan/model_partition.h"
#include "report/html.h"
#include "report/html_plan.h"
#include "report/plan_json.h"
#include "report/table.h"
#include "util/file.h"
#include "util/units.h"

namespace hetsched::cli {
namespace {

struct PlanModelArgs {
  std::string model;
  std::string cluster;
  std::string max_model;
  std::string only_type;
  std::string precision;
  std::string optimizer;
  int64_t batch = 0;
  int64_t micro_batch = 0;
  int64_t seq_len = 0;
  int32_t max_stages = 16;
  double memory_reserve = 0.10;
  bool no_offload = false;
  bool json = false;
  std::string html;  // write an HTML page with the plan drawn across the devices
  // Set when the user gave the option (a given 0 is an error, not "use the default").
  bool batch_set = false, micro_batch_set = false, seq_len_set = false;
};

bool LooksLikeFile(const std::string& name) {
  return name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
}

util::Status CheckCounts(const PlanModelArgs& a) {
  if (a.batch_set && a.batch < 1) {
    return util::Status::InvalidArgument(
        fmt::format("--batch must be at least 1 (got {})", a.batch));
  }
  if (a.micro_batch_set && a.micro_batch < 1) {
    return util::Status::InvalidArgument(
        fmt::format("--micro-batch must be at least 1 (got {})", a.micro_batch));
  }
  if (a.seq_len_set && a.seq_len < 1) {
    return util::Status::InvalidArgument(
        fmt::format("--seq-len must be at least 1 (got {})", a.seq_len));
  }
  return util::Status::Ok();
}

model::PresetOptions PresetOptionsOf(const PlanModelArgs& a) {
  model::PresetOptions options;
  options.global_batch = a.batch;
  options.micro_batch = a.micro_batch;
  options.seq_len = a.seq_len;
  options.precision = a.precision;
  options.optimizer = a.optimizer;
  return options;
}

util::Result<model::ModelSpec> LoadModel(const std::string& name, const PlanModelArgs& a) {
  RETURN_IF_ERROR(CheckCounts(a));
  if (LooksLikeFile(name)) {
    ASSIGN_OR_RETURN(model::ModelSpec spec, model::io::LoadLayerFile(name));
    if (a.seq_len_set || !a.precision.empty()) {
      return util::Status::InvalidArgument(
          "--seq-len and --precision are set in the layer file, not on the command line");
    }
    if (a.batch_set) spec.setup.global_batch = a.batch;
    if (a.micro_batch_set) spec.setup.micro_batch = a.micro_batch;
    if (!a.optimizer.empty()) {
      ASSIGN_OR_RETURN(spec.setup.optimizer, model::ParseOptimizer(a.optimizer));
    }
    RETURN_IF_ERROR(spec.Validate());
    return spec;
  }
  return model::MakePreset(name, PresetOptionsOf(a));
}

std::string Layers(const plan::StagePlan& s) {
  if (s.last_layer - s.first_layer == 1) return s.first_layer_name;
  return fmt::format("{}..{} ({})", s.first_layer_name, s.last_layer_name,
                     s.last_layer - s.first_layer);
}

std::string Nodes(const plan::StagePlan& s) {
  if (s.nodes.size() <= 2) {
    std::string out;
    for (const std::string& n : s.nodes) out += (out.empty() ? "" : ",") + n;
    return out;
  }
  return fmt::format("{}..{} ({})", s.nodes.front(), s.nodes.back(), s.nodes.size());
}

std::string Seconds(double s) {
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string RenderText(const model::ModelSpec& spec, const std::string& cluster_name,
                       const plan::ModelPlan& p) {
  std::string out = fmt::format(
      "Model {}: {}, {}, {}, {} parameters, batch {} x {} tokens, micro-batch {} ({} "
      "micro-batches)\n",
      spec.name, p.training ? "training" : "inference", model::OptimizerName(spec.setup.optimizer),
      model::PrecisionName(spec.setup.precision),
      fmt::format("{:.2f}B", static_cast<double>(spec.ParameterCount()) / 1e9), p.global_batch,
      p.seq_len, p.micro_batch, p.micro_batches);
  out += fmt::format("Cluster {}: {} stages on {} accelerators\n\n", cluster_name, p.stages.size(),
                     p.devices_used);
  report::Table t({"stage", "layers", "devices", "nodes", "tp", "dp", "in-flight", "weights",
                   "grads", "optimizer", "activations", "used/capacity", "latency", "offload"});
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const plan::StagePlan& s = p.stages[i];
    const plan::StageMemory& m = s.cost.memory;
    t.AddRow({std::to_string(i), Layers(s), fmt::format("{} x {}", s.devices.size(), s.device_type),
              Nodes(s), std::to_string(s.cost.tp), std::to_string(s.cost.dp),
              std::to_string(s.in_flight), util::FormatBytes(m.weights),
              util::FormatBytes(m.gradients), util::FormatBytes(m.optimizer),
              util::FormatBytes(m.activations),
              fmt::format("{:.0f}% of {}", 100.0 * m.total() / s.memory_capacity,
                          util::FormatBytes(s.memory_capacity)),
              Seconds(s.cost.latency_s), report::OffloadName(s.cost.offload)});
  }
  out += t.Render();
  out += fmt::format(
      "\nStep time {} (pipeline bubble {}, slowest gradient all-reduce/offload tail {}); {:.0f} "
      "tokens/s",
      Seconds(p.step_s), Seconds(p.bubble_s), Seconds(p.tail_s), p.tokens_per_s);
  if (!p.training) {
    out += fmt::format("; {} per token",
                       Seconds(p.step_s / static_cast<double>(p.global_batch * p.seq_len)));
  }
  if (p.host_bytes > 0) {
    out += fmt::format("; {} in CPU-server memory", util::FormatBytes(p.host_bytes));
  }
  out += "\n\nTraffic per step\n";
  report::Table l({"from", "to", "kind", "link", "bytes", "time"});
  for (const plan::LinkTraffic& x : p.links) {
    l.AddRow({x.from, x.to, x.kind, x.link, util::FormatBytes(x.bytes_per_step),
              Seconds(x.seconds_per_step)});
  }
  out += l.Render();
  return out;
}

plan::ModelPartitionOptions Options(const PlanModelArgs& a) {
  plan::ModelPartitionOptions o;
  o.only_type = a.only_type;
  o.memory_reserve = a.memory_reserve;
  o.allow_offload = !a.no_offload;
  o.max_stages = a.max_stages;
  return o;
}

int Run(const PlanModelArgs& a) {
  if (a.model.empty() == a.max_model.empty()) {
    return ReportError(util::Status::InvalidArgument(
        "give either a model (a preset name or a layer file) or --max-model FAMILY"));
  }
  auto cluster = model::io::LoadCluster(a.cluster);
  if (!cluster.ok()) return ReportError(cluster.status());
  const plan::ModelPartitionOptions options = Options(a);

  std::string max_model_note;
  std::optional<model::ModelSpec> spec;
  std::optional<plan::ModelPlan> plan;
  if (!a.max_model.empty()) {
    auto family = model::PresetsOfFamily(a.max_model);
    if (!family.ok()) return ReportError(family.status());
    if (auto st = CheckCounts(a); !st.ok()) return ReportError(st);
    auto largest = plan::FindLargestModel(*family, PresetOptionsOf(a), *cluster, options);
    if (!largest.ok()) return ReportError(largest.status());
    for (const std::string& name : largest->too_big) {
      max_model_note += fmt::format("{} does not fit. ", name);
    }
    spec = std::move(largest->spec);
    plan = std::move(largest->plan);
  } else {
    auto s = LoadModel(a.model, a);
    if (!s.ok()) return ReportError(s.status());
    auto p = plan::PlanModelPartition(*s, *cluster, options);
    if (!p.ok()) return ReportError(p.status());
    spec = std::move(*s);
    plan = std::move(*p);
  }

  if (a.json) {
    nlohmann::ordered_json j = report::ModelPlanJson(*spec, *cluster, *plan);
    if (!a.max_model.empty()) j["largest_in_family"] = spec->name;
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  } else {
    if (!a.max_model.empty()) {
      std::fputs(fmt::format("{}Largest {} preset cluster '{}' can train: {}\n\n", max_model_note,
                             a.max_model, cluster->name, spec->name)
                     .c_str(),
                 stdout);
    }
    std::fputs(RenderText(*spec, cluster->name, *plan).c_str(), stdout);
  }
  if (!a.html.empty()) {
    report::HtmlPage page("hetsched plan model: " + spec->name,
                          "Cluster " + cluster->name +
                              (a.only_type.empty() ? std::string() : ", only " + a.only_type));
    report::AddModelPlanSection(page, *cluster, *spec, *plan, "Pipeline stages across devices",
                                "model-plan");
    if (auto st = util::WriteFile(a.html, page.Render()); !st.ok()) return ReportError(st);
  }
  return kExitOk;
}

}  // namespace

void AddPlanModelCommand(CLI::App& plan, CommandResult& result) {
  auto args = std::make_shared<PlanModelArgs>();
  auto* cmd = plan.add_subcommand(
      "model",
      "Partition a model into pipeline stages over the cluster's accelerators (least time per "
      "training step)");
  cmd->add_option(
      "model", args->model,
      "Preset (llama-7b, llama-13b, llama-70b, gpt3-175b, llama-405b) or a layer file (.yaml)");
  cmd->add_option("--cluster", args->cluster, "Cluster YAML file or shorthand")->required();
  cmd->add_option("--max-model", args->max_model,
                  "Report the largest preset of this family (llama, gpt3) the cluster can train");
  cmd->add_option("--only-type", args->only_type, "Use only accelerators of this device type");
  auto* batch = cmd->add_option("--batch", args->batch, "Global batch size (sequences per step)");
  auto* micro = cmd->add_option("--micro-batch", args->micro_batch,
                                "Micro-batch size (default: the planner chooses)");
  auto* seq = cmd->add_option("--seq-len", args->seq_len, "Sequence length (presets only)");
  cmd->add_option("--precision", args->precision, "fp32, fp16 or bf16 (presets only)");
  cmd->add_option("--optimizer", args->optimizer, "adam, sgd, or none for inference");
  cmd->add_option("--max-stages", args->max_stages, "Pipeline depth limit")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--memory-reserve", args->memory_reserve,
                  "Fraction of device and host memory kept free for workspace")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.95));
  cmd->add_flag("--no-offload", args->no_offload,
                "Never move optimizer state or embeddings to CPU-server memory");
  cmd->add_flag("--json", args->json, "Print the plan as JSON");
  cmd->add_option("--html", args->html,
                  "Also write an HTML page (one file, no network) drawing the plan");
  cmd->callback([args, batch, micro, seq, &result] {
    args->batch_set = batch->count() > 0;
    args->micro_batch_set = micro->count() > 0;
    args->seq_len_set = seq->count() > 0;
    result.exit_code = Run(*args);
  });
}

}  // namespace hetsched::cli
