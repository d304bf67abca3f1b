#include "cost/serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "cost/roofline.h"
#include "util/file.h"
#include "util/line_reader.h"

namespace hetsched::cost {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Latency-bound steps of the tensor-parallel all-reduces in one forward pass: two per layer
// (after attention and after the MLP, as Megatron splits them), tp - 1 steps each.
double Hops(const ServedModel& model, int32_t tp) {
  return 2.0 * model.layers * std::max(0, tp - 1);
}

// Seconds a ring all-reduce of `bytes` moves over links of `bandwidth`: 2 (tp-1)/tp x bytes.
double RingSeconds(double bytes, int32_t tp, double bandwidth) {
  if (tp <= 1 || bytes <= 0) return 0;
  if (bandwidth <= 0) return kInf;
  return 2.0 * (tp - 1) / tp * bytes / bandwidth;
}

// Prefill FLOPs of `n` prompts of `len` tokens: the weights' (one multiply-add each per token),
// and causal attention's (token i attends to i earlier tokens and itself).
double DenseFlops(const ServedModel& m, double n, double len) {
  return n * len * m.flops_per_token;
}
double AttentionFlops(const ServedModel& m, double n, double len) {
  return n * len * (len + 1) / 2 * m.attention_flops_per_pair;
}
// The tensor-parallel all-reduces of a prefill: two per layer of the activations (hidden x 2
// bytes per token).
double PrefillCommSeconds(const ServedModel& m, double n, double len, int32_t tp, double link) {
  return RingSeconds(2.0 * m.layers * n * len * m.hidden * 2.0, tp, link);
}

// The largest rate of prompts queueing for a chunk stream that serves `mu` prompts/s at which
// their wait plus their own prefill (`own_s`) stays within the TTFT target at the SLO's
// percentile, at most kTargetUtilisation of mu. The wait's tail is taken as M/M/1's
// (P(wait > t) = rho e^-(mu - lambda) t: conservative for a steady stream).
// The TTFT at the SLO's percentile of prompts arriving at `lambda`/s to a chunk stream serving
// `mu`/s, waiting `own_s` for their own prefill: M/M/1's waiting-time tail,
// P(wait > t) = rho e^-(mu - lambda) t.
double QueuedTtft(double lambda, double mu, double own_s, const ServingSlo& slo) {
  const double tail = std::max(1e-9, 1 - slo.percentile / 100);
  const double rho = lambda / mu;
  return rho <= tail ? own_s : own_s + std::log(rho / tail) / (mu - lambda);
}

double QueueLimitedRate(double mu, double own_s, const ServingSlo& slo) {
  auto ttft_at = [&](double lambda) { return QueuedTtft(lambda, mu, own_s, slo); };
  double ok = 0, too_much = mu * ServingModel::kTargetUtilisation;
  if (ttft_at(too_much) <= slo.ttft_s) return too_much;
  for (int i = 0; i < 50; ++i) {
    const double mid = (ok + too_much) / 2;
    (ttft_at(mid) <= slo.ttft_s ? ok : too_much) = mid;
  }
  return ok;
}

// How close the batch sizes CapacityAt tried came to the targets, to say why none works.
struct NearestMiss {
  double fastest_step = kInf;          // an iteration of a one-token chunk
  double fastest_prefill = kInf;       // a mean prompt, in chunks
  double fastest_long_prefill = kInf;  // a prompt of the SLO percentile's length, in chunks

  std::string Why(const ServingSlo& slo, double long_prompt) const {
    if (fastest_step > ServingModel::kStepShareOfTpot * slo.tpot_s) {
      return fmt::format(
          "one iteration takes at least {:.1f} ms, over {:.0f}% of the TPOT target ({:.1f} ms)",
          fastest_step * 1e3, 100 * ServingModel::kStepShareOfTpot, slo.tpot_s * 1e3);
    }
    if (std::isfinite(fastest_long_prefill)) {
      return fmt::format(
          "a prompt of {:.0f} tokens (the p{:g} length) takes at least {:.3f} s in chunks, over "
          "the TTFT target ({:.3f} s)",
          long_prompt, slo.percentile, fastest_long_prefill, slo.ttft_s);
    }
    return fmt::format(
        "a mean prompt's prefill takes at least {:.3f} s in chunks, over half the TTFT target "
        "({:.3f} s)",
        fastest_prefill, slo.ttft_s / 2);
  }
};

}  // namespace

