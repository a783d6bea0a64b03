// parse_json (src/json_reader.h): config.json, vLLM profiles and GPU presets are read by the strict
// scanner into nlohmann::json documents. nlohmann's own parser is the reference: the same documents,
// number types included, and the same texts refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpubudget/error.h"
#include "json_reader.h"

namespace gpubudget::detail {
namespace {

// Equal values of equal types all the way down (nlohmann's == treats 1 and 1.0 as equal).
void expect_same_document(const nlohmann::json& got, const nlohmann::json& want, const std::string& where) {
  ASSERT_EQ(got.type(), want.type()) << where;
  if (got.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (const auto& [key, value] : want.items()) {
      ASSERT_TRUE(got.contains(key)) << where << "/" << key;
      expect_same_document(got.at(key), value, where + "/" + key);
    }
  } else if (got.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (std::size_t i = 0; i < want.size(); ++i) expect_same_document(got[i], want[i], where + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

TEST(JsonDocument, NumbersKeepTheTypesNlohmannGivesThem) {
  const std::string text =
      R"({"unsigned": 4096, "zero": 0, "negative": -8, "minus_zero": -0, "float": 0.5, "integral_float": 4096.0,)"
      R"( "exponent": 1e6, "tiny": 1e-400, "u64_max": 18446744073709551615, "beyond_u64": 18446744073709551616,)"
      R"( "i64_min": -9223372036854775808, "below_i64": -9223372036854775809, "negative_float": -2.5E-3})";
  const nlohmann::json got = parse_json(text, "numbers.json");
  expect_same_document(got, nlohmann::json::parse(text), "");
  // By hand, the types that matter to JsonReader::integer.
  EXPECT_TRUE(got["unsigned"].is_number_unsigned());
  EXPECT_TRUE(got["negative"].is_number_integer() && !got["negative"].is_number_unsigned());
  EXPECT_TRUE(got["integral_float"].is_number_float());
  EXPECT_TRUE(got["beyond_u64"].is_number_float());
  EXPECT_EQ(got["u64_max"].get<std::uint64_t>(), 18446744073709551615ULL);
}

TEST(JsonDocument, StringsNestingDuplicatesAndByteOrderMarkAsNlohmann) {
  const std::vector<std::string> texts = {
      R"({"a": "\u00e9\ud83d\ude00\n\"q\"", "b": [true, false, null, [], {}], "c": {"d": {"e": [1, [2, [3]]]}}})",
      R"({"k": 1, "k": 2})",  // the last duplicate wins
      "\xEF\xBB\xBF{\"bom\": true}",
      "  [1, 2.5, \"x\"]  \n",
      "\"just a string\"",
      "7",
  };
  for (const auto& text : texts) expect_same_document(parse_json(text, "t.json"), nlohmann::json::parse(text), text);
}

TEST(JsonDocument, TextsNlohmannRefusesAreMalformedNamingFileAndByte) {
  const std::vector<std::string> bad = {"",        "{",          "{\"a\": 1,}", "[1 2]",   "{\"a\": 1} x",
                                        "01",      "1e400",      "tru",         "\"\t\"",  "{\"a\" 1}",
                                        "\"\\x\"", "\"\xc0\xaf\"", "[1,]",      "{1: 2}",  std::string("\x00\xff\xfe{", 4)};
  for (const auto& text : bad) {
    nlohmann::json reference;
    EXPECT_THROW(reference = nlohmann::json::parse(text), nlohmann::json::exception) << text;
    try {
      (void)parse_json(text, "dir/config.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("dir/config.json: malformed JSON at byte "), std::string::npos) << e.what();
    }
  }
  try {
    (void)parse_json(R"({"architectures": [)", "c.json");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "c.json: malformed JSON at byte 19: expected a value");  // the text is 19 bytes
  }
}

TEST(JsonDocument, PythonInfinityAndNanBecomeTheLargestDoubleAndNull) {
  const nlohmann::json got = parse_json(R"({"limit": [0.0, Infinity], "low": -Infinity, "x": NaN, "s": "NaN"})", "t.json");
  EXPECT_EQ(got["limit"][1].get<double>(), 1.7976931348623157e308);
  EXPECT_EQ(got["low"].get<double>(), -1.7976931348623157e308);
  EXPECT_TRUE(got["x"].is_null());
  EXPECT_EQ(got["s"], "NaN");
}

TEST(JsonDocument, EveryBundledFileReadsAsNlohmannReadsIt) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(GPUBUDGET_TEST_CONFIG_DIR)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    if (text.find("Infinity") != std::string::npos || text.find("NaN") != std::string::npos) continue;
    expect_same_document(parse_json(text, entry.path().string()), nlohmann::json::parse(text), entry.path().string());
    ++files;
  }
  EXPECT_GT(files, 150u);
}

}  // namespace
}  // namespace gpubudget::detail
