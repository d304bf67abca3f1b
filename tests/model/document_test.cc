#include "model/io/document.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace hetsched::model::io {
namespace {

using ::testing::EndsWith;
using ::testing::StartsWith;

DocValue Yaml(const std::string& text) {
  auto doc = ParseYamlDocument(text, "d.yaml");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  return doc.ok() ? *doc : DocValue{};
}

DocValue Json(const std::string& text, bool typed) {
  DocValue out;
  EXPECT_TRUE(FromJson(nlohmann::json::parse(text), {"body", 1, 0}, &out, typed).ok());
  return out;
}

TEST(Document, AKeyGivenTwiceIsRefusedWithItsPath) {
  auto doc = ParseYamlDocument("nodes:\n  - name: a\n    cores: 1\n    cores: 2\n", "d.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(),
            "d.yaml:4:5: nodes[0].cores: appears twice (first at line 3) (expected each key once)");
}

TEST(Document, AKeyThatIsNoNameIsRefusedWithItsPath) {
  auto doc = ParseYamlDocument("a:\n  [x]: 1\n", "d.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(), StartsWith("d.yaml:2:3: a: a key is not a plain name"));
}

TEST(Document, AMissingFieldReadsAsMissingAndIsNamedSo) {
  const DocValue doc = Yaml("a: 1\nb:\n");
  EXPECT_TRUE(doc.Has("b"));
  EXPECT_TRUE(doc["b"].IsNull());
  EXPECT_FALSE(doc.Has("c"));
  EXPECT_TRUE(doc["c"].IsMissing());
  const DocReader r("d.yaml");
  EXPECT_EQ(r.Scalar(doc["c"], "c", "a name").status().message(),
            "d.yaml: c: is missing (expected a name)");
  EXPECT_THAT(r.Scalar(doc["b"], "b", "a name").status().message(),
              EndsWith(": b: is empty (expected a name)"));
}

TEST(Document, YamlScalarsAreReadAsTheReadWants) {
  const DocValue doc = Yaml("n: 2\ns: '2'\nb: True\n");
  const DocReader r("d.yaml");
  EXPECT_EQ(*r.Count(doc["n"], "n", 10), 2);
  EXPECT_EQ(*r.Count(doc["s"], "s", 10), 2);  // YAML leaves the type to the reader
  EXPECT_EQ(*r.String(doc["n"], "n"), "2");
  EXPECT_TRUE(*r.Bool(doc["b"], "b"));
}

TEST(Document, TypedJsonKeepsStringsNumbersAndBooleansApart) {
  const DocValue doc = Json(R"({"n": 2, "s": "2", "b": true, "t": "true"})", /*typed=*/true);
  const DocReader r("body");
  EXPECT_EQ(*r.Count(doc["n"], "n", 10), 2);
  EXPECT_EQ(r.Count(doc["s"], "s", 10).status().message(),
            "body:1: s: \"2\" is not a number (expected a whole number from 1 to 10)");
  EXPECT_EQ(r.Integer(doc["s"], "s", 0, 10, "a count").status().message(),
            "body:1: s: \"2\" is not an integer (expected a count)");
  EXPECT_EQ(r.Number(doc["b"], "b", 0, false, "a rate").status().message(),
            "body:1: b: true is not a number (expected a rate)");
  EXPECT_TRUE(*r.Bool(doc["b"], "b"));
  EXPECT_EQ(r.Bool(doc["t"], "t").status().message(),
            "body:1: t: \"true\" is not a boolean (expected true or false)");
  EXPECT_EQ(r.String(doc["n"], "n").status().message(), "body:1: n: is not a string");
  EXPECT_EQ(r.NonEmptyString(doc["n"], "n").status().message(),
            "body:1: n: is 2 (expected a non-empty string)");
}

TEST(Document, UntypedJsonIsReadLikeYaml) {
  const DocValue doc = Json(R"({"s": "2", "t": "true"})", /*typed=*/false);
  const DocReader r("w.jsonl");
  EXPECT_EQ(*r.Count(doc["s"], "s", 10), 2);
  EXPECT_TRUE(*r.Bool(doc["t"], "t"));
}

TEST(Document, CheckMapNamesTheUnknownFieldAtItsKey) {
  const DocValue doc = Yaml("link:\n  bandwidth: 1\n  speed: 2\n");
  const DocReader r("d.yaml");
  EXPECT_TRUE(r.CheckMap(doc, "", {"link"}).ok());
  EXPECT_EQ(r.CheckMap(doc["link"], "link", {"bandwidth", "latency"}).message(),
            "d.yaml:3:3: link.speed: unknown field (expected one of: bandwidth, latency)");
  EXPECT_EQ(r.CheckMap(doc["link"]["bandwidth"], "link.bandwidth", {"x"}, "a pair").message(),
            "d.yaml:2:14: link.bandwidth: is not a map (expected a pair with fields x)");
}

// Every value of `v`, its kind, type, text and line, fields with their keys: two documents read
// the same when these are equal.
std::string Dump(const DocValue& v) {
  std::string out = fmt::format("<{} {} {} '{}'", static_cast<int>(v.kind),
                                static_cast<int>(v.type), v.line, v.text);
  for (const DocValue& item : v.items) out += " " + Dump(item);
  for (const DocValue::Field& f : v.fields)
    out += fmt::format(" {}@{}={}", f.key, f.line, Dump(f.value));
  return out + ">";
}

// ParseJson reads a stored request in one pass: what it reads must be what FromJson makes of
// nlohmann's document, typed or not, keys in nlohmann's order.
TEST(Document, ParseJsonReadsWhatFromJsonReads) {
  for (
      const std::string text : {
          R"({"gang_size":8,"name":"q0","stacks":["cuda"],"work":212.6})",
          R"({"work":1e6,"name":"b","a":[1,-2,3.5,1e300,18446744073709551615,-9223372036854775808]})",
          R"({"z":{"y":{"x":[true,false,null,"s",{"k":"v"}]}},"a":"\u00e9\n","n":0.1})",
          R"({"t":{"v100":2,"k80":0.5},"e":{},"l":[],"f":1.0,"g":-0.0,"h":12345678901234567890})",
          R"([1,"2",[3]])",
          R"("just a string")",
      }) {
    for (const bool typed : {false, true}) {
      DocValue one_pass;
      const util::Status st = ParseJson(text, {"body", 1, 0}, &one_pass, typed);
      ASSERT_TRUE(st.ok()) << text << ": " << st.message();
      EXPECT_EQ(Dump(one_pass), Dump(Json(text, typed))) << text;
    }
  }
}

TEST(Document, ParseJsonRefusesWhatIsNoDocumentWithAPreciseMessage) {
  DocValue out;
  EXPECT_EQ(ParseJson(R"({"a":1,"b":)", {"body", 1, 0}, &out).message(),
            "body:1: not valid JSON: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(ParseJson(R"({"a":1,"b":{"c":2,"c":3}})", {"body", 1, 0}, &out).message(),
            "body:1: 'c' is given twice");
  EXPECT_EQ(ParseJson(R"({"a":1e400})", {"body", 1, 0}, &out).message(),
            "body:1: not valid JSON: number overflow parsing '1e400'");
  // 64 levels below the top are read (as FromJson does), 65 are not.
  const auto nested = [](int levels) {
    return std::string(levels, '[') + "1" + std::string(levels, ']');
  };
  EXPECT_TRUE(ParseJson(nested(64), {"body", 1, 0}, &out).ok());
  EXPECT_EQ(ParseJson(nested(65), {"body", 1, 0}, &out).message(),
            "body:1: nesting deeper than 64");
}

}  // namespace
}  // namespace hetsched::model::io
