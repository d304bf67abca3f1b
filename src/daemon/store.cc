#include "daemon/store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <memory>
#include <utility>

namespace hetsched::svc {
namespace {

// PRAGMA synchronous of the Store's connections (Open says what each mode survives).
const char* SynchronousMode(bool full) { return full ? "FULL" : "NORMAL"; }

// PRAGMA application_id of every hetsched database ("hsch" in ASCII): Open refuses the files of
// other applications instead of adding tables to them.
constexpr int64_t kApplicationId = 0x68736368;
// PRAGMA user_version: the schema this build writes, and the newest it reads.
// Version 2 added jobs.policy_state and nodes.spec, version 3 jobs.tenant (the spec's tenant,
// indexed: a tenant's ended jobs are listed without reading every spec); files of versions 1
// and 2 are upgraded when opened (Store::Upgrade).
constexpr int64_t kSchemaVersion = 3;
// Version 3's column, filled from the specs of the jobs a file holds, and its index.
constexpr const char* kTenantColumn = R"sql(
ALTER TABLE jobs ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
UPDATE jobs SET tenant = json_extract(spec_json, '$.tenant')
  WHERE json_valid(spec_json) AND json_type(spec_json, '$.tenant') = 'text';
CREATE INDEX jobs_by_tenant ON jobs (tenant, submitted_s, name);
PRAGMA user_version = 3;
)sql";
// Orders GET /v1/jobs's pages of ended jobs. Added after schema 2 without a version change (an
// index changes nothing an older build reads), so every file gets it when opened.
constexpr const char* kSubmissionIndex =
    "CREATE INDEX IF NOT EXISTS jobs_by_submission ON jobs (submitted_s, name)";
// The samples behind GET /v1/history (one row per sample, one per device type of it), added
// after schema 2 in the same way: an older build reading the file leaves the tables alone.
constexpr const char* kSampleTables = R"sql(
CREATE TABLE IF NOT EXISTS samples (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at_s REAL NOT NULL,
  power_w REAL NOT NULL,
  jobs_queued INTEGER NOT NULL,
  jobs_running INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sample_types (
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  used INTEGER NOT NULL,
  offered INTEGER NOT NULL,
  PRIMARY KEY (seq, type)
) WITHOUT ROWID;
)sql";
// How long a statement waits for another connection's lock (say, an operator's sqlite3 shell).
constexpr int kBusyTimeoutMs = 5000;

// Times are unix seconds (REAL, -1: not yet); `devices` is a comma-separated list of cluster
// device ids ("" for none); `seq` orders jobs by submission.
constexpr const char* kSchema = R"sql(
CREATE TABLE jobs (
  name TEXT PRIMARY KEY NOT NULL,
  seq INTEGER NOT NULL,
  spec_json TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  state TEXT NOT NULL,
  submitted_s REAL NOT NULL,
  started_s REAL NOT NULL,
  ended_s REAL NOT NULL,
  exit_status INTEGER,
  device_type TEXT NOT NULL,
  node TEXT NOT NULL,
  devices TEXT NOT NULL,
  done_work REAL NOT NULL,
  preemptions INTEGER NOT NULL,
  message TEXT NOT NULL,
  arrival_s REAL NOT NULL,
  attempt INTEGER NOT NULL,
  stop_reason TEXT NOT NULL,
  policy_state TEXT NOT NULL DEFAULT '',
  tenant TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX jobs_by_seq ON jobs (seq);
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE INDEX jobs_by_tenant ON jobs (tenant, submitted_s, name);
CREATE TABLE nodes (
  name TEXT PRIMARY KEY NOT NULL,
  drained INTEGER NOT NULL,
  power_state TEXT NOT NULL,
  since_s REAL NOT NULL,
  spec TEXT NOT NULL DEFAULT ''
);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at_s REAL NOT NULL,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX events_by_subject ON events (subject, seq);
CREATE TABLE kv (
  key TEXT PRIMARY KEY NOT NULL,
  value BLOB NOT NULL
);
)sql";

// Job statements share parameter numbers ?1..?19 (BindJob) and, for reads, column order
// 0..18 (ReadJob). A new job goes after every job stored: MAX(seq) + 1. The live and the ended
// states are bound as parameters (BindStates), named as JobStateName names them.
constexpr std::string_view kInsertJob =
    "INSERT INTO jobs (seq, name, spec_json, idempotency_key, state, submitted_s, started_s, "
    "ended_s, exit_status, device_type, node, devices, done_work, preemptions, message, "
    "arrival_s, attempt, stop_reason, policy_state, tenant) VALUES "
    "((SELECT IFNULL(MAX(seq), 0) + 1 FROM jobs), "
    "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)";
constexpr std::string_view kUpdateJob =
    "UPDATE jobs SET spec_json = ?2, idempotency_key = ?3, state = ?4, submitted_s = ?5, "
    "started_s = ?6, ended_s = ?7, exit_status = ?8, device_type = ?9, node = ?10, "
    "devices = ?11, done_work = ?12, preemptions = ?13, message = ?14, arrival_s = ?15, "
    "attempt = ?16, stop_reason = ?17, policy_state = ?18, tenant = ?19 WHERE name = ?1";
constexpr std::string_view kGetJob =
    "SELECT name, spec_json, idempotency_key, state, submitted_s, started_s, ended_s, "
    "exit_status, device_type, node, devices, done_work, preemptions, message, arrival_s, "
    "attempt, stop_reason, policy_state, tenant "
    "FROM jobs WHERE name = ?1";
constexpr std::string_view kLoadAllJobs =
    "SELECT name, spec_json, idempotency_key, state, submitted_s, started_s, ended_s, "
    "exit_status, device_type, node, devices, done_work, preemptions, message, arrival_s, "
    "attempt, stop_reason, policy_state, tenant "
    "FROM jobs ORDER BY seq";
// The jobs of one state ({}: its name, a literal, so each state has a statement of its own),
// seq last, in submission order along jobs_by_state (state, seq): SQLite sorts nothing.
// ForEachLiveJob merges the live states' runs by seq (ORDER BY seq over all 230,000 live jobs
// at once sorted whole rows: 0.67 s in sqlite3's shell, against 0.50 s unsorted).
constexpr std::string_view kJobsOfStateInOrder =
    "SELECT name, spec_json, idempotency_key, state, submitted_s, started_s, ended_s, "
    "exit_status, device_type, node, devices, done_work, preemptions, message, arrival_s, "
    "attempt, stop_reason, policy_state, tenant, seq "
    "FROM jobs WHERE state = '{}' ORDER BY seq";
constexpr std::string_view kCountActiveJobs =
    "SELECT COUNT(*) FROM jobs WHERE state IN (?1, ?2, ?3, ?4)";
// Ended jobs (?1..?3: the states asked for) on one side of a time (?4; ?5 = 1: ended by then,
// 0: after it), after a position in submission order (?6, ?7), at most ?8 of them. The unary
// + keeps SQLite from reading them by state and sorting them all: it walks jobs_by_submission
// from the position and stops at the limit.
constexpr std::string_view kEndedJobs =
    "SELECT name, spec_json, idempotency_key, state, submitted_s, started_s, ended_s, "
    "exit_status, device_type, node, devices, done_work, preemptions, message, arrival_s, "
    "attempt, stop_reason, policy_state, tenant "
    "FROM jobs WHERE +state IN (?1, ?2, ?3) AND (ended_s <= ?4) = ?5 "
    "AND (submitted_s, name) > (?6, ?7) "
    "ORDER BY submitted_s, name LIMIT ?8";
constexpr std::string_view kPruneJobs =
    "DELETE FROM jobs WHERE state IN (?1, ?2, ?3) AND ended_s < ?4";
constexpr std::string_view kPutNode =
    "INSERT OR REPLACE INTO nodes (name, drained, power_state, since_s, spec) "
    "VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr std::string_view kLoadNodes =
    "SELECT name, drained, power_state, since_s, spec FROM nodes ORDER BY name";
constexpr std::string_view kAppendEvent =
    "INSERT INTO events (at_s, kind, subject, detail) VALUES (?1, ?2, ?3, ?4)";
constexpr std::string_view kAllEvents =
    "SELECT seq, at_s, kind, subject, detail FROM "
    "(SELECT * FROM events ORDER BY seq DESC LIMIT ?1) ORDER BY seq";
constexpr std::string_view kEventsAbout =
    "SELECT seq, at_s, kind, subject, detail FROM "
    "(SELECT * FROM events WHERE subject = ?1 ORDER BY seq DESC LIMIT ?2) ORDER BY seq";
constexpr std::string_view kInsertSample =
    "INSERT INTO samples (at_s, power_w, jobs_queued, jobs_running) VALUES (?1, ?2, ?3, ?4)";
constexpr std::string_view kInsertSampleType =
    "INSERT INTO sample_types (seq, type, used, offered) VALUES (?1, ?2, ?3, ?4)";
constexpr std::string_view kPruneSamples = "DELETE FROM samples WHERE seq <= ?1";
constexpr std::string_view kPruneSampleTypes = "DELETE FROM sample_types WHERE seq <= ?1";
constexpr std::string_view kSamples =
    "SELECT seq, at_s, power_w, jobs_queued, jobs_running FROM samples "
    "WHERE seq > ?1 AND at_s >= ?2 ORDER BY seq LIMIT ?3";
constexpr std::string_view kSampleTypes =
    "SELECT seq, type, used, offered FROM sample_types WHERE seq BETWEEN ?1 AND ?2 "
    "ORDER BY seq, type";
constexpr std::string_view kPut =
    "INSERT INTO kv (key, value) VALUES (?1, ?2) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value";
constexpr std::string_view kGet = "SELECT value FROM kv WHERE key = ?1";

// One use of a cached statement: binds its parameters in order (copying them), steps it, reads
// columns, and resets it when it goes out of scope, so that the statement holds no read
// transaction open (which would keep WAL checkpoints from completing) nor copies of large values.
class Query {
 public:
  explicit Query(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Query() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  Query& Text(std::string_view v) {
    // A null data() would bind NULL, not the empty string.
    return Bound(sqlite3_bind_text64(stmt_, ++param_, v.empty() ? "" : v.data(), v.size(),
                                     SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  Query& Blob(std::string_view v) {
    return Bound(sqlite3_bind_blob64(stmt_, ++param_, v.empty() ? "" : v.data(), v.size(),
                                     SQLITE_TRANSIENT));
  }
  Query& Int(int64_t v) { return Bound(sqlite3_bind_int64(stmt_, ++param_, v)); }
  Query& Real(double v) { return Bound(sqlite3_bind_double(stmt_, ++param_, v)); }
  Query& Null() { return Bound(sqlite3_bind_null(stmt_, ++param_)); }

  // SQLITE_ROW, SQLITE_DONE, or the error code of the first failed bind or of the step.
  int Step() { return bind_rc_ != SQLITE_OK ? bind_rc_ : sqlite3_step(stmt_); }

  // Text and blob columns alike, as bytes.
  std::string BytesAt(int col) const {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    const int size = sqlite3_column_bytes(stmt_, col);
    return data == nullptr ? std::string() : std::string(data, static_cast<size_t>(size));
  }
  int64_t IntAt(int col) const { return sqlite3_column_int64(stmt_, col); }
  double RealAt(int col) const { return sqlite3_column_double(stmt_, col); }
  bool NullAt(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  Query& Bound(int rc) {
    if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }

  sqlite3_stmt* stmt_;
  int param_ = 0;
  int bind_rc_ = SQLITE_OK;
};

std::string FormatDevices(const std::vector<int32_t>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(devices[i]);
  }
  return out;
}

// The inverse of FormatDevices; nullopt for anything but a comma-separated list of int32s.
std::optional<std::vector<int32_t>> ParseDevices(std::string_view text) {
  std::vector<int32_t> devices;
  if (text.empty()) return devices;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    int32_t id = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    // An empty item is an error too (std::errc::invalid_argument).
    if (ec != std::errc() || end != item.data() + item.size()) return std::nullopt;
    devices.push_back(id);
    if (comma == std::string_view::npos) return devices;
    text.remove_prefix(comma + 1);
  }
}

// The stop_reason column: empty when none (the text every schema version wrote).
std::string_view StopCauseText(drive::StopCause cause) {
  switch (cause) {
    case drive::StopCause::kPreempt:
      return "preempt";
    case drive::StopCause::kCancel:
      return "cancel";
    case drive::StopCause::kTimeLimit:
      return "time-limit";
    case drive::StopCause::kNone:
      break;
  }
  return "";
}

std::optional<drive::StopCause> ParseStopCause(std::string_view text) {
  for (const drive::StopCause cause : {drive::StopCause::kNone, drive::StopCause::kPreempt,
                                       drive::StopCause::kCancel, drive::StopCause::kTimeLimit}) {
    if (StopCauseText(cause) == text) return cause;
  }
  return std::nullopt;
}

// Binds the names of the ended states (`ended`) or of the live ones, in order.
void BindStates(Query& q, bool ended) {
  for (const JobState state : kJobStates) {
    if (IsEnded(state) == ended) q.Text(JobStateName(state));
  }
}

// Binds ?1..?18 of the job statements.
void BindJob(Query& q, const StoredJob& job) {
  q.Text(job.name)
      .Text(job.spec_json)
      .Text(job.idempotency_key)
      .Text(JobStateName(job.state))
      .Real(job.submitted_s)
      .Real(job.started_s)
      .Real(job.ended_s);
  if (job.exit_status.has_value()) {
    q.Int(*job.exit_status);
  } else {
    q.Null();
  }
  q.Text(job.device_type)
      .Text(job.node)
      .Text(FormatDevices(job.devices))
      .Real(job.done_work)
      .Int(job.preemptions)
      .Text(job.message)
      .Real(job.arrival_s)
      .Int(job.attempt)
      .Text(StopCauseText(job.stop))
      .Text(job.policy_state)
      .Text(job.tenant);
}

util::Result<StoredJob> ReadJob(const Query& q, const std::string& path) {
  StoredJob job;
  job.name = q.BytesAt(0);
  job.spec_json = q.BytesAt(1);
  job.idempotency_key = q.BytesAt(2);
  const std::string state = q.BytesAt(3);
  const std::optional<JobState> parsed_state = ParseJobState(state);
  if (!parsed_state) {
    return util::Status::IoError(fmt::format("{}: job {}: state \"{}\" is not one of {}", path,
                                             job.name, state, JobStateNames()));
  }
  job.state = *parsed_state;
  job.submitted_s = q.RealAt(4);
  job.started_s = q.RealAt(5);
  job.ended_s = q.RealAt(6);
  if (!q.NullAt(7)) job.exit_status = static_cast<int>(q.IntAt(7));
  job.device_type = q.BytesAt(8);
  job.node = q.BytesAt(9);
  const std::string devices = q.BytesAt(10);
  std::optional<std::vector<int32_t>> parsed = ParseDevices(devices);
  if (!parsed.has_value()) {
    return util::Status::IoError(
        fmt::format("{}: job {}: devices \"{}\" is not a comma-separated list of device ids", path,
                    job.name, devices));
  }
  job.devices = std::move(*parsed);
  job.done_work = q.RealAt(11);
  job.preemptions = static_cast<int32_t>(q.IntAt(12));
  job.message = q.BytesAt(13);
  job.arrival_s = q.RealAt(14);
  job.attempt = q.IntAt(15);
  const std::string stop = q.BytesAt(16);
  const std::optional<drive::StopCause> parsed_stop = ParseStopCause(stop);
  if (!parsed_stop) {
    return util::Status::IoError(
        fmt::format("{}: job {}: stop_reason \"{}\" is not preempt, cancel, time-limit or empty",
                    path, job.name, stop));
  }
  job.stop = *parsed_stop;
  job.policy_state = q.BytesAt(17);
  job.tenant = q.BytesAt(18);
  return job;
}

}  // namespace

util::Result<std::unique_ptr<Store>> Store::Open(const std::string& path, bool synchronous_full) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  // The Store owns the handle (even a failed open's) from here, so every return closes it.
  std::unique_ptr<Store> store(new Store(db, path));
  if (rc != SQLITE_OK) return store->Error("opening");
  RETURN_IF_ERROR(store->Initialize(synchronous_full));
  ASSIGN_OR_RETURN(store->checkpointer_,
                   WalCheckpointer::Start(db, path, SynchronousMode(synchronous_full)));
  return store;
}

util::Status Store::Initialize(bool synchronous_full) {
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  // The file is checked and the schema created under one write lock, so that two processes
  // creating the same new file cannot both create the schema. This is the first read of the
  // file, where SQLite finds one that is not a database at all. An error returns with the
  // transaction open: the destructor rolls it back.
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "reading the header"));
  auto read_int = [this](std::string_view sql) -> util::Result<int64_t> {
    ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(sql));
    Query q(stmt);
    if (q.Step() != SQLITE_ROW) return Error(fmt::format("running {}", sql));
    return q.IntAt(0);
  };
  ASSIGN_OR_RETURN(const int64_t application_id, read_int("PRAGMA application_id"));
  ASSIGN_OR_RETURN(const int64_t version, read_int("PRAGMA user_version"));
  ASSIGN_OR_RETURN(const int64_t objects, read_int("SELECT COUNT(*) FROM sqlite_master"));
  if (application_id == 0 && version == 0 && objects == 0) {  // a new or empty file
    const std::string create =
        fmt::format("{}PRAGMA application_id = {}; PRAGMA user_version = {};", kSchema,
                    kApplicationId, kSchemaVersion);
    RETURN_IF_ERROR(Exec(create.c_str(), "creating the schema"));
  } else if (application_id != kApplicationId || version < 1) {
    return util::Status::InvalidArgument(
        fmt::format("{} is not a hetsched database (application_id {}, user_version {})", path_,
                    application_id, version));
  } else if (version < kSchemaVersion) {
    RETURN_IF_ERROR(Upgrade(version));
  } else if (version > kSchemaVersion) {
    return util::Status::InvalidArgument(
        fmt::format("{} was written by a newer hetsched (schema {}, this build reads up to {})",
                    path_, version, kSchemaVersion));
  }
  RETURN_IF_ERROR(Exec(kSubmissionIndex, "creating the index of jobs by submission"));
  RETURN_IF_ERROR(Exec(kSampleTables, "creating the tables of samples"));
  RETURN_IF_ERROR(Exec("COMMIT", "creating the schema"));

  // Switched only after the check, so that another application's file is never converted. The
  // answer is the mode in effect: SQLite keeps the old one where WAL is impossible (a VFS
  // without shared memory, as on some network file systems).
  {
    ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("PRAGMA journal_mode = WAL"));
    Query q(stmt);
    if (q.Step() != SQLITE_ROW) return Error("setting WAL mode");
    const std::string mode = q.BytesAt(0);
    if (mode != "wal") {
      return util::Status::IoError(
          fmt::format("{}: cannot use WAL mode (the journal mode stays \"{}\")", path_, mode));
    }
  }
  const std::string synchronous =
      fmt::format("PRAGMA synchronous = {}", SynchronousMode(synchronous_full));
  return Exec(synchronous.c_str(), "setting the synchronous mode");
}

