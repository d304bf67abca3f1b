// Files the daemon serves from its binary: the dashboard page and the OpenAPI document, turned
// into C++ at build time (cmake/embed.cmake) from src/daemon/api/dashboard.html and
// src/daemon/api/openapi.json.
#pragma once

#include <string_view>

namespace hetsched::svc::embedded {

extern const std::string_view kDashboardHtml;
extern const std::string_view kOpenApiJson;

}  // namespace hetsched::svc::embedded
