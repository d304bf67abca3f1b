#include "daemon/api/replies.h"

#include <httplib.h>

namespace hetsched::svc {

namespace {

const char* CodeName(util::StatusCode code) {
  switch (code) {
    case util::StatusCode::kInvalidArgument:
    case util::StatusCode::kInfeasible:
      return "invalid_argument";
    case util::StatusCode::kNotFound:
      return "not_found";
    case util::StatusCode::kAlreadyExists:
      return "conflict";
    case util::StatusCode::kMismatch:
      return "idempotency_mismatch";
    case util::StatusCode::kUnavailable:
      return "unavailable";
    default:
      return "internal";
  }
}

int HttpStatus(util::StatusCode code) {
  switch (code) {
    case util::StatusCode::kInvalidArgument:
    case util::StatusCode::kInfeasible:
      return 400;
    case util::StatusCode::kNotFound:
      return 404;
    case util::StatusCode::kAlreadyExists:
      return 409;
    case util::StatusCode::kMismatch:
      return 422;
    case util::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

}  // namespace

void Reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "application/json");
}

void ReplyError(httplib::Response& res, int status, std::string_view code,
                const std::string& message) {
  Reply(res, status, {{"error", {{"code", code}, {"message", message}}}});
  if (status == 503) res.set_header("Retry-After", "1");
}

void ReplyStatus(httplib::Response& res, const util::Status& st) {
  ReplyError(res, HttpStatus(st.code()), CodeName(st.code()), st.message());
}

}  // namespace hetsched::svc
