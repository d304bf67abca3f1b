#include "obs/server_load.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

namespace hetsched::svc {

namespace {

// The metric names one server family exposes for each figure ("" where it has none).
struct ServerNames {
  std::string_view server, prefix;
  std::string_view running, waiting, requests, prompt_tokens, generation_tokens, ttft, tpot;
};

// Sources: docs/serving-live.md (vLLM's vllm/v1/metrics/loggers.py, TGI's metrics reference,
// llama.cpp's tools/server/README.md).
constexpr ServerNames kServers[] = {
    {"vllm", "vllm:", "vllm:num_requests_running", "vllm:num_requests_waiting",
     "vllm:request_success_total", "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
     "vllm:time_to_first_token_seconds", "vllm:time_per_output_token_seconds"},
    {"tgi", "tgi_", "tgi_batch_current_size", "tgi_queue_size", "tgi_request_success",
     "tgi_request_input_length_sum", "tgi_request_generated_tokens_sum", "",
     "tgi_request_mean_time_per_token_duration"},
    {"llamacpp", "llamacpp:", "llamacpp:requests_processing", "llamacpp:requests_deferred", "",
     "llamacpp:prompt_tokens_total", "llamacpp:tokens_predicted_total", "", ""},
};

// Each metric's value summed over its label sets.
util::Result<std::optional<double>> Sum(const std::vector<PromSample>& samples,
                                        std::string_view name) {
  if (name.empty()) return std::optional<double>();
  std::optional<double> total;
  for (const PromSample& s : samples) {
    if (s.name != name) continue;
    if (!std::isfinite(s.value) || s.value < 0) {
      return util::Status::InvalidArgument(
          fmt::format("{}: {} (expected a finite value >= 0)", name, s.value));
    }
    total = total.value_or(0) + s.value;
  }
  return total;
}

util::Result<double> Bound(std::string_view metric, std::string_view le) {
  if (le == "+Inf") return INFINITY;
  const std::string text(le);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
    return util::Status::InvalidArgument(
        fmt::format("{}_bucket: le=\"{}\" (expected a number or +Inf)", metric, le));
  }
  return v;
}

util::Result<std::optional<LatencyHistogram>> Histogram(const std::vector<PromSample>& samples,
                                                        std::string_view name) {
  if (name.empty()) return std::optional<LatencyHistogram>();
  const std::string bucket = std::string(name) + "_bucket";
  std::map<double, double> counts;
  for (const PromSample& s : samples) {
    if (s.name != bucket) continue;
    ASSIGN_OR_RETURN(double le, Bound(name, s.Label("le")));
    if (!std::isfinite(s.value) || s.value < 0) {
      return util::Status::InvalidArgument(
          fmt::format("{}: {} (expected a finite count >= 0)", bucket, s.value));
    }
    counts[le] += s.value;
  }
  if (counts.empty()) return std::optional<LatencyHistogram>();
  if (!std::isinf(counts.rbegin()->first)) {
    return util::Status::InvalidArgument(
        fmt::format("{}: no le=\"+Inf\" bucket (expected one)", bucket));
  }
  LatencyHistogram h;
  for (const auto& [le, n] : counts) {
    if (!h.buckets.empty() && n < h.buckets.back().second) {
      return util::Status::InvalidArgument(fmt::format(
          "{}: le=\"{}\" counts {}, fewer than the bucket below (expected cumulative counts)",
          bucket, le, n));
    }
    h.buckets.emplace_back(le, n);
  }
  return std::optional<LatencyHistogram>(std::move(h));
}

}  // namespace

util::Result<ServerLoad> ReadServerLoad(const std::vector<PromSample>& samples) {
  for (const ServerNames& names : kServers) {
    bool found = false;
    for (const PromSample& s : samples) found = found || s.name.starts_with(names.prefix);
    if (!found) continue;
    ServerLoad load;
    load.server = names.server;
    ASSIGN_OR_RETURN(load.running, Sum(samples, names.running));
    ASSIGN_OR_RETURN(load.waiting, Sum(samples, names.waiting));
    ASSIGN_OR_RETURN(load.requests, Sum(samples, names.requests));
    ASSIGN_OR_RETURN(load.prompt_tokens, Sum(samples, names.prompt_tokens));
    ASSIGN_OR_RETURN(load.generation_tokens, Sum(samples, names.generation_tokens));
    ASSIGN_OR_RETURN(load.ttft, Histogram(samples, names.ttft));
    ASSIGN_OR_RETURN(load.tpot, Histogram(samples, names.tpot));
    return load;
  }
  return util::Status::InvalidArgument(
      "no metric of vLLM, TGI or llama.cpp server (expected names starting vllm:, tgi_ or "
      "llamacpp:, e.g. vllm:num_requests_running)");
}

LatencyHistogram HistogramSince(const LatencyHistogram& now, const LatencyHistogram& before) {
  if (before.buckets.size() != now.buckets.size()) return now;
  LatencyHistogram out;
  for (size_t i = 0; i < now.buckets.size(); ++i) {
    if (now.buckets[i].first != before.buckets[i].first) return now;
    const double delta = now.buckets[i].second - before.buckets[i].second;
    if (delta < 0) return now;  // restarted
    out.buckets.emplace_back(now.buckets[i].first, delta);
  }
  return out;
}

std::optional<double> HistogramQuantile(const LatencyHistogram& h, double q) {
  const double total = h.count();
  if (total <= 0) return std::nullopt;
  const double rank = q * total;
  double lower = 0, below = 0;
  for (const auto& [le, n] : h.buckets) {
    if (n >= rank) {
      if (std::isinf(le)) return lower;  // the highest finite bound
      if (n == below) return le;
      return lower + (le - lower) * (rank - below) / (n - below);
    }
    lower = le;
    below = n;
  }
  return lower;
}

}  // namespace hetsched::svc
