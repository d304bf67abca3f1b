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

std::string Uid(const PodNeeds& needs) { return needs.uid.empty() ? needs.key : needs.uid; }
std::string Uid(const Pod& pod) { return pod.uid.empty() ? pod.Key() : pod.uid; }

// Accelerators a pod holds once bound (0 for a CPU pod; for one asking for two kinds, which
// NeedsOf refuses, the first kind's count).
double AcceleratorsOf(const Pod& pod) {
  for (const auto& [resource, count] : pod.requests) {
    if (StackOfResource(resource) && count > 0) return count;
  }
  return 0;
}

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

  Json passed_names = Json::array();
  Json passed_items = Json::array();
  Json failed = Json::object();
  Json unresolvable = Json::object();
  auto answer = [&](std::string error) {
    Json out;
    out["Nodes"] = nullptr;
    out["NodeNames"] = nullptr;
    if (args->names_form) {
      out["NodeNames"] = std::move(passed_names);
    } else {
      // Only the names of returned nodes are read back (kube-scheduler looks its own copies
      // up by name), so each comes back as its name, not 3 KB of node.
      out["Nodes"] = {{"metadata", Json::object()}, {"items", std::move(passed_items)}};
    }
    out["FailedNodes"] = std::move(failed);
    out["FailedAndUnresolvableNodes"] = std::move(unresolvable);
    out["Error"] = std::move(error);
    return Reply(200, out);
  };
  auto pass = [&](const std::string& name) {
    if (args->names_form) {
      passed_names.push_back(name);
    } else {
      passed_items.push_back({{"metadata", {{"name", name}}}});
    }
  };
  if (args->names_form && !options_.node_cache) {
    return answer(
        "this extender has no node cache (kubernetes.node_cache: false): set nodeCacheCapable: "
        "false in the scheduler's extender config so that requests carry the nodes");
  }
  if (!needs.ok()) {
    for (const std::string& n : args->names) unresolvable[n] = needs.status().message();
    return answer("");
  }

  // Described outside the lock: thousands of nodes take milliseconds, and need no state.
  const std::vector<NodeInfo> described = Describe(args->names_form, args->nodes);
  std::lock_guard lock(mu_);
  if (options_.node_cache && !synced_) {
    return answer("hetsched's node cache has not read the cluster yet; try again shortly");
  }
  ExpireGroups();
  std::vector<std::string> unknown;
  const std::vector<Candidate> candidates =
      CandidatesOf(args->names, args->names_form, described, &unknown, nullptr);
  for (const std::string& name : unknown) {
    failed[name] = "not in hetsched's node cache yet (its watch has not seen this node)";
  }
  if (seen_.size() > 100000) seen_.clear();
  seen_[Uid(*needs)] = *needs;

  // A pod group member goes where its group's plan put it.
  const Slot* slot = nullptr;
  if (!needs->group.empty() && !needs->resource.empty()) {
    if (!options_.node_cache) {
      for (const Candidate& c : candidates) {
        unresolvable[c.name] = fmt::format(
            "pod group '{}' can only be placed all at once with hetsched's node cache "
            "(kubernetes.node_cache: true)",
            needs->group);
      }
      return answer("");
    }
    auto s = SlotOf(*needs, candidates);
    if (!s.ok()) {
      const bool never = s.status().code() == util::StatusCode::kInvalidArgument;
      for (const Candidate& c : candidates) {
        (never ? unresolvable : failed)[c.name] = s.status().message();
      }
      return answer("");
    }
    slot = *s;
  }
  bool any_fits = false;
  for (const Candidate& c : candidates) {
    if (slot && c.name != slot->node) {
      failed[c.name] =
          fmt::format("pod group '{}' placed this pod on node {}", needs->group, slot->node);
      continue;
    }
    Candidate check = c;
    if (slot) check.usage_known = false;  // its place is reserved already
    const Verdict v = Check(*needs, check);
    if (v.fits) {
      pass(c.name);
      any_fits = true;
    } else {
      failed[c.name] = v.reason;
    }
  }
  // Nowhere in the cluster (the cache, else the nodes sent) could the pod ever run: say so
  // as unresolvable, so that kube-scheduler does not preempt for it.
  if (!any_fits && !slot) {
    bool runs_somewhere = false;
    if (options_.node_cache) {
      for (const auto& [name, node] : nodes_) {
        Candidate c;
        c.info = &node.info;
        if (!Check(*needs, c).incompatible) {
          runs_somewhere = true;
          break;
        }
      }
    } else {
      for (const Candidate& c : candidates) {
        if (!Check(*needs, c).incompatible) runs_somewhere = true;
      }
    }
    if (!runs_somewhere) {
      for (auto& [name, reason] : failed.items()) {
        unresolvable[name] =
            "no node of the cluster can run this pod; here: " + reason.get<std::string>();
      }
      failed = Json::object();
    }
  }
  return answer("");
}

