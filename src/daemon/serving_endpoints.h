// The endpoints a gateway sends a service's traffic to, as a file a proxy reloads: one nginx
// `upstream` block per service, its ready replicas as `server HOST:PORT weight=W;` lines
// (docs/serving-live.md#endpoints-for-a-gateway).
#pragma once

#include <string>
#include <vector>

#include "daemon/serving_view.h"

namespace hetsched::svc {

// The upstream blocks of `services`, published replicas only (ReplicaView::weight > 0). A
// service with none gets one server marked `down` (nginx refuses an empty upstream), so the
// proxy answers 502 for it rather than failing to load the file.
std::string NginxUpstreams(const std::vector<ServingView>& services);

}  // namespace hetsched::svc
