#include "sched/scorers.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace hetsched::sched {
namespace {

// Normalized speed: this type's gang speed over the job's best.
class SpeedScorer final : public TypeScorer {
 public:
  std::string_view name() const override { return "speed"; }
  double Score(const JobRecord& job, model::DeviceTypeId type, const model::DeviceCatalog&,
               const ScoreContext*) const override {
    return job.best_speed > 0 ? job.speed[type.value()] / job.best_speed : 0;
  }
};

// Room near the job's data: 1 when the type has free devices for the whole gang on the node
// holding the data, 1/2 in the data's rack (but not its node), 0 farther; 1 for every type
// when the job's data has no node or rack (none, or a filesystem on the network core), and
// without a cluster state. The input is read over fewer shared links the closer the gang is
// (sim/network.h).
class LocalityScorer final : public TypeScorer {
 public:
  std::string_view name() const override { return "locality"; }
  bool reads_state() const override { return true; }
  double Score(const JobRecord& job, model::DeviceTypeId type, const model::DeviceCatalog&,
               const ScoreContext* context) const override {
    if (context == nullptr || context->state == nullptr) return 1;
    const PlacementHints& h = context->hints;
    if (!h.data_node.valid() && !h.data_rack.valid()) return 1;
    const int32_t gang = std::max(1, job.job->gang_size);
    if (h.data_node.valid() && context->state->FreeInNode(h.data_node, type) >= gang) return 1;
    if (h.data_rack.valid() && context->state->FreeInRack(h.data_rack, type) >= gang) {
      return h.data_node.valid() ? 0.5 : 1;
    }
    return 0;
  }
};

// Work per unit of a per-device quantity (price, watts), normalized over the allowed types.
class PerUnitScorer final : public TypeScorer {
 public:
  enum class Unit { kPrice, kWatts };
  explicit PerUnitScorer(Unit unit) : unit_(unit) {}
  std::string_view name() const override {
    return unit_ == Unit::kPrice ? "speed-per-cost" : "energy";
  }
  double Score(const JobRecord& job, model::DeviceTypeId type, const model::DeviceCatalog& catalog,
               const ScoreContext*) const override {
    double best = 0;
    for (size_t t = 0; t < job.speed.size(); ++t) {
      best = std::max(best, Value(job, static_cast<int32_t>(t), catalog));
    }
    return best > 0 ? Value(job, type.value(), catalog) / best : 0;
  }

 private:
  double Value(const JobRecord& job, int32_t t, const model::DeviceCatalog& catalog) const {
    const model::DeviceType& dt = catalog.Get(model::DeviceTypeId(t));
    const double unit = unit_ == Unit::kPrice ? dt.price_per_hour : dt.peak_watts;
    // A type without the figure cannot be ranked on it and scores 0.
    if (unit <= 0) return 0;
    return job.speed[t] / unit;
  }
  Unit unit_;
};

}  // namespace

void ScorerSet::Add(std::unique_ptr<TypeScorer> scorer, double weight) {
  scorers_.emplace_back(std::move(scorer), weight);
}

double ScorerSet::Score(const JobRecord& job, model::DeviceTypeId type,
                        const model::DeviceCatalog& catalog, const ScoreContext* context) const {
  double total = 0;
  for (const auto& [s, w] : scorers_) total += w * s->Score(job, type, catalog, context);
  return total;
}

bool ScorerSet::reads_state() const {
  for (const auto& [s, w] : scorers_) {
    if (s->reads_state()) return true;
  }
  return false;
}

std::string ScorerNames() { return "speed, speed-per-cost, energy, locality"; }

util::Result<ScorerSet> MakeScorers(std::string_view spec) {
  ScorerSet set;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string_view::npos) comma = spec.size();
    std::string_view item = spec.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    double weight = 1;
    const size_t colon = item.find(':');
    std::string_view name = item.substr(0, colon);
    if (colon != std::string_view::npos) {
      std::string_view w = item.substr(colon + 1);
      auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), weight);
      if (ec != std::errc() || p != w.data() + w.size() || weight < 0) {
        return util::Status::InvalidArgument(
            fmt::format("scorer '{}': bad weight '{}' (expected a number >= 0)", name, w));
      }
    }
    if (name == "speed") {
      set.Add(std::make_unique<SpeedScorer>(), weight);
    } else if (name == "speed-per-cost") {
      set.Add(std::make_unique<PerUnitScorer>(PerUnitScorer::Unit::kPrice), weight);
    } else if (name == "energy") {
      set.Add(std::make_unique<PerUnitScorer>(PerUnitScorer::Unit::kWatts), weight);
    } else if (name == "locality") {
      set.Add(std::make_unique<LocalityScorer>(), weight);
    } else {
      return util::Status::InvalidArgument(
          fmt::format("unknown scorer '{}' (known: {})", name, ScorerNames()));
    }
  }
  if (set.empty()) {
    return util::Status::InvalidArgument("no scorer given (known: " + ScorerNames() + ")");
  }
  return set;
}

}  // namespace hetsched::sched
