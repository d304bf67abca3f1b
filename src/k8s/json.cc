// Reading Kubernetes JSON with simdjson (k8s/json.h), and the objects of k8s/objects.h from
// their JSON text: one object, a list response, a watch event.
#include "k8s/json.h"

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>

namespace hetsched::svc::k8s {
namespace json {

Path Path::Field(std::string_view key) const {
  return Path(text_.empty() ? std::string(key) : fmt::format("{}.{}", text_, key));
}

Path Path::At(int64_t index) const { return Path(fmt::format("{}[{}]", text_, index)); }

util::Status WrongType(const Path& path, element value, std::string_view expected) {
  std::string_view is = "null";
  switch (value.type()) {
    case simdjson::dom::element_type::ARRAY:
      is = "an array";
      break;
    case simdjson::dom::element_type::OBJECT:
      is = "an object";
      break;
    case simdjson::dom::element_type::STRING:
      is = "a string";
      break;
    case simdjson::dom::element_type::BOOL:
      is = "a boolean";
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      is = "null";
      break;
    default:
      is = "a number";
      break;
  }
  return util::Status::InvalidArgument(
      fmt::format("{}: is {} (expected {})", path.ToString(), is, expected));
}

simdjson::dom::parser& ThreadParser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

util::Result<element> ParseDocument(std::string_view text, std::string_view what) {
  element doc;
  const auto error = ThreadParser().parse(text.data(), text.size()).get(doc);
  if (!error) return doc;
  // simdjson says what broke but not where; nlohmann, on this error path only, says where.
  try {
    const nlohmann::json discarded = nlohmann::json::parse(text.begin(), text.end());
    (void)discarded;
  } catch (const nlohmann::json::parse_error& e) {
    size_t line = 1, column = 1;
    const size_t end = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string why = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    if (const size_t colon = why.find(": ", why.find("column")); colon != std::string::npos) {
      why = why.substr(colon + 2);
    }
    return util::Status::InvalidArgument(
        fmt::format("{}:{}:{}: not JSON: {}", what, line, column, why));
  } catch (const std::exception&) {
  }
  return util::Status::InvalidArgument(
      fmt::format("{}: not JSON: {}", what, simdjson::error_message(error)));
}

std::optional<element> Field(simdjson::dom::object object, std::string_view key, bool any_case) {
  element value;
  if (!any_case) {
    if (object.at_key(key).get(value) || value.is_null()) return std::nullopt;
    return value;
  }
  for (const auto field : object) {
    if (field.key.size() != key.size()) continue;
    bool same = true;
    for (size_t i = 0; i < key.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(field.key[i])) ==
             std::tolower(static_cast<unsigned char>(key[i]));
    }
    if (same) {
      if (field.value.is_null()) return std::nullopt;
      return field.value;
    }
  }
  return std::nullopt;
}

util::Result<std::string_view> String(element value, const Path& path) {
  std::string_view s;
  if (value.get_string().get(s)) return WrongType(path, value, "a string");
  return s;
}

namespace {

util::Result<simdjson::dom::object> Object(element value, const Path& path) {
  simdjson::dom::object o;
  if (value.get_object().get(o)) return WrongType(path, value, "an object");
  return o;
}

// An optional object field: an empty object when absent or null.
util::Result<std::optional<simdjson::dom::object>> ObjectField(simdjson::dom::object parent,
                                                               std::string_view key,
                                                               const Path& path) {
  auto v = Field(parent, key);
  if (!v) return std::optional<simdjson::dom::object>();
  ASSIGN_OR_RETURN(auto o, Object(*v, path.Field(key)));
  return std::optional<simdjson::dom::object>(o);
}

util::Result<std::string> StringField(simdjson::dom::object parent, std::string_view key,
                                      const Path& path) {
  auto v = Field(parent, key);
  if (!v) return std::string();
  ASSIGN_OR_RETURN(std::string_view s, String(*v, path.Field(key)));
  return std::string(s);
}

// `keep` null: every entry.
util::Status StringMap(simdjson::dom::object parent, std::string_view key, const Path& path,
                       std::map<std::string, std::string>* out,
                       const std::function<bool(std::string_view)>& keep = nullptr) {
  ASSIGN_OR_RETURN(auto o, ObjectField(parent, key, path));
  if (!o) return util::Status::Ok();
  const Path here = path.Field(key);
  for (const auto field : *o) {
    // The entry's path is built only for an error: node lists carry thousands of labels.
    std::string_view s;
    if (field.value.get_string().get(s)) {
      return WrongType(here.Field(field.key), field.value, "a string");
    }
    if (keep && !keep(field.key)) continue;
    out->emplace(std::string(field.key), std::string(s));
  }
  return util::Status::Ok();
}

// A map of quantities (allocatable, requests, limits): strings as the API writes them, numbers
// accepted too.
util::Status QuantityMap(simdjson::dom::object parent, std::string_view key, const Path& path,
                         std::map<std::string, double>* out) {
  ASSIGN_OR_RETURN(auto o, ObjectField(parent, key, path));
  if (!o) return util::Status::Ok();
  const Path here = path.Field(key);
  for (const auto field : *o) {
    double value = 0;
    if (field.value.is_number()) {
      value = double(field.value);
    } else {
      std::string_view s;
      if (field.value.get_string().get(s)) {
        return WrongType(here.Field(field.key), field.value, "a string");
      }
      auto q = ParseQuantity(s);
      if (!q.ok()) {
        return util::Status::InvalidArgument(
            fmt::format("{}: {}", here.Field(field.key).ToString(), q.status().message()));
      }
      value = *q;
    }
    (*out)[std::string(field.key)] = value;
  }
  return util::Status::Ok();
}

// Each container's requests, a limit standing in where a resource has no request.
util::Result<std::map<std::string, double>> ContainerRequests(element container, const Path& path) {
  ASSIGN_OR_RETURN(auto c, Object(container, path));
  std::map<std::string, double> requests, limits;
  ASSIGN_OR_RETURN(auto resources, ObjectField(c, "resources", path));
  if (resources) {
    const Path here = path.Field("resources");
    RETURN_IF_ERROR(QuantityMap(*resources, "requests", here, &requests));
    RETURN_IF_ERROR(QuantityMap(*resources, "limits", here, &limits));
  }
  for (const auto& [name, value] : limits) requests.emplace(name, value);
  return requests;
}

util::Status ContainerList(simdjson::dom::object spec, std::string_view key, const Path& path,
                           bool init, std::map<std::string, double>* out) {
  auto v = Field(spec, key);
  if (!v) return util::Status::Ok();
  simdjson::dom::array list;
  if (v->get_array().get(list)) return WrongType(path.Field(key), *v, "an array");
  const Path here = path.Field(key);
  int64_t i = 0;
  for (const element c : list) {
    ASSIGN_OR_RETURN(auto requests, ContainerRequests(c, here.At(i++)));
    for (const auto& [name, value] : requests) {
      double& total = (*out)[name];
      total = init ? std::max(total, value) : total + value;
    }
  }
  return util::Status::Ok();
}

}  // namespace

util::Result<Node> ReadNode(element value, const Path& path, std::string_view rack_label) {
  ASSIGN_OR_RETURN(auto o, Object(value, path));
  Node node;
  ASSIGN_OR_RETURN(auto metadata, ObjectField(o, "metadata", path));
  const Path meta_path = path.Field("metadata");
  if (metadata) {
    ASSIGN_OR_RETURN(node.name, StringField(*metadata, "name", meta_path));
    RETURN_IF_ERROR(
        StringMap(*metadata, "labels", meta_path, &node.labels,
                  [rack_label](std::string_view key) { return LabelRead(key, rack_label); }));
  }
  if (node.name.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("{}: missing (expected the node's name)", meta_path.Field("name").ToString()));
  }
  ASSIGN_OR_RETURN(auto spec, ObjectField(o, "spec", path));
  if (spec) {
    if (auto u = Field(*spec, "unschedulable")) {
      bool b = false;
      if (u->get_bool().get(b)) {
        return WrongType(path.Field("spec").Field("unschedulable"), *u, "a boolean");
      }
      node.unschedulable = b;
    }
  }
  ASSIGN_OR_RETURN(auto status, ObjectField(o, "status", path));
  if (status) {
    const Path status_path = path.Field("status");
    RETURN_IF_ERROR(QuantityMap(*status, "allocatable", status_path, &node.allocatable));
    if (auto conditions = Field(*status, "conditions")) {
      simdjson::dom::array list;
      if (conditions->get_array().get(list)) {
        return WrongType(status_path.Field("conditions"), *conditions, "an array");
      }
      int64_t i = 0;
      for (const element c : list) {
        const Path cp = status_path.Field("conditions").At(i++);
        ASSIGN_OR_RETURN(auto co, Object(c, cp));
        ASSIGN_OR_RETURN(std::string type, StringField(co, "type", cp));
        ASSIGN_OR_RETURN(std::string st, StringField(co, "status", cp));
        if (type == "Ready") node.ready = st == "True";
      }
    }
  }
  return node;
}