util::Result<ServedModel> MakeServedModel(const std::string& name,
                                          const model::TransformerShape& shape,
                                          model::Precision precision) {
  model::PresetOptions options;
  options.optimizer = "none";
  options.global_batch = 1;
  options.seq_len = shape.default_seq_len;
  ASSIGN_OR_RETURN(model::ModelSpec spec, model::MakeTransformer(name, shape, options));
  ServedModel m;
  m.name = name;
  m.layers = shape.layers;
  m.hidden = shape.hidden;
  m.parameters = static_cast<double>(spec.ParameterCount());
  const double elem = model::BytesPerElement(precision);
  m.weight_bytes = m.parameters * elem;
  const double kv_width = static_cast<double>(shape.kv_heads * (shape.hidden / shape.heads));
  m.kv_bytes_per_token = 2.0 * shape.layers * kv_width * elem;
  m.flops_per_token = 2.0 * m.parameters;
  m.attention_flops_per_pair = 4.0 * shape.layers * static_cast<double>(shape.hidden);
  m.max_context = shape.default_seq_len;
  return m;
}

util::Result<ServedModel> ServedPreset(std::string_view name) {
  ASSIGN_OR_RETURN(model::TransformerShape shape, model::PresetShape(name));
  return MakeServedModel(std::string(name), shape);
}

ServingModel::ServingModel(ServedModel model, const model::DeviceType& type, int32_t tp,
                           ServingCalibration calibration, double link_bandwidth)
    : model_(std::move(model)),
      type_(&type),
      tp_(std::max(1, tp)),
      calibration_(std::move(calibration)),
      link_bandwidth_(link_bandwidth) {}

double ServingModel::KvTokenCapacity() const {
  if (model_.kv_bytes_per_token <= 0) return 0;
  const double usable = kUsableMemory * static_cast<double>(type_->memory_bytes) * tp_;
  return (usable - model_.weight_bytes) / model_.kv_bytes_per_token;
}

double ServingModel::PromptComputeSeconds(double prompts, double prompt_tokens) const {
  const double peak = type_->PeakFlops(model::Precision::kFp16) * tp_;
  if (peak <= 0) return kInf;
  const double bare = 1.0 / std::max(1e-6, type_->efficiency);
  const double dense_scale =
      calibration_.prefill_compute_scale > 0 ? calibration_.prefill_compute_scale : bare;
  const double attention_scale =
      calibration_.prefill_attention_scale > 0 ? calibration_.prefill_attention_scale : bare;
  return (dense_scale * DenseFlops(model_, prompts, prompt_tokens) +
          attention_scale * AttentionFlops(model_, prompts, prompt_tokens)) /
         peak;
}

double ServingModel::PromptCommSeconds(double prompts, double prompt_tokens) const {
  return calibration_.prefill_comm_scale *
         PrefillCommSeconds(model_, prompts, prompt_tokens, tp_, link_bandwidth_);
}

double ServingModel::PrefillSeconds(int64_t prompts, int64_t prompt_tokens) const {
  if (prompts <= 0 || prompt_tokens <= 0) return 0;
  const double n = static_cast<double>(prompts);
  const double len = static_cast<double>(prompt_tokens);
  const double memory = MemorySeconds(model_.weight_bytes / tp_, type_->memory_bandwidth);
  return model_.layers * calibration_.prefill_fixed_s +
         calibration_.prefill_hop_s * Hops(model_, tp_) +
         std::max(PromptComputeSeconds(n, len), memory) + PromptCommSeconds(n, len);
}

