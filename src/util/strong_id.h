// StrongId<Tag>: a typed index so a NodeId is never passed where a DeviceId or a count is meant.
// Ids are dense indexes into the owning container (Cluster, Workload), -1 means "none".
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace hetsched::util {

template <typename Tag>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(int32_t value) : value_(value) {}
  constexpr int32_t value() const { return value_; }
  constexpr bool valid() const { return value_ >= 0; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  int32_t value_ = -1;
};

}  // namespace hetsched::util

template <typename Tag>
struct std::hash<hetsched::util::StrongId<Tag>> {
  size_t operator()(const hetsched::util::StrongId<Tag>& id) const noexcept {
    return std::hash<int32_t>()(id.value());
  }
};
