#include "model/io/layer_file_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <set>

#include "util/file.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::model::io {
namespace {

using util::Result;
using util::SourceLocation;
using util::Status;

constexpr double kMaxFlops = 1e30;  // per sample; far above any real layer, far below overflow

std::string Join(std::initializer_list<std::string_view> items) {
  std::string out;
  for (std::string_view s : items) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  SourceLocation At(const YAML::Mark& mark) const {
    if (mark.line < 0) return SourceLocation{file_, 0, 0};
    return SourceLocation{file_, mark.line + 1, mark.column + 1};
  }
  Status Error(const YAML::Node& at, const std::string& field, const std::string& problem,
               const std::string& expected = "") const {
    return util::InputError(At(at.Mark()), field, problem, expected);
  }

  Status CheckMap(const YAML::Node& node, const std::string& field,
                  std::initializer_list<std::string_view> known) const {
    if (!node.IsMap()) {
      return Error(node, field.empty() ? "(document)" : field, "is not a map",
                   "a map with fields " + Join(known));
    }
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;  // a copy: `it->` yields a temporary proxy
      if (!key.IsScalar()) return Error(key, field, "a key is not a plain name");
      const std::string& k = key.Scalar();
      const std::string path = field.empty() ? k : field + "." + k;
      if (std::find(known.begin(), known.end(), k) == known.end()) {
        return Error(key, path, "unknown field", "one of: " + Join(known));
      }
      if (!seen.insert(k).second) return Error(key, path, "field appears twice");
    }
    return Status::Ok();
  }

  Result<std::string> Scalar(const YAML::Node& node, const std::string& field,
                             const std::string& expected) const {
    if (!node.IsScalar()) return Error(node, field, "is not a single value", expected);
    return node.Scalar();
  }

  Result<int64_t> Count(const YAML::Node& node, const std::string& field, int64_t min,
                        int64_t max) const {
    const std::string expected = fmt::format("a whole number from {} to {}", min, max);
    ASSIGN_OR_RETURN(std::string s, Scalar(node, field, expected));
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
      return Error(node, field, fmt::format("'{}' is not a whole number", s), expected);
    }
    if (v < min || v > max)
      return Error(node, field, fmt::format("{} is out of range", v), expected);
    return v;
  }

  Result<uint64_t> Bytes(const YAML::Node& node, const std::string& field) const {
    const std::string expected = "a byte count such as 4096, 16MiB or 1.5GB";
    ASSIGN_OR_RETURN(std::string s, Scalar(node, field, expected));
    auto v = util::ParseBytes(s);
    if (!v.ok()) return Error(node, field, v.status().message(), expected);
    return *v;
  }

  Result<double> Flops(const YAML::Node& node, const std::string& field) const {
    const std::string expected = "a non-negative number of FLOPs such as 3.2e12";
    ASSIGN_OR_RETURN(std::string s, Scalar(node, field, expected));
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
      return Error(node, field, fmt::format("'{}' is not a number", s), expected);
    }
    if (!std::isfinite(v) || v < 0 || v > kMaxFlops) {
      return Error(node, field, fmt::format("{} is out of range", s), expected);
    }
    return v;
  }

  template <typename T>
  Result<T> Enum(const YAML::Node& node, const std::string& field, const std::string& expected,
                 Result<T> (*parse)(std::string_view)) const {
    ASSIGN_OR_RETURN(std::string s, Scalar(node, field, expected));
    Result<T> v = parse(s);
    if (!v.ok()) return Error(node, field, fmt::format("'{}' is not known", s), expected);
    return v;
  }

 private:
  std::string file_;
};

