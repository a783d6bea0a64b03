// parse_json and JsonReader (src/core/json_reader.h): config.json, vLLM profiles and GPU presets are parsed
// by nlohmann; what this reader adds is the error text (file, JSON pointer, value), Python's number
// tokens and a nesting limit.
#include <gtest/gtest.h>

#include <string>

#include "gpubudget/error.h"
#include "core/json_reader.h"
#include "test_support.h"

namespace gpubudget::detail {
namespace {

TEST(JsonReader, PythonsNonStandardNumberTokensReadOutsideStrings) {
  // transformers writes Infinity and NaN (Nemotron-H's time_step_limit); a string keeps its text.
  const auto j = parse_json(R"({"limit": [0.0, Infinity], "x": NaN, "name": "NaN Infinity"})", "c.json");
  EXPECT_EQ(j["limit"][1].get<double>(), 1.7976931348623157e308);
  EXPECT_TRUE(j["x"].is_null());
  EXPECT_EQ(j["name"], "NaN Infinity");
}

TEST(JsonReader, MalformedTextNamesTheFileAndTheByte) {
  test::expect_input_error([] { (void)parse_json(R"({"a": 1,})", "config.json"); }, "config.json: malformed JSON at byte 9");
}

TEST(JsonReader, NestingBeyondTheLimitIsRefusedBeforeParsing) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  test::expect_input_error([&] { (void)parse_json(deep, "profile.json"); },
                           "profile.json: JSON nested 200000 levels deep (limit 128)");
  // Brackets inside strings are text, not nesting.
  const std::string quoted = "{\"a\": \"" + std::string(1000, '[') + "\\\"\"}";
  EXPECT_EQ(parse_json(quoted, "q.json")["a"].get<std::string>().size(), 1001u);
}

TEST(JsonReader, FieldErrorsNameThePointerAndTheValue) {
  const auto j = parse_json(R"({"text_config": {"num_key_value_heads": 8.5}})", "config.json");
  const JsonReader root(j, "config.json");
  const JsonReader text = root.object("text_config");
  test::expect_input_error([&] { (void)text.integer("num_key_value_heads", 1, 16384); },
                           "config.json:/text_config/num_key_value_heads: expected an integer in [1, 16384], got 8.5");
  test::expect_input_error([&] { (void)text.integer("hidden_size", 1, 16); },
                           "config.json:/text_config/hidden_size: expected an integer in [1, 16], got nothing (missing)");
}

}  // namespace
}  // namespace gpubudget::detail
