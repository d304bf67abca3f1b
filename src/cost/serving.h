// Serving model: how fast one replica of a decoder-only language model answers requests on a
// device type. A replica holds the model's weights split tensor-parallel over `tp` devices of
// one type. Prefill (the prompt, all tokens at once) is compute-bound; each decode step (one
// new token for every sequence in the batch) reads all weights and the batch's KV cache, so it
// is memory-bandwidth-bound. Both start from the roofline (cost/roofline.h) and are corrected
// by a calibration fitted to measured step times (FitServingCalibration), since real serving
// stacks add fixed per-step costs (kernel launches, sampling, all-reduce latency) that a
// roofline does not see. docs/serving.md gives every formula with its source.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/catalog.h"
#include "model/device_type.h"
#include "model/model_spec.h"
#include "util/status.h"

namespace hetsched::cost {

// What serving needs to know of a model (fp16 weights and KV cache unless said otherwise).
struct ServedModel {
  std::string name;
  int32_t layers = 0;
  int64_t hidden = 0;
  double parameters = 0;
  double weight_bytes = 0;        // parameters x bytes per element
  double kv_bytes_per_token = 0;  // K and V of every layer for one token of context
  double flops_per_token = 0;     // 2 x parameters (one multiply-add per weight)
  // Attention FLOPs per (token, earlier token) pair: QK^T and AV, 2 x hidden each, per layer.
  double attention_flops_per_pair = 0;
  int64_t max_context = 0;  // tokens the model attends over (its trained context)
};

// From a transformer's shape (model/model_spec.h), parameters counted as MakeTransformer does.
util::Result<ServedModel> MakeServedModel(const std::string& name,
                                          const model::TransformerShape& shape,
                                          model::Precision precision = model::Precision::kFp16);
// A preset by name (model::PresetNames(), also "llama2-70b" style names), fp16.
util::Result<ServedModel> ServedPreset(std::string_view name);

// Corrections to the roofline for one device type, fitted to measured step times:
//   decode step = layers x (decode_fixed_s + decode_per_sequence_s x batch)
//                 + decode_hop_s x hops + max(decode_memory_scale x memory time, compute time)
//   prefill     = layers x prefill_fixed_s + prefill_hop_s x hops
//                 + prefill_comm_scale x all-reduce time at the link's bandwidth
//                 + max(prefill_compute_scale x dense compute time at peak
//                       + prefill_attention_scale x attention compute time at peak, memory time)
// where hops = 2 x layers x (tp - 1) latency-bound steps of the tensor-parallel all-reduces.
// Fixed costs are per layer (kernel launches and their gaps come per layer), so a calibration
// fitted on one model carries over to others of the same family. The defaults are the bare
// roofline: no fixed costs, memory at datasheet bandwidth, compute at peak x the catalog's
// efficiency (a scale of 0 stands for 1 / efficiency). Attention has its own scale: measured
// prefill grows faster than its FLOPs with the prompt when the kernels keep the s x s scores.
struct ServingCalibration {
  double decode_fixed_s = 0;
  double decode_per_sequence_s = 0;
  double decode_hop_s = 0;
  double decode_memory_scale = 1;
  double prefill_fixed_s = 0;
  double prefill_hop_s = 0;
  double prefill_compute_scale = 0;
  double prefill_attention_scale = 0;
  // Real all-reduces of prefill activations reach a fraction of the link's bandwidth.
  double prefill_comm_scale = 1;
  std::string source = "roofline";  // where the figures come from
};

// One measured configuration (Splitwise's perf_model.csv rows, averaged or not).
struct ServingMeasurement {
  std::string model;   // as the file names it, e.g. "llama2-70b"
  std::string device;  // as the file names it, e.g. "a100-80gb"
  int32_t tp = 1;
  int64_t prompt_tokens = 0;
  int32_t batch = 1;
  int64_t output_tokens = 0;
  double prompt_s = 0;  // time to prefill the batch's prompts
  double token_s = 0;   // mean time of one decode step
};

// Splitwise's measured table (github.com/Mutinifni/splitwise-sim, data/perf_model.csv; MIT):
// header `model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,
// prompt_time,token_time,e2e_time,tensor_parallel`, times in milliseconds. Errors are
// "file:line:column: field: problem (expected ...)".
util::Result<std::vector<ServingMeasurement>> ParseServingMeasurements(std::string_view text,
                                                                       const std::string& file);
util::Result<std::vector<ServingMeasurement>> LoadServingMeasurements(const std::string& path);

// How fast a replica serves, and whether it can meet a latency target.
struct ServingSlo {
  double ttft_s = 2;    // time to first token
  double tpot_s = 0.1;  // time per output token after the first
  double percentile = 99;
};

struct ReplicaCapacity {
  bool feasible = false;      // meets the SLO at some batch
  int32_t batch = 0;          // the batch it is sized for
  int64_t chunk = 0;          // prompt tokens prefilled per iteration (chunked prefill)
  double step_s = 0;          // one iteration at that batch and chunk
  double requests_per_s = 0;  // sustained at the SLO (with the utilisation margin)
  double decode_step_s = 0;   // at that batch
  double prefill_s = 0;       // of one mean prompt
  // The two bounds the rate is the lesser of: the chunk stream's prompts/s (mu) with the
  // prefill a prompt waits for on top of its queueing (`own_s`), and the decode cap.
  double prompt_rate = 0;
  double own_s = 0;
  double decode_rate = 0;
  std::string why_not;  // when !feasible: which target is missed and by how much
};

// What the replicas of one shape were measured doing over a span: requests/s per replica
// that was up, and their time to first token at the SLO's percentile, over `requests`.
struct ReplicaMeasurement {
  double requests_per_s = 0;
  double ttft_s = 0;
  int64_t requests = 0;
};

// The rate `capacity` is raised to by what its replicas were measured doing. The model's
// queue (M/M/1 tail plus the long prompt's prefill, each at the SLO's percentile) is
// conservative; when the replicas, at `measured.requests_per_s`, met the TTFT target with a
// wait shorter than the model's, the chunk stream's rate is the one under which the model's
// TTFT at that load is the measured one, and the rating is the model's queue limit at that
// rate, still capped by the decode cap and at kMaxCalibratedRaise times the load measured.
// Only raises: a measured wait longer than the model's is left to the forecast (bursts have
// their own term there). Unchanged unless the percentile was taken over at least
// kMinCalibrationTail requests beyond it and the measured TTFT met the target.
double CalibratedRate(const ReplicaCapacity& capacity, const ServingSlo& slo,
                      const ReplicaMeasurement& measured);
// A measurement speaks for loads near the one measured: a rating rises to at most this
// multiple of it.
inline constexpr double kMaxCalibratedRaise = 2;
// Requests beyond the SLO's percentile a measurement needs (at p99: 1,000 requests), so that
// the percentile is not one request's.
inline constexpr double kMinCalibrationTail = 10;

class ServingModel {
 public:
  // `link_bandwidth` (bytes/s) joins the tp devices (an NVLink island); ignored when tp == 1.
  ServingModel(ServedModel model, const model::DeviceType& type, int32_t tp,
               ServingCalibration calibration, double link_bandwidth);

