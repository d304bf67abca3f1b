#include "k8s/objects.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "k8s/objects_internal.h"

namespace hetsched::svc::k8s {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> CommaList(std::string_view text) {
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string item(text.substr(pos, comma - pos));
    pos = comma + 1;
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) items.push_back(std::move(item));
  }
  return items;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

util::Result<double> ParseQuantity(std::string_view text) {
  auto bad = [&] {
    return util::Status::InvalidArgument(
        fmt::format("'{}' is not a quantity (expected e.g. 4, 500m, 16Gi or 1e3)", text));
  };
  if (text.empty() || text.size() > 64) return bad();
  size_t i = 0;
  if (text[i] == '+' || text[i] == '-') ++i;
  const size_t digits_start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == digits_start) return bad();
  const std::string number(text.substr(0, i));
  if (std::count(number.begin(), number.end(), '.') > 1 || number.back() == '.') return bad();
  double value = 0;
  auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || p != number.data() + number.size()) return bad();
  const std::string_view suffix = text.substr(i);
  static const std::pair<std::string_view, double> kSuffixes[] = {
      {"", 1},
      {"n", 1e-9},
      {"u", 1e-6},
      {"m", 1e-3},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
      {"Ki", 1024.},
      {"Mi", 1048576.},
      {"Gi", 1073741824.},
      {"Ti", 1099511627776.},
      {"Pi", 1125899906842624.},
      {"Ei", 1152921504606846976.},
  };
  for (const auto& [s, factor] : kSuffixes) {
    if (suffix == s) return value * factor;
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {
    auto exponent = ParseInt(suffix.substr(suffix.size() > 1 && suffix[1] == '+' ? 2 : 1));
    if (!exponent || *exponent < -30 || *exponent > 30) return bad();
    return value * std::pow(10.0, static_cast<double>(*exponent));
  }
  return bad();
}

bool LabelRead(std::string_view key, std::string_view rack_label) {
  if (key == rack_label || key == "kubernetes.io/arch" || key == "accelerator") return true;
  for (std::string_view prefix : {"nvidia.com/", "amd.com/", "beta.amd.com/", "huawei.com/",
                                  "node.kubernetes.io/npu", "hetsched.io/"}) {
    if (key.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

std::optional<std::string> StackOfResource(std::string_view resource) {
  if (resource == "nvidia.com/gpu") return "cuda";
  if (resource == "amd.com/gpu") return "rocm";
  // Exactly these: the plugin also advertises shares (huawei.com/Ascend910-2c) and unhealthy
  // counts, which are not whole devices.
  if (resource == "huawei.com/npu" || resource == "huawei.com/Ascend910" ||
      resource == "huawei.com/Ascend310" || resource == "huawei.com/Ascend310P") {
    return "cann";
  }
  return std::nullopt;
}

std::string StackOfArch(const std::string& arch) {
  if (arch == "amd64") return "x86_64";
  if (arch == "arm64") return "aarch64";
  return arch;
}

}  // namespace hetsched::svc::k8s
