// Clock: where the scheduling core gets "now" from. The simulator drives it with virtual time,
// the daemon (later) with real time; the core itself never reads a wall clock.
#pragma once

namespace hetsched::sched {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the driver's epoch (simulation start, or daemon start).
  virtual double Now() const = 0;
};

// A clock that only moves when told to: the simulator's virtual time, and tests.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(double start_s = 0) : now_s_(start_s) {}
  double Now() const override { return now_s_; }
  void Set(double now_s) { now_s_ = now_s; }
  void Advance(double seconds) { now_s_ += seconds; }

 private:
  double now_s_;
};

}  // namespace hetsched::sched
