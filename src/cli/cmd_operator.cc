// The operator's verbs against a running `hetsched serve` (docs/api.md): `hetsched drain NODE`,
// `undrain NODE` (role admin), `whatif POLICY` and `plan live` (role submit), with the server
// and token as the other client commands take them (cli/daemon_client.h).
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/command.h"
#include "cli/daemon_client.h"
#include "report/table.h"

namespace hetsched::cli {
namespace {

using nlohmann::json;

// Runs one request and hands a 2xx reply to `print`; errors are reported with their exit status.
int Request(const ClientFlags& conn, const std::string& method, const std::string& path,
            const std::string& body, const std::function<int(const json&)>& print) {
  auto r = Call(conn, method, path, body);
  if (!r.ok()) return ReportError(r.status());
  if (r->status < 200 || r->status >= 300) return ReportHttpError(*r);
  return print(r->body);
}

// hetsched drain NODE and hetsched undrain NODE.
void AddDrainCommands(CLI::App& app, CommandResult& result) {
  for (const bool drain : {true, false}) {
    const std::string verb = drain ? "drain" : "undrain";
    auto conn = std::make_shared<ClientFlags>();
    auto node = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand(
        verb, drain ? "Drain a node of the daemon: nothing new starts there, its running jobs go "
                      "on (needs a token with the admin role)"
                    : "Undrain a node: the daemon places jobs there again (needs a token with "
                      "the admin role)");
    AddConnectionFlags(cmd, *conn);
    cmd->add_flag("--json", conn->json_out, "print the node as the API returns it");
    cmd->add_option("node", *node, "the node's name, as `hetsched nodes` lists it")->required();
    cmd->callback([conn, node, verb, &result] {
      result.exit_code = Request(
          *conn, "POST", "/v1/nodes/" + UrlEscape(*node) + "/" + verb, "", [&](const json& body) {
            if (conn->json_out) {
              std::printf("%s\n", body.dump(2).c_str());
            } else {
              std::printf("%sed %s\n", verb.c_str(), Text(body["name"]).c_str());
            }
            return kExitOk;
          });
    });
  }
}

// The what-if reply as a table: the daemon's policy, then the candidate.
int PrintWhatIf(const json& body) {
  report::Table t(
      {"", "policy", "jobs", "skipped", "makespan", "avg JCT", "p99 JCT", "preemptions"});
  for (const char* row : {"current", "candidate"}) {
    const json& w = body[row];
    t.AddRow({row, Text(w["policy"]), Text(w["jobs"]), Text(w["skipped"]),
              fmt::format("{:.0f} s", w["makespan_s"].get<double>()),
              fmt::format("{:.0f} s", w["avg_jct_s"].get<double>()),
              fmt::format("{:.0f} s", w["p99_jct_s"].get<double>()), Text(w["preemptions"])});
  }
  std::fputs(t.Render().c_str(), stdout);
  return kExitOk;
}

// hetsched whatif POLICY.
void AddWhatIfCommand(CLI::App& app, CommandResult& result) {
  auto conn = std::make_shared<ClientFlags>();
  auto policy = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "whatif",
      "Simulate the daemon's live jobs under another policy and under its own, and compare "
      "(needs a token with the submit role)");
  AddConnectionFlags(cmd, *conn);
  cmd->add_flag("--json", conn->json_out, "print the API's JSON");
  cmd->add_option("policy", *policy, "the policy to compare, e.g. fifo or las-het")->required();
  cmd->callback([conn, policy, &result] {
    result.exit_code =
        Request(*conn, "GET", "/v1/whatif?policy=" + UrlEscape(*policy), "", [&](const json& b) {
          if (!conn->json_out) return PrintWhatIf(b);
          std::printf("%s\n", b.dump(2).c_str());
          return kExitOk;
        });
  });
}

struct PlanLiveFlags {
  std::string model;
  std::string dag_file;
  // The other flags given, as the request's fields (the daemon checks their values).
  json fields = json::object();
};

// The body of POST /v1/plan from the flags.
util::Result<json> PlanBody(const PlanLiveFlags& p) {
  json body = p.fields;
  if (!p.dag_file.empty()) {
    std::ifstream in(p.dag_file);
    if (!in) {
      return util::Status::InvalidArgument(fmt::format("--dag {}: cannot read it", p.dag_file));
    }
    std::stringstream text;
    text << in.rdbuf();
    body["dag"] = json::parse(text.str(), nullptr, false);
    if (!body["dag"].is_object()) {
      return util::Status::InvalidArgument(fmt::format(
          "--dag {}: not a JSON object (expected a DAG as docs/dag-format.md describes)",
          p.dag_file));
    }
  }
  if (!p.model.empty()) body["model"] = p.model;
  return body;
}

// --FLAG VALUE on `cmd`, sent as the request field `field` when given.
template <typename T>
void AddField(CLI::App* cmd, const std::shared_ptr<PlanLiveFlags>& p, const std::string& flag,
              const char* field, const std::string& help) {
  cmd->add_option_function<T>(
      flag, [p, field](const T& value) { p->fields[field] = value; }, help);
}

}  // namespace

