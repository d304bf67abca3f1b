#include "sched/filters.h"

#include <fmt/format.h>

namespace hetsched::sched {
namespace {

std::string JoinStacks(const std::vector<model::SoftwareStack>& stacks) {
  std::string out;
  for (const auto& s : stacks) {
    if (!out.empty()) out += ", ";
    out += model::ToString(s);
  }
  return out.empty() ? "none" : out;
}

std::string JoinNeeds(const std::vector<model::StackRequirement>& needs) {
  std::string out;
  for (const auto& s : needs) {
    if (!out.empty()) out += " or ";
    out += model::ToString(s);
  }
  return out;
}

class CompatFilter final : public Filter {
 public:
  std::string_view name() const override { return "compat"; }
  std::optional<std::string> Reject(const model::Job& job,
                                    const model::DeviceType& type) const override {
    if (job.stacks.empty() || model::AnySatisfied(type.stacks, job.stacks)) return std::nullopt;
    return fmt::format("{} runs {}, job needs {}", type.name, JoinStacks(type.stacks),
                       JoinNeeds(job.stacks));
  }
};

class MemoryFilter final : public Filter {
 public:
  std::string_view name() const override { return "memory"; }
  std::optional<std::string> Reject(const model::Job& job,
                                    const model::DeviceType& type) const override {
    if (job.memory_per_worker == 0 || type.memory_bytes == 0 ||
        job.memory_per_worker <= type.memory_bytes) {
      return std::nullopt;
    }
    return fmt::format("{} has {:.1f} GiB, job needs {:.1f} GiB per worker", type.name,
                       type.memory_bytes / 1073741824.0, job.memory_per_worker / 1073741824.0);
  }
};

}  // namespace

std::unique_ptr<Filter> MakeCompatFilter() { return std::make_unique<CompatFilter>(); }
std::unique_ptr<Filter> MakeMemoryFilter() { return std::make_unique<MemoryFilter>(); }

std::string FilterNames() { return "compat, memory"; }

util::Result<std::vector<std::unique_ptr<Filter>>> MakeFilters(
    const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<Filter>> out;
  for (const auto& n : names) {
    if (n == "compat") {
      out.push_back(MakeCompatFilter());
    } else if (n == "memory") {
      out.push_back(MakeMemoryFilter());
    } else {
      return util::Status::InvalidArgument(
          fmt::format("unknown filter '{}' (known: {})", n, FilterNames()));
    }
  }
  return out;
}

}  // namespace hetsched::sched