Store::~Store() {
  // An open transaction is a batch the caller abandoned: none of it may become durable.
  // (Statements are reset after every use, so none keeps the rollback from happening.)
  if (db_ != nullptr && !sqlite3_get_autocommit(db_)) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  checkpointer_.reset();
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

util::Status Store::Begin() {
  if (in_transaction_) {
    return util::Status::Internal(fmt::format("{}: Begin inside a transaction", path_));
  }
  // IMMEDIATE takes the write lock now, so a write in the batch never fails on a lock that a
  // concurrent writer took after our first read.
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "beginning a transaction"));
  in_transaction_ = true;
  return util::Status::Ok();
}

util::Status Store::Commit() {
  if (!in_transaction_) {
    return util::Status::Internal(fmt::format("{}: Commit without Begin", path_));
  }
  in_transaction_ = false;
  util::Status status = Exec("COMMIT", "committing");
  // COMMIT can fail and leave the transaction open (SQLITE_BUSY): end it, as documented.
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return status;
}

util::Status Store::InsertJob(const StoredJob& job) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kInsertJob));
  Query q(stmt);
  BindJob(q, job);
  if (q.Step() == SQLITE_DONE) return util::Status::Ok();
  if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY) {
    return util::Status::InvalidArgument(fmt::format("job {} exists", job.name));
  }
  return Error(fmt::format("inserting job {}", job.name));
}

