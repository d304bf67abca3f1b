// Text helpers the readers of k8s/objects.h share (objects.cc, node_info.cc, pod_needs.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetsched::svc::k8s {

std::string Lower(std::string_view s);
// The items of "a, b,c": split at commas, spaces around them dropped, empty ones skipped.
std::vector<std::string> CommaList(std::string_view text);
// A whole decimal number and nothing else.
std::optional<int64_t> ParseInt(std::string_view s);

}  // namespace hetsched::svc::k8s
