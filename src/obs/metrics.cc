#include "obs/metrics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <type_traits>

#include "util/utf8.h"

namespace hetsched::svc {
namespace internal {

// One sample's storage. Updates are relaxed atomics: each value is exact, and Render() needs no
// ordering between them.
struct MetricCell {
  explicit MetricCell(size_t bucket_count)
      : buckets(bucket_count > 0 ? std::make_unique<std::atomic<uint64_t>[]>(bucket_count)
                                 : nullptr) {}

  std::atomic<double> value{0};  // counter or gauge value; histogram: _sum
  // Histogram only: per-bucket (not cumulative) counts, bounds.size() + 1 of them, the last one
  // for +Inf. _count is their total, so it always equals the +Inf bucket as Prometheus expects.
  std::unique_ptr<std::atomic<uint64_t>[]> buckets;
};

// Orders samples by label values, and lets Get() look them up by string_view without copying.
struct LabelValuesLess {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
};

struct MetricFamilyData {
  MetricType type;
  std::string name;
  std::string help;
  std::vector<std::string> label_names;
  std::vector<double> bounds;  // histogram bucket upper bounds, without +Inf

  std::mutex mu;  // guards `samples` (the map; the cells are atomic)
  // Map nodes never move, so handles may keep pointers to the cells.
  std::map<std::vector<std::string>, MetricCell, LabelValuesLess> samples;

  util::Result<MetricCell*> Find(std::initializer_list<std::string_view> values);
};

}  // namespace internal

namespace {

using internal::MetricCell;
using internal::MetricFamilyData;

bool IsValidMetricName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view s) {
  return IsValidMetricName(s) && s.find(':') == std::string_view::npos && !s.starts_with("__");
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Go's strconv.ParseFloat (what Prometheus uses) reads fmt's shortest round-trip form; only the
// special values need the spellings the format defines.
std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// `quote`: label values escape '"' too; HELP text escapes only backslash and newline.
void AppendEscaped(std::string& out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `{a="x",b="y",le="0.5"}`, or nothing when there are no labels and no `le`.
void AppendLabels(std::string& out, const std::vector<std::string>& names,
                  const std::vector<std::string>& values, std::string_view le) {
  if (names.empty() && le.empty()) return;
  out += '{';
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    AppendEscaped(out, values[i], /*quote=*/true);
    out += '"';
  }
  if (!le.empty()) {
    if (!names.empty()) out += ',';
    out += "le=\"";
    out += le;
    out += '"';
  }
  out += '}';
}

void AppendFamily(std::string& out, MetricFamilyData& f) {
  out += fmt::format("# HELP {} ", f.name);
  AppendEscaped(out, f.help, /*quote=*/false);
  out += fmt::format("\n# TYPE {} {}\n", f.name, TypeName(f.type));
  std::lock_guard lock(f.mu);
  for (const auto& [values, cell] : f.samples) {
    if (f.type != MetricType::kHistogram) {
      out += f.name;
      AppendLabels(out, f.label_names, values, "");
      out += fmt::format(" {}\n", FormatValue(cell.value.load(std::memory_order_relaxed)));
      continue;
    }
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= f.bounds.size(); ++i) {
      cumulative += cell.buckets[i].load(std::memory_order_relaxed);
      out += f.name;
      out += "_bucket";
      AppendLabels(out, f.label_names, values,
                   i < f.bounds.size() ? FormatValue(f.bounds[i]) : "+Inf");
      out += fmt::format(" {}\n", cumulative);
    }
    out += f.name;
    out += "_sum";
    AppendLabels(out, f.label_names, values, "");
    out += fmt::format(" {}\n", FormatValue(cell.value.load(std::memory_order_relaxed)));
    out += f.name;
    out += "_count";
    AppendLabels(out, f.label_names, values, "");
    out += fmt::format(" {}\n", cumulative);
  }
}

}  // namespace

util::Result<MetricCell*> MetricFamilyData::Find(std::initializer_list<std::string_view> values) {
  if (values.size() != label_names.size()) {
    return util::Status::InvalidArgument(
        fmt::format("metric {}: {} label values given for labels ({})", name, values.size(),
                    fmt::join(label_names, ", ")));
  }
  std::lock_guard lock(mu);
  auto it = samples.find(values);
  if (it != samples.end()) return &it->second;
  for (std::string_view v : values) {
    // Prometheus rejects the whole scrape if one label value is not UTF-8.
    if (!util::IsValidUtf8(v)) {
      return util::Status::InvalidArgument(
          fmt::format("metric {}: a label value is not valid UTF-8", name));
    }
  }
  const size_t buckets = type == MetricType::kHistogram ? bounds.size() + 1 : 0;
  it = samples.try_emplace(std::vector<std::string>(values.begin(), values.end()), buckets).first;
  return &it->second;
}

void Counter::Inc(double v) const {
  if (!(v >= 0)) return;  // also false for NaN
  cell_->value.fetch_add(v, std::memory_order_relaxed);
}

