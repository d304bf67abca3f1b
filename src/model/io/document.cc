#include "model/io/document.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hetsched::model::io {

using util::Result;
using util::SourceLocation;
using util::Status;

namespace {

// Nesting deeper than this is no workload; refusing it keeps the recursive conversion safe.
constexpr int kMaxDepth = 64;

// ---------------------------------------------------------------------------------------------
// YAML -> DocValue

class YamlConverter {
 public:
  YamlConverter(const std::string& file, size_t budget) : file_(file), budget_(budget) {}

  Status Convert(const YAML::Node& node, int depth, DocValue* out) {
    const YAML::Mark mark = node.Mark();
    out->line = mark.is_null() ? 0 : mark.line + 1;
    out->column = mark.is_null() ? 0 : mark.column + 1;
    // Aliases make yaml-cpp share nodes; expanding them could grow exponentially ("billion
    // laughs"). Without aliases a document has fewer nodes than bytes, so this budget only
    // stops expansion beyond the size of the text.
    if (budget_ == 0) {
      return util::InputError(Loc(*out), "",
                              "the document expands to more values than its text holds",
                              "no deeply repeated YAML aliases");
    }
    --budget_;
    if (depth > kMaxDepth) {
      return util::InputError(Loc(*out), "", fmt::format("nesting deeper than {}", kMaxDepth));
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out->kind = DocValue::Kind::kNull;
        return Status::Ok();
      case YAML::NodeType::Scalar:
        out->kind = DocValue::Kind::kScalar;
        out->text = node.Scalar();
        return Status::Ok();
      case YAML::NodeType::Sequence:
        out->kind = DocValue::Kind::kList;
        for (const YAML::Node& item : node) {
          path_.push_back({nullptr, out->items.size()});
          out->items.emplace_back();
          RETURN_IF_ERROR(Convert(item, depth + 1, &out->items.back()));
          path_.pop_back();
        }
        return Status::Ok();
      case YAML::NodeType::Map:
        out->kind = DocValue::Kind::kMap;
        return ConvertMap(node, depth, out);
    }
    out->kind = DocValue::Kind::kNull;
    return Status::Ok();
  }

 private:
  // One step from the root to the value being converted: a map's key or a list's index.
  struct Step {
    const std::string* key;  // nullptr for a list item
    size_t index;
  };

  Status ConvertMap(const YAML::Node& node, int depth, DocValue* out) {
    std::unordered_map<std::string, int> keys;  // key -> line, to report duplicates
    for (const auto& entry : node) {
      DocValue::Field field;
      const YAML::Mark key_mark = entry.first.Mark();
      field.line = key_mark.is_null() ? out->line : key_mark.line + 1;
      field.column = key_mark.is_null() ? out->column : key_mark.column + 1;
      const SourceLocation key_at{file_, field.line, field.column};
      if (!entry.first.IsScalar()) {
        return util::InputError(key_at, Path(), "a key is not a plain name",
                                "keys like 'gang_size'");
      }
      field.key = entry.first.Scalar();
      path_.push_back({&field.key, 0});
      auto [seen, inserted] = keys.emplace(field.key, field.line);
      if (!inserted) {
        return util::InputError(key_at, Path(),
                                fmt::format("appears twice (first at line {})", seen->second),
                                "each key once");
      }
      RETURN_IF_ERROR(Convert(entry.second, depth + 1, &field.value));
      path_.pop_back();
      out->fields.push_back(std::move(field));
    }
    return Status::Ok();
  }

  // "nodes[2].devices[0].type": where the converter is, for messages.
  std::string Path() const {
    std::string out;
    for (const Step& step : path_) {
      out += step.key == nullptr ? fmt::format("[{}]", step.index)
                                 : (out.empty() ? "" : ".") + *step.key;
    }
    return out;
  }