util::Result<Pod> ReadPod(element value, const Path& path) {
  ASSIGN_OR_RETURN(auto o, Object(value, path));
  Pod pod;
  ASSIGN_OR_RETURN(auto metadata, ObjectField(o, "metadata", path));
  const Path meta_path = path.Field("metadata");
  if (metadata) {
    ASSIGN_OR_RETURN(pod.name, StringField(*metadata, "name", meta_path));
    ASSIGN_OR_RETURN(std::string ns, StringField(*metadata, "namespace", meta_path));
    if (!ns.empty()) pod.namespace_name = ns;
    ASSIGN_OR_RETURN(pod.uid, StringField(*metadata, "uid", meta_path));
    RETURN_IF_ERROR(StringMap(*metadata, "labels", meta_path, &pod.labels));
    RETURN_IF_ERROR(StringMap(*metadata, "annotations", meta_path, &pod.annotations));
  }
  if (pod.name.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("{}: missing (expected the pod's name)", meta_path.Field("name").ToString()));
  }
  ASSIGN_OR_RETURN(auto spec, ObjectField(o, "spec", path));
  if (spec) {
    const Path spec_path = path.Field("spec");
    ASSIGN_OR_RETURN(pod.node_name, StringField(*spec, "nodeName", spec_path));
    std::map<std::string, double> init;
    RETURN_IF_ERROR(ContainerList(*spec, "containers", spec_path, false, &pod.requests));
    RETURN_IF_ERROR(ContainerList(*spec, "initContainers", spec_path, true, &init));
    for (const auto& [name, v] : init) pod.requests[name] = std::max(pod.requests[name], v);
    std::map<std::string, double> overhead;
    RETURN_IF_ERROR(QuantityMap(*spec, "overhead", spec_path, &overhead));
    for (const auto& [name, v] : overhead) pod.requests[name] += v;
  }
  ASSIGN_OR_RETURN(auto status, ObjectField(o, "status", path));
  if (status) {
    ASSIGN_OR_RETURN(pod.phase, StringField(*status, "phase", path.Field("status")));
  }
  return pod;
}

}  // namespace json