double ServingModel::DecodeStepSeconds(int32_t batch, double mean_context) const {
  if (batch <= 0) return 0;
  const double b = batch;
  const double bytes = model_.weight_bytes + b * mean_context * model_.kv_bytes_per_token;
  const double memory =
      calibration_.decode_memory_scale * MemorySeconds(bytes / tp_, type_->memory_bandwidth);
  const double flops =
      b * (model_.flops_per_token + mean_context * model_.attention_flops_per_pair);
  const double compute = ComputeSeconds(flops / tp_, model::Precision::kFp16, *type_);
  return model_.layers * (calibration_.decode_fixed_s + calibration_.decode_per_sequence_s * b) +
         calibration_.decode_hop_s * Hops(model_, tp_) + std::max(memory, compute);
}

double ServingModel::IterationSeconds(int32_t batch, double mean_context, int64_t chunk) const {
  if (chunk <= 0) return DecodeStepSeconds(batch, mean_context);
  if (batch <= 0) return PrefillSeconds(1, chunk);
  const double len = static_cast<double>(chunk);
  return DecodeStepSeconds(batch, mean_context) + PromptComputeSeconds(1, len) +
         PromptCommSeconds(1, len);
}

int64_t ServingModel::LargestChunk(int32_t batch, double mean_context, double step_limit) const {
  if (IterationSeconds(batch, mean_context, 1) > step_limit) return 0;
  // Iteration time grows with the chunk: double, then bisect.
  int64_t lo = 1, hi = 1;
  while (hi < (int64_t{1} << 20) && IterationSeconds(batch, mean_context, hi * 2) <= step_limit) {
    hi *= 2;
  }
  lo = hi;
  hi *= 2;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (IterationSeconds(batch, mean_context, mid) <= step_limit ? lo : hi) = mid;
  }
  return lo;
}

ReplicaCapacity ServingModel::CapacityAt(const ServingSlo& slo, double mean_input,
                                         double mean_output, double long_input) const {
  ReplicaCapacity best;
  const double per_request_tokens = std::max(1.0, mean_input + mean_output);
  const double kv_tokens = KvTokenCapacity();
  if (kv_tokens < per_request_tokens) {
    best.why_not =
        kv_tokens <= 0
            ? fmt::format("the weights ({:.0f} GB) do not fit in {} x {:.0f} GB",
                          model_.weight_bytes / 1e9, tp_, type_->memory_bytes / 1e9)
            : fmt::format("the KV cache holds {:.0f} tokens, less than one request's {:.0f}",
                          kv_tokens, per_request_tokens);
    return best;
  }
  best.prefill_s = PrefillSeconds(1, static_cast<int64_t>(std::ceil(mean_input)));
  const double step_limit = kStepShareOfTpot * slo.tpot_s;
  const int32_t max_batch =
      static_cast<int32_t>(std::min(1024.0, std::floor(kv_tokens / per_request_tokens)));
  const double mean_context = mean_input + mean_output / 2;
  const double input = std::max(1.0, mean_input);
  const double output = std::max(1.0, mean_output);
  const double long_prompt = std::max(input, long_input);
  NearestMiss miss;
  // Batches 1, 2, 3, 4, 6, 8, 12, 16, ...: the rate changes slowly between them.
  for (int32_t b = 1; b <= max_batch; b = b < 4 ? b + 1 : b + b / 2) {
    const double decode = DecodeStepSeconds(b, mean_context);
    miss.fastest_step = std::min(miss.fastest_step, IterationSeconds(b, mean_context, 1));
    if (IterationSeconds(b, mean_context, 1) > step_limit) break;  // steps only grow with b
    const int64_t chunk = LargestChunk(b, mean_context, step_limit);
    const double step = IterationSeconds(b, mean_context, chunk);
    const double prefill_time = std::ceil(input / chunk) * step;
    miss.fastest_prefill = std::min(miss.fastest_prefill, prefill_time);
    if (prefill_time > slo.ttft_s / 2) continue;
    const double long_prefill = std::ceil(long_prompt / chunk) * step;
    miss.fastest_long_prefill = std::min(miss.fastest_long_prefill, long_prefill);
    if (long_prefill > slo.ttft_s) continue;
    // Prompts queue for the chunk stream (a long prompt's prefill within the TTFT target too),
    // and the batch decodes at most kTargetUtilisation of its tokens.
    const double queued =
        QueueLimitedRate(chunk / input / step, std::max(prefill_time, long_prefill), slo);
    const double decode_rate = kTargetUtilisation * b / output / step;
    const double rate = std::min(queued, decode_rate);
    if (rate > best.requests_per_s) {
      best.feasible = true;
      best.batch = b;
      best.chunk = chunk;
      best.step_s = step;
      best.decode_step_s = decode;
      best.requests_per_s = rate;
      best.prompt_rate = chunk / input / step;
      best.own_s = std::max(prefill_time, long_prefill);
      best.decode_rate = decode_rate;
    }
  }
  if (!best.feasible) best.why_not = miss.Why(slo, long_prompt);
  return best;
}