util::Status Store::UpdateJob(const StoredJob& job) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kUpdateJob));
  Query q(stmt);
  BindJob(q, job);
  if (q.Step() != SQLITE_DONE) return Error(fmt::format("updating job {}", job.name));
  if (sqlite3_changes64(db_) == 0) {
    return util::Status::NotFound(fmt::format("job {} does not exist", job.name));
  }
  return util::Status::Ok();
}

util::Result<std::optional<StoredJob>> Store::GetJob(const std::string& name) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kGetJob));
  Query q(stmt);
  q.Text(name);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<StoredJob>();
  if (rc != SQLITE_ROW) return Error(fmt::format("reading job {}", name));
  ASSIGN_OR_RETURN(StoredJob job, ReadJob(q, path_));
  return std::optional<StoredJob>(std::move(job));
}

util::Result<std::vector<StoredJob>> Store::LoadJobs(bool include_ended) {
  std::vector<StoredJob> jobs;
  if (!include_ended) {
    RETURN_IF_ERROR(ForEachLiveJob([&](StoredJob& job) {
      jobs.push_back(std::move(job));
      return util::Status::Ok();
    }));
    return jobs;
  }
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kLoadAllJobs));
  Query q(stmt);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    ASSIGN_OR_RETURN(StoredJob job, ReadJob(q, path_));
    jobs.push_back(std::move(job));
  }
  if (rc != SQLITE_DONE) return Error("loading jobs");
  return jobs;
}

