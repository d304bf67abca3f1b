// Reading Kubernetes JSON with simdjson: k8s/json.cc reads the objects of k8s/objects.h with
// it (ParseNode, ParsePodList, ParseNodeEvent, ...), k8s/extender.cc the objects embedded in
// kube-scheduler's requests. Nothing else includes it (simdjson's header is large).
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "k8s/objects.h"
#include "util/status.h"

namespace hetsched::svc::k8s::json {

using simdjson::dom::element;

// Where a value sits, for error messages: "Pod.spec.containers[2].name". A Path owns its text
// (no pointers to a parent or into the document), so it stays valid however it is copied or
// kept: an earlier version chained parents by pointer and read freed temporaries (issue 37).
class Path {
 public:
  explicit Path(std::string_view root) : text_(root) {}
  Path Field(std::string_view key) const;
  Path At(int64_t index) const;
  const std::string& ToString() const { return text_; }

 private:
  std::string text_;
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
