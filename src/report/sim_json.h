// JSON of simulation results (`simulate --json`, `compare --json`): every SimResult field,
// the per-job outcomes when recorded, and the timeline's samples and runs when one was taken.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/engine.h"
#include "sim/timeline.h"

namespace hetsched::report {

nlohmann::json ToJson(const sim::SimResult& result);
nlohmann::json ToJson(const sim::Timeline& timeline);

}  // namespace hetsched::report