util::Status Store::ForEachLiveJob(const std::function<util::Status(StoredJob&)>& visit) {
  // One run per live state, each in submission order; the next job is the head with the
  // smallest seq (column 19).
  struct Run {
    std::unique_ptr<Query> q;
    bool has_row = false;
  };
  std::vector<Run> runs;
  for (const JobState state : kJobStates) {
    if (IsEnded(state)) continue;
    ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                     Prepared(fmt::format(kJobsOfStateInOrder, JobStateName(state))));
    Run& run = runs.emplace_back();
    run.q = std::make_unique<Query>(stmt);
  }
  const auto step = [&](Run& run) -> util::Status {
    const int rc = run.q->Step();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error("loading jobs");
    run.has_row = rc == SQLITE_ROW;
    return util::Status::Ok();
  };
  for (Run& run : runs) RETURN_IF_ERROR(step(run));
  while (true) {
    Run* next = nullptr;
    for (Run& run : runs) {
      if (run.has_row && (next == nullptr || run.q->IntAt(19) < next->q->IntAt(19))) next = &run;
    }
    if (next == nullptr) return util::Status::Ok();
    ASSIGN_OR_RETURN(StoredJob job, ReadJob(*next->q, path_));
    RETURN_IF_ERROR(visit(job));
    RETURN_IF_ERROR(step(*next));
  }
}

