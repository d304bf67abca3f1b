#include "obs/prometheus_text.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace hetsched::svc {

namespace {

bool NameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }

// Reads one sample line; positions are reported 1-based.
class LineReader {
 public:
  LineReader(std::string_view line, size_t line_no, size_t from)
      : line_(line), line_no_(line_no), at_(from) {}

  util::Result<PromSample> Read() {
    PromSample s;
    ASSIGN_OR_RETURN(s.name, Name("metric name"));
    if (Peek() == '{') {
      ++at_;
      RETURN_IF_ERROR(Labels(s));
    }
    if (!SkipBlanks()) return Error("a value after the metric name");
    ASSIGN_OR_RETURN(s.value, Number("value"));
    if (SkipBlanks() && at_ < line_.size()) {
      // A timestamp in milliseconds: read to check it, not kept.
      ASSIGN_OR_RETURN(double timestamp, Number("timestamp"));
      (void)timestamp;
      SkipBlanks();
      if (at_ < line_.size()) return Error("end of line after the timestamp");
    }
    return s;
  }

 private:
  char Peek() const { return at_ < line_.size() ? line_[at_] : '\0'; }
  // Skips spaces and tabs; whether any were skipped.
  bool SkipBlanks() {
    const size_t from = at_;
    while (at_ < line_.size() && (line_[at_] == ' ' || line_[at_] == '\t')) ++at_;
    return at_ > from;
  }
  util::Status Error(std::string_view expected) const {
    const std::string found =
        at_ < line_.size() ? fmt::format("'{}'", line_.substr(at_, 1)) : "end of line";
    return util::Status::InvalidArgument(
        fmt::format("line {}: column {}: {} (expected {})", line_no_, at_ + 1, found, expected));
  }

  util::Result<std::string> Name(std::string_view what) {
    if (!NameStart(Peek())) return Error(what);
    const size_t from = at_;
    while (NameChar(Peek())) ++at_;
    return std::string(line_.substr(from, at_ - from));
  }

  util::Status Labels(PromSample& s) {
    SkipBlanks();
    while (Peek() != '}') {
      ASSIGN_OR_RETURN(std::string key, Name("a label name or '}'"));
      SkipBlanks();
      if (Peek() != '=') return Error("'=' after the label name");
      ++at_;
      SkipBlanks();
      ASSIGN_OR_RETURN(std::string value, Quoted());
      s.labels.emplace_back(std::move(key), std::move(value));
      SkipBlanks();
      if (Peek() == ',') {
        ++at_;
        SkipBlanks();
      } else if (Peek() != '}') {
        return Error("',' or '}' after the label value");
      }
    }
    ++at_;
    return util::Status::Ok();
  }

  util::Result<std::string> Quoted() {
    if (Peek() != '"') return Error("a quoted label value");
    ++at_;
    std::string out;
    for (;;) {
      if (at_ >= line_.size()) return Error("'\"' closing the label value");
      const char c = line_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = Peek();
      if (e == '\\' || e == '"') {
        out += e;
      } else if (e == 'n') {
        out += '\n';
      } else {
        return Error("an escape \\\\, \\\" or \\n");
      }
      ++at_;
    }
  }

  util::Result<double> Number(std::string_view what) {
    const size_t from = at_;
    while (at_ < line_.size() && line_[at_] != ' ' && line_[at_] != '\t') ++at_;
    const std::string token(line_.substr(from, at_ - from));
    if (token == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (token == "+Inf" || token == "Inf") return std::numeric_limits<double>::infinity();
    if (token == "-Inf") return -std::numeric_limits<double>::infinity();
    char* end = nullptr;
    errno = 0;
    const double v = token.empty() ? 0 : std::strtod(token.c_str(), &end);
    // strtod also reads "nan", "inf" and hex floats, which the format does not have.
    const bool plain = token.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (token.empty() || !plain || end != token.c_str() + token.size() || errno == ERANGE) {
      at_ = from;
      return Error(fmt::format("a number as the {}", what));
    }
    return v;
  }

  std::string_view line_;
  size_t line_no_;
  size_t at_;
};

}  // namespace

std::string_view PromSample::Label(std::string_view key) const {
  for (const auto& [k, v] : labels) {
    if (k == key) return v;
  }
  return {};
}

util::Result<std::vector<PromSample>> ParsePrometheusText(std::string_view text) {
  std::vector<PromSample> out;
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (const size_t nul = line.find('\0'); nul != std::string_view::npos) {
      return util::Status::InvalidArgument(
          fmt::format("line {}: column {}: a NUL byte (expected text)", line_no, nul + 1));
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    if (out.size() == kMaxPromSamples) {
      return util::Status::InvalidArgument(
          fmt::format("line {}: more than {} samples (expected a model server's metrics)", line_no,
                      kMaxPromSamples));
    }
    ASSIGN_OR_RETURN(PromSample sample, LineReader(line, line_no, first).Read());
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace hetsched::svc
