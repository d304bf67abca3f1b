#include "power/power_manager.h"

#include <algorithm>

namespace hetsched::power {
namespace {

constexpr double kRateWindowS = 60;

int32_t CountOf(const NodeView& n, int32_t type) {
  for (const auto& [t, c] : n.devices) {
    if (t == type) return c;
  }
  return 0;
}

}  // namespace

PowerManager::PowerManager(PolicyParts parts, const PowerOptions& options)
    : parts_(parts), options_(options) {}

size_t PowerManager::Allowed(std::deque<double>& window, int32_t rate, double now_s) {
  while (!window.empty() && window.front() <= now_s - kRateWindowS) window.pop_front();
  if (rate <= 0) return std::numeric_limits<size_t>::max();
  return window.size() >= static_cast<size_t>(rate) ? 0 : rate - window.size();
}

PowerActions PowerManager::Decide(const PowerView& view) {
  PowerActions out;
  if (!parts_.suspends) return out;
  const double now = view.now_s;
  const size_t types = view.warm_free.size();
  const auto later = [&](double t) {
    if (t > now) out.next_check_s = std::min(out.next_check_s, t);
  };

  // Devices that are or will soon be free on powered-on nodes, and the nodes that could be
  // woken now (off, past their SuspendTimeout) with their devices by type.
  std::vector<int64_t> avail(view.warm_free.begin(), view.warm_free.end());
  std::vector<int64_t> wakeable(types, 0), total(types, 0);
  std::vector<char> chosen(view.nodes.size(), 0);
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    const NodeView& n = view.nodes[i];
    for (const auto& [t, c] : n.devices) {
      if (n.state != NodeState::kDown) total[t] += c;
      if (n.state == NodeState::kBooting) avail[t] += c;
      if (n.state == NodeState::kOff && n.resumable_at_s <= now) wakeable[t] += c;
    }
  }
  std::vector<int32_t> wake;  // in the order the queue needs them
  const auto take = [&](size_t i) {
    chosen[i] = 1;
    wake.push_back(static_cast<int32_t>(i));
    for (const auto& [t, c] : view.nodes[i].devices) {
      avail[t] += c;
      wakeable[t] -= c;
    }
  };
  // Waits for a node that cannot be resumed yet: ask again when it can.
  const auto blocked_on = [&](const NodeView& n) {
    out.wake_blocked = true;
    later(n.resumable_at_s);
  };
  // Wakes off nodes holding `type`, most devices of it first, until `need` are available.
  const auto wake_for = [&](int32_t type, int64_t need) {
    std::vector<std::pair<int32_t, size_t>> cands;
    for (size_t i = 0; i < view.nodes.size(); ++i) {
      const NodeView& n = view.nodes[i];
      if (chosen[i] || n.state != NodeState::kOff || n.resumable_at_s > now) continue;
      if (const int32_t c = CountOf(n, type); c > 0) cands.push_back({-c, i});
    }
    std::sort(cands.begin(), cands.end());
    for (const auto& [neg, i] : cands) {
      if (avail[type] >= need) break;
      take(i);
    }
  };

  for (const Demand& d : view.demands) {
    if (!d.pinned_nodes.empty()) {
      for (int32_t node : d.pinned_nodes) {
        const NodeView& n = view.nodes[node];
        if (chosen[node]) continue;
        if (n.state == NodeState::kOff && n.resumable_at_s <= now) {
          take(node);
        } else if (n.state == NodeState::kOff || n.state == NodeState::kSuspending) {
          blocked_on(n);
        }
      }
      continue;
    }
    bool served = false;
    for (int32_t t : d.types) {
      if (avail[t] >= d.gang) {
        avail[t] -= d.gang;
        served = true;
        break;
      }
    }
    if (served) continue;
    for (int32_t t : d.types) {
      if (avail[t] + wakeable[t] >= d.gang) {
        wake_for(t, d.gang);
        avail[t] -= d.gang;
        served = true;
        break;
      }
    }
    if (served) continue;
    // Not enough now: if nodes that cannot be woken yet would help, come back for them.
    for (size_t i = 0; i < view.nodes.size(); ++i) {
      const NodeView& n = view.nodes[i];
      if (chosen[i] || (n.state != NodeState::kOff && n.state != NodeState::kSuspending)) continue;
      const bool helps =
          std::any_of(d.types.begin(), d.types.end(), [&](int32_t t) { return CountOf(n, t) > 0; });
      if (helps && n.resumable_at_s > now) blocked_on(n);
    }
  }
  const int64_t keep = parts_.consolidate ? options_.headroom : 0;
  if (keep > 0) {
    for (size_t t = 0; t < types; ++t) {
      const int64_t target = std::min<int64_t>(keep, total[t]);
      if (avail[t] < target) wake_for(static_cast<int32_t>(t), target);
    }
  }
  const size_t resumes = std::min(wake.size(), Allowed(resumes_, options_.resume_rate, now));
  for (size_t k = 0; k < resumes; ++k) {
    out.resume.push_back(wake[k]);
    resumes_.push_back(now);
  }
  if (resumes < wake.size()) {
    // The rate limit holds the rest back until the oldest resume leaves the window.
    for (size_t k = resumes; k < wake.size(); ++k) {
      for (const auto& [t, c] : view.nodes[wake[k]].devices) avail[t] -= c;
    }
    out.wake_blocked = true;
    later(resumes_.front() + kRateWindowS);
  }

  // Suspend idle nodes past suspend_time_s whose devices nobody queued needs (and, under
  // consolidate, that leave the headroom powered on); the longest idle first.
  std::vector<std::pair<double, size_t>> idle;
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    const NodeView& n = view.nodes[i];
    if (n.state != NodeState::kOnIdle || n.excluded) continue;
    const double due = n.idle_since_s + options_.suspend_time_s;
    if (due <= now) {
      idle.push_back({n.idle_since_s, i});
    } else {
      later(due);
    }
  }
  std::sort(idle.begin(), idle.end());
  size_t allowed = Allowed(suspends_, options_.suspend_rate, now);
  for (const auto& [since, i] : idle) {
    const NodeView& n = view.nodes[i];
    const bool spare = std::all_of(n.devices.begin(), n.devices.end(), [&](const auto& tc) {
      return avail[tc.first] - tc.second >= std::min<int64_t>(keep, total[tc.first]);
    });
    if (!spare) continue;
    if (allowed == 0) {
      later(suspends_.front() + kRateWindowS);
      break;
    }
    --allowed;
    for (const auto& [t, c] : n.devices) avail[t] -= c;
    out.suspend.push_back(static_cast<int32_t>(i));
    suspends_.push_back(now);
  }
  return out;
}

CapPoint ChooseCap(const CapCurve& curve, std::optional<double> deadline_s, double now_s,
                   double seconds_at_full, double max_slowdown) {
  if (curve.points.empty()) return {};
  if (deadline_s) {
    const double left = *deadline_s - now_s;
    if (!(left > 0) || seconds_at_full > left) return {};  // late already: full speed
    return curve.MostEfficient(seconds_at_full / left);
  }
  return curve.MostEfficient(1 - max_slowdown);
}

}  // namespace hetsched::power
