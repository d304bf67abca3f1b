// Store: the daemon's durable state in one SQLite database in WAL mode: jobs (as submitted, with
// their state), node states, an append-only event log (placements, preemptions, power actions),
// small key/value blobs (the scheduler's learned state) and a bounded series of samples of the
// cluster's figures (the dashboard's charts). What is written here survives a
// kill -9 of the daemon; daemon/service.cc writes before it acts and recovers from it at start.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/job_state.h"
#include "daemon/wal_checkpointer.h"
#include "drive/attempts.h"
#include "util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace hetsched::svc {

// One job as the daemon keeps it.
struct StoredJob {
  std::string name;             // the user's id; unique
  std::string spec_json;        // the job as submitted: a workload-format JSON object + command
  std::string idempotency_key;  // empty when none was given
  JobState state = JobState::kQueued;
  double submitted_s = 0;  // unix seconds
  double started_s = -1;   // first start, unix seconds; -1: never
  double ended_s = -1;     // completion, failure or cancellation; -1: not ended
  std::optional<int> exit_status;
  std::string device_type;  // while starting / running / stopping: where
  std::string node;
  std::vector<int32_t> devices;  // cluster device ids
  double done_work = 0;          // steps its last checkpoint kept
  int32_t preemptions = 0;
  std::string message;   // why it failed or was cancelled; empty otherwise
  double arrival_s = 0;  // scheduler seconds of its submission
  int64_t attempt = 0;   // starts so far; the backend's runs carry it
  // While stopping: why its attempt was asked to stop (kNone otherwise).
  drive::StopCause stop = drive::StopCause::kNone;
  // What the scheduling policy remembers of the job (attained service, LP time per type), as
  // JSON written by the service; empty when nothing.
  std::string policy_state;
  // The spec's tenant, "" for none (a column of its own, indexed for EndedJobsQuery::tenant).
  std::string tenant;
};

struct StoredNode {
  std::string name;
  bool drained = false;
  std::string power_state;  // "on", "off", "suspending", "booting", "down", "removed"
  double since_s = 0;       // unix seconds of the last change
  // A node that joined at run time (not in the cluster file): its description as JSON,
  // {"rack": NAME, "devices": [[TYPE, COUNT], ...]}; empty for the cluster file's nodes.
  std::string spec;
};

struct StoredEvent {
  int64_t seq = 0;      // increasing, assigned by the store
  double at_s = 0;      // unix seconds
  std::string kind;     // e.g. "place", "preempt", "finish", "power", "repair"
  std::string subject;  // a job or node name
  std::string detail;   // free text or JSON
};

// One sample of the figures the dashboard charts, as the service took it: the modeled draw of
// every node, the jobs queued and running, and the devices used and offered per type.
struct StoredSample {
  int64_t seq = 0;  // increasing, assigned by the store
  double at_s = 0;  // unix seconds
  double power_w = 0;
  int64_t jobs_queued = 0;
  int64_t jobs_running = 0;
  struct Type {
    std::string type;
    int32_t used = 0;
    int32_t offered = 0;
    bool operator==(const Type&) const = default;
  };
  std::vector<Type> types;  // by type name
};

// A job's place in submission order: (submitted_s, name), names breaking ties.
struct SubmissionKey {
  double submitted_s = 0;
  std::string name;
  auto operator<=>(const SubmissionKey&) const = default;
};

// Which ended jobs (completed, failed, cancelled) Store::EndedJobs reads: those in `state`
// (an ended one; all three when none) that ended by `as_of_s` (ended_s <= as_of_s) when
// `ended_by_as_of`, else after it; after `after` in submission order when given; of `tenant`
// (StoredJob::tenant) when given; at most `limit`.
struct EndedJobsQuery {
  std::optional<JobState> state;
  double as_of_s = 0;
  bool ended_by_as_of = true;
  std::optional<SubmissionKey> after;
  size_t limit = 0;
  std::optional<std::string> tenant;
};

