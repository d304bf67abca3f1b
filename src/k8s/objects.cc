#include "k8s/objects.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "k8s/json.h"

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

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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

// The built-in product rules: every token listed must be a token of the product name (split
// at '-', '_' and spaces, case-insensitive); a token ending in '*' may be the start of one
// (Ascend's chip names carry a bin number: 910B3). First match wins, so more specific first.
struct ProductRule {
  std::vector<std::string_view> tokens;
  std::string_view type;
};
const std::vector<ProductRule>& ProductRules() {
  static const std::vector<ProductRule> rules = {
      {{"h100"}, "h100-80g"},
      {{"a100", "80gb"}, "a100-80g"},
      {{"a100"}, "a100-40g"},
      {{"v100"}, "v100-32g"},
      {{"p100"}, "p100"},
      {{"k80"}, "k80"},
      {{"t4"}, "t4"},
      {{"l40s"}, "l40s"},
      {{"4090"}, "rtx-4090"},
      {{"mi300x"}, "mi300x"},
      {{"mi250x"}, "mi250x"},
      {{"mi250"}, "mi250x"},
      {{"mi100"}, "mi100"},
      {{"910b*"}, "ascend-910b"},
      {{"ascend910b*"}, "ascend-910b"},
      {{"310p*"}, "ascend-310p"},
      {{"ascend310p*"}, "ascend-310p"},
  };
  return rules;
}

bool TokenMatches(std::string_view rule, const std::string& token) {
  if (!rule.empty() && rule.back() == '*') {
    rule.remove_suffix(1);
    return token.compare(0, rule.size(), rule) == 0;
  }
  return token == rule;
}

std::vector<std::string> Tokens(std::string_view product) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : product) {
    if (c == '-' || c == '_' || c == ' ') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// AMD's PCI device ids (amd.com/gpu.device-id) of the catalog's Instinct parts.
std::optional<std::string_view> AmdTypeOfDeviceId(std::string_view id) {
  const std::string lower = Lower(id);
  if (lower == "738c") return "mi100";
  if (lower == "740c") return "mi250x";
  if (lower == "74a1") return "mi300x";
  return std::nullopt;
}

// The items of "a, b,c": split at commas, spaces around them dropped, empty ones skipped.
std::vector<std::string> CommaList(std::string_view text) {
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string item(text.substr(pos, comma - pos));
    pos = comma + 1;
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) items.push_back(std::move(item));
  }
  return items;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

const std::string* Label(const Node& node, const std::string& key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() || it->second.empty() ? nullptr : &it->second;
}

// The value of a vendor label, in its plain form or, on a node with several distinct values,
// the "<key>.<value>=<count>" form (AMD's labeller; its legacy beta.amd.com/ prefix always uses
// it). Several distinct values: `mixed` is set.
std::optional<std::string> VendorLabel(const Node& node, const std::vector<std::string>& keys,
                                       bool* mixed) {
  for (const std::string& key : keys) {
    if (const std::string* v = Label(node, key)) return *v;
  }
  std::optional<std::string> found;
  for (const std::string& key : keys) {
    const std::string prefix = key + ".";
    for (auto it = node.labels.lower_bound(prefix);
         it != node.labels.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const std::string value = it->first.substr(prefix.size());
      if (found && *found != value) *mixed = true;
      if (!found) found = value;
    }
  }
  return found;
}

}  // namespace

util::Result<double> ParseQuantity(std::string_view text) {
  auto bad = [&] {
    return util::Status::InvalidArgument(
        fmt::format("'{}' is not a quantity (expected e.g. 4, 500m, 16Gi or 1e3)", text));
  };
  if (text.empty() || text.size() > 64) return bad();
  size_t i = 0;
  if (text[i] == '+' || text[i] == '-') ++i;
  const size_t digits_start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == digits_start) return bad();
  const std::string number(text.substr(0, i));
  if (std::count(number.begin(), number.end(), '.') > 1 || number.back() == '.') return bad();
  double value = 0;
  auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || p != number.data() + number.size()) return bad();
  const std::string_view suffix = text.substr(i);
  static const std::pair<std::string_view, double> kSuffixes[] = {
      {"", 1},
      {"n", 1e-9},
      {"u", 1e-6},
      {"m", 1e-3},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
      {"Ki", 1024.},
      {"Mi", 1048576.},
      {"Gi", 1073741824.},
      {"Ti", 1099511627776.},
      {"Pi", 1125899906842624.},
      {"Ei", 1152921504606846976.},
  };
  for (const auto& [s, factor] : kSuffixes) {
    if (suffix == s) return value * factor;
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {
    auto exponent = ParseInt(suffix.substr(suffix.size() > 1 && suffix[1] == '+' ? 2 : 1));
    if (!exponent || *exponent < -30 || *exponent > 30) return bad();
    return value * std::pow(10.0, static_cast<double>(*exponent));
  }
  return bad();
}

