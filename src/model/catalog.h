// DeviceCatalog: the device types a cluster may use, by name. Starts from the built-in
// catalog (model/builtin_catalog.cc); users add or override types from YAML.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/device_type.h"
#include "util/strong_id.h"

namespace hetsched::model {

using DeviceTypeId = util::StrongId<struct DeviceTypeTag>;

class DeviceCatalog {
 public:
  DeviceCatalog() = default;

  // The types shipped with hetsched; docs/device-catalog.md lists them with sources.
  static const DeviceCatalog& BuiltIn();

  // Adds `type`, or replaces the type of the same name (keeping its id). Names and aliases are
  // matched case-insensitively. Returns the type's id.
  DeviceTypeId Upsert(DeviceType type);

  std::optional<DeviceTypeId> FindId(std::string_view name_or_alias) const;
  const DeviceType* Find(std::string_view name_or_alias) const;
  const DeviceType& Get(DeviceTypeId id) const { return types_[id.value()]; }

  size_t size() const { return types_.size(); }
  const std::vector<DeviceType>& types() const { return types_; }
  // "a100-40g, a100-80g, ..." for error messages that list what is known.
  std::string NameList() const;

 private:
  void Reindex();
  std::vector<DeviceType> types_;
  std::unordered_map<std::string, int32_t> index_;  // lower-case name or alias -> id
};

}  // namespace hetsched::model
