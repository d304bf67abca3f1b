#include "report/plan_json.h"

#include <fmt/format.h>

#include <cmath>

namespace hetsched::report {

std::string OffloadName(uint8_t flags) {
  if (flags == plan::kOffloadNone) return "-";
  std::string out;
  if (flags & plan::kOffloadOptimizer) out = "optimizer";
  if (flags & plan::kOffloadEmbedding) out += out.empty() ? "embedding" : "+embedding";
  return out;
}

nlohmann::ordered_json ModelPlanJson(const model::ModelSpec& spec, const model::Cluster& cluster,
                                     const plan::ModelPlan& p) {
  nlohmann::ordered_json j;
  j["model"] = spec.name;
  j["cluster"] = cluster.name;
  j["mode"] = p.training ? "training" : "inference";
  j["parameters"] = spec.ParameterCount();
  j["precision"] = model::PrecisionName(spec.setup.precision);
  j["optimizer"] = model::OptimizerName(spec.setup.optimizer);
  j["global_batch"] = p.global_batch;
  j["seq_len"] = p.seq_len;
  j["micro_batch"] = p.micro_batch;
  j["micro_batches"] = p.micro_batches;
  j["step_s"] = p.step_s;
  j["bubble_s"] = p.bubble_s;
  j["tail_s"] = p.tail_s;
  j["tokens_per_s"] = p.tokens_per_s;
  if (!p.training) j["s_per_token"] = p.step_s / static_cast<double>(p.global_batch * p.seq_len);
  j["host_bytes"] = p.host_bytes;
  j["devices_used"] = p.devices_used;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const plan::StagePlan& s : p.stages) {
    nlohmann::ordered_json st;
    st["first_layer"] = s.first_layer;
    st["last_layer"] = s.last_layer - 1;
    st["first_layer_name"] = s.first_layer_name;
    st["last_layer_name"] = s.last_layer_name;
    st["device_type"] = s.device_type;
    nlohmann::ordered_json devs = nlohmann::ordered_json::array();
    for (model::DeviceId d : s.devices) {
      const model::Device& dev = cluster.device(d);
      devs.push_back(fmt::format("{}/{}", cluster.node(dev.node).name, dev.local_index));
    }
    st["devices"] = devs;
    st["nodes"] = s.nodes;
    st["tp"] = s.cost.tp;
    st["dp"] = s.cost.dp;
    st["samples_per_replica"] = s.cost.samples_per_replica;
    st["in_flight"] = s.in_flight;
    st["memory_per_device"] = {
        {"weights", s.cost.memory.weights},     {"gradients", s.cost.memory.gradients},
        {"optimizer", s.cost.memory.optimizer}, {"activations", s.cost.memory.activations},
        {"total", s.cost.memory.total()},       {"capacity", s.memory_capacity}};
    st["offload"] = OffloadName(s.cost.offload);
    st["compute_s"] = s.cost.compute_s;
    st["tp_comm_s"] = s.cost.tp_comm_s;
    st["p2p_s"] = s.cost.p2p_s;
    st["latency_s"] = s.cost.latency_s;
    st["allreduce_s"] = s.cost.allreduce_s;
    st["offload_s"] = s.cost.offload_s;
    st["tail_s"] = s.cost.tail_s;
    stages.push_back(st);
  }
  j["stages"] = stages;
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const plan::LinkTraffic& x : p.links) {
    links.push_back({{"from", x.from},
                     {"to", x.to},
                     {"kind", x.kind},
                     {"link", x.link},
                     {"bytes_per_step", x.bytes_per_step},
                     {"seconds_per_step", x.seconds_per_step}});
  }
  j["links"] = links;
  j["search"] = {{"dp_runs", p.dp_runs}};
  return j;
}

nlohmann::ordered_json DagScheduleJson(const std::string& algo, const plan::Schedule& schedule,
                                       const plan::DagProblem& problem,
                                       const std::optional<DagProof>& proof) {
  const model::TaskGraph& g = problem.graph();
  nlohmann::ordered_json j;
  j["algo"] = algo;
  j["makespan"] = schedule.makespan;
  const double seq = problem.BestSequentialTime();
  j["speedup"] = std::isfinite(seq) && schedule.makespan > 0
                     ? nlohmann::ordered_json(seq / schedule.makespan)
                     : nlohmann::ordered_json(nullptr);
  const double cp = problem.MinCostCriticalPath();
  j["slr"] =
      cp > 0 ? nlohmann::ordered_json(schedule.makespan / cp) : nlohmann::ordered_json(nullptr);
  if (proof) {
    j["proved_optimal"] = proof->proved_optimal;
    j["lower_bound"] = proof->lower_bound;
    j["stopped_by"] = proof->stopped_by.empty() ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(proof->stopped_by);
  }
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int32_t t = 0; t < g.num_tasks(); ++t) {
    const plan::TaskPlacement& pl = schedule.placements[t];
    rows.push_back({{"task", g.tasks[t].name},
                    {"processor", g.processors[pl.processor].name},
                    {"start", pl.start},
                    {"finish", pl.finish}});
  }
  j["schedule"] = rows;
  return j;
}

}  // namespace hetsched::report
