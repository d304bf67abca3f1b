// What the scheduling policy remembers of a job (sched::JobHistory: attained service, LP time
// per type) as the store keeps it, StoredJob::policy_state: a JSON object written by the
// service at a job's changes and read back by a restart.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sched/job_record.h"

namespace hetsched::svc {

// {"attained_norm_s":N,"attained_s":N} and, when the job has time per type, "received_s":
// {TYPE: SECONDS, ...} (nlohmann's dump: keys sorted, no spaces).
std::string HistoryJson(const sched::JobHistory& h);

// What HistoryJson wrote; nullopt for anything else (the job then starts without history). The
// form without received_s, every job's but under the LP policies, is read without building a
// JSON document: a restart reads one per live job.
std::optional<sched::JobHistory> ParseHistory(std::string_view text);

}  // namespace hetsched::svc
