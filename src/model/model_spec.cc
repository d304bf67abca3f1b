#include "model/model_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

namespace hetsched::model {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Largest batch / sequence a preset accepts; keeps every byte count far from uint64 overflow.
constexpr int64_t kMaxBatch = int64_t{1} << 24;
constexpr int64_t kMaxSeqLen = int64_t{1} << 22;

}  // namespace

std::string_view LayerKindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kEmbedding:
      return "embedding";
    case LayerKind::kTransformer:
      return "transformer";
    case LayerKind::kHead:
      return "head";
    case LayerKind::kOther:
      return "other";
  }
  return "other";
}

util::Result<LayerKind> ParseLayerKind(std::string_view text) {
  for (LayerKind k :
       {LayerKind::kEmbedding, LayerKind::kTransformer, LayerKind::kHead, LayerKind::kOther}) {
    if (Lower(text) == LayerKindName(k)) return k;
  }
  return util::Status::InvalidArgument(fmt::format(
      "unknown layer kind '{}' (expected embedding, transformer, head or other)", text));
}

std::string_view OptimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kNone:
      return "none";
  }
  return "none";
}

util::Result<Optimizer> ParseOptimizer(std::string_view text) {
  const std::string t = Lower(text);
  if (t == "adam" || t == "adamw") return Optimizer::kAdam;
  if (t == "sgd") return Optimizer::kSgd;
  if (t == "none" || t == "inference") return Optimizer::kNone;
  return util::Status::InvalidArgument(
      fmt::format("unknown optimizer '{}' (expected adam, sgd or none for inference)", text));
}

std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kInt8:
      return "int8";
  }
  return "fp16";
}

util::Result<Precision> ParsePrecision(std::string_view text) {
  const std::string t = Lower(text);
  if (t == "fp32") return Precision::kFp32;
  if (t == "fp16" || t == "bf16") return Precision::kFp16;
  if (t == "int8") return Precision::kInt8;
  return util::Status::InvalidArgument(
      fmt::format("unknown precision '{}' (expected fp32, fp16, bf16 or int8)", text));
}

int BytesPerElement(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return 4;
    case Precision::kFp16:
      return 2;
    case Precision::kInt8:
      return 1;
  }
  return 2;
}

uint64_t ModelSpec::ParameterCount() const {
  uint64_t total = 0;
  for (const LayerSpec& l : layers) {
    if (!l.tied) total += l.parameters;
  }
  return total;
}

int ModelSpec::OptimizerBytesPerParam() const {
  // Below fp32 the optimizer keeps an fp32 master copy of the weights (mixed precision).
  const int master = setup.precision == Precision::kFp32 ? 0 : 4;
  switch (setup.optimizer) {
    case Optimizer::kAdam:
      return master + 8;  // two fp32 moments
    case Optimizer::kSgd:
      return master + 4;  // fp32 momentum
    case Optimizer::kNone:
      return 0;
  }
  return 0;
}

util::Status ModelSpec::Validate() const {
  RETURN_IF_ERROR(ValidateSetup());
  if (layers.empty()) return util::Status::InvalidArgument(name + ": the model has no layers");
  return util::Status::Ok();
}

util::Status ModelSpec::ValidateSetup() const {
  if (setup.global_batch <= 0) {
    return util::Status::InvalidArgument(
        fmt::format("{}: batch size must be at least 1 (got {})", name, setup.global_batch));
  }
  if (setup.micro_batch < 0 || setup.micro_batch > setup.global_batch) {
    return util::Status::InvalidArgument(
        fmt::format("{}: micro-batch must be between 1 and the batch size {} (got {})", name,
                    setup.global_batch, setup.micro_batch));
  }
  if (setup.micro_batch > 0 && setup.global_batch % setup.micro_batch != 0) {
    return util::Status::InvalidArgument(
        fmt::format("{}: micro-batch {} does not divide the batch size {}", name, setup.micro_batch,
                    setup.global_batch));
  }
  if (setup.seq_len <= 0) {
    return util::Status::InvalidArgument(
        fmt::format("{}: sequence length must be at least 1 (got {})", name, setup.seq_len));
  }
  if (setup.global_batch > kMaxBatch || setup.seq_len > kMaxSeqLen) {
    return util::Status::InvalidArgument(
        fmt::format("{}: batch {} / sequence length {} too large (at most {} / {})", name,
                    setup.global_batch, setup.seq_len, kMaxBatch, kMaxSeqLen));
  }
  return util::Status::Ok();
}