  SourceLocation Loc(const DocValue& v) const { return {file_, v.line, v.column}; }
  const std::string& file_;
  size_t budget_;
  std::vector<Step> path_;
};

// ---------------------------------------------------------------------------------------------
// JSON -> DocValue (no positions inside a line: nlohmann does not keep them)

Status ConvertJson(const nlohmann::json& j, const SourceLocation& at, bool typed, int depth,
                   DocValue* out) {
  out->line = at.line;
  if (depth > kMaxDepth) {
    return util::InputError(at, "", fmt::format("nesting deeper than {}", kMaxDepth));
  }
  switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      out->kind = DocValue::Kind::kNull;
      return Status::Ok();
    case nlohmann::json::value_t::string:
      out->kind = DocValue::Kind::kScalar;
      if (typed) out->type = DocValue::Type::kString;
      out->text = j.get_ref<const std::string&>();
      return Status::Ok();
    case nlohmann::json::value_t::boolean:
      out->kind = DocValue::Kind::kScalar;
      if (typed) out->type = DocValue::Type::kBool;
      out->text = j.get<bool>() ? "true" : "false";
      return Status::Ok();
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      out->kind = DocValue::Kind::kScalar;
      if (typed) out->type = DocValue::Type::kNumber;
      out->text = j.dump();
      return Status::Ok();
    case nlohmann::json::value_t::array:
      out->kind = DocValue::Kind::kList;
      for (const nlohmann::json& item : j) {
        out->items.emplace_back();
        RETURN_IF_ERROR(ConvertJson(item, at, typed, depth + 1, &out->items.back()));
      }
      return Status::Ok();
    case nlohmann::json::value_t::object:
      out->kind = DocValue::Kind::kMap;
      for (const auto& [key, item] : j.items()) {
        DocValue::Field field;
        field.key = key;
        field.line = at.line;
        RETURN_IF_ERROR(ConvertJson(item, at, typed, depth + 1, &field.value));
        out->fields.push_back(std::move(field));
      }
      return Status::Ok();
    case nlohmann::json::value_t::binary:
      break;
  }
  return util::InputError(at, "", "binary values are not supported");
}

// JSON text -> DocValue in one pass, for ParseJson: nlohmann's SAX events build the tree that
// ConvertJson would make of nlohmann's document, without making that document first.
class JsonDocBuilder {
 public:
  JsonDocBuilder(const SourceLocation& at, bool typed, DocValue* root)
      : at_(at), typed_(typed), root_(root) {}

  bool null() { return Value(DocValue::Kind::kNull) != nullptr; }
  bool boolean(bool b) { return Scalar(DocValue::Type::kBool, b ? "true" : "false"); }
  // The text nlohmann writes for the number, as ConvertJson keeps it.
  bool number_integer(nlohmann::json::number_integer_t n) {
    return Scalar(DocValue::Type::kNumber, nlohmann::json(n).dump());
  }
  bool number_unsigned(nlohmann::json::number_unsigned_t n) {
    return Scalar(DocValue::Type::kNumber, nlohmann::json(n).dump());
  }
  bool number_float(nlohmann::json::number_float_t x, const std::string& /*as written*/) {
    return Scalar(DocValue::Type::kNumber, nlohmann::json(x).dump());
  }
  bool string(std::string& s) { return Scalar(DocValue::Type::kString, std::move(s)); }
  bool binary(nlohmann::json::binary_t& /*never in JSON text*/) {
    return Fail("binary values are not supported");
  }
  bool start_object(size_t /*unknown in text*/) {
    DocValue* v = Value(DocValue::Kind::kMap);
    if (v == nullptr) return false;
    v->fields.reserve(kFieldsReserved);
    open_.push_back(v);
    return true;
  }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    // nlohmann's objects are sorted by key, and keep one value per key.
    std::vector<DocValue::Field>& fields = open_.back()->fields;
    const auto by_key = [](const DocValue::Field& a, const DocValue::Field& b) {
      return a.key < b.key;
    };
    if (!std::is_sorted(fields.begin(), fields.end(), by_key)) {
      std::stable_sort(fields.begin(), fields.end(), by_key);
    }
    const auto twice = std::adjacent_find(
        fields.begin(), fields.end(),
        [](const DocValue::Field& a, const DocValue::Field& b) { return a.key == b.key; });
    if (twice != fields.end()) return Fail(fmt::format("'{}' is given twice", twice->key));
    open_.pop_back();
    return true;
  }
  bool start_array(size_t /*unknown in text*/) {
    DocValue* v = Value(DocValue::Kind::kList);
    if (v == nullptr) return false;
    open_.push_back(v);
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool parse_error(size_t /*byte*/, const std::string& /*token*/,
                   const nlohmann::json::exception& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " and "parse error at line 1, column 5: ".
    std::string what = e.what();
    if (size_t tag = what.find("] "); tag != std::string::npos) what.erase(0, tag + 2);
    if (what.rfind("parse error", 0) == 0) {
      if (size_t colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
    }
    return Fail("not valid JSON: " + what);
  }

  const Status& status() const { return status_; }

 private:
  // A job's request has a handful of fields: one allocation holds them, small enough that
  // malloc serves it from its per-thread cache (a larger one took 15 % of a restart's CPU).
  static constexpr size_t kFieldsReserved = 4;

  // The value that comes next (the root, a list's next item or the field of the key just
  // read), of `kind`; null when it would nest deeper than kMaxDepth.
  DocValue* Value(DocValue::Kind kind) {
    if (open_.size() > static_cast<size_t>(kMaxDepth)) {
      Fail(fmt::format("nesting deeper than {}", kMaxDepth));
      return nullptr;
    }
    DocValue* v = root_;
    if (!open_.empty() && open_.back()->IsList()) {
      v = &open_.back()->items.emplace_back();
    } else if (!open_.empty()) {
      DocValue::Field& f = open_.back()->fields.emplace_back();
      f.key = std::move(key_);
      f.line = at_.line;
      v = &f.value;
    }
    v->kind = kind;
    v->line = at_.line;
    return v;
  }
  bool Scalar(DocValue::Type type, std::string text) {
    DocValue* v = Value(DocValue::Kind::kScalar);
    if (v == nullptr) return false;
    if (typed_) v->type = type;
    v->text = std::move(text);
    return true;
  }
  bool Fail(std::string message) {
    status_ = util::InputError(at_, "", std::move(message));
    return false;
  }

  const SourceLocation& at_;
  const bool typed_;
  DocValue* root_;
  std::vector<DocValue*> open_;  // the maps and lists being read, outermost first
  std::string key_;
  Status status_;
};

}  // namespace

