// The JSON of GET /v1/services/{name} (docs/api.md): a live service's replicas, what they
// measured and the replica plan with its reason.
#pragma once

#include <nlohmann/json.hpp>

#include "daemon/serving_loop.h"

namespace hetsched::svc {

nlohmann::json ServingJson(const ServingView& v);

}  // namespace hetsched::svc
