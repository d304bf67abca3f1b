#include "util/status.h"

namespace hetsched::util {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kInfeasible:
      return "infeasible";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kMismatch:
      return "mismatch";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace hetsched::util