util::Result<int64_t> Store::CountLiveJobs() {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kCountActiveJobs));
  Query q(stmt);
  BindStates(q, /*ended=*/false);
  if (q.Step() != SQLITE_ROW) return Error("counting jobs");
  return q.IntAt(0);
}

util::Result<std::vector<StoredJob>> Store::EndedJobs(const EndedJobsQuery& query) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                   Prepared(query.tenant ? kEndedJobsOfTenantSql : kEndedJobs));
  Query q(stmt);
  if (query.state) {
    for (int i = 0; i < 3; ++i) q.Text(JobStateName(*query.state));
  } else {
    BindStates(q, /*ended=*/true);
  }
  q.Real(query.as_of_s).Int(query.ended_by_as_of ? 1 : 0);
  if (query.after) {
    q.Real(query.after->submitted_s).Text(query.after->name);
  } else {
    q.Real(std::numeric_limits<double>::lowest()).Text("");
  }
  q.Int(static_cast<int64_t>(std::min<size_t>(query.limit, INT64_MAX)));
  if (query.tenant) q.Text(*query.tenant);
  std::vector<StoredJob> jobs;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    ASSIGN_OR_RETURN(StoredJob job, ReadJob(q, path_));
    jobs.push_back(std::move(job));
  }
  if (rc != SQLITE_DONE) return Error("listing ended jobs");
  return jobs;
}

