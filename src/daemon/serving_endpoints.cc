#include "daemon/serving_endpoints.h"

#include <fmt/format.h>

namespace hetsched::svc {

namespace {

// "http://HOST:PORT" less its scheme: what nginx's `server` takes.
std::string HostPort(const std::string& endpoint) {
  const std::string scheme = "http://";
  return endpoint.rfind(scheme, 0) == 0 ? endpoint.substr(scheme.size()) : endpoint;
}

}  // namespace

std::string NginxUpstreams(const std::vector<ServingView>& services) {
  std::string out =
      "# Written by hetsched serve: each service's ready replicas, weighted by what one carries\n"
      "# within the SLO (requests/s). Rewritten whole when they change; reload nginx then.\n";
  for (const ServingView& v : services) {
    out += fmt::format("upstream {} {{\n", v.name);
    bool any = false;
    for (const ReplicaView& r : v.replicas) {
      if (r.weight <= 0) continue;
      out += fmt::format("    server {} weight={};  # {} on {}\n", HostPort(r.endpoint), r.weight,
                         r.job, r.device_type);
      any = true;
    }
    // Port 9 (discard) on loopback: a placeholder nginx accepts and never sends to.
    if (!any) out += "    server 127.0.0.1:9 down;  # no replica is ready\n";
    out += "}\n";
  }
  return out;
}

}  // namespace hetsched::svc
