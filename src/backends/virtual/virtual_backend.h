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

// A fault the virtual backend plays at a modeled time (serve --faults: the simulator's fault
// file, docs/simulator.md, "Faults"): the node goes down for `duration_s` (its attempts are
// lost), or, with `start_failure`, every start on it fails during that time.
struct VirtualFault {
  double at_s = 0;  // modeled seconds after the backend was created
  std::string node;
  double duration_s = 0;  // infinity: for good
  bool start_failure = false;
};

struct VirtualBackendOptions {
  std::vector<std::string> nodes;  // names of the nodes it offers (all up, powered on)
  double time_scale = 1;           // modeled seconds per wall second
  // Modeled seconds a stopped attempt takes to write its checkpoint before it exits.
  double checkpoint_save_s = 0;
  // Wall seconds (any epoch); steady by default, injectable for tests.
  std::function<double()> clock;
  std::vector<VirtualFault> faults;
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
  // Plays the faults due by `now` (wall): a node going down loses its runs and reports
  // kNodeDown, kNodeUp when it is back.
  void PlayFaults(double now, std::vector<BackendEvent>& out);
  bool StartFails(const std::string& node) const;
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
  double start_wall_s_ = 0;
  // Scripted fault transitions by modeled time: (at, fault index, down/start-failing or back).
  std::multimap<double, std::pair<size_t, bool>> fault_steps_;
  std::map<std::string, int> failed_;          // nodes down by a fault (count of faults)
  std::map<std::string, int> failing_starts_;  // nodes whose starts fail now
  std::vector<Key> failed_starts_;             // starts to report failed
};

}  // namespace hetsched::svc
