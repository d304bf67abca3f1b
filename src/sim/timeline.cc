#include "sim/timeline.h"

namespace hetsched::sim {

const char* RunEndName(RunEnd end) {
  switch (end) {
    case RunEnd::kCompleted:
      return "completed";
    case RunEnd::kPreempted:
      return "preempted";
    case RunEnd::kFailed:
      return "failed";
    case RunEnd::kFault:
      return "fault";
    case RunEnd::kRunning:
      return "running";
  }
  return "?";
}

nlohmann::json ToJson(const Timeline& t) {
  nlohmann::json j;
  j["sample_s"] = t.sample_s;
  j["types"] = t.types;
  j["type_total"] = t.type_total;
  j["nodes"] = t.nodes;
  nlohmann::json samples = nlohmann::json::array();
  for (const TimelineSample& s : t.samples) {
    samples.push_back({{"time_s", s.time_s},
                       {"busy", s.busy},
                       {"queued", s.queued},
                       {"running", s.running},
                       {"power_w", s.power_w}});
  }
  j["samples"] = std::move(samples);
  nlohmann::json runs = nlohmann::json::array();
  for (const RunSpan& r : t.runs) {
    runs.push_back({{"job", r.job},
                    {"type", r.type},
                    {"nodes", r.nodes},
                    {"devices", r.devices},
                    {"start_s", r.start_s},
                    {"end_s", r.end_s},
                    {"end", RunEndName(r.end)}});
  }
  j["runs"] = std::move(runs);
  return j;
}

}  // namespace hetsched::sim
