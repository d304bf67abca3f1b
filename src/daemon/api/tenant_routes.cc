// GET /v1/tenants (docs/api.md, "Tenants"): each tenant as configured and its standing now.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "daemon/api/http_api.h"
#include "daemon/api/replies.h"

namespace hetsched::svc {

namespace {

using nlohmann::json;

json OrNull(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

json TenantJson(const TenantView& v) {
  const model::Tenant& t = v.tenant;
  json quota = json::object();
  for (const auto& [type, n] : t.per_type) quota[type] = n;
  if (t.normalized) quota["normalized"] = *t.normalized;
  const sched::TenantStanding& s = v.standing;
  return {{"name", t.name},
          {"parent", t.parent.empty() ? json(nullptr) : json(t.parent)},
          {"weight", t.weight},
          {"quota", quota},
          {"borrow_limit", OrNull(t.borrow_limit)},
          {"lend_limit", OrNull(t.lend_limit)},
          {"unit", t.normalized ? "reference_devices" : "devices"},
          {"guarantee", s.guarantee},
          {"held", s.held},
          {"borrowed", s.borrowed},
          {"borrowed_devices", v.borrowed_devices},
          {"lent", s.lent},
          {"lent_devices", v.lent_devices},
          {"share", s.share},
          {"usage", s.usage},
          {"devices", v.devices},
          {"normalized_devices", s.normalized}};
}

}  // namespace

void HttpApi::RouteTenants() {
  On("GET", "/v1/tenants",
     Guarded("/v1/tenants", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request&, httplib::Response& res) {
               auto view = service_->Tenants(scope);
               if (!view.ok()) return ReplyStatus(res, view.status());
               json list = json::array();
               for (const TenantView& v : view->tenants) list.push_back(TenantJson(v));
               Reply(res, 200,
                     {{"reference_type",
                       view->reference_type.empty() ? json(nullptr) : json(view->reference_type)},
                      {"half_life_s", view->half_life_s},
                      {"tenants", list}});
             }));
}

}  // namespace hetsched::svc