// Not thread-safe: one thread at a time may call it (the service calls it under its lock only,
// from its control loop and the API's threads). Its SQLite connection is opened without
// SQLite's own mutex (SQLITE_OPEN_NOMUTEX, SQLite's multi-thread mode) for that reason: the
// mutex was taken at every column read, 4 % of a restart's CPU. Every write is durable when
// the call returns (or, inside Begin/Commit, when Commit returns). Errors are kIoError with
// SQLite's message and the database path. WAL checkpoints run on a thread of the Store's own
// (WalCheckpointer): a write waits only for the little the thread left to copy when the WAL
// reaches its bound.
class Store {
 public:
  // Opens or creates `path` (WAL mode, schema created or checked) and starts its checkpoints'
  // thread. `synchronous_full`: fsync the WAL at every commit (survives power loss); otherwise
  // NORMAL (survives a process crash, fsync at checkpoints only). A file that is not a hetsched
  // database, or one written by a newer schema version, is an error naming the path:
  // kInvalidArgument for an SQLite database of another application or schema (the file is left as
  // it was), kIoError for a file SQLite cannot read at all.
  static util::Result<std::unique_ptr<Store>> Open(const std::string& path,
                                                   bool synchronous_full = false);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Groups the writes until Commit into one transaction (the service commits a batch of
  // submissions at once). Nested Begin, and Commit without Begin, are programmer errors
  // (kInternal). A write that fails inside the transaction leaves the others in it: the caller
  // may still Commit them, or destroy the Store, which rolls back an open transaction. After
  // Commit returns no transaction is open; when it fails, the batch was rolled back. If SQLite
  // rolled the transaction back by itself (it does after some I/O errors), every call fails
  // until Commit, rather than write outside the batch.
  util::Status Begin();
  util::Status Commit();

  // kInvalidArgument when a job of that name exists already.
  util::Status InsertJob(const StoredJob& job);
  // Replaces the row of job.name (kNotFound when none).
  util::Status UpdateJob(const StoredJob& job);
  util::Result<std::optional<StoredJob>> GetJob(const std::string& name);
  // Jobs in submission order (of InsertJob; UpdateJob keeps a job's place); `include_ended`
  // false: only queued, starting, running, stopping (read as ForEachLiveJob reads them).
  util::Result<std::vector<StoredJob>> LoadJobs(bool include_ended);
  // The live jobs (queued, starting, running, stopping), in submission order, read one row at a
  // time and handed to `visit`, which may move out of the job: a restart holds no copy of them
  // all (80 MB at 230,000 live jobs). Stops at the first error of `visit`, and returns it.
  // `visit` must not write to the store: the rows are read while it runs.
  util::Status ForEachLiveJob(const std::function<util::Status(StoredJob&)>& visit);
  // How many jobs ForEachLiveJob would visit now (read from an index).
  util::Result<int64_t> CountLiveJobs();
  // Ended jobs as EndedJobsQuery selects them, in submission order: by (submitted_s, name).
  util::Result<std::vector<StoredJob>> EndedJobs(const EndedJobsQuery& query);
  // The statement EndedJobs runs for one tenant (?9): it walks the index jobs_by_tenant from the
  // position (?6, ?7) rather than every job. Public for the tests of its query plan.
  static constexpr std::string_view kEndedJobsOfTenantSql =
      "SELECT name, spec_json, idempotency_key, state, submitted_s, started_s, ended_s, "
      "exit_status, device_type, node, devices, done_work, preemptions, message, arrival_s, "
      "attempt, stop_reason, policy_state, tenant "
      "FROM jobs WHERE tenant = ?9 AND +state IN (?1, ?2, ?3) AND (ended_s <= ?4) = ?5 "
      "AND (submitted_s, name) > (?6, ?7) "
      "ORDER BY submitted_s, name LIMIT ?8";
  // Removes ended jobs that ended before `before_s` (retention); returns how many.
  util::Result<int64_t> PruneEndedJobs(double before_s);

  util::Status PutNode(const StoredNode& node);       // insert or replace
  util::Result<std::vector<StoredNode>> LoadNodes();  // by name

  util::Status AppendEvent(const StoredEvent& event);  // seq is assigned
  // The newest `limit` events about `subject` (all subjects when empty), oldest first.
  // A negative limit is kInvalidArgument.
  util::Result<std::vector<StoredEvent>> Events(const std::string& subject, int limit);

  // Appends `sample` (its seq is assigned) and deletes every sample but the newest `keep`, both
  // or neither. A `keep` below 1 is kInvalidArgument.
  util::Status AppendSample(const StoredSample& sample, int64_t keep);
  // Samples taken at or after `since_s` with a seq above `after_seq`, oldest first (by seq), at
  // most `limit`.
  util::Result<std::vector<StoredSample>> Samples(double since_s, int64_t after_seq, size_t limit);

  util::Status Put(const std::string& key, const std::string& value);
  util::Result<std::optional<std::string>> Get(const std::string& key);

  const std::string& path() const { return path_; }

 private:
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // Checks that the file is ours (creating the schema in a new one), then sets the pragmas.
  util::Status Initialize(bool synchronous_full);
  // The cached prepared statement for `sql`, prepared on first use; reset after every use.
  util::Result<sqlite3_stmt*> Prepared(std::string_view sql);
  // Runs `sql`: one or more statements without parameters whose rows are not wanted.
  util::Status Exec(const char* sql, std::string_view doing);
  // Brings a file of schema `version` (1 or 2) to kSchemaVersion, inside Initialize's
  // transaction.
  util::Status Upgrade(int64_t version);
  // AppendSample's writes, inside its savepoint.
  util::Status InsertSample(const StoredSample& sample, int64_t keep);
  // kIoError "<path>: <doing>: <SQLite's last error message>".
  util::Status Error(std::string_view doing) const;

  sqlite3* db_;
  std::string path_;
  bool in_transaction_ = false;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
  std::unique_ptr<WalCheckpointer> checkpointer_;
};

}  // namespace hetsched::svc
