// The serving simulation's modes (sim/serving.h): their names on the command line, and the
// check that a single-type baseline names a type the cluster has.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "sim/serving.h"

namespace hetsched::sim {

std::string_view ServingModeName(ServingMode mode) {
  switch (mode) {
    case ServingMode::kHetsched:
      return "hetsched";
    case ServingMode::kStrongest:
      return "strongest";
    case ServingMode::kStaticPeak:
      return "static-peak";
    case ServingMode::kSingleType:
      return "single";
  }
  return "unknown";
}

util::Result<ServingChoice> ParseServingMode(std::string_view text) {
  for (ServingMode m :
       {ServingMode::kHetsched, ServingMode::kStrongest, ServingMode::kStaticPeak}) {
    if (text == ServingModeName(m)) return ServingChoice{m, ""};
  }
  constexpr std::string_view kSingle = "single:";
  if (text.starts_with(kSingle) && text.size() > kSingle.size()) {
    return ServingChoice{ServingMode::kSingleType, std::string(text.substr(kSingle.size()))};
  }
  return util::Status::InvalidArgument(fmt::format(
      "unknown serving mode '{}' (expected hetsched, strongest, static-peak or single:TYPE)",
      text));
}

util::Status CheckSingleType(const model::Cluster& cluster, const ServingOptions& options) {
  if (options.mode != ServingMode::kSingleType) return util::Status::Ok();
  std::set<std::string> types;
  for (const model::Device& d : cluster.devices) types.insert(cluster.catalog.Get(d.type).name);
  const auto id = cluster.catalog.FindId(options.single_type);
  if (id && types.count(cluster.catalog.Get(*id).name) > 0) return util::Status::Ok();
  return util::Status::InvalidArgument(
      fmt::format("single:{}: the cluster has no device of type {} (its types: {})",
                  options.single_type, options.single_type, fmt::join(types, ", ")));
}

}  // namespace hetsched::sim
