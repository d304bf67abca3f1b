#include "k8s/extender.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "k8s/json.h"
#include "sched/job_record.h"

namespace hetsched::svc::k8s {
namespace {

using Json = nlohmann::json;

// What kube-scheduler sends to filter and prioritize (ExtenderArgs).
struct Args {
  Pod pod;
  bool names_form = false;  // NodeNames (nodeCacheCapable) rather than Nodes
  std::vector<Node> nodes;  // the Nodes form's objects
  std::vector<std::string> names;
};

util::Result<std::vector<std::string>> ReadNames(json::element value, const json::Path& path) {
  simdjson::dom::array a;
  if (value.get_array().get(a)) return json::WrongType(path, value, "an array of node names");
  std::vector<std::string> names;
  names.reserve(a.size());
  int64_t i = 0;
  for (const json::element e : a) {
    ASSIGN_OR_RETURN(std::string_view s, json::String(e, path.At(i++)));
    names.emplace_back(s);
  }
  return names;
}

util::Result<simdjson::dom::object> Root(std::string_view body, const json::Path& root) {
  ASSIGN_OR_RETURN(json::element doc, json::ParseDocument(body, root.ToString()));
  simdjson::dom::object o;
  if (doc.get_object().get(o)) return json::WrongType(root, doc, "an object");
  return o;
}

util::Result<Args> ParseArgs(std::string_view body, std::string_view verb,
                             std::string_view rack_label) {
  const json::Path root(verb);
  ASSIGN_OR_RETURN(auto o, Root(body, root));
  Args args;
  auto pod = json::Field(o, "Pod", true);
  if (!pod) return util::Status::InvalidArgument(fmt::format("{}.Pod: missing", verb));
  ASSIGN_OR_RETURN(args.pod, json::ReadPod(*pod, root.Field("Pod")));
  if (auto names = json::Field(o, "NodeNames", true)) {
    args.names_form = true;
    ASSIGN_OR_RETURN(args.names, ReadNames(*names, root.Field("NodeNames")));
  } else if (auto nodes = json::Field(o, "Nodes", true)) {
    const json::Path path = root.Field("Nodes");
    simdjson::dom::object list;
    if (nodes->get_object().get(list)) return json::WrongType(path, *nodes, "a NodeList object");
    if (auto items = json::Field(list, "items")) {
      simdjson::dom::array a;
      if (items->get_array().get(a)) {
        return json::WrongType(path.Field("items"), *items, "an array of nodes");
      }
      args.nodes.reserve(a.size());
      args.names.reserve(a.size());
      int64_t i = 0;
      for (const json::element item : a) {
        ASSIGN_OR_RETURN(Node node, json::ReadNode(item, path.Field("items").At(i++), rack_label));
        args.names.push_back(node.name);
        args.nodes.push_back(std::move(node));
      }
    }
  } else {
    return util::Status::InvalidArgument(fmt::format(
        "{}: neither Nodes nor NodeNames is given (expected one of them, the other null)", verb));
  }
  return args;
}

ExtenderReply Reply(int status, const Json& body) {
  return {status, body.dump(-1, ' ', false, Json::error_handler_t::replace)};
}
ExtenderReply BadRequest(const util::Status& status) {
  return Reply(400, {{"Error", status.message()}});
}

// The filter's answer (ExtenderFilterResult), built node by node.
class FilterAnswer {
 public:
  explicit FilterAnswer(bool names_form) : names_form_(names_form) {}
  void Pass(const std::string& name) {
    if (names_form_) {
      passed_names_.push_back(name);
    } else {
      passed_items_.push_back({{"metadata", {{"name", name}}}});
    }
  }
  ExtenderReply Reply(std::string error) {
    Json out;
    out["Nodes"] = nullptr;
    out["NodeNames"] = nullptr;
    if (names_form_) {
      out["NodeNames"] = std::move(passed_names_);
    } else {
      // Only the names of returned nodes are read back (kube-scheduler looks its own copies
      // up by name), so each comes back as its name, not 3 KB of node.
      out["Nodes"] = {{"metadata", Json::object()}, {"items", std::move(passed_items_)}};
    }
    out["FailedNodes"] = std::move(failed);
    out["FailedAndUnresolvableNodes"] = std::move(unresolvable);
    out["Error"] = std::move(error);
    return k8s::Reply(200, out);
  }

