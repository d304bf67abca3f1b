#include "model/io/layer_file_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <set>

#include "model/io/document.h"
#include "util/file.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::model::io {
namespace {

using util::Result;
using util::SourceLocation;
using util::Status;

constexpr double kMaxFlops = 1e30;  // per sample; far above any real layer, far below overflow

Result<double> Flops(const DocReader& r, const DocValue& node, const std::string& field) {
  const std::string expected = "a non-negative number of FLOPs such as 3.2e12";
  ASSIGN_OR_RETURN(std::string s, r.Scalar(node, field, expected));
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    return r.Error(node, field, fmt::format("'{}' is not a number", s), expected);
  }
  if (!std::isfinite(v) || v < 0 || v > kMaxFlops) {
    return r.Error(node, field, fmt::format("{} is out of range", s), expected);
  }
  return v;
}

Result<uint64_t> Bytes(const DocReader& r, const DocValue& node, const std::string& field) {
  return r.Quantity<uint64_t>(node, field, &util::ParseBytes,
                              "a byte count such as 4096, 16MiB or 1.5GB");
}

// One entry of `layers` (at `field`), sizes in `precision`'s elements.
Result<LayerSpec> ParseLayer(const DocReader& r, const DocValue& l, const std::string& field,
                             Precision precision) {
  const uint64_t elem = static_cast<uint64_t>(BytesPerElement(precision));
  RETURN_IF_ERROR(r.CheckMap(l, field,
                             {"name", "kind", "fwd_flops", "param_bytes", "activation_bytes",
                              "output_bytes", "tp_allreduces", "repeat"}));
  for (const char* required :
       {"name", "fwd_flops", "param_bytes", "activation_bytes", "output_bytes"}) {
    if (!l.Has(required)) {
      return r.Error(l, field + "." + required, "missing required field",
                     "name, fwd_flops, param_bytes, activation_bytes and output_bytes");
    }
  }
  LayerSpec layer;
  ASSIGN_OR_RETURN(layer.name, r.Scalar(l["name"], field + ".name", "the layer's name"));
  if (l.Has("kind")) {
    ASSIGN_OR_RETURN(layer.kind,
                     r.Enum<LayerKind>(l["kind"], field + ".kind",
                                       "embedding, transformer, head or other", &ParseLayerKind));
  }
  ASSIGN_OR_RETURN(layer.fwd_flops, Flops(r, l["fwd_flops"], field + ".fwd_flops"));
  ASSIGN_OR_RETURN(uint64_t param_bytes, Bytes(r, l["param_bytes"], field + ".param_bytes"));
  if (param_bytes % elem != 0) {
    return r.Error(l["param_bytes"], field + ".param_bytes",
                   fmt::format("{} bytes is not a whole number of {}-byte {} parameters",
                               param_bytes, elem, PrecisionName(precision)),
                   "a multiple of the precision's element size");
  }
  layer.parameters = param_bytes / elem;
  ASSIGN_OR_RETURN(layer.activation_bytes,
                   Bytes(r, l["activation_bytes"], field + ".activation_bytes"));
  ASSIGN_OR_RETURN(layer.output_bytes, Bytes(r, l["output_bytes"], field + ".output_bytes"));
  // Keep per-sample sizes small enough that batch * seq multiples cannot overflow.
  constexpr uint64_t kMaxLayerBytes = uint64_t{1} << 50;  // 1 PiB
  for (const char* key : {"param_bytes", "activation_bytes", "output_bytes"}) {
    ASSIGN_OR_RETURN(uint64_t v, Bytes(r, l[key], field + "." + key));
    if (v > kMaxLayerBytes) {
      return r.Error(l[key], field + "." + key, "is larger than 1 PiB", "a realistic size");
    }
  }
  if (l.Has("tp_allreduces")) {
    ASSIGN_OR_RETURN(int64_t n, r.WholeNumber(l["tp_allreduces"], field + ".tp_allreduces", 0, 64));
    layer.tp_allreduces = static_cast<int32_t>(n);
  }
  return layer;
}

