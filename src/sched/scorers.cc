#include "sched/scorers.h"

#include <fmt/format.h>

#include <charconv>

namespace hetsched::sched {
namespace {

// Normalized speed: this type's gang speed over the job's best.
class SpeedScorer final : public TypeScorer {
 public:
  std::string_view name() const override { return "speed"; }
  double Score(const JobRecord& job, model::DeviceTypeId type,
               const model::DeviceCatalog&) const override {
    return job.best_speed > 0 ? job.speed[type.value()] / job.best_speed : 0;
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
  double Score(const JobRecord& job, model::DeviceTypeId type,
               const model::DeviceCatalog& catalog) const override {
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
                        const model::DeviceCatalog& catalog) const {
  double total = 0;
  for (const auto& [s, w] : scorers_) total += w * s->Score(job, type, catalog);
  return total;
}

std::string ScorerNames() { return "speed, speed-per-cost, energy"; }

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
