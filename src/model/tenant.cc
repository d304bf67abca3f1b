#include "model/tenant.h"

namespace hetsched::model {

int Tenants::Find(const std::string& name) const {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Tenants::Names() const {
  std::string out;
  for (const Tenant& t : list) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

bool Tenants::HasChildren(int i) const {
  for (const Tenant& t : list) {
    if (t.parent == list[i].name) return true;
  }
  return false;
}

double Tenants::Guarantee(size_t i) const {
  if (HasChildren(static_cast<int>(i))) return 0;
  double g = list[i].normalized.value_or(0);
  for (const auto& [type, n] : list[i].per_type) g += n;
  return g;
}

}  // namespace hetsched::model