// The top-level fields but the layers: name, batch, micro_batch, seq_len, precision, optimizer.
Status ParseSetup(const DocReader& r, const DocValue& root, ModelSpec& spec) {
  ASSIGN_OR_RETURN(spec.name, r.Scalar(root["name"], "name", "the model's name"));
  ASSIGN_OR_RETURN(spec.setup.global_batch,
                   r.WholeNumber(root["batch"], "batch", 1, int64_t{1} << 24));
  if (root.Has("micro_batch")) {
    ASSIGN_OR_RETURN(spec.setup.micro_batch,
                     r.WholeNumber(root["micro_batch"], "micro_batch", 1, spec.setup.global_batch));
    if (spec.setup.global_batch % spec.setup.micro_batch != 0) {
      return r.Error(root["micro_batch"], "micro_batch",
                     fmt::format("{} does not divide the batch {}", spec.setup.micro_batch,
                                 spec.setup.global_batch),
                     "a divisor of batch");
    }
  }
  ASSIGN_OR_RETURN(spec.setup.seq_len,
                   r.WholeNumber(root["seq_len"], "seq_len", 1, int64_t{1} << 22));
  if (root.Has("precision")) {
    ASSIGN_OR_RETURN(spec.setup.precision,
                     r.Enum<Precision>(root["precision"], "precision", "fp32, fp16, bf16 or int8",
                                       &ParsePrecision));
  }
  if (root.Has("optimizer")) {
    ASSIGN_OR_RETURN(spec.setup.optimizer,
                     r.Enum<Optimizer>(root["optimizer"], "optimizer",
                                       "adam, sgd or none (inference)", &ParseOptimizer));
  }
  return Status::Ok();
}

Result<ModelSpec> ParseRoot(const DocReader& r, const DocValue& root) {
  if (root.IsNull()) {
    return r.Error(root, "(document)", "is empty", "a map with name, batch, seq_len and layers");
  }
  RETURN_IF_ERROR(r.CheckMap(
      root, "", {"name", "batch", "micro_batch", "seq_len", "precision", "optimizer", "layers"}));
  ModelSpec spec;
  for (const char* required : {"name", "batch", "seq_len", "layers"}) {
    if (!root.Has(required)) {
      return r.Error(root, required, "missing required field",
                     "name, batch, seq_len and layers at the top level");
    }
  }
  RETURN_IF_ERROR(ParseSetup(r, root, spec));
  const DocValue& layers = root["layers"];
  if (!layers.IsList() || layers.size() == 0) {
    return r.Error(layers, "layers", "is not a non-empty list", "a list of layer maps");
  }
  int64_t total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const DocValue& l = layers[i];
    const std::string field = fmt::format("layers[{}]", i);
    ASSIGN_OR_RETURN(const LayerSpec layer, ParseLayer(r, l, field, spec.setup.precision));
    int64_t repeat = 1;
    if (l.Has("repeat")) {
      ASSIGN_OR_RETURN(repeat, r.WholeNumber(l["repeat"], field + ".repeat", 1, kMaxLayerRepeat));
    }
    total += repeat;
    if (total > kMaxLayers) {
      return r.Error(l, field, fmt::format("the model has more than {} layers", kMaxLayers),
                     "fewer layers");
    }
    for (int64_t k = 0; k < repeat; ++k) {
      LayerSpec copy = layer;
      if (repeat > 1) copy.name = fmt::format("{}.{}", layer.name, k);
      spec.layers.push_back(std::move(copy));
    }
  }
  RETURN_IF_ERROR(spec.Validate());
  return spec;
}

}  // namespace

Result<ModelSpec> ParseLayerFile(std::string_view text, const std::string& file_name) {
  ASSIGN_OR_RETURN(const DocValue root, ParseYamlDocument(text, file_name));
  return ParseRoot(DocReader(file_name), root);
}

Result<ModelSpec> LoadLayerFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseLayerFile(text, path);
}

}  // namespace hetsched::model::io