namespace {

template <typename T, typename Read>
util::Result<List<T>> ParseList(std::string_view text, std::string_view kind, Read read) {
  ASSIGN_OR_RETURN(json::element doc, json::ParseDocument(text, kind));
  const json::Path root(kind);
  simdjson::dom::object o;
  if (doc.get_object().get(o)) return json::WrongType(root, doc, "an object");
  List<T> list;
  if (auto metadata = json::Field(o, "metadata")) {
    simdjson::dom::object m;
    if (metadata->get_object().get(m)) {
      return json::WrongType(root.Field("metadata"), *metadata, "an object");
    }
    if (auto rv = json::Field(m, "resourceVersion")) {
      ASSIGN_OR_RETURN(auto s, json::String(*rv, root.Field("metadata").Field("resourceVersion")));
      list.resource_version = std::string(s);
    }
  }
  if (auto items = json::Field(o, "items")) {
    simdjson::dom::array a;
    if (items->get_array().get(a)) {
      return json::WrongType(root.Field("items"), *items, "an array");
    }
    list.items.reserve(a.size());
    int64_t i = 0;
    for (const json::element item : a) {
      ASSIGN_OR_RETURN(T value, read(item, root.Field("items").At(i++)));
      list.items.push_back(std::move(value));
    }
  }
  return list;
}

template <typename T, typename Read>
util::Result<WatchEvent<T>> ParseEvent(std::string_view line, std::string_view kind, Read read) {
  ASSIGN_OR_RETURN(json::element doc, json::ParseDocument(line, "watch event"));
  const json::Path root("watch event");
  simdjson::dom::object o;
  if (doc.get_object().get(o)) return json::WrongType(root, doc, "an object");
  WatchEvent<T> event;
  auto type = json::Field(o, "type");
  if (!type) return util::Status::InvalidArgument("watch event: type: missing");
  ASSIGN_OR_RETURN(auto t, json::String(*type, root.Field("type")));
  event.type = std::string(t);
  auto object = json::Field(o, "object");
  if (!object) return util::Status::InvalidArgument("watch event: object: missing");
  const json::Path object_path = root.Field("object");
  simdjson::dom::object obj;
  if (object->get_object().get(obj)) return json::WrongType(object_path, *object, "an object");
  if (event.type == "ERROR") {  // a Status object
    if (auto code = json::Field(obj, "code")) {
      int64_t c = 0;
      if (code->get_int64().get(c)) {
        return json::WrongType(object_path.Field("code"), *code, "an integer");
      }
      event.error_code = static_cast<int>(c);
    }
    if (auto m = json::Field(obj, "message")) {
      ASSIGN_OR_RETURN(auto s, json::String(*m, object_path.Field("message")));
      event.error_message = std::string(s);
    }
    return event;
  }
  if (auto metadata = json::Field(obj, "metadata")) {
    simdjson::dom::object m;
    if (!metadata->get_object().get(m)) {
      if (auto rv = json::Field(m, "resourceVersion")) {
        ASSIGN_OR_RETURN(auto s, json::String(*rv, object_path.Field("metadata")));
        event.resource_version = std::string(s);
      }
    }
  }
  if (event.type == "BOOKMARK") return event;
  if (event.type != "ADDED" && event.type != "MODIFIED" && event.type != "DELETED") {
    return util::Status::InvalidArgument(fmt::format(
        "watch event: type: '{}' (expected ADDED, MODIFIED, DELETED, BOOKMARK or ERROR)",
        event.type));
  }
  const json::Path typed = root.Field(kind);
  ASSIGN_OR_RETURN(T value, read(*object, typed));
  event.object = std::move(value);
  return event;
}

}  // namespace