bool LabelRead(std::string_view key, std::string_view rack_label) {
  if (key == rack_label || key == "kubernetes.io/arch" || key == "accelerator") return true;
  for (std::string_view prefix : {"nvidia.com/", "amd.com/", "beta.amd.com/", "huawei.com/",
                                  "node.kubernetes.io/npu", "hetsched.io/"}) {
    if (key.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

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

std::optional<std::string> StackOfResource(std::string_view resource) {
  if (resource == "nvidia.com/gpu") return "cuda";
  if (resource == "amd.com/gpu") return "rocm";
  // Exactly these: the plugin also advertises shares (huawei.com/Ascend910-2c) and unhealthy
  // counts, which are not whole devices.
  if (resource == "huawei.com/npu" || resource == "huawei.com/Ascend910" ||
      resource == "huawei.com/Ascend310" || resource == "huawei.com/Ascend310P") {
    return "cann";
  }
  return std::nullopt;
}

std::string StackOfArch(const std::string& arch) {
  if (arch == "amd64") return "x86_64";
  if (arch == "arm64") return "aarch64";
  return arch;
}

std::optional<std::string> CatalogTypeForProduct(std::string_view product, const Mapping& mapping,
                                                 const model::DeviceCatalog& catalog) {
  if (auto it = mapping.device_types.find(std::string(product)); it != mapping.device_types.end()) {
    return it->second;
  }
  const std::vector<std::string> tokens = Tokens(product);
  for (const ProductRule& rule : ProductRules()) {
    const bool all = std::all_of(rule.tokens.begin(), rule.tokens.end(), [&](std::string_view t) {
      return std::any_of(tokens.begin(), tokens.end(),
                         [&](const std::string& have) { return TokenMatches(t, have); });
    });
    if (all) return std::string(rule.type);
  }
  if (const model::DeviceType* t = catalog.Find(Lower(product))) return t->name;
  return std::nullopt;
}

std::optional<std::string> CudaVersionOfDriver(std::string_view driver_version) {
  if (driver_version.empty() || !std::isdigit(static_cast<unsigned char>(driver_version[0]))) {
    return std::nullopt;
  }
  for (char ch : driver_version) {
    if (!std::isdigit(static_cast<unsigned char>(ch)) && ch != '.') return std::nullopt;
  }
  // NVIDIA's CUDA Toolkit release notes, table 3: the minimum Linux driver of each toolkit's
  // first release (GA).
  static const std::pair<const char*, const char*> kTable[] = {
      {"570.26", "12.8"},    {"560.28.03", "12.6"}, {"555.42.02", "12.5"}, {"550.54.14", "12.4"},
      {"545.23.06", "12.3"}, {"535.54.03", "12.2"}, {"530.30.02", "12.1"}, {"525.60.13", "12.0"},
      {"520.61.05", "11.8"}, {"515.43.04", "11.7"}, {"510.39.01", "11.6"}, {"495.29.05", "11.5"},
      {"470.42.01", "11.4"}, {"465.19.01", "11.3"}, {"460.27.03", "11.2"}, {"455.23", "11.1"},
      {"450.51.05", "11.0"},
  };
  for (const auto& [driver, cuda] : kTable) {
    if (model::CompareVersions(driver_version, driver) >= 0) return std::string(cuda);
  }
  return std::nullopt;
}

NodeInfo DescribeNode(const Node& node, const Mapping& mapping,
                      const model::DeviceCatalog& catalog) {
  NodeInfo info;
  info.name = node.name;
  info.schedulable = node.ready && !node.unschedulable;
  if (const std::string* arch = Label(node, "kubernetes.io/arch")) info.arch = *arch;
  if (const std::string* rack = Label(node, mapping.rack_label)) info.rack = *rack;
  for (const auto& [resource, count] : node.allocatable) {
    if (!StackOfResource(resource) || count < 1) continue;
    if (!info.resource.empty()) {
      info.problem =
          fmt::format("offers both {} and {}; hetsched models one kind of accelerator per node",
                      info.resource, resource);
      return info;
    }
    info.resource = resource;
    info.accelerators = static_cast<int32_t>(std::min(count, 1e6));
  }

  std::optional<std::string> type_name;
  std::string product;
  if (const std::string* explicit_type = Label(node, "hetsched.io/device-type")) {
    type_name = *explicit_type;
    product = *explicit_type;
  } else if (info.resource.empty()) {
    type_name = mapping.cpu_type;
    product = mapping.cpu_type;
  } else {
    bool mixed = false;
    std::optional<std::string> label;
    if (info.resource == "nvidia.com/gpu") {
      label = VendorLabel(node, {"nvidia.com/gpu.product"}, &mixed);
    } else if (info.resource == "amd.com/gpu") {
      label =
          VendorLabel(node, {"amd.com/gpu.product-name", "beta.amd.com/gpu.product-name"}, &mixed);
      if (!label) {
        if (auto id = VendorLabel(node, {"amd.com/gpu.device-id", "beta.amd.com/gpu.device-id"},
                                  &mixed)) {
          if (auto t = AmdTypeOfDeviceId(*id)) type_name = std::string(*t);
          label = "device-id " + *id;
        }
      }
    } else {
      label = VendorLabel(node, {"node.kubernetes.io/npu.chip.name"}, &mixed);
      if (!label && info.resource != "huawei.com/npu") {
        label = info.resource.substr(std::string_view("huawei.com/").size());
      }
    }
    if (mixed) {
      info.problem = fmt::format(
          "it has {} of several models; hetsched needs one model per node to know which one a "
          "pod gets (label the node hetsched.io/device-type=TYPE)",
          info.resource);
      return info;
    }
    if (!label) {
      info.problem = fmt::format(
          "it has {} but no label says its model (run the vendor's feature discovery, or label "
          "the node hetsched.io/device-type=TYPE)",
          info.resource);
      return info;
    }
    product = *label;
    if (!type_name) type_name = CatalogTypeForProduct(*label, mapping, catalog);
  }
  std::optional<model::DeviceTypeId> id;
  if (type_name) id = catalog.FindId(*type_name);
  if (!id) {
    info.problem = fmt::format(
        "its {} '{}' maps to no catalog type (add it to kubernetes.device_types; `hetsched "
        "catalog` lists the types)",
        info.resource.empty() ? "CPU type" : "device", product);
    return info;
  }
  info.type = *id;
  info.device = catalog.Get(*id);

  if (info.resource.empty() && !info.arch.empty()) {
    info.device.stacks = {{StackOfArch(info.arch), ""}};
  }
  if (info.resource == "nvidia.com/gpu") {
    if (const std::string* mib = Label(node, "nvidia.com/gpu.memory")) {
      if (auto m = ParseInt(*mib); m && *m > 0) info.device.memory_bytes = uint64_t(*m) << 20;
    }
    // The CUDA version the driver supports: GPU feature discovery's runtime-version labels,
    // else the driver version through NVIDIA's table.
    std::optional<std::string> cuda;
    if (const std::string* full = Label(node, "nvidia.com/cuda.runtime-version.full")) {
      cuda = *full;
    } else if (const std::string* major = Label(node, "nvidia.com/cuda.runtime-version.major")) {
      const std::string* minor = Label(node, "nvidia.com/cuda.runtime-version.minor");
      cuda = *major + "." + (minor ? *minor : "0");
    } else if (const std::string* old_major = Label(node, "nvidia.com/cuda.runtime.major")) {
      const std::string* minor = Label(node, "nvidia.com/cuda.runtime.minor");
      cuda = *old_major + "." + (minor ? *minor : "0");
    } else if (const std::string* driver = Label(node, "nvidia.com/cuda.driver-version.full")) {
      cuda = CudaVersionOfDriver(*driver);
    } else if (const std::string* d_major = Label(node, "nvidia.com/cuda.driver.major")) {
      const std::string* minor = Label(node, "nvidia.com/cuda.driver.minor");
      cuda = CudaVersionOfDriver(*d_major + "." + (minor ? *minor : "0"));
    }
    if (cuda) {
      info.driver_known = true;
      for (model::SoftwareStack& s : info.device.stacks) {
        // The device's own limit (its last supported CUDA) still holds under a newer driver.
        if (s.name == "cuda" && model::CompareVersions(*cuda, s.version) < 0) s.version = *cuda;
      }
    }
  }
  // A node may state its stacks outright, one label each (hetsched.io/stack.rocm=6.1): AMD's
  // and Ascend's labels give kernel-driver versions, not the ROCm or CANN release a pod's image
  // needs. Label values cannot hold spaces or commas, hence a label per stack.
  const std::string prefix = "hetsched.io/stack.";
  std::vector<model::SoftwareStack> stated;
  for (auto it = node.labels.lower_bound(prefix);
       it != node.labels.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    auto stack = model::ParseSoftwareStack(it->first.substr(prefix.size()) + " " + it->second);
    if (!stack.ok() || it->first.size() == prefix.size()) {
      info.problem = fmt::format(
          "its label {}={} is not a stack and version (expected e.g. "
          "hetsched.io/stack.rocm=6.1)",
          it->first, it->second);
      info.type = model::DeviceTypeId();
      return info;
    }
    stated.push_back(*stack);
  }
  if (!stated.empty()) {
    info.device.stacks = std::move(stated);
    info.driver_known = true;
  }
  return info;
}

util::Result<PodNeeds> NeedsOf(const Pod& pod, const model::DeviceCatalog& catalog) {
  PodNeeds needs;
  needs.key = pod.Key();
  needs.uid = pod.uid;
  model::Job& job = needs.job;
  job.name = needs.key;
  auto annotation = [&](const std::string& key) -> const std::string* {
    auto it = pod.annotations.find(key);
    return it == pod.annotations.end() ? nullptr : &it->second;
  };
  auto bad = [&](std::string_view key, const std::string& value, std::string_view expected) {
    return util::Status::InvalidArgument(
        fmt::format("pod {}: annotation {}: '{}' (expected {})", needs.key, key, value, expected));
  };
  for (const auto& [resource, count] : pod.requests) {
    if (!StackOfResource(resource) || count <= 0) continue;
    if (!needs.resource.empty()) {
      return util::Status::InvalidArgument(
          fmt::format("pod {}: requests both {} and {} (one kind of accelerator per pod)",
                      needs.key, needs.resource, resource));
    }
    if (count != std::floor(count) || count > 4096) {
      return util::Status::InvalidArgument(fmt::format(
          "pod {}: {}: {} (expected a whole number of devices)", needs.key, resource, count));
    }
    needs.resource = resource;
    needs.count = static_cast<int32_t>(count);
  }
  job.gang_size = job.min_workers = job.max_workers = std::max(1, needs.count);

  if (const std::string* stacks = annotation("hetsched.io/stacks")) {
    for (const std::string& item : CommaList(*stacks)) {
      auto r = model::ParseStackRequirement(item);
      if (!r.ok()) return bad("hetsched.io/stacks", *stacks, "e.g. cuda>=12.2,rocm>=6.0");
      job.stacks.push_back(*r);
    }
    if (job.stacks.empty()) return bad("hetsched.io/stacks", *stacks, "e.g. cuda>=12.2,rocm>=6.0");
  } else if (auto stack = StackOfResource(needs.resource)) {
    job.stacks.push_back({*stack, ""});
  }

  if (const std::string* memory = annotation("hetsched.io/memory-per-device")) {
    auto q = ParseQuantity(*memory);
    if (!q.ok() || *q <= 0) return bad("hetsched.io/memory-per-device", *memory, "e.g. 40Gi");
    job.memory_per_worker = static_cast<uint64_t>(*q);
  } else if (auto it = pod.requests.find("nvidia.com/gpumem"); it != pod.requests.end()) {
    job.memory_per_worker = static_cast<uint64_t>(it->second) << 20;  // HAMi: MiB per GPU
  }

  if (const std::string* type = annotation("hetsched.io/job-type")) job.job_type = *type;
  if (const std::string* table = annotation("hetsched.io/throughput")) {
    for (const std::string& item : CommaList(*table)) {
      const size_t eq = item.find('=');
      const model::DeviceType* t =
          eq == std::string::npos ? nullptr : catalog.Find(Lower(item.substr(0, eq)));
      double v = -1;
      if (t) {
        const std::string number = item.substr(eq + 1);
        auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
        if (ec != std::errc() || p != number.data() + number.size()) v = -1;
      }
      if (!t || !(v >= 0) || !std::isfinite(v)) {
        return bad("hetsched.io/throughput", *table,
                   "TYPE=STEPS_PER_S pairs of catalog types, e.g. a100-80g=12.5,t4=3");
      }
      job.throughput[t->name] = v;
    }
  }
  if (job.job_type.empty() && job.throughput.empty()) {
    needs.speed_assumed = true;
    for (const model::DeviceType& t : catalog.types()) job.throughput[t.name] = 1;
  }

  if (const std::string* group = annotation("hetsched.io/pod-group")) {
    needs.group = *group;
  } else if (const std::string* volcano = annotation("scheduling.k8s.io/group-name")) {
    needs.group = *volcano;
  } else {
    for (const char* label :
         {"scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io"}) {
      if (auto it = pod.labels.find(label); it != pod.labels.end() && !it->second.empty()) {
        needs.group = it->second;
        break;
      }
    }
  }
  if (!needs.group.empty()) {
    const std::string* size = annotation("hetsched.io/pod-group-size");
    auto n = size ? ParseInt(*size) : std::nullopt;
    if (!n || *n < 1 || *n > 100000) {
      return util::Status::InvalidArgument(fmt::format(
          "pod {}: pod group '{}': annotation hetsched.io/pod-group-size: {} (expected the "
          "number of pods the group needs at once, its minMember; hetsched does not read "
          "PodGroup objects)",
          needs.key, needs.group, size ? "'" + *size + "'" : "missing"));
    }
    needs.group_size = static_cast<int32_t>(*n);
    needs.group = pod.namespace_name + "/" + needs.group;
  }
  if (const std::string* location = annotation("hetsched.io/data-location")) {
    needs.data_location = *location;
  }
  return needs;
}

}  // namespace hetsched::svc::k8s