  const ServedModel& model() const { return model_; }
  const model::DeviceType& type() const { return *type_; }
  int32_t tp() const { return tp_; }
  const ServingCalibration& calibration() const { return calibration_; }

  // Tokens of KV cache that fit beside the weights in kUsableMemory of the tp devices' memory;
  // <= 0 when the weights alone do not fit.
  double KvTokenCapacity() const;
  bool Fits() const { return KvTokenCapacity() > 0; }

  // Seconds to prefill `prompts` prompts of `prompt_tokens` tokens each, as one batch.
  double PrefillSeconds(int64_t prompts, int64_t prompt_tokens) const;
  // Seconds of one decode step for `batch` sequences whose context averages `mean_context`.
  double DecodeStepSeconds(int32_t batch, double mean_context) const;
  // One iteration of chunked prefill (as vLLM and Sarathi-Serve schedule): a decode step for
  // `batch` running sequences plus `chunk` prompt tokens prefilled alongside. The chunk adds its
  // compute and all-reduces; the weights are read once and the fixed costs paid once.
  // DecodeStepSeconds when chunk is 0, PrefillSeconds(1, chunk) when batch is 0.
  double IterationSeconds(int32_t batch, double mean_context, int64_t chunk) const;
  // The most prompt tokens one iteration with `batch` running sequences can prefill within
  // `step_limit` seconds (0 when even the decode step alone takes longer).
  int64_t LargestChunk(int32_t batch, double mean_context, double step_limit) const;

  // The request rate one replica sustains for requests of mean_input prompt and mean_output
  // generated tokens while meeting `slo`, under chunked prefill: for each batch B (within the
  // KV memory) the largest chunk C whose iteration stays within kStepShareOfTpot of the TPOT
  // target, which bounds every token's latency. Prompts then queue for the chunk stream
  // (C / input prompts per iteration): the rate is the largest whose M/M/1 waiting-time tail
  // at the SLO's percentile, plus the prompt's own input / C iterations, stays within the TTFT
  // target, at most kTargetUtilisation of the stream; and at most kTargetUtilisation of what
  // the batch decodes (B / output per iteration). The B with the highest rate wins.
  // `long_input` is the prompt length at the SLO's percentile of the requests (0: the mean):
  // such a prompt, alone, must be prefilled within the TTFT target, or every prompt that long
  // misses it whatever the load.
  ReplicaCapacity CapacityAt(const ServingSlo& slo, double mean_input, double mean_output,
                             double long_input = 0) const;

