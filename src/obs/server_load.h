// What a model server's Prometheus metrics say about its load and latency: the metric names of
// vLLM, Hugging Face TGI and llama.cpp server read into one shape (docs/serving-live.md has the
// table of names and their sources), and quantiles of latency histograms.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "obs/prometheus_text.h"
#include "util/status.h"

namespace hetsched::svc {

// A cumulative histogram: (upper bound, observations at or below it), bounds increasing, the
// last +Inf; every label set of the metric summed.
struct LatencyHistogram {
  std::vector<std::pair<double, double>> buckets;
  double count() const { return buckets.empty() ? 0 : buckets.back().second; }
};

// Counters are totals since the server started; gauges are now. Absent: the server does not
// expose it.
struct ServerLoad {
  std::string server;  // "vllm", "tgi", "llamacpp"
  std::optional<double> running;
  std::optional<double> waiting;
  std::optional<double> requests;  // completed requests
  std::optional<double> prompt_tokens;
  std::optional<double> generation_tokens;
  std::optional<LatencyHistogram> ttft;  // seconds
  std::optional<LatencyHistogram> tpot;  // seconds
};

// Reads the samples of one server. kInvalidArgument when no sample has a known server's prefix
// (vllm:, tgi_, llamacpp:), when a counter or gauge read is negative or not finite, or when a
// histogram's bounds are not numbers or its counts decrease with the bound, naming the metric.
util::Result<ServerLoad> ReadServerLoad(const std::vector<PromSample>& samples);

// `now` less `before`, bucket by bucket (a server that restarted, its counts lower than
// before, gives `now` whole). The bounds must be the same; when they are not, `now`.
LatencyHistogram HistogramSince(const LatencyHistogram& now, const LatencyHistogram& before);

// The q-quantile (0 < q < 1) of `h`, interpolated linearly within its bucket as Prometheus's
// histogram_quantile does (the highest finite bound when it falls in the +Inf bucket).
// nullopt when the histogram holds no observation.
std::optional<double> HistogramQuantile(const LatencyHistogram& h, double q);

}  // namespace hetsched::svc