util::Result<int64_t> Store::PruneEndedJobs(double before_s) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kPruneJobs));
  Query q(stmt);
  BindStates(q, /*ended=*/true);
  q.Real(before_s);
  if (q.Step() != SQLITE_DONE) return Error("pruning ended jobs");
  return static_cast<int64_t>(sqlite3_changes64(db_));
}

util::Status Store::PutNode(const StoredNode& node) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kPutNode));
  Query q(stmt);
  q.Text(node.name)
      .Int(node.drained ? 1 : 0)
      .Text(node.power_state)
      .Real(node.since_s)
      .Text(node.spec);
  if (q.Step() != SQLITE_DONE) return Error(fmt::format("writing node {}", node.name));
  return util::Status::Ok();
}

util::Result<std::vector<StoredNode>> Store::LoadNodes() {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kLoadNodes));
  Query q(stmt);
  std::vector<StoredNode> nodes;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    StoredNode node;
    node.name = q.BytesAt(0);
    node.drained = q.IntAt(1) != 0;
    node.power_state = q.BytesAt(2);
    node.since_s = q.RealAt(3);
    node.spec = q.BytesAt(4);
    nodes.push_back(std::move(node));
  }
  if (rc != SQLITE_DONE) return Error("loading nodes");
  return nodes;
}

