// Reading Kubernetes JSON with simdjson: shared by svc/k8s_objects.cc and
// svc/k8s_extender.cc only (simdjson's header is large; nothing else includes it).
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "svc/k8s_objects.h"
#include "util/status.h"

namespace hetsched::svc::k8s::json {

using simdjson::dom::element;

// Where a value sits, rendered only when an error needs it: "Pod.spec.containers[2].name".
struct Path {
  const Path* parent = nullptr;
  std::string_view key;  // a field, or the root's name
  int64_t index = -1;    // an array position when >= 0
  Path Field(std::string_view k) const { return Path{this, k, -1}; }
  Path At(int64_t i) const { return Path{this, {}, i}; }
  std::string ToString() const;
};

// "PATH: is a number (expected a string)".
util::Status WrongType(const Path& path, element value, std::string_view expected);
// A parser for this thread (simdjson parsers are not thread-safe; each keeps its buffers).
simdjson::dom::parser& ThreadParser();
// Parses a whole document; a syntax error names the line and column ("WHAT:1:17: ...").
util::Result<element> ParseDocument(std::string_view text, std::string_view what);

// A field of an object: nullopt when absent or null (Go decodes both as the zero value). Keys
// match exactly unless `any_case` (Go's decoder matches struct fields case-insensitively).
std::optional<element> Field(simdjson::dom::object object, std::string_view key,
                             bool any_case = false);
util::Result<std::string_view> String(element value, const Path& path);

// Keeps only the labels LabelRead accepts.
util::Result<Node> ReadNode(element value, const Path& path, std::string_view rack_label);
util::Result<Pod> ReadPod(element value, const Path& path);

}  // namespace hetsched::svc::k8s::json