  // The pod's own problem, the answer on every node: unresolvable, so that kube-scheduler does
  // not preempt for it.
  ExtenderReply Refuse(const std::vector<std::string>& names, const std::string& reason) {
    failed = Json::object();
    for (const std::string& n : names) unresolvable[n] = reason;
    return Reply("");
  }

  Json failed = Json::object();        // node -> why it fails
  Json unresolvable = Json::object();  // node -> why preempting there would not help

 private:
  bool names_form_;
  Json passed_names_ = Json::array();
  Json passed_items_ = Json::array();
};

}  // namespace

util::Result<std::unique_ptr<Extender>> Extender::Create(ExtenderOptions options) {
  ASSIGN_OR_RETURN(sched::ScorerSet scorers, sched::MakeScorers(options.scorers));
  if (!(options.packing_weight >= 0) || !(options.locality_weight >= 0)) {
    return util::Status::InvalidArgument("packing and locality weights must be >= 0");
  }
  for (const auto& [product, type] : options.mapping.device_types) {
    if (!options.catalog.Find(type)) {
      return util::Status::InvalidArgument(fmt::format(
          "kubernetes.device_types.{}: '{}' is not a catalog device type (`hetsched catalog` "
          "lists them)",
          product, type));
    }
  }
  if (!options.mapping.cpu_type.empty() && !options.catalog.Find(options.mapping.cpu_type)) {
    return util::Status::InvalidArgument(fmt::format(
        "kubernetes.cpu_type: '{}' is not a catalog device type", options.mapping.cpu_type));
  }
  RETURN_IF_ERROR(CheckTenants(options));
  return std::unique_ptr<Extender>(new Extender(std::move(options), std::move(scorers)));
}

Extender::Extender(ExtenderOptions options, sched::ScorerSet scorers)
    : options_(std::move(options)), scorers_(std::move(scorers)) {
  filters_.push_back(sched::MakeCompatFilter());
  filters_.push_back(sched::MakeMemoryFilter());
}

double Extender::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Extender::Verdict Extender::Check(const PodNeeds& needs, const Candidate& c) const {
  const NodeInfo& info = *c.info;
  Verdict v;
  if (needs.resource.empty()) {
    // A CPU pod: only the architecture can rule a node out, when the pod names stacks.
    if (!needs.job.stacks.empty() && !info.arch.empty()) {
      const std::vector<model::SoftwareStack> have = {{StackOfArch(info.arch), ""}};
      if (!model::AnySatisfied(have, needs.job.stacks)) {
        v.incompatible = true;
        v.reason = fmt::format("node is {}, the pod runs {}", have[0].name,
                               model::ToString(needs.job.stacks[0]));
        return v;
      }
    }
    v.fits = true;
    return v;
  }
  v.incompatible = true;
  if (!info.problem.empty()) {
    v.reason = "hetsched cannot use this node: " + info.problem;
    return v;
  }
  if (info.resource != needs.resource) {
    v.reason = info.resource.empty()
                   ? fmt::format("node has no {}", needs.resource)
                   : fmt::format("node has {}, the pod asks for {}", info.resource, needs.resource);
    return v;
  }
  if (info.accelerators < needs.count) {
    v.reason = fmt::format("node has {} {}, the pod needs {}", info.accelerators, info.resource,
                           needs.count);
    return v;
  }
  for (const auto& f : filters_) {
    if (auto why = f->Reject(needs.job, info.device)) {
      const bool driver = f->name() == "compat" && info.driver_known;
      v.reason = *why + (driver ? " (node's driver)" : "");
      return v;
    }
  }
  v.incompatible = false;
  if (c.usage_known) {
    const double free = info.accelerators - c.used - c.reserved;
    if (free < needs.count) {
      v.reason = fmt::format(
          "{} of {} {} free{}, the pod needs {}", std::max(0.0, free), info.accelerators,
          info.resource, c.reserved > 0 ? fmt::format(" ({} held for pod groups)", c.reserved) : "",
          needs.count);
      return v;
    }
  }
  v.fits = true;
  return v;
}

double Extender::TypeScore(const PodNeeds& needs, const std::vector<Candidate>& candidates,
                           const NodeInfo& info) const {
  if (needs.resource.empty()) return info.resource.empty() ? 1 : 0;  // keep accelerators free
  // The pod's speed on each type among the candidates; the scorers rank types against the
  // best of them, so the most suitable candidate scores 1 whatever the cluster's strongest.
  sched::JobRecord record;
  const size_t types = options_.catalog.size();
  record.speed.assign(types, 0);
  record.allowed.assign(types, 0);
  std::vector<char> seen(types, 0);
  for (const Candidate& c : candidates) {
    if (!c.info->type.valid()) continue;
    const int32_t t = c.info->type.value();
    if (seen[t]) continue;
    seen[t] = 1;
    const auto speed =
        sched::GangSpeed(needs.job, options_.catalog.Get(c.info->type), options_.profile);
    record.speed[t] = speed.value_or(0);
    record.allowed[t] = record.speed[t] > 0;
    record.best_speed = std::max(record.best_speed, record.speed[t]);
  }
  if (!info.type.valid()) return 0;
  double best = 0;
  for (size_t t = 0; t < types; ++t) {
    if (record.allowed[t]) {
      best =
          std::max(best, scorers_.Score(record, model::DeviceTypeId(int32_t(t)), options_.catalog));
    }
  }
  return best > 0 ? scorers_.Score(record, info.type, options_.catalog) / best : 0;
}

std::vector<NodeInfo> Extender::Describe(bool names_form, const std::vector<Node>& nodes) const {
  std::vector<NodeInfo> described;
  if (names_form) return described;
  described.reserve(nodes.size());
  for (const Node& n : nodes)
    described.push_back(DescribeNode(n, options_.mapping, options_.catalog));
  return described;
}

std::vector<Extender::Candidate> Extender::CandidatesOf(const std::vector<std::string>& names,
                                                        bool names_form,
                                                        const std::vector<NodeInfo>& described,
                                                        std::vector<std::string>* unknown,
                                                        std::vector<int32_t>* index) const {
  std::vector<Candidate> candidates;
  candidates.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    auto cached = nodes_.find(names[i]);
    Candidate c;
    c.name = names[i];
    if (!names_form) {
      c.info = &described[i];
    } else if (cached != nodes_.end()) {
      c.info = &cached->second.info;
    } else {
      if (unknown) unknown->push_back(names[i]);
      continue;
    }
    if (cached != nodes_.end()) {
      c.used = cached->second.used;
      c.reserved = cached->second.reserved;
      c.usage_known = options_.node_cache;
    }
    candidates.push_back(std::move(c));
    if (index) index->push_back(static_cast<int32_t>(i));
  }
  return candidates;
}

