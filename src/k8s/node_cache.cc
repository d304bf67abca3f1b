#include "k8s/node_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "k8s/objects.h"

namespace hetsched::svc::k8s {

NodeCache::NodeCache(ApiClient* client, Extender* extender, Logger* logger)
    : client_(client), extender_(extender), logger_(logger) {
  nodes_thread_ = std::thread([this] { Run(Kind::kNodes); });
  pods_thread_ = std::thread([this] { Run(Kind::kPods); });
}

NodeCache::~NodeCache() { Stop(); }

void NodeCache::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  client_->Stop();
  if (nodes_thread_.joinable()) nodes_thread_.join();
  if (pods_thread_.joinable()) pods_thread_.join();
}

bool NodeCache::Sleep(double seconds) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_; });
  return !stopping_;
}

void NodeCache::MarkSynced(Kind kind) {
  std::lock_guard lock(mu_);
  (kind == Kind::kNodes ? nodes_synced_ : pods_synced_) = true;
  if (nodes_synced_ && pods_synced_) extender_->SetSynced(true);
}

void NodeCache::Run(Kind kind) {
  double backoff_s = 1;
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    const Next next = ListAndWatch(kind);
    if (next == Next::kStop) return;
    // After an expired watch, list again soon, but not in a spin if the server keeps expiring.
    if (next == Next::kListNow) {
      if (!Sleep(0.5)) return;
      continue;
    }
    // A watch that ran a while earned a fresh backoff; one that failed at once doubles it.
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(60)) backoff_s = 1;
    if (!Sleep(backoff_s)) return;
    backoff_s = std::min(30.0, backoff_s * 2);
  }
}

bool NodeCache::Stopping() {
  std::lock_guard lock(mu_);
  return stopping_;
}

NodeCache::Next NodeCache::ListAndWatch(Kind kind) {
  const std::string list_path =
      kind == Kind::kNodes ? "/api/v1/nodes" : std::string("/api/v1/pods?") + kPodSelector;
  std::string version;
  if (auto next = List(kind, list_path, &version)) return *next;
  MarkSynced(kind);
  // Watch from the list's version; a stream the server ends (timeoutSeconds) is resumed from
  // the last version seen, an expired one (410) is listed again.
  while (true) {
    if (auto next = Watch(kind, list_path, &version)) return *next;
  }
}

std::optional<NodeCache::Next> NodeCache::List(Kind kind, const std::string& path,
                                               std::string* version) {
  const bool nodes = kind == Kind::kNodes;
  const std::string what = nodes ? "nodes" : "pods";
  auto body = client_->Get(path);
  if (Stopping()) return Next::kStop;
  if (!body.ok()) {
    logger_->Warn("kubernetes: cannot list " + what, {{"error", body.status().message()}});
    return Next::kBackOff;
  }
  // The list into the extender; false when it does not read.
  auto replace = [&](auto list, auto into) {
    if (!list.ok()) {
      logger_->Warn(fmt::format("kubernetes: the {} list does not read", nodes ? "node" : "pod"),
                    {{"error", list.status().message()}});
      return false;
    }
    into(list->items);
    *version = list->resource_version;
    logger_->Info(nodes ? "kubernetes: nodes listed" : "kubernetes: bound pods listed",
                  {{what, static_cast<int64_t>(list->items.size())}});
    return true;
  };
  const bool read =
      nodes ? replace(ParseNodeList(*body, extender_->mapping().rack_label),
                      [this](const std::vector<Node>& items) { extender_->ReplaceNodes(items); })
            : replace(ParsePodList(*body),
                      [this](const std::vector<Pod>& items) { extender_->ReplacePods(items); });
  if (!read) return Next::kBackOff;
  return std::nullopt;
}

std::optional<NodeCache::Next> NodeCache::Watch(Kind kind, const std::string& list_path,
                                                std::string* version) {
  const bool nodes = kind == Kind::kNodes;
  const std::string what = nodes ? "nodes" : "pods";
  bool expired = false;
  std::string problem;
  const auto watch_started = std::chrono::steady_clock::now();
  const std::string path = list_path + (nodes ? "?" : "&") +
                           "watch=1&allowWatchBookmarks=true&timeoutSeconds=300&"
                           "resourceVersion=" +
                           *version;
  // One event into the extender; false ends the watch (an ERROR event, a line that does not
  // read).
  auto apply = [&](auto event, auto upsert, auto remove) {
    if (!event.ok()) {
      problem = event.status().message();
      return false;
    }
    if (event->type == "ERROR") {
      expired = event->error_code == 410;
      problem = event->error_message;
      return false;
    }
    if (event->type == "DELETED") {
      remove(*event->object);
    } else if (event->object) {
      upsert(*event->object);
    }
    if (!event->resource_version.empty()) *version = event->resource_version;
    return true;
  };
  const util::Status st = client_->Watch(path, [&](std::string_view line) {
    if (nodes) {
      return apply(
          ParseNodeEvent(line, extender_->mapping().rack_label),
          [this](const Node& n) { extender_->UpsertNode(n); },
          [this](const Node& n) { extender_->DeleteNode(n.name); });
    }
    return apply(
        ParsePodEvent(line), [this](const Pod& p) { extender_->UpsertPod(p); },
        [this](const Pod& p) { extender_->DeletePod(p); });
  });
  if (Stopping()) return Next::kStop;
  if (expired || IsGone(st)) {
    logger_->Info("kubernetes: the " + what + " watch expired; listing again");
    return Next::kListNow;
  }
  if (!st.ok() || !problem.empty()) {
    logger_->Warn("kubernetes: the " + what + " watch failed",
                  {{"error", st.ok() ? problem : st.message()}});
    return Next::kBackOff;
  }
  // A server that ends watches at once is not asked again in a spin.
  if (std::chrono::steady_clock::now() - watch_started < std::chrono::seconds(1) && !Sleep(1)) {
    return Next::kStop;
  }
  return std::nullopt;
}

}  // namespace hetsched::svc::k8s
