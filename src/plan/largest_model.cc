#include "plan/largest_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace hetsched::plan {

util::Result<LargestModel> FindLargestModel(const std::vector<std::string>& presets,
                                            const model::PresetOptions& preset_options,
                                            const model::Cluster& cluster,
                                            const ModelPartitionOptions& options) {
  if (presets.empty()) return util::Status::InvalidArgument("no model presets to try");
  LargestModel out;
  util::Status smallest = util::Status::Ok();
  for (auto it = presets.rbegin(); it != presets.rend(); ++it) {
    ASSIGN_OR_RETURN(model::ModelSpec spec, model::MakePreset(*it, preset_options));
    auto p = PlanModelPartition(spec, cluster, options);
    if (p.ok()) {
      out.spec = std::move(spec);
      out.plan = std::move(p).value();
      return out;
    }
    if (p.status().code() != util::StatusCode::kInfeasible) return p.status();
    smallest = p.status();
    out.too_big.push_back(*it);
  }
  return util::Status::Infeasible(
      fmt::format("none of {} fits on cluster '{}'; the smallest, {}: {}", fmt::join(presets, ", "),
                  cluster.name, presets.front(), smallest.message()));
}

}  // namespace hetsched::plan
