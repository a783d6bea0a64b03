// JsonOut (apps/cli/json_out.h) against the reference it promises to match: nlohmann::json's dump(2)
// of the same tree, for nested, empty and mixed containers, every scalar kind and strings that need
// escaping.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "json_out.h"

namespace gpubudget::cli {
namespace {

using Tree = nlohmann::ordered_json;

void write_value(JsonOut& out, const Tree& v);

void write_member(JsonOut& out, const std::string& key, const Tree& v) {
  switch (v.type()) {
    case Tree::value_t::object:
      out.begin_object(key);
      for (const auto& [k, child] : v.items()) write_member(out, k, child);
      out.end();
      return;
    case Tree::value_t::array:
      out.begin_array(key);
      for (const auto& child : v) write_value(out, child);
      out.end();
      return;
    case Tree::value_t::string: out.field(key, v.get<std::string>()); return;
    case Tree::value_t::boolean: out.field(key, v.get<bool>()); return;
    case Tree::value_t::number_unsigned: out.field(key, v.get<std::uint64_t>()); return;
    case Tree::value_t::number_integer: out.field(key, v.get<std::int64_t>()); return;
    case Tree::value_t::number_float: out.field(key, v.get<double>()); return;
    default: out.field(key, nullptr); return;
  }
}

void write_value(JsonOut& out, const Tree& v) {
  switch (v.type()) {
    case Tree::value_t::object:
      out.begin_object();
      for (const auto& [k, child] : v.items()) write_member(out, k, child);
      out.end();
      return;
    case Tree::value_t::array:
      out.begin_array();
      for (const auto& child : v) write_value(out, child);
      out.end();
      return;
    case Tree::value_t::string: out.element(v.get<std::string>()); return;
    case Tree::value_t::boolean: out.element(v.get<bool>()); return;
    case Tree::value_t::number_unsigned:
    case Tree::value_t::number_integer: out.element(v.get<std::int64_t>()); return;
    case Tree::value_t::number_float: out.element(v.get<double>()); return;
    default: out.element(nullptr); return;
  }
}

std::string written(const Tree& tree) {
  std::string text;
  JsonOut out(text);
  write_value(out, tree);
  EXPECT_TRUE(out.complete());
  return text;
}

TEST(JsonOut, LaysOutDocumentsAsNlohmannDumpsThem) {
  Tree doc = Tree::object();
  doc["schema_version"] = 1;
  doc["empty_object"] = Tree::object();
  doc["empty_array"] = Tree::array();
  doc["nested"] = {{"a", {1, 2, {{"b", Tree::array()}}}}, {"c", {{"d", nullptr}}}};
  doc["numbers"] = {0, -1, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                    0.9, 0.25, 2.0, 1e15, 1e16, 1e-5, 123456.789, -0.0, 1.7976931348623157e308, 91775670682.5};
  doc["big_unsigned"] = std::numeric_limits<std::uint64_t>::max();
  doc["flags"] = {true, false, nullptr};
  doc["strings"] = {"", "plain", "quote \" and backslash \\", "tab\tnew\nline\r\b\f", std::string("nul\0x", 5),
                    "\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "path/with spaces/config.json"};
  doc["keys need escaping"] = {{"k\"ey", 1}, {"\xc3\xa9t\xc3\xa9", 2}};
  EXPECT_EQ(written(doc), doc.dump(2));
  EXPECT_EQ(written(Tree::array()), "[]");
  EXPECT_EQ(written(Tree::object()), "{}");
  EXPECT_EQ(written(Tree({{"only", Tree::array({Tree::object()})}})), "{\n  \"only\": [\n    {}\n  ]\n}");
}

TEST(JsonOut, InvalidUtf8IsReplacedNotThrown) {
  std::string text;
  JsonOut out(text);
  out.begin_object().field("source", std::string("/models/bad\xff name")).end();
  EXPECT_EQ(text, "{\n  \"source\": \"/models/bad\xef\xbf\xbd name\"\n}");  // U+FFFD
}

TEST(JsonOut, NullForEmptyStrings) {
  std::string text;
  JsonOut out(text);
  out.begin_object().field_or_null("caveat", "").field_or_null("backend", "FLASHINFER").end();
  EXPECT_EQ(text, "{\n  \"caveat\": null,\n  \"backend\": \"FLASHINFER\"\n}");
}

}  // namespace
}  // namespace gpubudget::cli