double CalibratedRate(const ReplicaCapacity& capacity, const ServingSlo& slo,
                      const ReplicaMeasurement& measured) {
  const double tail = std::max(1e-9, 1 - slo.percentile / 100);
  const double lambda = measured.requests_per_s;
  if (!capacity.feasible || lambda <= 0 || measured.ttft_s > slo.ttft_s ||
      static_cast<double>(measured.requests) * tail < kMinCalibrationTail) {
    return capacity.requests_per_s;
  }
  // The model's TTFT at the measured load falls as the stream's rate rises, to own_s once
  // lambda / mu is within the tail (at mu = lambda / tail).
  const double mu_model = capacity.prompt_rate;
  if (lambda < mu_model && QueuedTtft(lambda, mu_model, capacity.own_s, slo) <= measured.ttft_s) {
    return capacity.requests_per_s;  // the model waits no longer than was measured
  }
  // Bisect for the rate whose TTFT at lambda is the measured one (none beyond lambda / tail).
  double slow = std::max(mu_model, lambda * (1 + 1e-9)), fast = lambda / tail;
  if (slow >= fast) return capacity.requests_per_s;
  for (int i = 0; i < 60; ++i) {
    const double mid = (slow + fast) / 2;
    (QueuedTtft(lambda, mid, capacity.own_s, slo) > measured.ttft_s ? slow : fast) = mid;
  }
  const double rate = std::min({QueueLimitedRate(fast, capacity.own_s, slo), capacity.decode_rate,
                                kMaxCalibratedRaise * lambda});
  return std::max(capacity.requests_per_s, rate);
}

// ---- Measurements ---------------------------------------------------------------------------

