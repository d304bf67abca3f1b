// EventQueue: the simulator's future events in integer-microsecond virtual time. Ties break by
// insertion order, so a run is deterministic for a given input and seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

namespace hetsched::sim {

using Micros = int64_t;

// Seconds to microseconds, rounding up so that an event never fires before its real time.
inline Micros ToMicros(double seconds) { return static_cast<Micros>(std::ceil(seconds * 1e6)); }
inline double ToSeconds(Micros us) { return static_cast<double>(us) * 1e-6; }

enum class EventKind : uint8_t {
  // The engine's own: faults, rounds and the power controller's timers.
  kDeviceDown,     // device (`target`) or node (`target` < 0: node -target-1) fails
  kDeviceUp,       // and comes back
  kRound,          // a scheduling round boundary
  kPowerCheck,     // the power manager asked to decide again (an idle timeout, a rate window)
  kResumeTimeout,  // node `target` still not up: marked down (if `generation` = its boot attempt)
  kFlowDone,       // a data transfer may have finished (sim/network.h; stale unless `generation`
                   // is the network's current epoch)
  kTimeLimit,      // a running job may have reached its time limit (drive/attempts.h)
  kCancel,         // job `target` is cancelled (SimOptions::cancels)
  kDecisionDue,    // a decision that may move running jobs falls due (Scheduler::NextDecisionDue)
  // The machines' (sim/sim_backend.h), handed to SimBackend::Fire; `generation` is stale when
  // the attempt or the node was told something since.
  kAttemptEnd,           // job `target`'s attempt exits: its work is done, or its stop is
  kAttemptStartFailure,  // job `target`'s attempt fails at start-up (no stack for it there)
  kNodeOff,              // node `target` finished shutting down
  kNodeOn,               // node `target` finished booting
};

struct Event {
  Micros time = 0;
  uint64_t seq = 0;
  EventKind kind = EventKind::kRound;
  int32_t target = -1;      // job id, or device / node per kind
  uint32_t generation = 0;  // stale-event check, per kind
};

class EventQueue {
 public:
  void Push(Micros time, EventKind kind, int32_t target = -1, uint32_t generation = 0) {
    heap_.push(Event{time, next_seq_++, kind, target, generation});
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& Top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace hetsched::sim
