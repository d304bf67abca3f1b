#include "model/io/job_classes.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <set>
#include <string>

namespace hetsched::model::io {

util::Result<JobClasses> ParseJobClasses(const DocReader& r, const DocValue& node) {
  static const std::set<std::string, std::less<>> kFields = {"priority", "weight"};
  const std::string kinds = "training, batch, inference or realtime";
  RETURN_IF_ERROR(r.Mapping(node, "classes", "a job kind per key"));
  JobClasses classes;
  for (const DocValue::Field& kv : node.fields) {
    const std::string name = kv.key;
    const std::string field = "classes." + name;
    auto kind = ParseJobKind(name);
    if (!kind.ok() || *kind == JobKind::kService) {
      return r.Error(kv, field, "is not a job kind of training work", kinds);
    }
    RETURN_IF_ERROR(r.Mapping(kv.value, field, "{priority: 1, weight: 2}"));
    JobClass c;
    for (const DocValue::Field& f : kv.value.fields) {
      const std::string key = f.key;
      RETURN_IF_ERROR(r.KnownField(f, field + "." + key, kFields));
      const DocValue& v = f.value;
      const std::string text = v.IsScalar() ? v.text : "";
      if (key == "priority") {
        int32_t p = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), p);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
            std::abs(p) > 1000000) {
          return r.Error(v, field + ".priority", fmt::format("is '{}'", text),
                         "a whole number from -1000000 to 1000000, added to each job's priority");
        }
        c.priority = p;
      } else {
        ASSIGN_OR_RETURN(
            c.weight, r.NumberIn(v, field + ".weight", 0, 1e6, /*open_least=*/true,
                                 "a number above 0 and up to 1e6, multiplying each job's weight"));
      }
    }
    classes[*kind] = c;
  }
  return classes;
}

void ApplyJobClass(const JobClasses& classes, Job& job) {
  const auto it = classes.find(job.kind);
  if (it == classes.end()) return;
  job.priority += it->second.priority;
  job.priority_weight *= it->second.weight;
}

}  // namespace hetsched::model::io