namespace {

constexpr std::array<std::string_view, 11> kMeasurementColumns = {
    "model",         "hardware",    "prompt_size", "batch_size", "token_size",     "peak_power",
    "average_power", "prompt_time", "token_time",  "e2e_time",   "tensor_parallel"};

std::vector<std::string_view> SplitCsv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(
        line.substr(start, comma == std::string_view::npos ? line.size() - start : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

util::Result<std::vector<ServingMeasurement>> ParseServingMeasurements(std::string_view text,
                                                                       const std::string& file) {
  util::LineReader reader(text);
  std::string_view line;
  std::vector<ServingMeasurement> rows;
  bool header_seen = false;
  while (reader.Next(line)) {
    if (line.empty()) continue;
    const int n = reader.line_number();
    const std::vector<std::string_view> fields = SplitCsv(line);
    if (!header_seen) {
      std::string expected;
      for (std::string_view c : kMeasurementColumns) {
        expected += (expected.empty() ? "" : ",") + std::string(c);
      }
      if (line != expected) {
        return util::Status::InvalidArgument(fmt::format("{}:{}:1: header: '{}' (expected '{}')",
                                                         file, n, line.substr(0, 200), expected));
      }
      header_seen = true;
      continue;
    }
    if (fields.size() != kMeasurementColumns.size()) {
      return util::Status::InvalidArgument(fmt::format("{}:{}:1: {} fields (expected {})", file, n,
                                                       fields.size(), kMeasurementColumns.size()));
    }
    // Column of field i, 1-based.
    auto column = [&](size_t i) { return static_cast<int>(fields[i].data() - line.data()) + 1; };
    auto number = [&](size_t i, double lo, double hi) -> util::Result<double> {
      double v = 0;
      const std::string_view f = fields[i];
      const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || end != f.data() + f.size() || !std::isfinite(v) || v < lo ||
          v > hi) {
        return util::Status::InvalidArgument(
            fmt::format("{}:{}:{}: {}: '{}' (expected a number in [{}, {}])", file, n, column(i),
                        kMeasurementColumns[i], f.substr(0, 40), lo, hi));
      }
      return v;
    };
    ServingMeasurement m;
    m.model = std::string(fields[0]);
    m.device = std::string(fields[1]);
    if (m.model.empty() || m.device.empty()) {
      const size_t i = m.model.empty() ? 0 : 1;
      return util::Status::InvalidArgument(fmt::format("{}:{}:{}: {}: empty (expected a name)",
                                                       file, n, column(i), kMeasurementColumns[i]));
    }
    ASSIGN_OR_RETURN(const double prompt, number(2, 1, 1e7));
    ASSIGN_OR_RETURN(const double batch, number(3, 1, 1e5));
    ASSIGN_OR_RETURN(const double tokens, number(4, 1, 1e7));
    ASSIGN_OR_RETURN(const double prompt_ms, number(7, 1e-6, 1e9));
    ASSIGN_OR_RETURN(const double token_ms, number(8, 1e-6, 1e9));
    ASSIGN_OR_RETURN(const double tp, number(10, 1, 1024));
    m.prompt_tokens = static_cast<int64_t>(prompt);
    m.batch = static_cast<int32_t>(batch);
    m.output_tokens = static_cast<int64_t>(tokens);
    m.tp = static_cast<int32_t>(tp);
    m.prompt_s = prompt_ms / 1e3;
    m.token_s = token_ms / 1e3;
    rows.push_back(std::move(m));
  }
  if (rows.empty()) {
    return util::Status::InvalidArgument(fmt::format("{}: no measurements", file));
  }
  return rows;
}

util::Result<std::vector<ServingMeasurement>> LoadServingMeasurements(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, util::ReadFile(path));
  return ParseServingMeasurements(text, path);
}

// ---- Calibration ----------------------------------------------------------------------------

namespace {

// Least squares of A x ~ y with x >= 0: solves the normal equations on the columns still in
// play and drops the most negative coefficient until none is negative (a small active-set
// method; exact when the unconstrained fit is non-negative). Rows are weighted by 1/y so the
// fit minimises relative error, as the errors are reported.
std::vector<double> NonNegativeFit(const std::vector<std::vector<double>>& a,
                                   const std::vector<double>& y) {
  const size_t k = a.empty() ? 0 : a[0].size();
  std::vector<bool> active(k, true);
  std::vector<double> x(k, 0);
  for (size_t round = 0; round <= k; ++round) {
    std::vector<size_t> cols;
    for (size_t j = 0; j < k; ++j) {
      if (active[j]) cols.push_back(j);
    }
    const size_t m = cols.size();
    if (m == 0) break;
    std::vector<std::vector<double>> ata(m, std::vector<double>(m + 1, 0));
    for (size_t r = 0; r < a.size(); ++r) {
      const double w = 1.0 / (y[r] * y[r]);
      for (size_t p = 0; p < m; ++p) {
        for (size_t q = 0; q < m; ++q) ata[p][q] += w * a[r][cols[p]] * a[r][cols[q]];
        ata[p][m] += w * a[r][cols[p]] * y[r];
      }
    }
    // Gaussian elimination with partial pivoting; a singular column gets 0.
    for (size_t p = 0; p < m; ++p) {
      size_t pivot = p;
      for (size_t q = p + 1; q < m; ++q) {
        if (std::abs(ata[q][p]) > std::abs(ata[pivot][p])) pivot = q;
      }
      std::swap(ata[p], ata[pivot]);
      if (std::abs(ata[p][p]) < 1e-300) continue;
      for (size_t q = 0; q < m; ++q) {
        if (q == p) continue;
        const double f = ata[q][p] / ata[p][p];
        for (size_t c = p; c <= m; ++c) ata[q][c] -= f * ata[p][c];
      }
    }
    std::fill(x.begin(), x.end(), 0);
    size_t most_negative = k;
    for (size_t p = 0; p < m; ++p) {
      const double v = std::abs(ata[p][p]) < 1e-300 ? 0 : ata[p][m] / ata[p][p];
      x[cols[p]] = v;
      if (v < 0 && (most_negative == k || v < x[most_negative])) most_negative = cols[p];
    }
    if (most_negative == k) return x;
    active[most_negative] = false;
  }
  for (double& v : x) v = std::max(0.0, v);
  return x;
}

}  // namespace

ImpossibleParts FasterThanDatasheet(const ServingMeasurement& row, const ServedModel& model,
                                    const model::DeviceType& type, double link_bandwidth) {
  const double n = row.batch;
  const double len = static_cast<double>(row.prompt_tokens);
  const double peak = type.PeakFlops(model::Precision::kFp16) * row.tp;
  const double context = row.prompt_tokens + row.output_tokens / 2.0;
  const double bytes = model.weight_bytes + n * context * model.kv_bytes_per_token;
  ImpossibleParts out;
  out.prefill = row.prompt_s < (DenseFlops(model, n, len) + AttentionFlops(model, n, len)) / peak +
                                   PrefillCommSeconds(model, n, len, row.tp, link_bandwidth);
  out.decode = row.token_s < MemorySeconds(bytes / row.tp, type.memory_bandwidth);
  return out;
}

namespace {

struct TypeFit {
  ServingCalibration calibration;  // its source left to the caller
  int32_t too_fast = 0;            // measured parts left out as faster than the datasheet
};

// The coefficients of ServingCalibration for `type` fitted to its `rows` (each of a model in
// `models`), leaving out the parts faster than the datasheet allows.
TypeFit FitType(const model::DeviceType& type, const std::vector<const ServingMeasurement*>& rows,
                const std::map<std::string, ServedModel>& models, double link_bandwidth) {
  TypeFit fit;
  const double peak = type.PeakFlops(model::Precision::kFp16);
  // Features of the formulas in ServingCalibration's comment, one column per coefficient.
  std::vector<std::vector<double>> decode_a, prefill_a;
  std::vector<double> decode_y, prefill_y;
  for (const ServingMeasurement* row : rows) {
    const ServedModel& model = models.at(row->model);
    const ImpossibleParts impossible = FasterThanDatasheet(*row, model, type, link_bandwidth);
    fit.too_fast += impossible.prefill + impossible.decode;
    const double layers = model.layers;
    const double hops = Hops(model, row->tp);
    if (!impossible.decode) {
      const double context = row->prompt_tokens + row->output_tokens / 2.0;
      const double bytes = model.weight_bytes + row->batch * context * model.kv_bytes_per_token;
      decode_a.push_back({layers, layers * row->batch, hops,
                          MemorySeconds(bytes / row->tp, type.memory_bandwidth)});
      decode_y.push_back(row->token_s);
    }
    if (!impossible.prefill) {
      const double n = row->batch;
      const double len = static_cast<double>(row->prompt_tokens);
      prefill_a.push_back({layers, hops, DenseFlops(model, n, len) / (peak * row->tp),
                           AttentionFlops(model, n, len) / (peak * row->tp),
                           PrefillCommSeconds(model, n, len, row->tp, link_bandwidth)});
      prefill_y.push_back(row->prompt_s);
    }
  }
  const std::vector<double> d = NonNegativeFit(decode_a, decode_y);
  const std::vector<double> p = NonNegativeFit(prefill_a, prefill_y);
  ServingCalibration& c = fit.calibration;
  if (!d.empty()) {
    c.decode_fixed_s = d[0];
    c.decode_per_sequence_s = d[1];
    c.decode_hop_s = d[2];
    c.decode_memory_scale = d[3] > 0 ? d[3] : 1;
  }
  if (!p.empty()) {
    c.prefill_fixed_s = p[0];
    c.prefill_hop_s = p[1];
    // A coefficient the fit dropped is ~0, not "unset" (0 stands for 1 / efficiency).
    c.prefill_compute_scale = std::max(p[2], 1e-9);
    c.prefill_attention_scale = std::max(p[3], 1e-9);
    c.prefill_comm_scale = p[4];
  }
  return fit;
}

}  // namespace

CalibrationFit FitServingCalibration(const std::vector<ServingMeasurement>& rows,
                                     const model::DeviceCatalog& catalog, double link_bandwidth) {
  CalibrationFit fit;
  std::map<std::string, std::vector<const ServingMeasurement*>> by_type;
  std::map<std::string, ServedModel> models;
  std::map<std::string, int32_t> skipped;
  for (const ServingMeasurement& row : rows) {
    const model::DeviceType* type = catalog.Find(row.device);
    if (models.count(row.model) == 0) {
      util::Result<ServedModel> m = ServedPreset(row.model);
      if (!m.ok()) {
        ++skipped[row.model + " (not a preset model)"];
        continue;
      }
      models.emplace(row.model, *std::move(m));
    }
    if (type == nullptr) {
      ++skipped[row.device + " (not a catalog type)"];
    } else {
      by_type[type->name].push_back(&row);
    }
  }
  for (const auto& [type_name, type_rows] : by_type) {
    auto [c, too_fast] = FitType(*catalog.Find(type_name), type_rows, models, link_bandwidth);
    c.source =
        fmt::format("fitted to {} measurements on {}", type_rows.size(), type_rows.front()->device);
    fit.rows_used += static_cast<int32_t>(type_rows.size());
    fit.by_type[type_name] = std::move(c);
    if (too_fast > 0) {
      skipped[fmt::format("{} (prefill or decode faster than its datasheet allows)",
                          type_rows.front()->device)] += too_fast;
    }
  }
  for (const auto& [what, count] : skipped) {
    fit.skipped.push_back(fmt::format("{}: {} rows", what, count));
  }
  return fit;
}

ServingCalibration DefaultCalibration(const std::map<std::string, ServingCalibration>& fitted) {
  ServingCalibration mean;
  if (fitted.empty()) return mean;
  const double n = static_cast<double>(fitted.size());
  for (const auto& [name, c] : fitted) {
    mean.decode_fixed_s += c.decode_fixed_s / n;
    mean.decode_per_sequence_s += c.decode_per_sequence_s / n;
    mean.decode_hop_s += c.decode_hop_s / n;
    mean.prefill_fixed_s += c.prefill_fixed_s / n;
    mean.prefill_hop_s += c.prefill_hop_s / n;
  }
  mean.source =
      fmt::format("mean fixed costs of {} measured type(s), datasheet roofline", fitted.size());
  return mean;
}

const ServingCalibration& ServingCalibrations::For(const std::string& type_name) const {
  const auto it = fitted.find(type_name);
  return it == fitted.end() ? fallback : it->second;
}

ServingCalibrations MakeCalibrations(std::map<std::string, ServingCalibration> fitted) {
  ServingCalibrations c;
  c.fallback = DefaultCalibration(fitted);
  c.fitted = std::move(fitted);
  return c;
}

util::Result<ServingCalibrations> LoadServingCalibrations(const std::string& path,
                                                          const model::DeviceCatalog& catalog) {
  if (path == "none") return MakeCalibrations({});
  ASSIGN_OR_RETURN(const std::vector<ServingMeasurement> rows, LoadServingMeasurements(path));
  return MakeCalibrations(FitServingCalibration(rows, catalog, kMeasuredLinkBandwidth).by_type);
}

std::vector<ReplicaOption> ReplicaOptions(const ServedModel& model, const model::DeviceType& type,
                                          int32_t max_tp, double link_bandwidth,
                                          const ServingCalibrations& calibrations,
                                          const ServingSlo& slo, double mean_input,
                                          double mean_output, double long_input) {
  std::vector<ReplicaOption> options;
  for (int32_t tp = 1; tp <= max_tp; tp *= 2) {
    const ServingModel replica(model, type, tp, calibrations.For(type.name), link_bandwidth);
    options.push_back({&type, tp, replica.CapacityAt(slo, mean_input, mean_output, long_input)});
  }
  return options;
}

}  // namespace hetsched::cost
