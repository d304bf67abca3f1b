#include "sim/faults.h"

#include <fmt/format.h>

#include <limits>

#include "util/file.h"
#include "util/line_reader.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::sim {
namespace {

std::string Trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

util::Result<std::vector<Fault>> ParseFaults(const std::string& text, const std::string& file_name,
                                             const model::Cluster& cluster) {
  std::vector<Fault> out;
  util::LineReader lines(text);
  std::string_view view;
  while (lines.Next(view)) {
    const int line_no = lines.line_number();
    std::string line(view);
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = Trim(line);
    if (line.empty()) continue;
    const util::SourceLocation at{file_name, line_no, 1};
    std::vector<std::string> cols;
    size_t p = 0;
    while (true) {
      const size_t c = line.find(',', p);
      cols.push_back(Trim(line.substr(p, c == std::string::npos ? std::string::npos : c - p)));
      if (c == std::string::npos) break;
      p = c + 1;
    }
    if (cols.size() != 3 && cols.size() != 4) {
      return util::InputError(at, "", fmt::format("{} columns", cols.size()),
                              "time_s,target,duration_s[,kind]");
    }
    Fault f;
    if (cols.size() == 4) {
      if (cols[3] != "down" && cols[3] != "start-failure") {
        return util::InputError(at, "kind", "'" + cols[3] + "'", "down or start-failure");
      }
      f.start_failure = cols[3] == "start-failure";
    }
    auto t = util::ParseDuration(cols[0]);
    if (!t.ok() || *t < 0) return util::InputError(at, "time", "'" + cols[0] + "'", "seconds >= 0");
    f.time_s = *t;
    if (cols[2] == "inf" || cols[2] == "forever") {
      f.duration_s = std::numeric_limits<double>::infinity();
    } else {
      auto d = util::ParseDuration(cols[2]);
      if (!d.ok() || *d < 0) {
        return util::InputError(at, "duration", "'" + cols[2] + "'", "seconds >= 0 or inf");
      }
      f.duration_s = *d;
    }
    const std::string& target = cols[1];
    const size_t slash = target.find('/');
    auto node = cluster.FindNode(target.substr(0, slash));
    if (!node) {
      return util::InputError(at, "target", "no node '" + target.substr(0, slash) + "'",
                              "a node name of the cluster, or node/index");
    }
    f.node = *node;
    if (slash != std::string::npos) {
      const std::string idx = target.substr(slash + 1);
      int32_t i = -1;
      if (!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos &&
          idx.size() < 9) {
        i = std::stoi(idx);
      }
      if (i < 0 || i >= cluster.node(*node).device_count) {
        return util::InputError(
            at, "target", "'" + target + "'",
            fmt::format("a device index 0..{}", cluster.node(*node).device_count - 1));
      }
      f.device = cluster.device_of(*node, i);
      if (f.start_failure) {
        return util::InputError(at, "target", "'" + target + "'",
                                "a node name (a start failure hits the node)");
      }
    }
    out.push_back(f);
  }
  return out;
}

util::Result<std::vector<Fault>> LoadFaults(const std::string& path,
                                            const model::Cluster& cluster) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseFaults(text, path, cluster);
}

}  // namespace hetsched::sim