util::Result<Node> ParseNode(std::string_view text, std::string_view what,
                             std::string_view rack_label) {
  ASSIGN_OR_RETURN(json::element doc, json::ParseDocument(text, what));
  return json::ReadNode(doc, json::Path(what), rack_label);
}

util::Result<Pod> ParsePod(std::string_view text, std::string_view what) {
  ASSIGN_OR_RETURN(json::element doc, json::ParseDocument(text, what));
  return json::ReadPod(doc, json::Path(what));
}

util::Result<List<Node>> ParseNodeList(std::string_view text, std::string_view rack_label) {
  return ParseList<Node>(text, "NodeList", [rack_label](json::element e, const json::Path& p) {
    return json::ReadNode(e, p, rack_label);
  });
}
util::Result<List<Pod>> ParsePodList(std::string_view text) {
  return ParseList<Pod>(text, "PodList", json::ReadPod);
}
util::Result<WatchEvent<Node>> ParseNodeEvent(std::string_view line, std::string_view rack_label) {
  return ParseEvent<Node>(line, "Node", [rack_label](json::element e, const json::Path& p) {
    return json::ReadNode(e, p, rack_label);
  });
}
util::Result<WatchEvent<Pod>> ParsePodEvent(std::string_view line) {
  return ParseEvent<Pod>(line, "Pod", json::ReadPod);
}

}  // namespace hetsched::svc::k8s