  // Share of device memory a serving engine can use (the rest: activations, CUDA context).
  static constexpr double kUsableMemory = 0.9;
  // Load at which a replica is sized: queueing delay grows without bound as it nears 1.
  static constexpr double kTargetUtilisation = 0.8;
  // An iteration may take this share of the TPOT target (the rest absorbs longer contexts).
  static constexpr double kStepShareOfTpot = 0.9;

 private:
  // Prefill compute of `prompts` prompts of `prompt_tokens` tokens at the calibrated scales, and
  // their tensor-parallel all-reduces: shared by a whole prefill and a chunk in an iteration.
  double PromptComputeSeconds(double prompts, double prompt_tokens) const;
  double PromptCommSeconds(double prompts, double prompt_tokens) const;

  ServedModel model_;
  const model::DeviceType* type_;
  int32_t tp_;
  ServingCalibration calibration_;
  double link_bandwidth_;
};

// Whether a measured prefill / decode step is faster than the datasheet allows (below the
// compute at peak plus the all-reduce at full link speed, or below reading the weights and KV
// cache at full bandwidth): a measurement error, left out of fits and error figures.
struct ImpossibleParts {
  bool prefill = false;
  bool decode = false;
};
ImpossibleParts FasterThanDatasheet(const ServingMeasurement& row, const ServedModel& model,
                                    const model::DeviceType& type, double link_bandwidth);

// Fits one ServingCalibration per device type of `rows` by non-negative least squares on the
// step times (relative error minimised). A row's model is a preset name (ServedPreset, so
// Splitwise's "llama2-70b" works) and its device a catalog name or alias; rows whose model is
// not a preset or whose device is not in `catalog` are skipped and counted in `skipped`.
struct CalibrationFit {
  std::map<std::string, ServingCalibration> by_type;  // catalog type name -> calibration
  int32_t rows_used = 0;
  // "bloom-176b (not a preset model): 315 rows"; also rows faster than the datasheet allows
  // (below the roofline at peak compute or full bandwidth), left out as measurement errors.
  std::vector<std::string> skipped;
};
CalibrationFit FitServingCalibration(const std::vector<ServingMeasurement>& rows,
                                     const model::DeviceCatalog& catalog, double link_bandwidth);

// The calibration for a type with no measurements: the mean of the fitted ones' fixed and
// per-step terms (they belong to the serving software more than to the chip), with the bare
// roofline's scales. The plain roofline when `fitted` is empty.
ServingCalibration DefaultCalibration(const std::map<std::string, ServingCalibration>& fitted);

// Calibrations by device type with the fallback for the types nobody measured.
struct ServingCalibrations {
  std::map<std::string, ServingCalibration> fitted;
  ServingCalibration fallback;  // DefaultCalibration(fitted)
  const ServingCalibration& For(const std::string& type_name) const;
};
ServingCalibrations MakeCalibrations(std::map<std::string, ServingCalibration> fitted);

// The link between the measured replicas' devices when fitting: Splitwise measured on DGX
// A100 and H100 machines, NVLink at 600 and 900 GB/s both directions; the smaller per
// direction is taken for both (the all-reduce term is a few percent of a prefill).
inline constexpr double kMeasuredLinkBandwidth = 300e9;
// Calibrations fitted to the measurements in `path` for `catalog`'s types; "none": the bare
// roofline for every type.
util::Result<ServingCalibrations> LoadServingCalibrations(const std::string& path,
                                                          const model::DeviceCatalog& catalog);

// One way to build a replica: `tp` devices of one type, and what it sustains.
struct ReplicaOption {
  const model::DeviceType* type = nullptr;
  int32_t tp = 1;
  ReplicaCapacity capacity;
};
// Every replica shape of `model` on `type` with tp = 1, 2, 4, ... up to max_tp (devices of the
// type one node holds), feasible or not, smallest tp first.
std::vector<ReplicaOption> ReplicaOptions(const ServedModel& model, const model::DeviceType& type,
                                          int32_t max_tp, double link_bandwidth,
                                          const ServingCalibrations& calibrations,
                                          const ServingSlo& slo, double mean_input,
                                          double mean_output, double long_input = 0);

}  // namespace hetsched::cost
