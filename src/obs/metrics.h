// MetricsRegistry: the daemon's counters, gauges and histograms, rendered for GET /metrics in the
// Prometheus text exposition format 0.0.4.
//
// Families are registered once (name, help, label names, histogram buckets); Get() on a family
// returns a handle to the sample with given label values, and updating a handle is one atomic
// operation (no lock), so a handle can be obtained once and updated on every request.
//
// Errors: every misuse a caller can make (a bad metric or label name, a duplicate family, bad
// histogram bounds, the wrong number of label values, label values that are not UTF-8) is a
// returned kInvalidArgument Status naming the metric; nothing asserts or throws.
//
// Thread-safety: everything here may be called from any thread concurrently. Handles and families
// point into the registry, which must outlive them.
#pragma once

#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace hetsched::svc {

// The Content-Type header value for what Render() returns.
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge, kHistogram };

namespace internal {
struct MetricFamilyData;
struct MetricCell;
}  // namespace internal

// A monotonically increasing value (e.g. requests served). Copyable; cheap to pass by value.
class Counter {
 public:
  // Adds `v`. Negative and NaN values are ignored: Prometheus reads any decrease of a counter as
  // a process restart, so letting one through would corrupt rate().
  void Inc(double v = 1) const;
  double Value() const;

 private:
  template <typename>
  friend class MetricFamily;
  explicit Counter(internal::MetricCell* cell) : cell_(cell) {}
  internal::MetricCell* cell_;
};

// A value that goes up and down (e.g. queued jobs).
class Gauge {
 public:
  void Set(double v) const;
  void Add(double v) const;  // negative to subtract
  double Value() const;

 private:
  template <typename>
  friend class MetricFamily;
  explicit Gauge(internal::MetricCell* cell) : cell_(cell) {}
  internal::MetricCell* cell_;
};

// Counts observations (e.g. request latency in seconds) into the family's fixed buckets.
class Histogram {
 public:
  // Counts `v` in the first bucket whose upper bound is >= v (bounds are inclusive, as `le`
  // says), or in +Inf only. NaN is ignored: it would turn _sum into NaN for good.
  void Observe(double v) const;

 private:
  template <typename>
  friend class MetricFamily;
  Histogram(const std::vector<double>* bounds, internal::MetricCell* cell)
      : bounds_(bounds), cell_(cell) {}
  const std::vector<double>* bounds_;
  internal::MetricCell* cell_;
};

// A registered family; Sample is Counter, Gauge or Histogram. Copyable; cheap to pass by value.
template <typename Sample>
class MetricFamily {
 public:
  // The sample with these label values, one per label name in registration order, created at
  // zero on first use ({} for a family without labels). Takes the family's mutex: obtain handles
  // once where the label values are fixed. Errors: wrong number of values, a value not UTF-8.
  util::Result<Sample> Get(std::initializer_list<std::string_view> label_values) const;

 private:
  friend class MetricsRegistry;
  explicit MetricFamily(internal::MetricFamilyData* data) : data_(data) {}
  internal::MetricFamilyData* data_;
};

using CounterFamily = MetricFamily<Counter>;
using GaugeFamily = MetricFamily<Gauge>;
using HistogramFamily = MetricFamily<Histogram>;

extern template class MetricFamily<Counter>;
extern template class MetricFamily<Gauge>;
extern template class MetricFamily<Histogram>;

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // `name` matches [a-zA-Z_:][a-zA-Z0-9_:]* and is not registered yet; each label name matches
  // [a-zA-Z_][a-zA-Z0-9_]*, does not start with "__" and appears once. A family without labels
  // renders its single sample (0) from registration on.
  util::Result<CounterFamily> AddCounter(std::string name, std::string help,
                                         std::vector<std::string> label_names = {});
  util::Result<GaugeFamily> AddGauge(std::string name, std::string help,
                                     std::vector<std::string> label_names = {});
  // `bounds`: bucket upper bounds, finite and strictly increasing (+Inf is implicit); no label
  // may be named "le".
  util::Result<HistogramFamily> AddHistogram(std::string name, std::string help,
                                             std::vector<double> bounds,
                                             std::vector<std::string> label_names = {});

  // All families in registration order, each with # HELP and # TYPE lines and its samples sorted
  // by label values. Values read while others update them are each current, not one snapshot.
  std::string Render() const;

 private:
  util::Result<internal::MetricFamilyData*> Add(MetricType type, std::string name, std::string help,
                                                std::vector<std::string> label_names,
                                                std::vector<double> bounds);

  mutable std::mutex mu_;  // guards families_ (the list, not the samples)
  std::vector<std::unique_ptr<internal::MetricFamilyData>> families_;
};

}  // namespace hetsched::svc