// ---- verbs ----------------------------------------------------------------------------------

ExtenderReply Extender::Filter(std::string_view body) {
  auto args = ParseArgs(body, "ExtenderArgs", options_.mapping.rack_label);
  if (!args.ok()) return BadRequest(args.status());
  auto needs = NeedsOf(args->pod, options_.catalog);
  FilterAnswer answer(args->names_form);
  if (args->names_form && !options_.node_cache) {
    return answer.Reply(
        "this extender has no node cache (kubernetes.node_cache: false): set nodeCacheCapable: "
        "false in the scheduler's extender config so that requests carry the nodes");
  }
  if (!needs.ok()) return answer.Refuse(args->names, needs.status().message());

  // Described outside the lock: thousands of nodes take milliseconds, and need no state.
  const std::vector<NodeInfo> described = Describe(args->names_form, args->nodes);
  std::lock_guard lock(mu_);
  if (options_.node_cache && !synced_) {
    return answer.Reply("hetsched's node cache has not read the cluster yet; try again shortly");
  }
  ExpireGroups();
  std::vector<std::string> unknown;
  const std::vector<Candidate> candidates =
      CandidatesOf(args->names, args->names_form, described, &unknown, nullptr);
  for (const std::string& name : unknown) {
    answer.failed[name] = "not in hetsched's node cache yet (its watch has not seen this node)";
  }
  int tenant = -1;
  if (std::string refused = TenantCheck(args->pod, *needs, &tenant); !refused.empty()) {
    return answer.Refuse(args->names, refused);  // evicting others gives its tenant no room
  }
  if (seen_.size() > 100000) seen_.clear();
  seen_[UidOf(*needs)] = {*needs, tenant};

  // A pod group member goes where its group's plan put it.
  const Slot* slot = nullptr;
  if (!needs->group.empty() && !needs->resource.empty()) {
    auto s = options_.node_cache
                 ? SlotOf(*needs, candidates)
                 : util::Status::InvalidArgument(fmt::format(
                       "pod group '{}' can only be placed all at once with hetsched's node cache "
                       "(kubernetes.node_cache: true)",
                       needs->group));
    if (!s.ok()) {
      const bool never = s.status().code() == util::StatusCode::kInvalidArgument;
      for (const Candidate& c : candidates) {
        (never ? answer.unresolvable : answer.failed)[c.name] = s.status().message();
      }
      return answer.Reply("");
    }
    slot = *s;
    if (slot) groups_[needs->group].tenant = tenant;
  }
  bool any_fits = false;
  for (const Candidate& c : candidates) {
    if (slot && c.name != slot->node) {
      answer.failed[c.name] =
          fmt::format("pod group '{}' placed this pod on node {}", needs->group, slot->node);
      continue;
    }
    Candidate check = c;
    if (slot) check.usage_known = false;  // its place is reserved already
    const Verdict v = Check(*needs, check);
    if (v.fits) {
      answer.Pass(c.name);
      any_fits = true;
    } else {
      answer.failed[c.name] = v.reason;
    }
  }
  // Nowhere in the cluster (the cache, else the nodes sent) could the pod ever run: say so
  // as unresolvable, so that kube-scheduler does not preempt for it.
  if (!any_fits && !slot && !RunsSomewhere(*needs, candidates)) {
    for (auto& [name, reason] : answer.failed.items()) {
      answer.unresolvable[name] =
          "no node of the cluster can run this pod; here: " + reason.get<std::string>();
    }
    answer.failed = Json::object();
  }
  return answer.Reply("");
}