const std::vector<std::string>& PresetNames() {
  static const std::vector<std::string> names = {"llama-7b", "llama-13b", "llama-70b", "gpt3-175b",
                                                 "llama-405b"};
  return names;
}

util::Result<std::vector<std::string>> PresetsOfFamily(std::string_view family) {
  const std::string f = Lower(family);
  if (f == "llama") {
    return std::vector<std::string>{"llama-7b", "llama-13b", "llama-70b", "llama-405b"};
  }
  if (f == "gpt3") return std::vector<std::string>{"gpt3-175b"};
  return util::Status::NotFound(
      fmt::format("unknown model family '{}' (known: llama, gpt3)", family));
}

util::Result<TransformerShape> PresetShape(std::string_view name) {
  const std::string n = Lower(name);
  TransformerShape s;
  // Llama 2 (Touvron et al. 2023, Table 1 and the released configs): SwiGLU MLP, RMSNorm,
  // untied LM head, 32k vocabulary, 4k context; 70B uses grouped-query attention with 8 KV heads.
  // "llama2-70b" (Splitwise's measurements name them so) is accepted for "llama-70b".
  s.gated_mlp = true;
  s.vocab = 32000;
  s.default_seq_len = 4096;
  if (n == "llama-7b" || n == "llama2-7b") {
    s.layers = 32, s.hidden = 4096, s.heads = 32, s.kv_heads = 32, s.intermediate = 11008;
    return s;
  }
  if (n == "llama-13b" || n == "llama2-13b") {
    s.layers = 40, s.hidden = 5120, s.heads = 40, s.kv_heads = 40, s.intermediate = 13824;
    return s;
  }
  if (n == "llama-70b" || n == "llama2-70b") {
    s.layers = 80, s.hidden = 8192, s.heads = 64, s.kv_heads = 8, s.intermediate = 28672;
    return s;
  }
  if (n == "llama-405b") {
    // Llama 3.1 405B (Llama Team, "The Llama 3 Herd of Models", 2024, Table 3): 126 layers,
    // model dimension 16384, FFN dimension 53248, 128 heads with 8 KV heads, a 128,256-token
    // vocabulary; pre-trained at 8,192 tokens of context.
    s.layers = 126, s.hidden = 16384, s.heads = 128, s.kv_heads = 8, s.intermediate = 53248;
    s.vocab = 128256, s.default_seq_len = 8192;
    return s;
  }
  if (n == "gpt3-175b") {
    // Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads, 2048 context; GPT-2's
    // 50257-token vocabulary, learned positions, LM head tied to the embedding, 4*d MLP (GELU).
    TransformerShape g;
    g.layers = 96, g.hidden = 12288, g.heads = 96, g.kv_heads = 96, g.intermediate = 4 * 12288;
    g.vocab = 50257, g.default_seq_len = 2048, g.learned_positions = true, g.tied_head = true;
    return g;
  }
  std::string known;
  for (const std::string& k : PresetNames()) known += (known.empty() ? "" : ", ") + k;
  return util::Status::NotFound(fmt::format("unknown model '{}' (known: {})", name, known));
}

