// Cluster readers: the cluster YAML format (docs/cluster-format.md) and the one-line shorthand
// ("v100=36,p100=36,k80=36"). Every rejection reads `file:line:column: field: problem (expected)`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/cluster.h"
#include "util/status.h"

namespace hetsched::model::io {

// Limits that keep a hostile or mistaken file from exhausting memory. Checked before anything
// is allocated, so `n[1-999999999]` fails at once.
inline constexpr int64_t kMaxNodesPerEntry = 100'000;  // one `name` pattern or `count`
inline constexpr int64_t kMaxNodes = 1'000'000;        // whole cluster
inline constexpr int64_t kMaxDevicesPerNode = 4'096;
inline constexpr int64_t kMaxDevices = 10'000'000;  // whole cluster
inline constexpr int64_t kMaxLabelsPerNode = 256;
inline constexpr int64_t kMaxLabels = 1'000'000;  // over all nodes, after expansion

// Parses a cluster YAML document. `file_name` is used in error messages only.
// The cluster's catalog is the built-in catalog plus the file's `device_types`.
util::Result<Cluster> ParseClusterYaml(std::string_view text, const std::string& file_name);

// Parses the shorthand: comma-separated `TYPE=COUNT[:per_node=N]` terms, e.g.
// "v100=36,p100=36,k80=36" (one device per node) or
// "a100-80g=32:per_node=8,xeon-8380=4:per_node=2". TYPE is a built-in catalog name or alias. The
// result is a flat cluster with one rack; the links it assumes are listed in docs/cluster-format.md
// ("Shorthand").
util::Result<Cluster> ParseClusterShorthand(std::string_view spec);

// An existing file is read as YAML; otherwise text that looks like a shorthand (has '=' and
// no '/') is parsed as one; anything else is NotFound naming the path.
util::Result<Cluster> LoadCluster(const std::string& path_or_shorthand);

}  // namespace hetsched::model::io