double Counter::Value() const { return cell_->value.load(std::memory_order_relaxed); }

void Gauge::Set(double v) const { cell_->value.store(v, std::memory_order_relaxed); }

void Gauge::Add(double v) const { cell_->value.fetch_add(v, std::memory_order_relaxed); }

double Gauge::Value() const { return cell_->value.load(std::memory_order_relaxed); }

void Histogram::Observe(double v) const {
  if (std::isnan(v)) return;
  const size_t bucket = std::lower_bound(bounds_->begin(), bounds_->end(), v) - bounds_->begin();
  cell_->buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  cell_->value.fetch_add(v, std::memory_order_relaxed);
}

template <typename Sample>
util::Result<Sample> MetricFamily<Sample>::Get(
    std::initializer_list<std::string_view> label_values) const {
  ASSIGN_OR_RETURN(MetricCell * cell, data_->Find(label_values));
  if constexpr (std::is_same_v<Sample, Histogram>) {
    return Histogram(&data_->bounds, cell);
  } else {
    return Sample(cell);
  }
}

template class MetricFamily<Counter>;
template class MetricFamily<Gauge>;
template class MetricFamily<Histogram>;

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

util::Result<CounterFamily> MetricsRegistry::AddCounter(std::string name, std::string help,
                                                        std::vector<std::string> label_names) {
  ASSIGN_OR_RETURN(MetricFamilyData * data, Add(MetricType::kCounter, std::move(name),
                                                std::move(help), std::move(label_names), {}));
  return CounterFamily(data);
}

util::Result<GaugeFamily> MetricsRegistry::AddGauge(std::string name, std::string help,
                                                    std::vector<std::string> label_names) {
  ASSIGN_OR_RETURN(MetricFamilyData * data, Add(MetricType::kGauge, std::move(name),
                                                std::move(help), std::move(label_names), {}));
  return GaugeFamily(data);
}

util::Result<HistogramFamily> MetricsRegistry::AddHistogram(std::string name, std::string help,
                                                            std::vector<double> bounds,
                                                            std::vector<std::string> label_names) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1]))) {
      return util::Status::InvalidArgument(fmt::format(
          "histogram {}: bucket bounds must be finite and strictly increasing, got [{}]", name,
          fmt::join(bounds, ", ")));
    }
  }
  for (const std::string& label : label_names) {
    if (label == "le") {
      return util::Status::InvalidArgument(
          fmt::format("histogram {}: label name \"le\" is reserved for buckets", name));
    }
  }
  ASSIGN_OR_RETURN(MetricFamilyData * data,
                   Add(MetricType::kHistogram, std::move(name), std::move(help),
                       std::move(label_names), std::move(bounds)));
  return HistogramFamily(data);
}

util::Result<MetricFamilyData*> MetricsRegistry::Add(MetricType type, std::string name,
                                                     std::string help,
                                                     std::vector<std::string> label_names,
                                                     std::vector<double> bounds) {
  if (!IsValidMetricName(name)) {
    return util::Status::InvalidArgument(
        fmt::format("metric name \"{}\": expected [a-zA-Z_:][a-zA-Z0-9_:]*", name));
  }
  if (!util::IsValidUtf8(help)) {
    return util::Status::InvalidArgument(fmt::format("metric {}: help is not valid UTF-8", name));
  }
  for (size_t i = 0; i < label_names.size(); ++i) {
    if (!IsValidLabelName(label_names[i])) {
      return util::Status::InvalidArgument(fmt::format(
          "metric {}: label name \"{}\": expected [a-zA-Z_][a-zA-Z0-9_]* not starting with __",
          name, label_names[i]));
    }
    if (std::find(label_names.begin(), label_names.begin() + i, label_names[i]) !=
        label_names.begin() + i) {
      return util::Status::InvalidArgument(
          fmt::format("metric {}: label name \"{}\" given twice", name, label_names[i]));
    }
  }
  auto data = std::make_unique<MetricFamilyData>();
  data->type = type;
  data->name = std::move(name);
  data->help = std::move(help);
  data->label_names = std::move(label_names);
  data->bounds = std::move(bounds);
  if (data->label_names.empty()) {
    // Render the single sample from the start, so a scrape sees 0 rather than nothing.
    const size_t buckets = type == MetricType::kHistogram ? data->bounds.size() + 1 : 0;
    data->samples.try_emplace({}, buckets);
  }

  std::lock_guard lock(mu_);
  for (const auto& f : families_) {
    if (f->name == data->name) {
      return util::Status::InvalidArgument(
          fmt::format("metric {} is already registered", data->name));
    }
  }
  families_.push_back(std::move(data));
  return families_.back().get();
}

std::string MetricsRegistry::Render() const {
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& f : families_) AppendFamily(out, *f);
  return out;
}

}  // namespace hetsched::svc