util::Result<ModelSpec> MakeTransformer(const std::string& name, const TransformerShape& shape,
                                        const PresetOptions& options) {
  ModelSpec spec;
  spec.name = name;
  const bool llama = shape.gated_mlp;
  spec.setup.global_batch =
      options.global_batch != 0 ? options.global_batch : (llama ? 1024 : 1536);
  spec.setup.micro_batch = options.micro_batch;
  spec.setup.seq_len = options.seq_len != 0 ? options.seq_len : shape.default_seq_len;
  if (!options.precision.empty()) {
    ASSIGN_OR_RETURN(spec.setup.precision, ParsePrecision(options.precision));
  }
  if (!options.optimizer.empty()) {
    ASSIGN_OR_RETURN(spec.setup.optimizer, ParseOptimizer(options.optimizer));
  }
  if (options.global_batch < 0 || options.micro_batch < 0 || options.seq_len < 0) {
    return util::Status::InvalidArgument(
        fmt::format("{}: batch, micro-batch and sequence length must be positive", name));
  }
  RETURN_IF_ERROR(spec.ValidateSetup());  // before sizes are multiplied out

  const double s = static_cast<double>(spec.setup.seq_len);
  const uint64_t seq = static_cast<uint64_t>(spec.setup.seq_len);
  const uint64_t h = static_cast<uint64_t>(shape.hidden);
  const uint64_t kv = static_cast<uint64_t>(shape.kv_heads * (shape.hidden / shape.heads));
  const uint64_t inter = static_cast<uint64_t>(shape.intermediate);
  const uint64_t vocab = static_cast<uint64_t>(shape.vocab);
  const uint64_t elem = static_cast<uint64_t>(BytesPerElement(spec.setup.precision));

  LayerSpec embed;
  embed.name = "embedding";
  embed.kind = LayerKind::kEmbedding;
  embed.parameters = vocab * h + (shape.learned_positions ? shape.default_seq_len * h : 0);
  embed.fwd_flops = 0;  // a table lookup; its time is the memory traffic, counted separately
  embed.activation_bytes = seq * 4;  // the int32 token ids
  embed.output_bytes = seq * h * elem;
  embed.tp_allreduces = 2;  // vocabulary-parallel embedding: one forward, one backward
  spec.layers.push_back(embed);

  // Matrix weights of one block: Q and O are h x h, K and V are h x kv, the MLP has 2 or 3
  // h x intermediate matrices. Norms (and GPT-3's biases) are vectors.
  const uint64_t matmul_params = 2 * h * h + 2 * h * kv + (shape.gated_mlp ? 3 : 2) * h * inter;
  const uint64_t vector_params = shape.gated_mlp ? 2 * h  // two RMSNorm scales
                                                 : 4 * h + (3 * h + h) + (inter + h);  // LN, biases
  // Kept for backward, per token: both norm inputs, the QKV input, Q, K, V, the attention output
  // (also the O-projection input), the MLP input, and the MLP's intermediate tensors (gate, up,
  // activation, product for SwiGLU; pre- and post-activation for GELU).
  const uint64_t act_elems_per_token = 6 * h + 2 * kv + (shape.gated_mlp ? 4 : 2) * inter;
  for (int32_t i = 0; i < shape.layers; ++i) {
    LayerSpec block;
    block.name = fmt::format("block.{}", i);
    block.kind = LayerKind::kTransformer;
    block.parameters = matmul_params + vector_params;
    block.fwd_flops =
        2.0 * s * static_cast<double>(matmul_params) + 4.0 * s * s * static_cast<double>(h);
    block.activation_bytes = seq * act_elems_per_token * elem;
    block.output_bytes = seq * h * elem;
    block.tp_allreduces = 4;
    spec.layers.push_back(block);
  }

  LayerSpec head;
  head.name = "lm_head";
  head.kind = LayerKind::kHead;
  head.parameters = vocab * h + (shape.gated_mlp ? h : 2 * h);  // + the final norm
  // A tied head is skipped by ParameterCount; its final norm (2h, 0.00001% of GPT-3) goes with it.
  head.tied = shape.tied_head;
  head.fwd_flops = 2.0 * s * static_cast<double>(h) * static_cast<double>(vocab);
  // Norm input, head input, and the fp32 logits the loss needs for its backward.
  head.activation_bytes = seq * 2 * h * elem + seq * vocab * 4;
  head.output_bytes = 0;
  head.tp_allreduces = 2;
  spec.layers.push_back(head);
  return spec;
}

util::Result<ModelSpec> MakePreset(std::string_view name, const PresetOptions& options) {
  ASSIGN_OR_RETURN(TransformerShape shape, PresetShape(name));
  return MakeTransformer(Lower(name), shape, options);
}

}  // namespace hetsched::model
