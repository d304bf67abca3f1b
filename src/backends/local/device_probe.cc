#include "backends/local/device_probe.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "util/line_reader.h"
#include "util/subprocess.h"

extern char** environ;

namespace hetsched::svc {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Quotes a piece of tool output for an error message: shortened, control and non-ASCII bytes
// escaped (so the message stays valid UTF-8 whatever the tool printed).
std::string Quote(std::string_view s) {
  constexpr size_t kMax = 60;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += c < 0x20 || c >= 0x7f ? fmt::format("\\x{:02x}", c) : std::string(1, s[i]);
  }
  out += s.size() > kMax ? "...'" : "'";
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(Trim(s.substr(0, at)));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

template <typename T>
bool ParseInt(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ParseIndex(std::string_view text, int32_t& out) { return ParseInt(text, out) && out >= 0; }

// Mebibytes to bytes, false on overflow or a malformed number.
bool MibToBytes(std::string_view text, uint64_t& bytes) {
  uint64_t mib = 0;
  if (!ParseInt(text, mib) || mib > UINT64_MAX / kMiB) return false;
  bytes = mib * kMiB;
  return true;
}

// nvidia-smi's and rocm-smi's ways of saying a value is not available.
bool NotAvailable(std::string_view v) {
  return v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "Not Supported";
}

util::Status LineError(int line, const std::string& what) {
  return util::Status::InvalidArgument(fmt::format("line {}: {}", line, what));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// nvidia-smi

util::Result<std::vector<ProbedDevice>> ParseNvidiaSmiCsv(std::string_view text) {
  std::vector<ProbedDevice> out;
  std::set<int32_t> seen;
  util::LineReader reader(text);
  std::string_view line;
  while (reader.Next(line)) {
    const int n = reader.line_number();
    if (Trim(line).empty()) continue;
    std::vector<std::string_view> fields = Split(line, ',');
    if (fields.size() < 4) {
      return LineError(n, fmt::format("expected 4 comma-separated fields (index, name, "
                                      "memory.total in MiB, uuid), got {}: {}",
                                      fields.size(), Quote(line)));
    }
    ProbedDevice d;
    d.vendor = "nvidia";
    if (!ParseIndex(fields[0], d.index)) {
      return LineError(n, fmt::format("index {} is not a non-negative integer{}", Quote(fields[0]),
                                      fields[0] == "index" ? " (a header line: expected "
                                                             "--format=csv,noheader,nounits)"
                                                           : ""));
    }
    if (!seen.insert(d.index).second) {
      return LineError(n, fmt::format("index {} appears twice", d.index));
    }
    // A name holding commas spans several fields: it is everything between index and memory.
    for (size_t i = 1; i + 2 < fields.size(); ++i) {
      if (i > 1) d.model += ", ";
      d.model += fields[i];
    }
    if (d.model.empty()) return LineError(n, "the name is empty");
    const std::string_view memory = fields[fields.size() - 2];
    if (!NotAvailable(memory) && !MibToBytes(memory, d.memory_bytes)) {
      return LineError(n, fmt::format("memory.total {} is not a whole number of MiB (expected "
                                      "--format=csv,noheader,nounits)",
                                      Quote(memory)));
    }
    const std::string_view uuid = fields.back();
    if (!NotAvailable(uuid)) d.uuid = std::string(uuid);
    out.push_back(std::move(d));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// rocm-smi

namespace {

// The value of the first key that equals one of `names` ignoring case; nullptr when none.
const nlohmann::json* FindKey(const nlohmann::json& object,
                              std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    for (const auto& [key, value] : object.items()) {
      if (key.size() == name.size() &&
          std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          })) {
        return &value;
      }
    }
  }
  return nullptr;
}

// rocm-smi prints values as strings; numbers are taken too.
std::string AsText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  return "";
}

}  // namespace

util::Result<std::vector<ProbedDevice>> ParseRocmSmiJson(std::string_view text) {
  // rocm-smi may print WARNING lines on stdout before the JSON; it starts at a line's '{'.
  size_t start = std::string_view::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{' && (i == 0 || text[i - 1] == '\n')) {
      start = i;
      break;
    }
  }
  if (start == std::string_view::npos) {
    return util::Status::InvalidArgument(fmt::format(
        "expected a JSON object of cards (rocm-smi --json), found none in {}", Quote(text)));
  }
  const int first_line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + start, '\n'));
  const std::string_view body = text.substr(start);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    const size_t at = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, body.size());
    const int line =
        first_line + static_cast<int>(std::count(body.begin(), body.begin() + at, '\n'));
    // nlohmann's message counts lines from the '{'; keep only what it says went wrong.
    std::string what = e.what();
    const size_t colon = what.find(": ", what.find("column"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return LineError(line, "invalid JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    return util::Status::InvalidArgument(fmt::format("invalid JSON: {}", e.what()));
  }
  if (!doc.is_object()) {
    return LineError(first_line, "expected a JSON object of cards (\"card0\": {...})");
  }
  std::vector<ProbedDevice> out;
  for (const auto& [key, card] : doc.items()) {
    ProbedDevice d;
    d.vendor = "amd";
    // Other top-level keys ("system": driver version and the like) describe no card.
    if (key.rfind("card", 0) != 0 || !ParseIndex(std::string_view(key).substr(4), d.index)) {
      continue;
    }
    if (!card.is_object()) {
      return util::Status::InvalidArgument(fmt::format("\"{}\": expected an object", key));
    }
    const nlohmann::json* model = FindKey(card, {"Card Series", "Device Name", "Card Model"});
    d.model = model != nullptr ? AsText(*model) : "";
    if (d.model.empty() || NotAvailable(d.model)) {
      return util::Status::InvalidArgument(
          fmt::format("\"{}\": no product name (expected \"Card Series\"; run rocm-smi with "
                      "--showproductname)",
                      key));
    }
    const nlohmann::json* memory = FindKey(card, {"VRAM Total Memory (B)"});
    if (memory == nullptr) {
      return util::Status::InvalidArgument(
          fmt::format("\"{}\": no \"VRAM Total Memory (B)\" (run rocm-smi with --showmeminfo "
                      "vram)",
                      key));
    }
    const std::string bytes = AsText(*memory);
    if (!NotAvailable(bytes) && !ParseInt(std::string_view(bytes), d.memory_bytes)) {
      return util::Status::InvalidArgument(
          fmt::format("\"{}\": \"VRAM Total Memory (B)\" {} is not a whole number of bytes", key,
                      Quote(memory->dump())));
    }
    if (const nlohmann::json* uuid = FindKey(card, {"Unique ID"}); uuid != nullptr) {
      const std::string id = AsText(*uuid);
      if (!NotAvailable(id)) d.uuid = id;
    }
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(),
            [](const ProbedDevice& a, const ProbedDevice& b) { return a.index < b.index; });
  return out;
}

// ---------------------------------------------------------------------------------------------
// npu-smi

namespace {

// The cells of a table row "| a | b | c |", trimmed.
std::vector<std::string_view> Cells(std::string_view row) {
  row = Trim(row);
  row.remove_prefix(1);  // the leading '|'
  if (!row.empty() && row.back() == '|') row.remove_suffix(1);
  return Split(row, '|');
}

// The "used / total" figures of a cell like "0   0    / 0   4487 / 65536" (npu-smi drops the
// space before '/' once the number is wide: "58626/ 65536"). False on a malformed figure.
bool UsagePairs(std::string_view cell, std::vector<std::pair<uint64_t, uint64_t>>& pairs) {
  std::string compact;
  for (size_t i = 0; i < cell.size(); ++i) {
    if (cell[i] == ' ') {
      size_t next = cell.find_first_not_of(' ', i);
      const bool before_slash = next != std::string_view::npos && cell[next] == '/';
      const bool after_slash = !compact.empty() && compact.back() == '/';
      if (before_slash || after_slash) continue;
    }
    compact += cell[i];
  }
  for (std::string_view token : Tokens(compact)) {
    const size_t slash = token.find('/');
    if (slash == std::string_view::npos) continue;  // AICore(%) and the like
    std::pair<uint64_t, uint64_t> p;
    if (!ParseInt(token.substr(0, slash), p.first) ||
        !ParseInt(token.substr(slash + 1), p.second)) {
      return false;
    }
    pairs.push_back(p);
  }
  return true;
}

// The device table of `npu-smi info`, read row by row (ParseNpuSmiInfo's contract): the
// two-row header picks the id and memory columns, then each NPU row is followed by its chip row.
class NpuTableReader {
 public:
  bool done() const { return state_ == State::kDone; }

  // One table row (starting with '|', trimmed) on line `n`.
  util::Status Read(int n, std::string_view row) {
    const std::vector<std::string_view> cells = Cells(row);
    switch (state_) {
      case State::kHeader:
        return HeaderRow(n, cells);
      case State::kSecondHeader:
        return SecondHeaderRow(n, row, cells);
      case State::kNpuRow:
        return NpuRow(n, row, cells);
      case State::kChipRow:
        return ChipRow(n, row, cells);
      case State::kDone:
        break;
    }
    return util::Status::Ok();
  }

  // The devices, or what the table lacked at its end.
  util::Result<std::vector<ProbedDevice>> Finish() {
    switch (state_) {
      case State::kHeader:
        return util::Status::InvalidArgument(
            "no device table (expected a header row \"| NPU   Name | Health | ... |\")");
      case State::kSecondHeader:
        return LineError(header_line_, "the header row has no second row");
      case State::kChipRow:
        return LineError(npu_line_, "the NPU row has no chip row after it");
      default:
        return std::move(out_);
    }
  }

 private:
  enum class State { kHeader, kSecondHeader, kNpuRow, kChipRow, kDone };
  enum class IdColumn { kNpu, kDevice, kPhyId };

  // Rows before "| NPU Name | ... |" are skipped.
  util::Status HeaderRow(int n, const std::vector<std::string_view>& cells) {
    const std::vector<std::string_view> words = Tokens(cells[0]);
    if (cells.size() >= 3 && words.size() >= 2 && words[0] == "NPU" && words[1] == "Name") {
      state_ = State::kSecondHeader;
      header_line_ = n;
    }
    return util::Status::Ok();
  }

  // "| Chip [Device|Phy-ID] | Bus-Id | ... Memory-Usage(MB) [HBM-Usage(MB)] |".
  util::Status SecondHeaderRow(int n, std::string_view row,
                               const std::vector<std::string_view>& cells) {
    const std::vector<std::string_view> words = Tokens(cells[0]);
    if (cells.size() < 3 || words.empty() || words[0] != "Chip") {
      return LineError(n, fmt::format("expected the header's second row \"| Chip ... | "
                                      "Bus-Id | ... |\" after line {}, got {}",
                                      header_line_, Quote(row)));
    }
    if (words.size() >= 2) {
      if (words[1] == "Device") {
        id_column_ = IdColumn::kDevice;
      } else if (words[1] == "Phy-ID") {
        id_column_ = IdColumn::kPhyId;
      } else {
        return LineError(n, fmt::format("unknown column {} after Chip (expected Device or "
                                        "Phy-ID)",
                                        Quote(words[1])));
      }
    }
    if (cells[2].find("HBM-Usage(MB)") != std::string_view::npos) {
      hbm_ = true;
    } else if (cells[2].find("Memory-Usage(MB)") == std::string_view::npos) {
      return LineError(n, fmt::format("expected a Memory-Usage(MB) or HBM-Usage(MB) column "
                                      "in {}",
                                      Quote(cells[2])));
    }
    state_ = State::kNpuRow;
    return util::Status::Ok();
  }

  // "| <NPU id> <name> | <health> | ... |", or the process table's header, which ends the
  // devices.
  util::Status NpuRow(int n, std::string_view row, const std::vector<std::string_view>& cells) {
    if (cells.size() >= 2 && cells[1].starts_with("Process id")) {
      state_ = State::kDone;
      return util::Status::Ok();
    }
    const std::vector<std::string_view> words = Tokens(cells[0]);
    if (cells.size() < 3 || words.size() < 2 || !ParseIndex(words[0], npu_)) {
      return LineError(n, fmt::format("expected an NPU row \"| <NPU id> <name> | <health> | "
                                      "... |\", got {}",
                                      Quote(row)));
    }
    name_.clear();
    for (size_t i = 1; i < words.size(); ++i) {
      if (i > 1) name_ += ' ';
      name_ += words[i];
    }
    npu_line_ = n;
    state_ = State::kChipRow;
    return util::Status::Ok();
  }

  // "| <chip> [<device>|<phy-id>] | <bus id> | <aicore> <used> / <total> ... |": one device.
  util::Status ChipRow(int n, std::string_view row, const std::vector<std::string_view>& cells) {
    const std::vector<std::string_view> words = Tokens(cells[0]);
    const size_t want = id_column_ == IdColumn::kNpu ? 1 : 2;
    int32_t chip = 0;
    int32_t id = npu_;
    if (cells.size() < 3 || words.size() != want || !ParseIndex(words[0], chip) ||
        (want == 2 && !ParseIndex(words[1], id))) {
      return LineError(n, fmt::format("expected the chip row of the NPU on line {} (\"| <chip>{} | "
                                      "<bus id> | ... |\"), got {}",
                                      npu_line_,
                                      id_column_ == IdColumn::kDevice  ? " <device>"
                                      : id_column_ == IdColumn::kPhyId ? " <phy-id>"
                                                                       : "",
                                      Quote(row)));
    }
    std::vector<std::pair<uint64_t, uint64_t>> pairs;
    const size_t want_pairs = hbm_ ? 2 : 1;
    if (!UsagePairs(cells[2], pairs) || pairs.size() != want_pairs) {
      return LineError(n, fmt::format("expected {} \"used / total\" figure{} (Memory-Usage"
                                      "{}) in {}",
                                      want_pairs, want_pairs == 1 ? "" : "s",
                                      hbm_ ? ", then HBM-Usage" : "", Quote(cells[2])));
    }
    const uint64_t total_mib = pairs.back().second;
    if (total_mib > UINT64_MAX / kMiB) {
      return LineError(n, fmt::format("memory total {} MB is out of range", total_mib));
    }
    if (!seen_.insert(id).second) {
      return LineError(n, fmt::format("device {} appears twice", id));
    }
    out_.push_back(ProbedDevice{"huawei", id, name_, total_mib * kMiB, ""});
    state_ = State::kNpuRow;
    return util::Status::Ok();
  }

  State state_ = State::kHeader;
  IdColumn id_column_ = IdColumn::kNpu;
  bool hbm_ = false;  // the memory figures are HBM-Usage(MB)'s, after Memory-Usage(MB)'s
  int header_line_ = 0;
  int npu_line_ = 0;
  int32_t npu_ = 0;  // the current NPU row's id and name
  std::string name_;
  std::vector<ProbedDevice> out_;
  std::set<int32_t> seen_;
};

}  // namespace

util::Result<std::vector<ProbedDevice>> ParseNpuSmiInfo(std::string_view text) {
  NpuTableReader table;
  util::LineReader reader(text);
  std::string_view line;
  while (!table.done() && reader.Next(line)) {
    const std::string_view row = Trim(line);
    if (row.empty() || row.front() != '|') continue;  // borders (+===, +---) and other text
    RETURN_IF_ERROR(table.Read(reader.line_number(), row));
  }
  return table.Finish();
}

// ---------------------------------------------------------------------------------------------
// Running the tools

ProbeReport ProbeDevices(const ProbeOptions& options) {
  struct Tool {
    const char* name;
    std::vector<std::string> args;
    std::function<util::Result<std::vector<ProbedDevice>>(std::string_view)> parse;
  };
  const std::vector<Tool> tools = {
      {"nvidia-smi",
       {"--query-gpu=index,name,memory.total,uuid", "--format=csv,noheader,nounits"},
       ParseNvidiaSmiCsv},
      {"rocm-smi",
       {"--showproductname", "--showmeminfo", "vram", "--showuniqueid", "--json"},
       ParseRocmSmiJson},
      {"npu-smi", {"info"}, ParseNpuSmiInfo},
  };
  std::string search_path = options.search_path;
  if (search_path.empty()) {
    const char* env = std::getenv("PATH");
    search_path = env != nullptr ? env : "";
  }
  ProbeReport report;
  for (const Tool& tool : tools) {
    const std::string path = util::FindExecutable(tool.name, search_path);
    if (path.empty()) {
      report.notes.push_back(fmt::format("{}: absent", tool.name));
      continue;
    }
    auto fail = [&](const std::string& why) {
      report.notes.push_back(fmt::format("{}: failed: {}", tool.name, why));
      report.failed.push_back(tool.name);
    };
    util::CommandOptions run_options;
    run_options.timeout_s = options.timeout_s;
    auto run = util::RunCommand(path, tool.args, run_options);
    if (!run.ok()) {
      fail(run.status().message());
      continue;
    }
    if (!run->succeeded()) {
      fail(run->Failure());
      continue;
    }
    auto devices = tool.parse(run->out);
    if (!devices.ok()) {
      fail(devices.status().message());
      continue;
    }
    report.notes.push_back(fmt::format("{}: found {} device{} ({})", tool.name, devices->size(),
                                       devices->size() == 1 ? "" : "s", path));
    for (ProbedDevice& d : *devices) report.devices.push_back(std::move(d));
  }
  return report;
}

}  // namespace hetsched::svc
