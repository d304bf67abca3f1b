// libFuzzer target for the daemon's config reader: any bytes, read as a `hetsched serve
// --config` file, must give a config or an InvalidArgument with a "file:..." message. Never a
// crash, a hang, or a leak. An accepted config keeps the limits the daemon relies on (tokens'
// tenants among its tenants, whose weights are positive and parents known). The same
// bytes also go to ParseListen, as a --listen flag.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/api/serve_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hetsched::svc::ServeConfig listen;
  if (hetsched::svc::ParseListen(text, &listen).ok() && (listen.port < 0 || listen.port > 65535)) {
    std::abort();
  }
  auto config = hetsched::svc::ParseServeConfig(text, "fuzz.yaml", "/base");
  if (!config.ok()) {
    if (config.status().code() != hetsched::util::StatusCode::kInvalidArgument) std::abort();
    if (config.status().message().rfind("fuzz.yaml:", 0) != 0) std::abort();
    return 0;
  }
  const hetsched::svc::ServeConfig& c = *config;
  if (c.backend != "virtual" && c.backend != "local") std::abort();
  if (c.port < 0 || c.port > 65535) std::abort();
  if (!(c.time_scale > 0) || c.time_scale > 1e6) std::abort();
  if (!(c.stop_grace_s >= 0) || c.stop_grace_s > 86400) std::abort();
  if (c.database.empty() || c.local_state_dir.empty()) std::abort();
  for (const hetsched::svc::ApiToken& t : c.tokens) {
    if (t.token.size() < 16 || t.token.find_first_of(" \t\r\n") != std::string::npos) {
      std::abort();
    }
    // A token's tenant is one of the config's, and an admin token acts for every tenant.
    if (!t.tenant.empty() &&
        (c.tenants.Find(t.tenant) < 0 || t.role == hetsched::svc::Role::kAdmin)) {
      std::abort();
    }
  }
  for (const hetsched::model::Tenant& t : c.tenants.list) {
    if (!(t.weight > 0) || (!t.parent.empty() && c.tenants.Find(t.parent) < 0)) std::abort();
  }
  return 0;
}
