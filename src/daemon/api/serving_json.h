// The JSON of GET /v1/services/{name} (docs/api.md): a live service's replicas, what they
// measured and the replica plan with its reason; of GET /v1/services, the endpoints a gateway
// sends traffic to; and the body of POST /v1/services/{name}/load.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "daemon/serving_loop.h"
#include "util/status.h"

namespace hetsched::svc {

nlohmann::json ServingJson(const ServingView& v);

// One service of GET /v1/services: its name, state ("ready" when a replica is published, else
// "unavailable"), message and published replicas with their weights.
nlohmann::json ServiceEndpointsJson(const ServingView& v);

// The requests/s of a gateway's {"requests_per_s": R} (R finite, 0 to 1e6, no other field),
// or kInvalidArgument naming the field and what was expected.
util::Result<double> ParsePushedLoad(std::string_view body);

}  // namespace hetsched::svc
