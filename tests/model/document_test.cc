#include "model/io/document.h"

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

}  // namespace
}  // namespace hetsched::model::io