ExtenderReply Extender::Prioritize(std::string_view body) {
  auto args = ParseArgs(body, "ExtenderArgs", options_.mapping.rack_label);
  if (!args.ok()) return BadRequest(args.status());
  auto needs = NeedsOf(args->pod, options_.catalog);
  Json out = Json::array();
  const std::vector<NodeInfo> described = Describe(args->names_form, args->nodes);
  std::lock_guard lock(mu_);
  std::vector<int32_t> index;  // candidate -> position in the request
  std::vector<Candidate> candidates =
      CandidatesOf(args->names, args->names_form, described, nullptr, &index);
  std::vector<int> score(args->names.size(), 0);
  // Nodes the pod can never run on keep score 0 (kube-scheduler sends only nodes that passed
  // the filter, but an extender may be asked to prioritize without filtering).
  {
    size_t kept = 0;
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (!needs.ok() ||
          Check(*needs, Candidate{candidates[k].info, candidates[k].name, 0, 0, false})
              .incompatible) {
        continue;
      }
      candidates[kept] = candidates[k];
      index[kept++] = index[k];
    }
    candidates.resize(kept);
    index.resize(kept);
  }
  if (needs.ok() && !candidates.empty()) {
    // Nodes of the pod's group (bound or reserved) and their racks, for locality.
    std::set<std::string> group_nodes, group_racks;
    if (!needs->group.empty()) {
      for (const auto& [uid, p] : pods_) {
        if (p.group == needs->group) group_nodes.insert(p.node);
      }
      if (auto plan = groups_.find(needs->group); plan != groups_.end()) {
        for (const Slot& s : plan->second.slots) group_nodes.insert(s.node);
      }
      for (const std::string& n : group_nodes) {
        if (auto it = nodes_.find(n); it != nodes_.end() && !it->second.info.rack.empty()) {
          group_racks.insert(it->second.info.rack);
        }
      }
    }
    std::string data_rack;
    if (!needs->data_location.empty()) {
      auto it = nodes_.find(needs->data_location);
      data_rack = it != nodes_.end() ? it->second.info.rack : needs->data_location;
    }
    std::map<int32_t, double> type_score;  // by catalog id
    for (size_t k = 0; k < candidates.size(); ++k) {
      const Candidate& c = candidates[k];
      const NodeInfo& info = *c.info;
      const int32_t t = info.type.valid() ? info.type.value() : -1;
      auto ts = type_score.find(t);
      if (ts == type_score.end())
        ts = type_score.emplace(t, TypeScore(*needs, candidates, info)).first;
      double total = ts->second, weight = 1;
      if (c.usage_known && !needs->resource.empty() && info.accelerators > 0 &&
          options_.packing_weight > 0) {
        // Fuller nodes first: whole nodes stay free for big pods and can be switched off.
        const double after = std::min(
            1.0, (c.used + c.reserved + needs->count) / static_cast<double>(info.accelerators));
        total += options_.packing_weight * after;
        weight += options_.packing_weight;
      }
      double locality = -1;
      if (!group_nodes.empty()) {
        locality = group_nodes.count(c.name)                                  ? 1
                   : (!info.rack.empty() && group_racks.count(info.rack) > 0) ? 0.5
                                                                              : 0;
      } else if (!needs->data_location.empty()) {
        locality = c.name == needs->data_location                   ? 1
                   : (!info.rack.empty() && info.rack == data_rack) ? 0.5
                                                                    : 0;
      }
      if (locality >= 0 && options_.locality_weight > 0) {
        total += options_.locality_weight * locality;
        weight += options_.locality_weight;
      }
      score[index[k]] = static_cast<int>(std::lround(10 * total / weight));
    }
  }
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
    p.count = it->second.count;
    p.group = it->second.group;
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

// ---- pod groups -----------------------------------------------------------------------------

