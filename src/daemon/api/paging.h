// Paging of the API's lists (docs/api.md, "Lists and pages"): the `limit` parameter and the
// cursors that say where the next page starts. A cursor is opaque to clients: base64url of a
// small JSON object that names its list, so one list's cursor is refused by another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/job_state.h"
#include "daemon/service.h"
#include "util/status.h"

namespace hetsched::svc {

inline constexpr size_t kDefaultPageLimit = 1000;
inline constexpr size_t kMaxPageLimit = 100000;

// `limit`'s text: a whole number from 1 to kMaxPageLimit; kInvalidArgument naming `limit`.
util::Result<size_t> ParsePageLimit(const std::string& text);

// The cursors below are read back by the matching Read function; anything else (another
// list's cursor, a cursor changed by hand, a job cursor sent with another `state` than the
// pages before) is kInvalidArgument naming `cursor`.

// GET /v1/jobs: the position after a page and the state filter the pages are read under.
std::string JobCursor(const JobPosition& position, std::optional<JobState> state);
util::Result<JobPosition> ReadJobCursor(std::string_view cursor, std::optional<JobState> state);

// GET /v1/nodes: after the node at a cluster index.
std::string NodeCursor(int32_t after);
util::Result<int32_t> ReadNodeCursor(std::string_view cursor);

// GET /v1/history: after the sample of a seq, taken at or after the first page's `since`.
struct HistoryPosition {
  double since_s = 0;
  int64_t after = 0;
};
std::string HistoryCursor(const HistoryPosition& position);
util::Result<HistoryPosition> ReadHistoryCursor(std::string_view cursor);

// `since` of GET /v1/history: unix seconds (a number), or a duration before `now_s` with its
// unit ("30m", "2h"); kInvalidArgument naming `since`.
util::Result<double> ParseSince(const std::string& text, double now_s);

// GET /v1/k8s/nodes: after the node of a name.
std::string KubernetesNodeCursor(const std::string& after);
util::Result<std::string> ReadKubernetesNodeCursor(std::string_view cursor);

}  // namespace hetsched::svc
