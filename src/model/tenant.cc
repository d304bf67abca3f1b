#include "model/tenant.h"

#include <algorithm>
#include <limits>

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

std::vector<double> Tenants::Shares(const std::vector<char>& active) const {
  const size_t n = list.size();
  std::vector<int> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = list[i].parent.empty() ? -1 : Find(list[i].parent);
  std::vector<char> live = active;
  for (size_t i = n; i-- > 0;) {  // children come after their parents
    if (live[i] && parent[i] >= 0) live[parent[i]] = 1;
  }
  std::vector<double> sibling_weight(n + 1, 0);  // by parent position; n: the roots
  for (size_t i = 0; i < n; ++i) {
    if (live[i]) sibling_weight[parent[i] < 0 ? n : parent[i]] += list[i].weight;
  }
  std::vector<double> share(n, 0);
  for (size_t i = 0; i < n; ++i) {  // parents first
    if (!live[i]) continue;
    const double above = parent[i] < 0 ? 1 : share[parent[i]];
    share[i] = above * list[i].weight / sibling_weight[parent[i] < 0 ? n : parent[i]];
  }
  return share;
}

double Tenants::Borrowable(double devices, const std::vector<double>& held,
                           const std::vector<double>& demand) const {
  double borrowable = devices;
  for (size_t t = 0; t < held.size(); ++t) {
    const double guarantee = Guarantee(t);
    const double idle = std::max(0.0, guarantee - demand[t]);
    const double lent =
        std::min(idle, list[t].lend_limit.value_or(std::numeric_limits<double>::infinity()));
    borrowable -= guarantee - lent + std::max(0.0, held[t] - guarantee);
  }
  return borrowable;
}

}  // namespace hetsched::model
