// NodeCache: keeps the extender's view of the cluster current (docs/kubernetes.md). Two
// threads, one for nodes and one for the pods bound to nodes, each list once and then watch
// from the list's resource version, listing again when the watch expires (410 Gone) and
// backing off (1 s doubling to 30 s) while the API server cannot be reached. Until both lists
// have been read the extender is not synced, and filter requests are answered with an error.
// After a failure it keeps answering from what it knew while it lists again (as informers do).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "k8s/client.h"
#include "k8s/extender.h"
#include "obs/log.h"

namespace hetsched::svc::k8s {

class NodeCache {
 public:
  // Starts both threads. `client`, `extender` and `logger` outlive the cache.
  NodeCache(ApiClient* client, Extender* extender, Logger* logger);
  ~NodeCache();  // Stop
  void Stop();   // ends both watches (ApiClient::Stop) and joins the threads

  // The pods the cache follows: bound to a node and not ended.
  static constexpr const char* kPodSelector =
      "fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";

 private:
  enum class Kind { kNodes, kPods };
  void Run(Kind kind);
  enum class Next { kStop, kListNow, kBackOff };
  // Lists, then watches until the watch expires (kListNow) or fails (kBackOff).
  Next ListAndWatch(Kind kind);
  // Reads the list at `path` into the extender and its resource version into `*version`;
  // nullopt when it did, else what Run does next (logged).
  std::optional<Next> List(Kind kind, const std::string& path, std::string* version);
  // One watch stream from `*version`, each event into the extender and its version into
  // `*version`; nullopt when the server ended it (watch again), else what Run does next.
  std::optional<Next> Watch(Kind kind, const std::string& list_path, std::string* version);
  bool Stopping();
  // Waits `seconds` unless stopped; false when stopped.
  bool Sleep(double seconds);
  void MarkSynced(Kind kind);

  ApiClient* client_;
  Extender* extender_;
  Logger* logger_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool nodes_synced_ = false, pods_synced_ = false;
  std::thread nodes_thread_, pods_thread_;
};

}  // namespace hetsched::svc::k8s
