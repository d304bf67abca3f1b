// Layer files: a model described layer by layer in YAML (docs/model-partitioning.md, "Layer
// files"): FLOPs, parameter bytes and activation bytes per sample, plus the training set-up.
#pragma once

#include <string>
#include <string_view>

#include "model/model_spec.h"
#include "util/status.h"

namespace hetsched::model::io {

// Limits that keep a mistaken file from exhausting memory; checked before allocating.
inline constexpr int64_t kMaxLayerRepeat = 100'000;
inline constexpr int64_t kMaxLayers = 100'000;

// Parses a layer file. `file_name` is used in error messages only; every rejection reads
// `file:line:column: field: problem (expected ...)`.
util::Result<ModelSpec> ParseLayerFile(std::string_view text, const std::string& file_name);
// Reads and parses the file at `path`.
util::Result<ModelSpec> LoadLayerFile(const std::string& path);

}  // namespace hetsched::model::io
