#include "sched/size_belief.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>

namespace hetsched::sched {
namespace {

// Points of attained service (or attained / estimate) at which ranks are tabulated: 0, then
// geometric steps from a fraction of the smallest sample to the largest.
constexpr int kGridPoints = 64;

}  // namespace

void SizeBelief::Table::Add(double sample) {
  if (!(sample > 0) || !std::isfinite(sample)) return;
  if (recent.size() < kMaxSamples) {
    recent.push_back(sample);
  } else {
    dropped.push_back(recent[next]);
    recent[next] = sample;
    next = (next + 1) % kMaxSamples;
  }
  ++new_since_build;
  added.push_back(sample);
  // Past a whole ring of changes (no build for that long) the next build sorts them all.
  if (added.size() > kMaxSamples) {
    resort = true;
    added.clear();
    dropped.clear();
  }
}

void SizeBelief::Table::SortSamples() {
  if (resort) {
    sorted = recent;
    std::sort(sorted.begin(), sorted.end());
  } else {
    // The samples are positive and finite, so equal ones are the same bits: merging in the new
    // ones and taking out one copy of each dropped one gives what sorting `recent` gives.
    std::sort(added.begin(), added.end());
    std::sort(dropped.begin(), dropped.end());
    std::vector<double> merged;
    merged.reserve(sorted.size() + added.size());
    std::merge(sorted.begin(), sorted.end(), added.begin(), added.end(),
               std::back_inserter(merged));
    sorted.clear();
    std::set_difference(merged.begin(), merged.end(), dropped.begin(), dropped.end(),
                        std::back_inserter(sorted));
  }
  resort = false;
  added.clear();
  dropped.clear();
}

bool SizeBelief::Table::Rebuild() {
  if (new_since_build == 0 || recent.size() < kMinSamples) return false;
  // Small tables change a lot with each sample; large ones are rebuilt after 5 % new samples.
  if (ready() && new_since_build * 20 < recent.size()) return false;
  new_since_build = 0;
  SortSamples();
  const std::vector<double>& s = sorted;
  max_sample = s.back();
  grid.assign(1, 0.0);
  const double lo = s.front() / 2, hi = max_sample;
  for (int g = 0; g < kGridPoints - 1; ++g) {
    grid.push_back(lo * std::pow(hi / lo, static_cast<double>(g) / (kGridPoints - 2)));
  }
  rank.clear();
  residual.clear();
  return true;
}

void SizeBelief::Table::ComputeRanks() const {
  const std::vector<double>& s = sorted;
  const size_t n = s.size();
  rank.assign(grid.size(), 0);
  residual.assign(grid.size(), 0);
  for (size_t g = 0; g < grid.size(); ++g) {
    const double a = grid[g];
    const size_t j = static_cast<size_t>(std::upper_bound(s.begin(), s.end(), a) - s.begin());
    const size_t m = n - j;
    if (m == 0) {
      rank[g] = residual[g] = a;
      continue;
    }
    // Serving for at most D = s[j+k-1] - a more completes the k shortest survivors: expected
    // service sum_{i<k}(s[j+i] - a) + (m-k)D over k completions (per m survivors).
    double cum = 0, best = std::numeric_limits<double>::infinity();
    for (size_t k = 1; k <= m; ++k) {
      const double d = s[j + k - 1] - a;
      cum += d;
      best = std::min(best, (cum + static_cast<double>(m - k) * d) / static_cast<double>(k));
    }
    rank[g] = best;
    residual[g] = cum / static_cast<double>(m);
  }
}

void SizeBelief::Table::ComputeResiduals() const {
  // The sums of ComputeRanks alone, term by term in the same order (so the same bits), four
  // grid points at a time: each sum is a chain of dependent additions, and four chains
  // interleaved take about the time of one.
  constexpr size_t kChains = 4;
  const std::vector<double>& s = sorted;
  const size_t n = s.size();
  residual.assign(grid.size(), 0);
  for (size_t g0 = 0; g0 < grid.size(); g0 += kChains) {
    const size_t chains = std::min(kChains, grid.size() - g0);
    size_t from[kChains] = {n, n, n, n};
    double sum[kChains] = {0, 0, 0, 0};
    double a[kChains] = {0, 0, 0, 0};
    for (size_t i = 0; i < chains; ++i) {
      a[i] = grid[g0 + i];
      from[i] = static_cast<size_t>(std::upper_bound(s.begin(), s.end(), a[i]) - s.begin());
    }
    // The grid ascends, so the last chain has the fewest terms: all run together that far.
    const size_t common = n - from[chains - 1];
    if (chains == kChains) {
      for (size_t k = 0; k < common; ++k) {
        sum[0] += s[from[0] + k] - a[0];
        sum[1] += s[from[1] + k] - a[1];
        sum[2] += s[from[2] + k] - a[2];
        sum[3] += s[from[3] + k] - a[3];
      }
    }
    for (size_t i = 0; i < chains; ++i) {
      const size_t m = n - from[i];
      for (size_t k = chains == kChains ? common : 0; k < m; ++k) sum[i] += s[from[i] + k] - a[i];
      residual[g0 + i] = m == 0 ? a[i] : sum[i] / static_cast<double>(m);
    }
  }
}

namespace {
// Linear interpolation of `values` tabulated at ascending `grid`, at `a` (grid[0] <= a).
double Interpolate(const std::vector<double>& grid, const std::vector<double>& values, double a) {
  const size_t i =
      static_cast<size_t>(std::upper_bound(grid.begin(), grid.end(), a) - grid.begin());
  if (i == 0) return values.front();
  if (i >= grid.size()) return values.back();
  const double w = (a - grid[i - 1]) / (grid[i] - grid[i - 1]);
  return values[i - 1] + w * (values[i] - values[i - 1]);
}
}  // namespace

double SizeBelief::Table::RankAt(double a) const {
  if (a >= max_sample) return a;
  if (rank.empty()) ComputeRanks();
  return Interpolate(grid, rank, a);
}

double SizeBelief::Table::ResidualAt(double a) const {
  if (a >= max_sample) return a;
  if (residual.empty()) ComputeResiduals();
  return Interpolate(grid, residual, a);
}

void SizeBelief::Observe(const JobRecord& r) {
  if (r.ref_speed <= 0 || r.job == nullptr) return;
  const double size_s = r.done_work / r.ref_speed;
  if (!(size_s > 0)) return;
  if (r.estimate_source == EstimateSource::kNone) {
    sizes_.Add(size_s);
  } else if (r.estimated_work > 0) {
    ratios_[static_cast<int>(r.estimate_source)].Add(r.done_work / r.estimated_work);
  }
  const HistoryView key{r.job->job_type, std::max(1, r.job->gang_size)};
  auto it = history_.find(key);
  if (it == history_.end()) it = history_.try_emplace(HistoryKey(key.first, key.second)).first;
  auto& [sum, count] = it->second;
  sum += size_s;
  ++count;
}

bool SizeBelief::Refresh() {
  bool changed = sizes_.Rebuild();
  for (Table& t : ratios_) changed = t.Rebuild() || changed;
  return changed;
}

const SizeBelief::Table* SizeBelief::RatioTable(EstimateSource source) const {
  const Table& t = ratios_[static_cast<int>(source)];
  return t.ready() ? &t : nullptr;
}

double SizeBelief::RankOf(double done_s, double estimated_work, double ref_speed,
                          EstimateSource source) const {
  if (estimated_work > 0 && ref_speed > 0) {
    const double estimate_s = estimated_work / ref_speed;
    if (const Table* t = RatioTable(source)) {
      return estimate_s * t->RankAt(done_s / estimate_s);
    }
    // Until estimates have a track record they are taken as exact.
    return done_s < estimate_s ? estimate_s - done_s : done_s;
  }
  return RankWithoutEstimate(done_s);
}

double SizeBelief::RankWithoutEstimate(double done_s) const {
  if (sizes_.ready()) return sizes_.RankAt(done_s);
  return done_s;  // nothing known yet: least attained service first
}

double SizeBelief::ExpectedRemaining(const JobRecord& r, double now_s) const {
  const double done_s = r.DoneSecondsAt(now_s);
  if (r.estimated_work > 0 && r.ref_speed > 0) {
    const double estimate_s = r.estimated_work / r.ref_speed;
    return done_s < estimate_s ? estimate_s - done_s : done_s;
  }
  if (sizes_.ready()) return sizes_.ResidualAt(done_s);
  return done_s;
}

std::optional<double> SizeBelief::HistoryMean(const std::string& job_type, int32_t gang) const {
  auto it = history_.find(HistoryView{job_type, std::max(1, gang)});
  if (it == history_.end() || it->second.second == 0) return std::nullopt;
  return it->second.first / static_cast<double>(it->second.second);
}

std::string SizeBelief::Save() const {
  // Samples oldest first, so that Restore refills the ring in the order they came.
  const auto samples = [](const Table& t) {
    std::vector<double> out(t.recent.begin() + static_cast<std::ptrdiff_t>(t.next), t.recent.end());
    out.insert(out.end(), t.recent.begin(), t.recent.begin() + static_cast<std::ptrdiff_t>(t.next));
    return out;
  };
  nlohmann::json j;
  j["version"] = 1;
  j["sizes"] = samples(sizes_);
  j["ratios"] = nlohmann::json::array();
  for (const Table& t : ratios_) j["ratios"].push_back(samples(t));
  j["history"] = nlohmann::json::array();
  for (const auto& [key, value] : history_) {
    j["history"].push_back({key.first, key.second, value.first, value.second});
  }
  return j.dump();
}

util::Status SizeBelief::Restore(std::string_view saved) {
  const auto bad = [](std::string_view why) {
    return util::Status::InvalidArgument(fmt::format("saved size belief: {}", why));
  };
  const nlohmann::json j = nlohmann::json::parse(saved, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("version", 0) != 1) return bad("not version 1 JSON");
  const auto read = [](const nlohmann::json& list, Table& t) {
    if (!list.is_array()) return false;
    t = Table();
    for (const nlohmann::json& x : list) {
      if (!x.is_number()) return false;
      t.Add(x.get<double>());
    }
    return true;
  };
  SizeBelief b;
  if (!j.contains("sizes") || !read(j["sizes"], b.sizes_)) return bad("sizes is not numbers");
  const nlohmann::json& ratios = j.value("ratios", nlohmann::json());
  if (!ratios.is_array() || ratios.size() != kEstimateSources) return bad("ratios");
  for (int i = 0; i < kEstimateSources; ++i) {
    if (!read(ratios[i], b.ratios_[i])) return bad("ratios is not numbers");
  }
  const nlohmann::json& history = j.value("history", nlohmann::json());
  if (!history.is_array()) return bad("history is not a list");
  for (const nlohmann::json& h : history) {
    if (!h.is_array() || h.size() != 4 || !h[0].is_string() || !h[1].is_number_integer() ||
        !h[2].is_number() || !h[3].is_number_integer()) {
      return bad("history entries are [job type, gang, mean, count]");
    }
    b.history_[{h[0].get<std::string>(), h[1].get<int32_t>()}] = {h[2].get<double>(),
                                                                  h[3].get<int64_t>()};
  }
  *this = std::move(b);
  return util::Status::Ok();
}

}  // namespace hetsched::sched