util::Status Store::AppendEvent(const StoredEvent& event) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kAppendEvent));
  Query q(stmt);
  q.Real(event.at_s).Text(event.kind).Text(event.subject).Text(event.detail);
  if (q.Step() != SQLITE_DONE) {
    return Error(fmt::format("appending a {} event about {}", event.kind, event.subject));
  }
  return util::Status::Ok();
}

util::Result<std::vector<StoredEvent>> Store::Events(const std::string& subject, int limit) {
  // SQLite reads a negative LIMIT as none; the caller meant something else.
  if (limit < 0) {
    return util::Status::InvalidArgument(fmt::format("event limit {} is negative", limit));
  }
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(subject.empty() ? kAllEvents : kEventsAbout));
  Query q(stmt);
  if (!subject.empty()) q.Text(subject);
  q.Int(limit);
  std::vector<StoredEvent> events;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    StoredEvent event;
    event.seq = q.IntAt(0);
    event.at_s = q.RealAt(1);
    event.kind = q.BytesAt(2);
    event.subject = q.BytesAt(3);
    event.detail = q.BytesAt(4);
    events.push_back(std::move(event));
  }
  if (rc != SQLITE_DONE) return Error("reading events");
  return events;
}

util::Status Store::AppendSample(const StoredSample& sample, int64_t keep) {
  if (keep < 1) {
    return util::Status::InvalidArgument(fmt::format("samples to keep: {} is below 1", keep));
  }
  // A savepoint nests in a transaction the caller began, and is one of its own outside one.
  RETURN_IF_ERROR(Exec("SAVEPOINT append_sample", "appending a sample"));
  util::Status status = InsertSample(sample, keep);
  if (!status.ok()) sqlite3_exec(db_, "ROLLBACK TO append_sample", nullptr, nullptr, nullptr);
  util::Status released = Exec("RELEASE append_sample", "appending a sample");
  return status.ok() ? released : status;
}

util::Status Store::InsertSample(const StoredSample& sample, int64_t keep) {
  {
    ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kInsertSample));
    Query q(stmt);
    q.Real(sample.at_s).Real(sample.power_w).Int(sample.jobs_queued).Int(sample.jobs_running);
    if (q.Step() != SQLITE_DONE) return Error("appending a sample");
  }
  const int64_t seq = sqlite3_last_insert_rowid(db_);
  for (const StoredSample::Type& t : sample.types) {
    ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kInsertSampleType));
    Query q(stmt);
    q.Int(seq).Text(t.type).Int(t.used).Int(t.offered);
    if (q.Step() != SQLITE_DONE) return Error(fmt::format("appending a sample of {}", t.type));
  }
  for (const std::string_view prune : {kPruneSamples, kPruneSampleTypes}) {
    ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(prune));
    Query q(stmt);
    q.Int(seq - keep);
    if (q.Step() != SQLITE_DONE) return Error("deleting old samples");
  }
  return util::Status::Ok();
}

