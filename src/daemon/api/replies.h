// Replies of the daemon's HTTP API (docs/api.md): JSON bodies, and errors as
// {"error": {"code", "message"}} with the HTTP status a util::Status code stands for.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"

namespace httplib {
struct Response;
}  // namespace httplib

namespace hetsched::svc {

// `body` as one line of JSON with `status`.
void Reply(httplib::Response& res, int status, const nlohmann::json& body);
// An error reply; a 503 also says when to retry.
void ReplyError(httplib::Response& res, int status, std::string_view code,
                const std::string& message);
// The error reply for `st`: 400 for bad input, 404, 409, 422, 503, else 500.
void ReplyStatus(httplib::Response& res, const util::Status& st);

}  // namespace hetsched::svc