util::Result<Extender::GroupPlan> Extender::PlanGroup(const PodNeeds& needs, int32_t members,
                                                      const std::vector<Candidate>& eligible) {
  struct Place {
    std::string name;
    int32_t fits = 0;  // members it can hold now
    double free = 0;
    std::string rack;
  };
  std::map<int32_t, std::vector<Place>> by_type;
  std::vector<Candidate> compatible;
  for (const Candidate& offered : eligible) {
    auto it = nodes_.find(offered.name);
    if (it == nodes_.end()) continue;
    const std::string& name = it->first;
    const CachedNode& node = it->second;
    const Candidate c{&node.info, name, node.used, node.reserved, true};
    if (!node.info.schedulable ||
        Check(needs, Candidate{&node.info, name, 0, 0, false}).incompatible) {
      continue;
    }
    compatible.push_back(c);
    const double free = node.info.accelerators - node.used - node.reserved;
    const int32_t fits = static_cast<int32_t>(std::floor(free / needs.count));
    if (fits > 0) by_type[node.info.type.value()].push_back({name, fits, free, node.info.rack});
  }
  // The most suitable type that holds the whole group now.
  int32_t best_type = -1, most = 0;
  double best_score = -1;
  for (auto& [type, places] : by_type) {
    int32_t total = 0;
    for (const Place& p : places) total += p.fits;
    most = std::max(most, total);
    if (total < members) continue;
    double score = 0;
    for (const Candidate& c : compatible) {
      if (c.info->type.value() == type) {
        score = TypeScore(needs, compatible, *c.info);
        break;
      }
    }
    if (score > best_score) {
      best_score = score;
      best_type = type;
    }
  }
  if (best_type < 0) {
    // Even on an empty cluster? Then waiting or preempting cannot help (unresolvable).
    std::map<int32_t, int32_t> ever;
    for (const auto& [name, node] : nodes_) {
      if (!node.info.schedulable ||
          Check(needs, Candidate{&node.info, name, 0, 0, false}).incompatible) {
        continue;
      }
      ever[node.info.type.value()] += node.info.accelerators / needs.count;
    }
    int32_t ever_most = 0;
    for (const auto& [type, n] : ever) ever_most = std::max(ever_most, n);
    if (ever_most < members) {
      return util::Status::InvalidArgument(fmt::format(
          "pod group '{}' needs {} pod(s) of {} {} at once; the whole cluster holds at most {} "
          "on one device type",
          needs.group, members, needs.count, needs.resource, ever_most));
    }
    return util::Status::Infeasible(
        fmt::format("pod group '{}' needs {} more pod(s) of {} {} at once; {} fit now", needs.group,
                    members, needs.count, needs.resource, most));
  }
  std::vector<Place>& places = by_type[best_type];
  // One rack if one holds the group (the one it fills best), the fewest nodes within.
  std::map<std::string, int32_t> rack_fits;
  for (const Place& p : places) {
    if (!p.rack.empty()) rack_fits[p.rack] += p.fits;
  }
  std::string rack;
  for (const auto& [r, fits] : rack_fits) {
    if (fits >= members && (rack.empty() || fits < rack_fits[rack])) rack = r;
  }
  std::sort(places.begin(), places.end(), [&](const Place& a, const Place& b) {
    const bool ar = !rack.empty() && a.rack == rack, br = !rack.empty() && b.rack == rack;
    if (ar != br) return ar;
    if (a.fits != b.fits) return a.fits > b.fits;
    if (a.free != b.free) return a.free < b.free;
    return a.name < b.name;
  });
  GroupPlan plan;
  plan.expires_s = Now() + options_.group_timeout_s;
  for (const Place& p : places) {
    for (int32_t k = 0; k < p.fits && static_cast<int32_t>(plan.slots.size()) < members; ++k) {
      plan.slots.push_back({p.name, needs.count, "", false});
    }
  }
  for (const Slot& s : plan.slots) Reserve(s.node, s.count);
  return plan;
}