bool Extender::RunsSomewhere(const PodNeeds& needs, const std::vector<Candidate>& sent) const {
  if (!options_.node_cache) {
    return std::any_of(sent.begin(), sent.end(),
                       [&](const Candidate& c) { return !Check(needs, c).incompatible; });
  }
  for (const auto& [name, node] : nodes_) {
    Candidate c;
    c.info = &node.info;
    if (!Check(needs, c).incompatible) return true;
  }
  return false;
}

std::string Extender::DataRack(const PodNeeds& needs) const {
  if (needs.data_location.empty()) return "";
  auto it = nodes_.find(needs.data_location);
  return it != nodes_.end() ? it->second.info.rack : needs.data_location;
}

double Extender::Nearby::Locality(const std::string& node, const std::string& rack) const {
  if (nodes.empty()) return -1;
  if (nodes.count(node) > 0) return 1;
  return !rack.empty() && racks.count(rack) > 0 ? 0.5 : 0;
}

Extender::Nearby Extender::NearbyOf(const PodNeeds& needs) const {
  Nearby near;
  if (!needs.group.empty()) {
    for (const auto& [uid, p] : pods_) {
      if (p.group == needs.group) near.nodes.insert(p.node);
    }
    if (auto plan = groups_.find(needs.group); plan != groups_.end()) {
      for (const Slot& s : plan->second.slots) near.nodes.insert(s.node);
    }
    for (const std::string& n : near.nodes) {
      if (auto it = nodes_.find(n); it != nodes_.end() && !it->second.info.rack.empty()) {
        near.racks.insert(it->second.info.rack);
      }
    }
  }
  if (near.nodes.empty() && !needs.data_location.empty()) {
    near.nodes.insert(needs.data_location);
    if (std::string rack = DataRack(needs); !rack.empty()) near.racks.insert(rack);
  }
  return near;
}