void AddPlanLiveCommand(CLI::App& plan, CommandResult& result) {
  auto conn = std::make_shared<ClientFlags>();
  auto p = std::make_shared<PlanLiveFlags>();
  auto* cmd = plan.add_subcommand(
      "live",
      "Ask a running daemon to split one model or task DAG over its live cluster (POST "
      "/v1/plan; needs a token with the submit role); prints the plan as JSON. Exit status 1 "
      "when no plan fits the nodes");
  AddConnectionFlags(cmd, *conn);
  auto* model = cmd->add_option("--model", p->model, "a model preset, e.g. llama-70b");
  auto* dag = cmd->add_option("--dag", p->dag_file,
                              "a task DAG file (JSON, docs/dag-format.md), costs by device type");
  model->excludes(dag);
  AddField<std::string>(cmd, p, "--algo", "algo", "DAG: heft (default), cpop or peft");
  AddField<std::string>(cmd, p, "--nodes", "nodes",
                        "idle (default: powered, undrained nodes with every device free) or all");
  AddField<int64_t>(cmd, p, "--batch", "batch", "model: global batch size");
  AddField<int64_t>(cmd, p, "--micro-batch", "micro_batch", "model: micro-batch size");
  AddField<int64_t>(cmd, p, "--seq-len", "seq_len", "model: sequence length");
  AddField<std::string>(cmd, p, "--precision", "precision", "model: fp32, fp16 or bf16");
  AddField<std::string>(cmd, p, "--optimizer", "optimizer",
                        "model: adam, sgd, or none for inference");
  AddField<int64_t>(cmd, p, "--max-stages", "max_stages",
                    "model: pipeline depth limit (default 16)");
  AddField<double>(cmd, p, "--memory-reserve", "memory_reserve",
                   "model: fraction of each device's memory kept free (default 0.1)");
  AddField<std::string>(cmd, p, "--only-type", "only_type",
                        "model: use only accelerators of this type");
  cmd->add_flag_callback(
      "--no-offload", [p] { p->fields["offload"] = false; },
      "model: never offload optimizer state to the host");
  cmd->callback([conn, p, &result] {
    if (p->model.empty() == p->dag_file.empty()) {
      result.exit_code = ReportError(
          util::Status::InvalidArgument("plan live: give --model PRESET or --dag FILE"));
      return;
    }
    auto body = PlanBody(*p);
    if (!body.ok()) {
      result.exit_code = ReportError(body.status());
      return;
    }
    result.exit_code = Request(*conn, "POST", "/v1/plan", body->dump(), [](const json& b) {
      std::printf("%s\n", b.dump(2).c_str());
      if (b.value("feasible", false)) return kExitOk;
      std::fprintf(stderr, "hetsched: no plan fits: %s\n", Text(b["reason"]).c_str());
      return kExitFailure;
    });
  });
}

void AddOperatorCommands(CLI::App& app, CommandResult& result) {
  AddDrainCommands(app, result);
  AddWhatIfCommand(app, result);
}

}  // namespace hetsched::cli
