// libFuzzer target for what kube-scheduler and the API server send the extender: any bytes as
// the body of each verb, and as a node list, pod list and watch event. Every answer is a status
// of 200 or 400 with a JSON body (400 says why in "Error"); never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "k8s/extender.h"
#include "k8s/objects.h"

namespace {

void CheckReply(const hetsched::svc::k8s::ExtenderReply& reply) {
  if (reply.status != 200 && reply.status != 400) std::abort();
  auto body = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) std::abort();
  if (reply.status == 400 && body.value("Error", "").empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace k8s = hetsched::svc::k8s;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // One extender with a cache (NodeNames requests, pod groups), one without (Nodes requests).
  static std::unique_ptr<k8s::Extender> cached, plain;
  if (!cached) {
    k8s::ExtenderOptions o;
    o.node_cache = true;
    o.clock = [] { return 0.0; };
    cached = std::move(k8s::Extender::Create(o)).value();
    cached->SetSynced(true);
    plain = std::move(k8s::Extender::Create(k8s::ExtenderOptions{})).value();
  }
  for (k8s::Extender* e : {cached.get(), plain.get()}) {
    CheckReply(e->Filter(text));
    CheckReply(e->Prioritize(text));
    CheckReply(e->Preempt(text));
    CheckReply(e->Bind(text));
  }
  auto nodes = k8s::ParseNodeList(text);
  if (!nodes.ok() && nodes.status().message().empty()) std::abort();
  if (nodes.ok()) {
    for (const k8s::Node& n : nodes->items) {
      const auto info =
          k8s::DescribeNode(n, k8s::Mapping{}, hetsched::model::DeviceCatalog::BuiltIn());
      if (info.problem.empty() != info.type.valid()) std::abort();
    }
    cached->ReplaceNodes(nodes->items);
  }
  auto pods = k8s::ParsePodList(text);
  if (!pods.ok() && pods.status().message().empty()) std::abort();
  if (pods.ok()) {
    for (const k8s::Pod& p : pods->items) {
      auto needs = k8s::NeedsOf(p, hetsched::model::DeviceCatalog::BuiltIn());
      if (!needs.ok() && needs.status().message().empty()) std::abort();
    }
    cached->ReplacePods(pods->items);
  }
  auto event = k8s::ParsePodEvent(text);
  if (!event.ok() && event.status().message().empty()) std::abort();
  return 0;
}