int Extender::NodeScore(const PodNeeds& needs, const Candidate& c, double type_score,
                        const Nearby& near) const {
  const NodeInfo& info = *c.info;
  double total = type_score, weight = 1;
  if (c.usage_known && !needs.resource.empty() && info.accelerators > 0 &&
      options_.packing_weight > 0) {
    // Fuller nodes first: whole nodes stay free for big pods and can be switched off.
    const double after =
        std::min(1.0, (c.used + c.reserved + needs.count) / static_cast<double>(info.accelerators));
    total += options_.packing_weight * after;
    weight += options_.packing_weight;
  }
  const double locality = near.Locality(c.name, info.rack);
  if (locality >= 0 && options_.locality_weight > 0) {
    total += options_.locality_weight * locality;
    weight += options_.locality_weight;
  }
  return static_cast<int>(std::lround(10 * total / weight));
}

ExtenderReply Extender::Prioritize(std::string_view body) {
  auto args = ParseArgs(body, "ExtenderArgs", options_.mapping.rack_label);
  if (!args.ok()) return BadRequest(args.status());
  auto needs = NeedsOf(args->pod, options_.catalog);
  const std::vector<NodeInfo> described = Describe(args->names_form, args->nodes);
  std::lock_guard lock(mu_);
  std::vector<int32_t> index;  // candidate -> position in the request
  std::vector<Candidate> candidates =
      CandidatesOf(args->names, args->names_form, described, nullptr, &index);
  std::vector<int> score(args->names.size(), 0);
  // Nodes the pod can never run on keep score 0 (kube-scheduler sends only nodes that passed
  // the filter, but an extender may be asked to prioritize without filtering).
  size_t kept = 0;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (!needs.ok() || Check(*needs, Candidate{candidates[k].info, candidates[k].name, 0, 0, false})
                           .incompatible) {
      continue;
    }
    candidates[kept] = candidates[k];
    index[kept++] = index[k];
  }
  candidates.resize(kept);
  if (needs.ok() && !candidates.empty()) {
    const Nearby near = NearbyOf(*needs);
    std::map<int32_t, double> type_score;  // by catalog id
    for (size_t k = 0; k < candidates.size(); ++k) {
      const NodeInfo& info = *candidates[k].info;
      const int32_t t = info.type.valid() ? info.type.value() : -1;
      auto ts = type_score.find(t);
      if (ts == type_score.end()) {
        ts = type_score.emplace(t, TypeScore(*needs, candidates, info)).first;
      }
      score[index[k]] = NodeScore(*needs, candidates[k], ts->second, near);
    }
  }
  Json out = Json::array();
  for (size_t i = 0; i < args->names.size(); ++i) {
    out.push_back({{"Host", args->names[i]}, {"Score", std::clamp(score[i], 0, 10)}});
  }
  return Reply(200, out);
}

ExtenderReply Extender::Bind(std::string_view body) {
  const json::Path root("ExtenderBindingArgs");
  auto o = Root(body, root);
  if (!o.ok()) return BadRequest(o.status());
  std::string fields[4];
  const char* names[4] = {"PodName", "PodNamespace", "PodUID", "Node"};
  for (int i = 0; i < 4; ++i) {
    if (auto v = json::Field(*o, names[i], true)) {
      auto s = json::String(*v, root.Field(names[i]));
      if (!s.ok()) return BadRequest(s.status());
      fields[i] = std::string(*s);
    }
    if (fields[i].empty() && i != 2) {
      return BadRequest(util::Status::InvalidArgument(
          fmt::format("ExtenderBindingArgs.{}: missing (expected a non-empty string)", names[i])));
    }
  }
  if (!options_.binder) {
    return Reply(200, {{"Error",
                        "this extender cannot bind: it has no Kubernetes API access "
                        "(kubernetes.api: none); remove bindVerb from the scheduler's "
                        "extender config"}});
  }
  // The API call runs outside the lock: it takes milliseconds, filters must not wait on it.
  const util::Status st = options_.binder(fields[1], fields[0], fields[2], fields[3]);
  if (!st.ok()) return Reply(200, {{"Error", st.message()}});
  std::lock_guard lock(mu_);
  const std::string uid = fields[2].empty() ? fields[1] + "/" + fields[0] : fields[2];
  if (auto it = seen_.find(uid); it != seen_.end() && options_.node_cache) {
    // Counted now, before the watch reports it, so the next filter sees the devices taken.
    RemovePod(uid);
    BoundPod& p = pods_[uid];
    p.node = fields[3];
    p.count = it->second.needs.count;
    p.group = it->second.needs.group;
    p.tenant = it->second.tenant;
    if (auto n = nodes_.find(p.node); n != nodes_.end()) n->second.used += p.count;
    MarkBound(uid, p.group);
  }
  return Reply(200, {{"Error", ""}});
}

