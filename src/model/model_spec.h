// ModelSpec: a model as a chain of layers (FLOPs, parameter bytes, activation bytes per sample)
// plus the training set-up (batch, micro-batch, sequence length, precision, optimizer). Presets
// (Llama 2 7B/13B/70B, GPT-3 175B) are computed from their hyper-parameters, never tabulated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/device_type.h"
#include "util/status.h"

namespace hetsched::model {

enum class LayerKind { kEmbedding, kTransformer, kHead, kOther };
std::string_view LayerKindName(LayerKind kind);  // "embedding", "transformer", "head", "other"
util::Result<LayerKind> ParseLayerKind(std::string_view text);

enum class Optimizer { kAdam, kSgd, kNone };  // kNone: inference (forward only, no gradients)
std::string_view OptimizerName(Optimizer optimizer);  // "adam", "sgd", "none"
util::Result<Optimizer> ParseOptimizer(std::string_view text);

std::string_view PrecisionName(Precision precision);  // "fp32", "fp16" (also bf16), "int8"
// Accepts fp32, fp16, bf16 (same as fp16), int8.
util::Result<Precision> ParsePrecision(std::string_view text);
// Bytes of one weight or activation element at `precision`: 4, 2 or 1.
int BytesPerElement(Precision precision);

// One layer. All per-sample quantities are for one sample (one sequence of seq_len tokens).
struct LayerSpec {
  std::string name;
  LayerKind kind = LayerKind::kOther;
  double fwd_flops = 0;           // forward FLOPs per sample; backward is counted as 2x this
  uint64_t parameters = 0;        // parameter count
  uint64_t activation_bytes = 0;  // bytes kept per sample from forward until backward
  uint64_t output_bytes = 0;      // bytes per sample handed to the next layer
  // Tensor-parallel all-reduces of output_bytes per sample, forward and backward together
  // (Megatron: 2 forward + 2 backward per transformer block).
  int32_t tp_allreduces = 0;
  // The layer shares its weights with an earlier one (GPT-3's LM head reuses the embedding):
  // the stage still holds a copy (as Megatron does) but the parameter is counted once.
  bool tied = false;
};

struct TrainingSetup {
  int64_t global_batch = 0;  // samples per training step (or per inference batch)
  int64_t micro_batch = 0;   // samples per pipeline micro-batch; 0 = let the planner choose
  int64_t seq_len = 0;       // tokens per sample
  Precision precision = Precision::kFp16;
  Optimizer optimizer = Optimizer::kAdam;
};

struct ModelSpec {
  std::string name;
  std::vector<LayerSpec> layers;
  TrainingSetup setup;

  bool training() const { return setup.optimizer != Optimizer::kNone; }
  // Parameter count, tied copies counted once.
  uint64_t ParameterCount() const;
  // Bytes per parameter on the device: weights, gradients, optimizer state (mixed-precision Adam:
  // 2 + 2 + 12 = 16 bytes per parameter; see docs/model-partitioning.md).
  int WeightBytesPerParam() const { return BytesPerElement(setup.precision); }
  int GradBytesPerParam() const { return training() ? BytesPerElement(setup.precision) : 0; }
  int OptimizerBytesPerParam() const;
  // Checks that the set-up is usable (positive batch and sequence, micro-batch dividing batch).
  util::Status ValidateSetup() const;
  // ValidateSetup() and at least one layer.
  util::Status Validate() const;
};

// Options a user may set on a preset; zero / unset fields keep the preset's defaults.
struct PresetOptions {
  int64_t global_batch = 0;
  int64_t micro_batch = 0;
  int64_t seq_len = 0;
  std::string precision;  // "" = fp16
  std::string optimizer;  // "" = adam
};

// Architecture hyper-parameters of a decoder-only transformer.
struct TransformerShape {
  int32_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;      // grouped-query attention; == heads for plain multi-head attention
  int64_t intermediate = 0;  // MLP width
  bool gated_mlp = false;    // SwiGLU (three matrices) instead of GELU (two)
  int64_t vocab = 0;
  int64_t default_seq_len = 0;
  bool learned_positions = false;  // GPT-3 adds a position-embedding table
  bool tied_head = false;          // LM head shares the embedding matrix
};

// Names of the presets in increasing size: llama-7b, llama-13b, llama-70b, gpt3-175b, llama-405b.
const std::vector<std::string>& PresetNames();
// Families for --max-model: "llama" (7b, 13b, 70b), "gpt3" (175b); presets in increasing size.
util::Result<std::vector<std::string>> PresetsOfFamily(std::string_view family);
util::Result<TransformerShape> PresetShape(std::string_view name);

// Builds the layer chain: embedding, `layers` transformer blocks, LM head (final norm included).
// FLOPs count matrix multiplies (2 per multiply-add) plus attention's 4*s^2*h; activations assume
// a fused (flash) attention that keeps no s x s score matrix. Unknown names are NotFound listing
// the known ones; a zero batch or sequence length is InvalidArgument.
util::Result<ModelSpec> MakeTransformer(const std::string& name, const TransformerShape& shape,
                                        const PresetOptions& options);
util::Result<ModelSpec> MakePreset(std::string_view name, const PresetOptions& options);

}  // namespace hetsched::model
