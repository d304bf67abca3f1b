#include "plan/model_partition_exhaustive.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "model/topology.h"

namespace hetsched::plan {
namespace {

struct Chosen {
  int32_t cls = 0, first = 0, last = 0, devices = 0, offset = 0, in_flight = 0;
  NextLink next = NextLink::kNone;
  StageCost cost;
};

class Exhaustive {
 public:
  Exhaustive(const std::vector<DeviceClass>& classes, const StageCostModel& cost,
             int32_t max_stages, uint64_t host_capacity)
      : classes_(classes), cost_(cost), max_stages_(max_stages), host_capacity_(host_capacity) {
    used_.assign(classes.size(), 0);
  }

  // Places stages back to front: the suffix [i, L) is covered; `stack_` holds it (last stage
  // first). `last_cls` is the class of the stage at i (-1 when i == L).
  void Recurse(int32_t i, int32_t last_cls, bool last_in_partial_group, uint64_t host) {
    if (i == 0) {
      Evaluate();
      return;
    }
    const int32_t s = static_cast<int32_t>(stack_.size());
    if (s == max_stages_) return;
    const int32_t in_flight = cost_.InFlight(s + 1);
    for (int32_t cls = 0; cls < static_cast<int32_t>(classes_.size()); ++cls) {
      const DeviceClass& c = classes_[cls];
      const int32_t g = c.group_size;
      for (int32_t d : c.StageSizes()) {
        const int32_t u = used_[cls];
        int32_t offset;
        bool same_group = false;
        const int32_t rem = u % g;
        if (d < g && rem != 0 && d <= g - rem) {
          offset = u;
          same_group = last_cls == cls && last_in_partial_group;
        } else {
          offset = (u + g - 1) / g * g;
        }
        if (offset + d > c.devices()) continue;
        NextLink link = NextLink::kNone;
        if (i < cost_.layers()) link = same_group ? NextLink::kSameGroup : NextLink::kNetwork;
        for (int32_t j = i - 1; j >= 0; --j) {
          for (uint8_t off = 0; off < 4; ++off) {
            if (off != kOffloadNone && !cost_.offload_allowed()) break;
            for (int32_t tp = 1; tp <= std::min(d, g); tp *= 2) {
              if (d % tp != 0 || g % tp != 0) continue;
              StageCost sc = cost_.EvaluateConfig(cls, j, i, d, tp, off, in_flight, link);
              if (!sc.feasible || host + sc.host_bytes > host_capacity_) continue;
              stack_.push_back({cls, j, i, d, offset, in_flight, link, sc});
              used_[cls] = offset + d;
              Recurse(j, cls, d < g, host + sc.host_bytes);
              used_[cls] = u;
              stack_.pop_back();
            }
          }
        }
      }
    }
  }

  double best_step = std::numeric_limits<double>::infinity();
  std::vector<Chosen> best;

 private:
  void Evaluate() {
    std::vector<double> latency, tail;
    for (const Chosen& c : stack_) {
      latency.push_back(c.cost.latency_s);
      tail.push_back(c.cost.tail_s);
    }
    const double step = PipelineStepSeconds(latency, tail, cost_.micro_batches());
    if (step < best_step) {
      best_step = step;
      best.assign(stack_.rbegin(), stack_.rend());
    }
  }

  const std::vector<DeviceClass>& classes_;
  const StageCostModel& cost_;
  int32_t max_stages_;
  uint64_t host_capacity_;
  std::vector<int32_t> used_;
  std::vector<Chosen> stack_;
};

}  // namespace

util::Result<ModelPlan> PlanModelPartitionExhaustive(const model::ModelSpec& spec,
                                                     const model::Cluster& cluster,
                                                     const ModelPartitionOptions& options) {
  RETURN_IF_ERROR(spec.Validate());
  if (spec.layers.size() > 10) {
    return util::Status::InvalidArgument(
        fmt::format("the exhaustive planner takes at most 10 layers (got {})", spec.layers.size()));
  }
  model::Topology topology(cluster);
  ASSIGN_OR_RETURN(std::vector<DeviceClass> classes,
                   BuildDeviceClasses(cluster, topology, spec.setup.precision,
                                      ClassOptions{options.only_type, options.memory_reserve}));
  const HostPool pool = BuildHostPool(cluster, options.memory_reserve);
  double best_step = std::numeric_limits<double>::infinity();
  ModelPlan plan;
  std::vector<Chosen> best;
  for (int64_t mb : MicroBatchCandidates(spec.setup.global_batch, spec.setup.micro_batch)) {
    StageCostModel cost(spec, classes, pool, mb, options.allow_offload);
    Exhaustive search(classes, cost, std::min<int32_t>(options.max_stages, spec.layers.size()),
                      pool.bytes);
    search.Recurse(static_cast<int32_t>(spec.layers.size()), -1, false, 0);
    if (search.best_step < best_step) {
      best_step = search.best_step;
      best = search.best;
      plan.micro_batch = mb;
    }
  }
  if (!std::isfinite(best_step)) return ExplainInfeasible(spec, cluster, classes, pool, options);
  for (const Chosen& c : best) {
    StagePlan st;
    st.first_layer = c.first;
    st.last_layer = c.last;
    st.device_class = c.cls;
    st.device_type = classes[c.cls].type_name;
    st.in_flight = c.in_flight;
    st.next_link = c.next;
    st.cost = c.cost;
    const DeviceClass& dc = classes[c.cls];
    for (int32_t d = c.offset; d < c.offset + c.devices; ++d) {
      const model::DeviceId id = dc.groups[d / dc.group_size][d % dc.group_size];
      AddStageDevice(cluster, id, st);
    }
    plan.stages.push_back(std::move(st));
  }
  FinishPlan(spec, classes, plan);
  return plan;
}

}  // namespace hetsched::plan
