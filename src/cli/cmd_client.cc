// The daemon's command-line client: `hetsched submit / jobs / cancel / why / nodes` against
// the API of a running `hetsched serve` (docs/api.md); the operator's verbs are in
// cli/cmd_operator.cc. Server and token as cli/daemon_client.h finds them.
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/daemon_client.h"
#include "report/table.h"
#include "util/units.h"

namespace hetsched::cli {
namespace {

using nlohmann::json;

// Widest message `jobs` shows in its table, in bytes; longer ones end in "...".
constexpr size_t kMessageWidth = 60;

// `message` on one line and at most kMessageWidth bytes, cut before a UTF-8 character rather
// than inside one; `*cut` set when it was cut.
std::string TableMessage(std::string message, bool* cut) {
  std::replace(message.begin(), message.end(), '\n', ' ');
  if (message.size() <= kMessageWidth) return message;
  size_t end = kMessageWidth - 3;
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  *cut = true;
  return message.substr(0, end) + "...";
}

int PrintJobs(const json& jobs) {
  report::Table t({"name", "state", "device type", "devices", "attempt", "message"});
  bool cut = false;
  for (const json& j : jobs) {
    t.AddRow({Text(j["name"]), Text(j["state"]), Text(j["device_type"]),
              std::to_string(j["devices"].size()), Text(j["attempt"]),
              TableMessage(Text(j["message"]), &cut)});
  }
  std::fputs(t.Render().c_str(), stdout);
  if (cut) {
    std::printf("(messages cut to %zu bytes; `hetsched jobs --json` has them whole)\n",
                kMessageWidth);
  }
  return kExitOk;
}

int PrintNodes(const json& nodes) {
  report::Table t({"node", "power", "drained", "devices", "busy", "jobs"});
  for (const json& n : nodes) {
    int busy = 0;
    std::string jobs, types;
    for (const json& d : n["devices"]) {
      if (d["state"] == "busy") {
        ++busy;
        const std::string job = d["job"].get<std::string>();
        if (jobs.find(job) == std::string::npos) jobs += (jobs.empty() ? "" : ",") + job;
      }
      const std::string type = d["type"].get<std::string>();
      if (types.find(type) == std::string::npos) types += (types.empty() ? "" : ",") + type;
    }
    t.AddRow({Text(n["name"]), Text(n["power_state"]), n["drained"].get<bool>() ? "yes" : "no",
              fmt::format("{} {}", n["devices"].size(), types), std::to_string(busy),
              jobs.empty() ? "-" : jobs});
  }
  std::fputs(t.Render().c_str(), stdout);
  return kExitOk;
}

struct SubmitFlags {
  std::string name;
  std::string stacks;
  std::string gpus;
  std::string time;
  std::string duration;
  // Passed through as written; the daemon checks them as the workload reader does.
  std::string cores;
  std::string host_memory;
  std::string tenant;
  std::string idempotency_key;
  std::vector<std::string> command;
};

util::Result<json> SubmitBody(const SubmitFlags& s) {
  json job = {{"name", s.name}};
  json stacks = json::array();
  for (size_t start = 0; start <= s.stacks.size();) {
    const size_t comma = std::min(s.stacks.find(',', start), s.stacks.size());
    if (comma > start) stacks.push_back(s.stacks.substr(start, comma - start));
    start = comma + 1;
  }
  job["stacks"] = stacks;
  if (!s.gpus.empty()) {
    // [TYPE:]N
    const size_t colon = s.gpus.rfind(':');
    const std::string count = colon == std::string::npos ? s.gpus : s.gpus.substr(colon + 1);
    char* end = nullptr;
    const long n = std::strtol(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0' || n < 1 || n > 4096) {
      return util::Status::InvalidArgument(fmt::format(
          "--gpus '{}': expected [TYPE:]N with N from 1 to 4096, e.g. v100-32g:2 or 4", s.gpus));
    }
    job["gang_size"] = n;
    if (colon != std::string::npos) job["throughput"] = {{s.gpus.substr(0, colon), 1}};
  }
  if (!s.time.empty()) {
    auto d = util::ParseDuration(s.time);
    if (!d.ok()) {
      return util::Status::InvalidArgument(fmt::format(
          "--time '{}': {} (expected a duration like 30m or 2h)", s.time, d.status().message()));
    }
    job["time_limit"] = *d;
  }
  if (!s.duration.empty()) {
    auto d = util::ParseDuration(s.duration);
    if (!d.ok() || !(*d > 0)) {
      return util::Status::InvalidArgument(
          fmt::format("--duration '{}': expected a duration > 0 like 10m", s.duration));
    }
    // Submitted jobs run at 1 step/s wherever they may run (no measured throughput).
    job["work"] = *d;
  }
  if (!s.cores.empty()) job["cores"] = s.cores;
  if (!s.host_memory.empty()) job["host_memory"] = s.host_memory;
  if (!s.tenant.empty()) job["tenant"] = s.tenant;
  if (!s.command.empty()) job["command"] = s.command;
  return job;
}

// hetsched submit: the flags become a job request (SubmitBody).
void AddSubmitCommand(CLI::App& app, const std::shared_ptr<ClientFlags>& conn,
                      CommandResult& result) {
  auto submit = std::make_shared<SubmitFlags>();
  auto* cmd =
      app.add_subcommand("submit",
                         "Submit a job to a running daemon: hetsched submit --name N --stacks cuda "
                         "--gpus v100-32g:2 -- python3 train.py");
  AddConnectionFlags(cmd, *conn);
  cmd->add_option("--name", submit->name, "the job's id (letters, digits, . _ -)")->required();
  cmd->add_option("--stacks", submit->stacks,
                  "software stacks it runs on, comma-separated (e.g. cuda>=12.0,rocm)")
      ->required();
  cmd->add_option("--gpus", submit->gpus, "[TYPE:]N: N devices at once, of TYPE if given");
  cmd->add_option("--time", submit->time, "time limit, e.g. 30m or 2h");
  cmd->add_option("--cores", submit->cores, "host cores each worker takes on its node, e.g. 8");
  cmd->add_option("--host-memory", submit->host_memory,
                  "host memory each worker takes on its node, e.g. 64GiB");
  cmd->add_option("--duration", submit->duration,
                  "how long it runs, e.g. 10m: what the virtual backend models (a job with a "
                  "command runs until its command exits)");
  cmd->add_option("--tenant", submit->tenant,
                  "the job's tenant (serve --config's tenants); a tenant's token may leave it "
                  "out");
  cmd->add_option("--idempotency-key", submit->idempotency_key,
                  "a retry with the same key never makes a second job");
  cmd->add_option("command", submit->command, "the command to run (after --)");
  cmd->callback([conn, submit, &result] {
    auto body = SubmitBody(*submit);
    if (!body.ok()) {
      result.exit_code = ReportError(body.status());
      return;
    }
    httplib::Headers headers;
    if (!submit->idempotency_key.empty()) {
      headers.emplace("Idempotency-Key", submit->idempotency_key);
    }
    auto r = Call(*conn, "POST", "/v1/jobs", body->dump(), headers);
    if (!r.ok()) {
      result.exit_code = ReportError(r.status());
      return;
    }
    if (r->status != 200 && r->status != 201) {
      result.exit_code = ReportHttpError(*r);
      return;
    }
    std::printf("%s %s (%s)\n", r->status == 201 ? "submitted" : "already submitted",
                Text(r->body["name"]).c_str(), Text(r->body["state"]).c_str());
    if (r->body.value("speed_assumed", false)) {
      std::printf(
          "note: no throughput given; it is assumed to run equally fast on every device "
          "type its stacks allow\n");
    }
  });
}

// How `jobs` and `nodes` page their list (docs/api.md, "Lists and pages").
struct ListFlags {
  std::string state;  // jobs only
  std::string limit;  // passed through; the daemon checks it
  std::string cursor;
  bool all = false;
};

// The query of one page: the flags given, and `cursor` (empty on the first page).
std::string ListQuery(const ListFlags& f, const std::string& cursor) {
  std::string query;
  const auto add = [&](const char* name, const std::string& value) {
    if (!value.empty())
      query += fmt::format("{}{}={}", query.empty() ? "?" : "&", name, UrlEscape(value));
  };
  add("state", f.state);
  add("limit", f.limit);
  add("cursor", cursor);
  return query;
}

// A command that GETs the list route `path` (its list is the member named `key`) and prints
// it as `print` does, or its JSON with --json: one page (the first, or --cursor's), saying
// when more remain, or with --all every page, one after another.
void AddListCommand(CLI::App& app, const std::shared_ptr<ClientFlags>& conn, CommandResult& result,
                    const std::string& name, const std::string& help, const std::string& path,
                    const std::string& key, std::function<int(const json&)> print) {
  auto* cmd = app.add_subcommand(name, help);
  auto list = std::make_shared<ListFlags>();
  AddConnectionFlags(cmd, *conn);
  cmd->add_flag("--json", conn->json_out, "print the API's JSON");
  if (key == "jobs") cmd->add_option("--state", list->state, "only jobs in this state");
  cmd->add_option("--limit", list->limit, "at most this many a page (default 1000)");
  cmd->add_option("--cursor", list->cursor, "the page that starts there (a next_cursor)");
  cmd->add_flag("--all", list->all, "every page, not only the first");
  cmd->callback([conn, list, path, key, print, &result] {
    json body;
    json items = json::array();
    std::string cursor = list->cursor;
    do {
      auto r = Call(*conn, "GET", path + ListQuery(*list, cursor));
      if (!r.ok()) {
        result.exit_code = ReportError(r.status());
        return;
      }
      if (r->status != 200) {
        result.exit_code = ReportHttpError(*r);
        return;
      }
      body = std::move(r->body);
      for (json& item : body[key]) items.push_back(std::move(item));
      cursor = body["next_cursor"].is_string() ? body["next_cursor"].get<std::string>() : "";
    } while (list->all && !cursor.empty());
    body[key] = std::move(items);
    if (conn->json_out) {
      std::printf("%s\n", body.dump(2).c_str());
      return;
    }
    result.exit_code = print(body[key]);
    if (!cursor.empty()) {
      std::printf("(%zu shown and more remain: --all lists them all, --cursor %s the next page)\n",
                  body[key].size(), cursor.c_str());
    }
  });
}

// hetsched cancel NAME and hetsched why NAME: one request about one job.
void AddJobVerbCommands(CLI::App& app, const std::shared_ptr<ClientFlags>& conn,
                        CommandResult& result) {
  auto name = std::make_shared<std::string>();
  for (const char* verb : {"cancel", "why"}) {
    const bool cancel = std::string_view(verb) == "cancel";
    auto* cmd =
        app.add_subcommand(verb, cancel ? "Cancel a job (running ones get SIGTERM, then SIGKILL)"
                                        : "Why a job waits, or what it does");
    AddConnectionFlags(cmd, *conn);
    cmd->add_option("name", *name, "the job's name")->required();
    cmd->callback([conn, name, cancel, &result] {
      const std::string path = "/v1/jobs/" + UrlEscape(*name) + (cancel ? "" : "/why");
      auto r = Call(*conn, cancel ? "DELETE" : "GET", path);
      if (!r.ok()) {
        result.exit_code = ReportError(r.status());
      } else if (r->status >= 300) {
        result.exit_code = ReportHttpError(*r);
      } else if (cancel) {
        std::printf("cancelling %s (%s)\n", Text(r->body["name"]).c_str(),
                    Text(r->body["state"]).c_str());
      } else {
        std::printf("%s: %s\n", Text(r->body["name"]).c_str(), Text(r->body["why"]).c_str());
      }
    });
  }
}

}  // namespace

void AddClientCommands(CLI::App& app, CommandResult& result) {
  // One set of connection flags: only one of the commands runs.
  auto conn = std::make_shared<ClientFlags>();
  AddSubmitCommand(app, conn, result);
  AddListCommand(app, conn, result, "jobs", "List the daemon's jobs", "/v1/jobs", "jobs",
                 PrintJobs);
  AddJobVerbCommands(app, conn, result);
  AddListCommand(app, conn, result, "nodes", "List the daemon's nodes and their devices",
                 "/v1/nodes", "nodes", PrintNodes);
}

}  // namespace hetsched::cli
