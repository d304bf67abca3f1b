#include <algorithm>

#include "sim/engine.h"
#include "sim/engine_internal.h"

namespace hetsched::sim::internal {

double Engine::NetworkRate(const JobRun& run) const {
  if (!run.staging.empty()) return 0;
  if (run.ring < 0 || run.hop_bytes <= 0) return run.solo_rate;
  return std::min(run.solo_rate, network_.Rate(run.ring) / run.hop_bytes);
}

namespace {

// The distinct nodes of `devices`, in id order.
std::vector<model::NodeId> NodesOf(const model::Cluster& cluster,
                                   const std::vector<DeviceId>& devices) {
  std::vector<model::NodeId> nodes;
  for (DeviceId d : devices) nodes.push_back(cluster.device(d).node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

}  // namespace

int32_t Engine::AddFlow(Network::LinkUses links, double demand, double bytes, int32_t id,
                        FlowOwner::Kind kind, double now_s) {
  const int32_t flow = network_.Add(std::move(links), demand, bytes, now_s);
  if (static_cast<size_t>(flow) >= flow_owner_.size()) flow_owner_.resize(flow + 1);
  flow_owner_[flow] = {id, kind};
  return flow;
}

bool Engine::StartStaging(int32_t id, const std::vector<DeviceId>& devices, uint64_t bytes,
                          double now_s) {
  if (bytes == 0) return false;
  const DataSource source = network_.SourceOf(workload_.jobs[id].data_location);
  const std::vector<model::NodeId> nodes = NodesOf(cluster_, devices);
  JobRun& run = runs_[id];
  // Each node reads its workers' share.
  const double share = static_cast<double>(bytes) / static_cast<double>(nodes.size());
  for (model::NodeId n : nodes) {
    Network::LinkUses path = network_.ReadPath(source, n);
    if (path.empty()) continue;  // already there
    run.staging.push_back(
        AddFlow(std::move(path), Network::kForever, share, id, FlowOwner::kRead, now_s));
  }
  run.staging_from_s = now_s;
  run.staging_bytes = bytes;
  return !run.staging.empty();
}

void Engine::StartCheckpointWrite(int32_t id, double now_s) {
  const model::Job& job = workload_.jobs[id];
  if (job.checkpoint_bytes == 0) return;
  const DataSource dest = network_.SourceOf(job.data_location);
  const std::vector<model::NodeId> nodes = NodesOf(cluster_, sched_->record(JobId(id)).devices);
  JobRun& run = runs_[id];
  const double share =
      static_cast<double>(job.checkpoint_bytes) / static_cast<double>(nodes.size());
  for (model::NodeId n : nodes) {
    Network::LinkUses path = network_.WritePath(n, dest);
    if (path.empty()) continue;  // written where it stays
    run.writing.push_back(
        AddFlow(std::move(path), Network::kForever, share, id, FlowOwner::kWrite, now_s));
  }
  if (run.writing.empty()) result_.checkpoint_bytes += static_cast<double>(job.checkpoint_bytes);
}

void Engine::StartRing(int32_t id, const std::vector<DeviceId>& devices, double now_s) {
  JobRun& run = runs_[id];
  if (run.hop_bytes <= 0 || run.solo_rate <= 0) return;
  Network::LinkUses path = network_.RingPath(devices);
  if (path.empty()) return;  // inside one node: its links are its own
  run.ring = AddFlow(std::move(path), run.solo_rate * run.hop_bytes, Network::kForever, id,
                     FlowOwner::kRing, now_s);
}

void Engine::EndFlows(JobRun& run, double now_s) {
  if (run.ring >= 0) network_.Remove(run.ring, now_s);
  run.ring = -1;
  for (int32_t flow : run.staging) network_.Remove(flow, now_s);
  run.staging.clear();
  for (int32_t flow : run.writing) network_.Remove(flow, now_s);
  run.writing.clear();
  run.exit_waits = false;
}

void Engine::Reshare(double now_s) {
  // A ring whose share changed runs at its new rate; a transfer's end moves (event below).
  for (int32_t flow : network_.Reshare(now_s)) {
    if (flow_owner_[flow].kind == FlowOwner::kRing) Rerate(flow_owner_[flow].job, now_s);
  }
  const double next = network_.NextCompletion();
  const Micros at = std::isfinite(next) ? std::max(ToMicros(next), ToMicros(now_s))
                                        : std::numeric_limits<Micros>::max();
  if (at == flow_event_at_) return;
  flow_event_at_ = at;
  ++network_epoch_;  // the event pushed before is stale
  if (std::isfinite(next)) queue_.Push(at, EventKind::kFlowDone, -1, network_epoch_);
}

void Engine::OnFlowsDone(double now_s, Reaction& reaction) {
  network_.Advance(now_s);
  for (int32_t flow : network_.Finished()) {
    const int32_t id = flow_owner_[flow].job;
    JobRun& run = runs_[id];
    network_.Remove(flow, now_s);
    if (flow_owner_[flow].kind == FlowOwner::kWrite) {
      run.writing.erase(std::find(run.writing.begin(), run.writing.end(), flow));
      if (!run.writing.empty()) continue;
      result_.checkpoint_bytes += static_cast<double>(workload_.jobs[id].checkpoint_bytes);
      if (run.exit_waits) {
        BookCheckpointSaved(id, now_s);
        attempts_.CheckpointWritten(JobId(id), now_s);
        reaction.decide = reaction.freed = true;
      }
      continue;
    }
    run.staging.erase(std::find(run.staging.begin(), run.staging.end(), flow));
    if (!run.staging.empty()) continue;
    // Its input is all there: it computes (and synchronizes) from now, or from the end of its
    // restore if that is later.
    result_.staged_bytes += static_cast<double>(run.staging_bytes);
    staging_s_ += now_s - run.staging_from_s;
    ++stagings_;
    const sched::JobRecord& r = sched_->record(JobId(id));
    run.since_s = std::max(run.since_s, now_s);
    StartRing(id, r.devices, now_s);
    run.rate = NetworkRate(run);
    ProgressFrom(id, run.since_s);
  }
}

}  // namespace hetsched::sim::internal