util::Result<std::vector<StoredSample>> Store::Samples(double since_s, int64_t after_seq,
                                                       size_t limit) {
  std::vector<StoredSample> samples;
  {
    ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kSamples));
    Query q(stmt);
    q.Int(after_seq).Real(since_s).Int(static_cast<int64_t>(std::min<size_t>(limit, INT64_MAX)));
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) {
      StoredSample s;
      s.seq = q.IntAt(0);
      s.at_s = q.RealAt(1);
      s.power_w = q.RealAt(2);
      s.jobs_queued = q.IntAt(3);
      s.jobs_running = q.IntAt(4);
      samples.push_back(std::move(s));
    }
    if (rc != SQLITE_DONE) return Error("reading samples");
  }
  if (samples.empty()) return samples;
  // The types of the samples' seq range, in seq order as the samples are; a sample left out by
  // since_s has its types skipped.
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kSampleTypes));
  Query q(stmt);
  q.Int(samples.front().seq).Int(samples.back().seq);
  auto next = samples.begin();
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const int64_t seq = q.IntAt(0);
    while (next != samples.end() && next->seq < seq) ++next;
    if (next == samples.end() || next->seq != seq) continue;
    next->types.push_back(
        {q.BytesAt(1), static_cast<int32_t>(q.IntAt(2)), static_cast<int32_t>(q.IntAt(3))});
  }
  if (rc != SQLITE_DONE) return Error("reading the samples' device types");
  return samples;
}

util::Status Store::Put(const std::string& key, const std::string& value) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kPut));
  Query q(stmt);
  q.Text(key).Blob(value);
  if (q.Step() != SQLITE_DONE) return Error(fmt::format("writing key {}", key));
  return util::Status::Ok();
}

util::Result<std::optional<std::string>> Store::Get(const std::string& key) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared(kGet));
  Query q(stmt);
  q.Text(key);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return Error(fmt::format("reading key {}", key));
  return std::optional<std::string>(q.BytesAt(0));
}

util::Result<sqlite3_stmt*> Store::Prepared(std::string_view sql) {
  // SQLite rolls a transaction back by itself after some errors (I/O, disk full); a write now
  // would commit on its own, outside the batch the caller thinks it is in.
  if (in_transaction_ && sqlite3_get_autocommit(db_)) {
    return util::Status::IoError(fmt::format(
        "{}: the transaction since Begin was rolled back after an error; Commit ends it", path_));
  }
  if (auto it = statements_.find(sql); it != statements_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    return Error(fmt::format("preparing {}", sql));
  }
  statements_.emplace(std::string(sql), stmt);
  return stmt;
}

util::Status Store::Upgrade(int64_t version) {
  const std::string doing = fmt::format("upgrading the schema from version {}", version);
  if (version == 1) {
    // Version 1 files lack policy_state: added, empty for the jobs already there.
    RETURN_IF_ERROR(
        Exec("ALTER TABLE jobs ADD COLUMN policy_state TEXT NOT NULL DEFAULT ''", doing));
  }
  // nodes.spec came with version 2 files written after it without a version change: files of
  // version 1, and of version 2 from before it, lack it.
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                   Prepared("SELECT COUNT(*) FROM pragma_table_info('nodes') WHERE name = 'spec'"));
  int64_t has_spec = 0;
  {
    Query q(stmt);  // reset before the table changes
    if (q.Step() != SQLITE_ROW) return Error(doing);
    has_spec = q.IntAt(0);
  }
  if (has_spec == 0) {
    RETURN_IF_ERROR(Exec("ALTER TABLE nodes ADD COLUMN spec TEXT NOT NULL DEFAULT ''", doing));
  }
  return Exec(kTenantColumn, doing);
}

util::Status Store::Exec(const char* sql, std::string_view doing) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Error(doing);
  return util::Status::Ok();
}

util::Status Store::Error(std::string_view doing) const {
  return util::Status::IoError(fmt::format("{}: {}: {}", path_, doing, sqlite3_errmsg(db_)));
}

}  // namespace hetsched::svc
