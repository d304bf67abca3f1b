// A backend that hands every call to another one: tests derive from it to watch the calls or to
// keep one backend across daemon restarts.
#pragma once

#include <string>
#include <vector>

#include "exec/backend.h"

namespace hetsched::testing {

class ForwardingBackend : public exec::Backend {
 public:
  // `inner` is not owned and must outlive this backend (derived classes usually own it).
  explicit ForwardingBackend(exec::Backend& inner) : inner_(inner) {}

  std::string name() const override { return inner_.name(); }
  bool RunsCommands() const override { return inner_.RunsCommands(); }
  util::Status Start(const exec::LaunchSpec& spec) override { return inner_.Start(spec); }
  util::Status Stop(const std::string& job, int64_t attempt, double grace_s) override {
    return inner_.Stop(job, attempt, grace_s);
  }
  util::Status SetNodePower(const std::string& node, bool on) override {
    return inner_.SetNodePower(node, on);
  }
  std::vector<exec::BackendNode> ListNodes() override { return inner_.ListNodes(); }
  std::vector<exec::BackendJob> ListJobs() override { return inner_.ListJobs(); }
  std::vector<exec::BackendEvent> Poll() override { return inner_.Poll(); }
  bool Available() const override { return inner_.Available(); }
  void Forget(const std::string& job) override { inner_.Forget(job); }

 private:
  exec::Backend& inner_;
};

}  // namespace hetsched::testing