util::Result<const Extender::Slot*> Extender::SlotOf(const PodNeeds& needs,
                                                     const std::vector<Candidate>& eligible) {
  const std::string uid = Uid(needs);
  auto it = groups_.find(needs.group);
  if (it == groups_.end()) {
    int32_t bound = 0;
    for (const auto& [id, p] : pods_) bound += p.group == needs.group && id != uid;
    const int32_t members = needs.group_size - bound;
    if (members <= 0) return static_cast<const Slot*>(nullptr);  // the group runs: one more pod
    ASSIGN_OR_RETURN(GroupPlan plan, PlanGroup(needs, members, eligible));
    it = groups_.emplace(needs.group, std::move(plan)).first;
  }
  for (Slot& s : it->second.slots) {
    if (s.uid == uid) return static_cast<const Slot*>(&s);
  }
  for (Slot& s : it->second.slots) {
    if (s.uid.empty() && s.count == needs.count) {
      s.uid = uid;
      return static_cast<const Slot*>(&s);
    }
  }
  return static_cast<const Slot*>(nullptr);  // more pods than planned: placed alone
}

void Extender::MarkBound(const std::string& uid, const std::string& group) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  bool all = true;
  for (Slot& s : it->second.slots) {
    if (s.uid == uid && !s.bound) {
      s.bound = true;
      Reserve(s.node, -s.count);
    }
    all = all && s.bound;
  }
  if (all) groups_.erase(it);
}

void Extender::Reserve(const std::string& node, double delta) {
  // A node that left keeps no count; its slots are simply not taken.
  if (auto it = nodes_.find(node); it != nodes_.end()) it->second.reserved += delta;
}

void Extender::ExpireGroups() {
  const double now = Now();
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (it->second.expires_s > now) {
      ++it;
      continue;
    }
    for (const Slot& s : it->second.slots) {
      if (!s.bound) Reserve(s.node, -s.count);
    }
    it = groups_.erase(it);
  }
}

// ---- the node cache -------------------------------------------------------------------------

void Extender::AddPod(const Pod& pod) {
  const std::string uid = Uid(pod);
  RemovePod(uid);
  if (pod.node_name.empty() || pod.Ended()) return;
  BoundPod& p = pods_[uid];
  p.node = pod.node_name;
  p.count = AcceleratorsOf(pod);
  if (auto needs = NeedsOf(pod, options_.catalog); needs.ok()) p.group = needs->group;
  if (auto n = nodes_.find(p.node); n != nodes_.end()) n->second.used += p.count;
  if (!p.group.empty()) MarkBound(uid, p.group);
}

void Extender::RemovePod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  if (auto n = nodes_.find(it->second.node); n != nodes_.end()) n->second.used -= it->second.count;
  pods_.erase(it);
}

void Extender::ReplaceNodes(const std::vector<Node>& nodes) {
  std::lock_guard lock(mu_);
  nodes_.clear();
  for (const Node& n : nodes) {
    nodes_[n.name].info = DescribeNode(n, options_.mapping, options_.catalog);
  }
  for (const auto& [uid, p] : pods_) {
    if (auto n = nodes_.find(p.node); n != nodes_.end()) n->second.used += p.count;
  }
  for (const auto& [group, plan] : groups_) {
    for (const Slot& s : plan.slots) {
      if (!s.bound) Reserve(s.node, s.count);
    }
  }
}

void Extender::UpsertNode(const Node& node) {
  std::lock_guard lock(mu_);
  nodes_[node.name].info = DescribeNode(node, options_.mapping, options_.catalog);
}

void Extender::DeleteNode(const std::string& name) {
  std::lock_guard lock(mu_);
  nodes_.erase(name);
}

void Extender::ReplacePods(const std::vector<Pod>& pods) {
  std::lock_guard lock(mu_);
  for (auto& [name, node] : nodes_) node.used = 0;
  pods_.clear();
  for (const Pod& p : pods) AddPod(p);
}

void Extender::UpsertPod(const Pod& pod) {
  std::lock_guard lock(mu_);
  AddPod(pod);
}

void Extender::DeletePod(const Pod& pod) {
  std::lock_guard lock(mu_);
  RemovePod(Uid(pod));
}

void Extender::SetSynced(bool synced) {
  std::lock_guard lock(mu_);
  synced_ = synced;
}

bool Extender::synced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

std::vector<ExtenderNodeView> Extender::Nodes() const {
  std::lock_guard lock(mu_);
  std::vector<ExtenderNodeView> out;
  out.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) out.push_back({node.info, node.used, node.reserved});
  std::sort(out.begin(), out.end(), [](const ExtenderNodeView& a, const ExtenderNodeView& b) {
    return a.info.name < b.info.name;
  });
  return out;
}

size_t Extender::groups_reserved() const {
  std::lock_guard lock(mu_);
  return groups_.size();
}

}  // namespace hetsched::svc::k8s
