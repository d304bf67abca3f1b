// VirtualBackend: a cluster that exists only in time. Each attempt "runs" for its modeled
// seconds divided by the time scale, then exits 0; nothing is executed. The daemon's default
// backend (try hetsched without a cluster) and the one tests use to check live decisions.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/backend.h"

namespace hetsched::svc {

struct VirtualBackendOptions {
  std::vector<std::string> nodes;  // names of the nodes it offers (all up, powered on)
  double time_scale = 1;           // modeled seconds per wall second
  // Modeled seconds a stopped attempt takes to write its checkpoint before it exits.
  double checkpoint_save_s = 0;
  // Wall seconds (any epoch); steady by default, injectable for tests.
  std::function<double()> clock;
};

// Not thread-safe (one caller, the service's control loop).
class VirtualBackend final : public Backend {
 public:
  explicit VirtualBackend(VirtualBackendOptions options);

  std::string name() const override { return "virtual"; }
  util::Status Start(const LaunchSpec& spec) override;
  util::Status Stop(const std::string& job, int64_t attempt, double grace_s) override;
  util::Status SetNodePower(const std::string& node, bool on) override;
  std::vector<BackendNode> ListNodes() override;
  std::vector<BackendJob> ListJobs() override;
  std::vector<BackendEvent> Poll() override;

  // The modeled cluster changes under the daemon, as a real one does: a machine joins
  // (listed with its description from then on) or leaves (its runs vanish with it, without an
  // exit). Safe to call from another thread than the service's.
  void AddNode(BackendNode node);
  void RemoveNode(const std::string& node);

 private:
  // Drops the runs of nodes that left (the service's thread).
  void DropLeftNodes();
  // A gang spanning nodes is one launch per node, all with the job's attempt number.
  using Key = std::tuple<std::string, int64_t, std::string>;  // job, attempt, node
  struct Run {
    std::string node;
    std::multimap<double, Key>::iterator end;  // its entry in by_end_
    bool stopped = false;
  };
  void EndAt(std::map<Key, Run>::iterator run, double end_wall_s);
  VirtualBackendOptions options_;
  std::map<Key, Run> runs_;
  // Runs by the wall time they end, so a Poll touches only what ended (O(ended log runs)),
  // and runs not yet reported started.
  std::multimap<double, Key> by_end_;
  std::vector<Key> unreported_;
  std::mutex nodes_mu_;  // guards the three below: AddNode / RemoveNode come from any thread
  std::map<std::string, BackendNode> nodes_;  // by name; `up` is its power
  std::vector<std::string> node_order_;       // as listed
  std::vector<std::string> left_;             // removed, runs not yet dropped
  std::vector<BackendEvent> pending_;         // node power events, handed out by the next Poll
};

}  // namespace hetsched::svc