Status ParseJson(std::string_view text, const SourceLocation& at, DocValue* out, bool typed) {
  *out = DocValue();
  JsonDocBuilder builder(at, typed, out);
  if (!nlohmann::json::sax_parse(text, &builder) && builder.status().ok()) {
    return util::InputError(at, "", "not valid JSON");
  }
  return builder.status();
}

std::string Describe(const DocValue& v) {
  switch (v.kind) {
    case DocValue::Kind::kMissing:
      return "missing";
    case DocValue::Kind::kNull:
      return "empty";
    case DocValue::Kind::kScalar:
      switch (v.type) {
        case DocValue::Type::kUntyped:
          return fmt::format("'{}'", v.text);
        case DocValue::Type::kString:
          return fmt::format("\"{}\"", v.text);
        case DocValue::Type::kNumber:
        case DocValue::Type::kBool:
          return v.text;
      }
      break;
    case DocValue::Kind::kList:
      return "a list";
    case DocValue::Kind::kMap:
      return "a map";
  }
  return "unknown";
}

Result<DocValue> ParseYamlDocument(std::string_view text, const std::string& file_name) {
  DocValue root;
  try {
    YAML::Node node = YAML::Load(std::string(text));
    YamlConverter converter(file_name, text.size() + 1024);
    RETURN_IF_ERROR(converter.Convert(node, 0, &root));
  } catch (const YAML::Exception& e) {
    SourceLocation at{file_name, e.mark.is_null() ? 0 : e.mark.line + 1,
                      e.mark.is_null() ? 0 : e.mark.column + 1};
    return util::InputError(at, "", fmt::format("not valid YAML: {}", e.msg));
  } catch (const std::exception& e) {
    return util::InputError({file_name, 0, 0}, "", fmt::format("cannot read YAML: {}", e.what()));
  }
  return root;
}

Status FromJson(const nlohmann::json& j, const SourceLocation& at, DocValue* out, bool typed) {
  return ConvertJson(j, at, typed, 0, out);
}

const DocValue::Field* FindField(const DocValue& map, std::string_view key) {
  for (const DocValue::Field& f : map.fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

bool DocValue::Has(std::string_view key) const { return FindField(*this, key) != nullptr; }

const DocValue& DocValue::operator[](std::string_view key) const {
  static const DocValue kMissing = [] {
    DocValue v;
    v.kind = Kind::kMissing;
    return v;
  }();
  const Field* f = FindField(*this, key);
  return f != nullptr ? f->value : kMissing;
}

}  // namespace hetsched::model::io