ExtenderReply Extender::Preempt(std::string_view body) {
  const json::Path root("ExtenderPreemptionArgs");
  auto o = Root(body, root);
  if (!o.ok()) return BadRequest(o.status());
  auto pod_value = json::Field(*o, "Pod", true);
  if (!pod_value) {
    return BadRequest(util::Status::InvalidArgument("ExtenderPreemptionArgs.Pod: missing"));
  }
  auto pod = json::ReadPod(*pod_value, root.Field("Pod"));
  if (!pod.ok()) return BadRequest(pod.status());
  // Victims per node: full pods (NodeNameToVictims) or their UIDs (NodeNameToMetaVictims).
  struct Victims {
    std::vector<std::string> uids;
    int64_t pdb_violations = 0;
  };
  std::map<std::string, Victims> victims;
  for (const bool meta : {false, true}) {
    const char* key = meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
    auto map = json::Field(*o, key, true);
    if (!map) continue;
    const json::Path path = root.Field(key);
    simdjson::dom::object m;
    if (map->get_object().get(m)) return BadRequest(json::WrongType(path, *map, "an object"));
    for (const auto field : m) {
      const json::Path node_path = path.Field(field.key);
      Victims& v = victims[std::string(field.key)];
      if (field.value.is_null()) continue;
      simdjson::dom::object vo;
      if (field.value.get_object().get(vo)) {
        return BadRequest(json::WrongType(node_path, field.value, "an object"));
      }
      if (auto n = json::Field(vo, "NumPDBViolations", true)) {
        if (n->get_int64().get(v.pdb_violations)) {
          return BadRequest(json::WrongType(node_path.Field("NumPDBViolations"), *n, "an integer"));
        }
      }
      auto pods = json::Field(vo, "Pods", true);
      if (!pods) continue;
      simdjson::dom::array a;
      if (pods->get_array().get(a)) {
        return BadRequest(json::WrongType(node_path.Field("Pods"), *pods, "an array"));
      }
      int64_t i = 0;
      for (const json::element e : a) {
        const json::Path pp = node_path.Field("Pods").At(i++);
        if (meta) {
          simdjson::dom::object mo;
          if (e.get_object().get(mo)) return BadRequest(json::WrongType(pp, e, "an object"));
          std::string uid;
          if (auto u = json::Field(mo, "UID", true)) {
            auto s = json::String(*u, pp.Field("UID"));
            if (!s.ok()) return BadRequest(s.status());
            uid = std::string(*s);
          }
          v.uids.push_back(uid);
        } else {
          auto victim = json::ReadPod(e, pp);
          if (!victim.ok()) return BadRequest(victim.status());
          v.uids.push_back(victim->uid);
        }
      }
    }
  }
  // Keep the nodes where the pod could run once the victims are gone; preempting anywhere
  // else evicts work for nothing. Nodes hetsched does not know are kept (it cannot judge).
  auto needs = NeedsOf(*pod, options_.catalog);
  Json kept = Json::object();
  std::lock_guard lock(mu_);
  for (const auto& [node, v] : victims) {
    if (!needs.ok()) break;
    if (auto it = nodes_.find(node); it != nodes_.end()) {
      if (Check(*needs, Candidate{&it->second.info, node, 0, 0, false}).incompatible) continue;
    }
    Json uids = Json::array();
    for (const std::string& uid : v.uids) uids.push_back({{"UID", uid}});
    kept[node] = {{"Pods", uids}, {"NumPDBViolations", v.pdb_violations}};
  }
  return Reply(200, {{"NodeNameToMetaVictims", kept}});
}

}  // namespace hetsched::svc::k8s
