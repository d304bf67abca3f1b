// libFuzzer target for POST /v1/plan bodies: any bytes give a request or an InvalidArgument with
// a message; never a crash, a hang or a leak. An accepted request names exactly one of a model
// and a DAG, and its options are in range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/plan_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto request = hetsched::svc::ParsePlanRequest(body);
  if (!request.ok()) {
    if (request.status().code() != hetsched::util::StatusCode::kInvalidArgument) std::abort();
    if (request.status().message().empty()) std::abort();
    return 0;
  }
  if (request->model.empty() == request->dag_json.empty()) std::abort();
  if (request->partition.max_stages < 1 || request->partition.max_stages > 1024) std::abort();
  if (!(request->partition.memory_reserve >= 0 && request->partition.memory_reserve <= 0.95))
    std::abort();
  if (request->nodes != "idle" && request->nodes != "all") std::abort();
  return 0;
}