Result<ModelSpec> ParseRoot(const Reader& r, const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) {
    return r.Error(root, "(document)", "is empty", "a map with name, batch, seq_len and layers");
  }
  RETURN_IF_ERROR(r.CheckMap(
      root, "", {"name", "batch", "micro_batch", "seq_len", "precision", "optimizer", "layers"}));
  ModelSpec spec;
  for (const char* required : {"name", "batch", "seq_len", "layers"}) {
    if (!root[required]) {
      return r.Error(root, required, "missing required field",
                     "name, batch, seq_len and layers at the top level");
    }
  }
  ASSIGN_OR_RETURN(spec.name, r.Scalar(root["name"], "name", "the model's name"));
  ASSIGN_OR_RETURN(spec.setup.global_batch, r.Count(root["batch"], "batch", 1, int64_t{1} << 24));
  if (root["micro_batch"]) {
    ASSIGN_OR_RETURN(spec.setup.micro_batch,
                     r.Count(root["micro_batch"], "micro_batch", 1, spec.setup.global_batch));
    if (spec.setup.global_batch % spec.setup.micro_batch != 0) {
      return r.Error(root["micro_batch"], "micro_batch",
                     fmt::format("{} does not divide the batch {}", spec.setup.micro_batch,
                                 spec.setup.global_batch),
                     "a divisor of batch");
    }
  }
  ASSIGN_OR_RETURN(spec.setup.seq_len, r.Count(root["seq_len"], "seq_len", 1, int64_t{1} << 22));
  if (root["precision"]) {
    ASSIGN_OR_RETURN(spec.setup.precision,
                     r.Enum<Precision>(root["precision"], "precision", "fp32, fp16, bf16 or int8",
                                       &ParsePrecision));
  }
  if (root["optimizer"]) {
    ASSIGN_OR_RETURN(spec.setup.optimizer,
                     r.Enum<Optimizer>(root["optimizer"], "optimizer",
                                       "adam, sgd or none (inference)", &ParseOptimizer));
  }
  const YAML::Node layers = root["layers"];
  if (!layers.IsSequence() || layers.size() == 0) {
    return r.Error(layers, "layers", "is not a non-empty list", "a list of layer maps");
  }
  const uint64_t elem = static_cast<uint64_t>(BytesPerElement(spec.setup.precision));
  int64_t total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const YAML::Node l = layers[i];
    const std::string field = fmt::format("layers[{}]", i);
    RETURN_IF_ERROR(r.CheckMap(l, field,
                               {"name", "kind", "fwd_flops", "param_bytes", "activation_bytes",
                                "output_bytes", "tp_allreduces", "repeat"}));
    for (const char* required :
         {"name", "fwd_flops", "param_bytes", "activation_bytes", "output_bytes"}) {
      if (!l[required]) {
        return r.Error(l, field + "." + required, "missing required field",
                       "name, fwd_flops, param_bytes, activation_bytes and output_bytes");
      }
    }
    LayerSpec layer;
    ASSIGN_OR_RETURN(layer.name, r.Scalar(l["name"], field + ".name", "the layer's name"));
    if (l["kind"]) {
      ASSIGN_OR_RETURN(layer.kind,
                       r.Enum<LayerKind>(l["kind"], field + ".kind",
                                         "embedding, transformer, head or other", &ParseLayerKind));
    }
    ASSIGN_OR_RETURN(layer.fwd_flops, r.Flops(l["fwd_flops"], field + ".fwd_flops"));
    ASSIGN_OR_RETURN(uint64_t param_bytes, r.Bytes(l["param_bytes"], field + ".param_bytes"));
    if (param_bytes % elem != 0) {
      return r.Error(l["param_bytes"], field + ".param_bytes",
                     fmt::format("{} bytes is not a whole number of {}-byte {} parameters",
                                 param_bytes, elem, PrecisionName(spec.setup.precision)),
                     "a multiple of the precision's element size");
    }
    layer.parameters = param_bytes / elem;
    ASSIGN_OR_RETURN(layer.activation_bytes,
                     r.Bytes(l["activation_bytes"], field + ".activation_bytes"));
    ASSIGN_OR_RETURN(layer.output_bytes, r.Bytes(l["output_bytes"], field + ".output_bytes"));
    // Keep per-sample sizes small enough that batch * seq multiples cannot overflow.
    constexpr uint64_t kMaxLayerBytes = uint64_t{1} << 50;  // 1 PiB
    for (const char* key : {"param_bytes", "activation_bytes", "output_bytes"}) {
      ASSIGN_OR_RETURN(uint64_t v, r.Bytes(l[key], field + "." + key));
      if (v > kMaxLayerBytes) {
        return r.Error(l[key], field + "." + key, "is larger than 1 PiB", "a realistic size");
      }
    }
    if (l["tp_allreduces"]) {
      ASSIGN_OR_RETURN(int64_t n, r.Count(l["tp_allreduces"], field + ".tp_allreduces", 0, 64));
      layer.tp_allreduces = static_cast<int32_t>(n);
    }
    int64_t repeat = 1;
    if (l["repeat"]) {
      ASSIGN_OR_RETURN(repeat, r.Count(l["repeat"], field + ".repeat", 1, kMaxLayerRepeat));
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
  Reader reader(file_name);
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return ParseRoot(reader, root);
  } catch (const YAML::Exception& e) {
    return util::InputError(reader.At(e.mark), "", "malformed YAML: " + e.msg, "a YAML layer file");
  }
}

Result<ModelSpec> LoadLayerFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseLayerFile(text, path);
}

}  // namespace hetsched::model::io
