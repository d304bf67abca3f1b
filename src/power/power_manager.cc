#include "power/power_manager.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace hetsched::power {
namespace {

constexpr double kRateWindowS = 60;

int32_t CountOf(const NodeView& n, int32_t type) {
  for (const auto& [t, c] : n.devices) {
    if (t == type) return c;
  }
  return 0;
}

// Asks to be called again at `t` when that is later than `now` and sooner than asked so far.
void AskAgainAt(PowerActions& out, double now, double t) {
  if (t > now) out.next_check_s = std::min(out.next_check_s, t);
}

// Which off nodes the queue needs woken, demand by demand: tracks the devices that are or will
// soon be free on powered-on nodes (`avail`), those off nodes that could be woken now hold
// (`wakeable`), and the nodes chosen so far, in the order the queue needs them (`wake`).
class WakePlan {
 public:
  WakePlan(const PowerView& view, PowerActions& out)
      : avail(view.warm_free.begin(), view.warm_free.end()),
        wakeable(view.warm_free.size(), 0),
        total(view.warm_free.size(), 0),
        view_(view),
        out_(out),
        now_(view.now_s),
        chosen_(view.nodes.size(), 0) {
    for (const NodeView& n : view.nodes) {
      for (const auto& [t, c] : n.devices) {
        if (n.state != NodeState::kDown) total[t] += c;
        if (n.state == NodeState::kBooting) avail[t] += c;
        if (n.state == NodeState::kOff && n.resumable_at_s <= now_) wakeable[t] += c;
      }
    }
  }

  // Books `d` on available devices, waking nodes for it where that suffices, or notes the
  // nodes it waits for that cannot be resumed yet.
  void Serve(const Demand& d) {
    if (!d.pinned_nodes.empty()) {
      ServePinned(d);
      return;
    }
    for (int32_t t : d.types) {
      if (avail[t] >= d.gang) {
        avail[t] -= d.gang;
        return;
      }
    }
    for (int32_t t : d.types) {
      if (avail[t] + wakeable[t] >= d.gang) {
        WakeFor(t, d.gang);
        avail[t] -= d.gang;
        return;
      }
    }
    // Not enough now: if nodes that cannot be woken yet would help, come back for them.
    for (size_t i = 0; i < view_.nodes.size(); ++i) {
      const NodeView& n = view_.nodes[i];
      if (chosen_[i] || (n.state != NodeState::kOff && n.state != NodeState::kSuspending)) continue;
      const bool helps =
          std::any_of(d.types.begin(), d.types.end(), [&](int32_t t) { return CountOf(n, t) > 0; });
      if (helps && n.resumable_at_s > now_) BlockedOn(n);
    }
  }

  // Wakes nodes until `keep` devices of each type (at most all of them) are available.
  void KeepHeadroom(int64_t keep) {
    for (size_t t = 0; t < total.size(); ++t) {
      const int64_t target = std::min<int64_t>(keep, total[t]);
      if (avail[t] < target) WakeFor(static_cast<int32_t>(t), target);
    }
  }

  std::vector<int64_t> avail, wakeable, total;  // by type
  std::vector<int32_t> wake;                    // node ids, in the order the queue needs them

 private:
  void ServePinned(const Demand& d) {
    for (int32_t node : d.pinned_nodes) {
      const NodeView& n = view_.nodes[node];
      if (chosen_[node]) continue;
      if (n.state == NodeState::kOff && n.resumable_at_s <= now_) {
        Take(node);
      } else if (n.state == NodeState::kOff || n.state == NodeState::kSuspending) {
        BlockedOn(n);
      }
    }
  }

  void Take(size_t i) {
    chosen_[i] = 1;
    wake.push_back(static_cast<int32_t>(i));
    for (const auto& [t, c] : view_.nodes[i].devices) {
      avail[t] += c;
      wakeable[t] -= c;
    }
  }

  // Waits for a node that cannot be resumed yet: ask again when it can.
  void BlockedOn(const NodeView& n) {
    out_.wake_blocked = true;
    AskAgainAt(out_, now_, n.resumable_at_s);
  }

  // Wakes off nodes holding `type`, most devices of it first, until `need` are available.
  void WakeFor(int32_t type, int64_t need) {
    std::vector<std::pair<int32_t, size_t>> cands;
    for (size_t i = 0; i < view_.nodes.size(); ++i) {
      const NodeView& n = view_.nodes[i];
      if (chosen_[i] || n.state != NodeState::kOff || n.resumable_at_s > now_) continue;
      if (const int32_t c = CountOf(n, type); c > 0) cands.push_back({-c, i});
    }
    std::sort(cands.begin(), cands.end());
    for (const auto& [neg, i] : cands) {
      if (avail[type] >= need) break;
      Take(i);
    }
  }

  const PowerView& view_;
  PowerActions& out_;
  double now_;
  std::vector<char> chosen_;  // by node
};

// Idle nodes past suspend_time_s as (idle since, node), the longest idle first; asks again when
// the next one gets there.
std::vector<std::pair<double, size_t>> IdleNodesDue(const PowerView& view, double suspend_time_s,
                                                    PowerActions& out) {
  std::vector<std::pair<double, size_t>> idle;
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    const NodeView& n = view.nodes[i];
    if (n.state != NodeState::kOnIdle || n.excluded) continue;
    const double due = n.idle_since_s + suspend_time_s;
    if (due <= view.now_s) {
      idle.push_back({n.idle_since_s, i});
    } else {
      AskAgainAt(out, view.now_s, due);
    }
  }
  std::sort(idle.begin(), idle.end());
  return idle;
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
  WakePlan plan(view, out);
  for (const Demand& d : view.demands) plan.Serve(d);
  const int64_t keep = parts_.consolidate ? options_.headroom : 0;
  if (keep > 0) plan.KeepHeadroom(keep);
  std::vector<int64_t>& avail = plan.avail;
  const std::vector<int32_t>& wake = plan.wake;
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
    AskAgainAt(out, now, resumes_.front() + kRateWindowS);
  }

  // Suspend idle nodes past suspend_time_s whose devices nobody queued needs (and, under
  // consolidate, that leave the headroom powered on); the longest idle first.
  size_t allowed = Allowed(suspends_, options_.suspend_rate, now);
  for (const auto& [since, i] : IdleNodesDue(view, options_.suspend_time_s, out)) {
    const NodeView& n = view.nodes[i];
    const bool spare = std::all_of(n.devices.begin(), n.devices.end(), [&](const auto& tc) {
      return avail[tc.first] - tc.second >= std::min<int64_t>(keep, plan.total[tc.first]);
    });
    if (!spare) continue;
    if (allowed == 0) {
      AskAgainAt(out, now, suspends_.front() + kRateWindowS);
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
