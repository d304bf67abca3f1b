#include "model/catalog.h"

#include <algorithm>
#include <cctype>

namespace hetsched::model {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

DeviceTypeId DeviceCatalog::Upsert(DeviceType type) {
  type.name = Lower(type.name);
  for (std::string& alias : type.aliases) alias = Lower(alias);
  auto it = index_.find(type.name);
  int32_t id;
  if (it != index_.end() && types_[it->second].name == type.name) {
    id = it->second;
    types_[id] = std::move(type);
  } else {
    id = static_cast<int32_t>(types_.size());
    types_.push_back(std::move(type));
  }
  Reindex();
  return DeviceTypeId(id);
}

void DeviceCatalog::Reindex() {
  index_.clear();
  // Aliases first so that a real name always wins over another type's alias.
  for (size_t i = 0; i < types_.size(); ++i) {
    for (const std::string& alias : types_[i].aliases) index_[alias] = static_cast<int32_t>(i);
  }
  for (size_t i = 0; i < types_.size(); ++i) index_[types_[i].name] = static_cast<int32_t>(i);
}

std::optional<DeviceTypeId> DeviceCatalog::FindId(std::string_view name_or_alias) const {
  auto it = index_.find(Lower(name_or_alias));
  if (it == index_.end()) return std::nullopt;
  return DeviceTypeId(it->second);
}

const DeviceType* DeviceCatalog::Find(std::string_view name_or_alias) const {
  auto id = FindId(name_or_alias);
  return id ? &types_[id->value()] : nullptr;
}

std::string DeviceCatalog::NameList() const {
  std::string out;
  for (const DeviceType& t : types_) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

}  // namespace hetsched::model
