// The forward-only JSON reader behind the safetensors header and index scans (src/json_scan.h):
// RFC 8259 strictness, escapes and UTF-8, integers, and streaming in chunks that must give exactly
// what reading the whole text gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "json_scan.h"

namespace gpubudget::detail {
namespace {

// Reads {"name": [integers], ...} into "name=1,2;" text, so two scanners can be compared.
std::string flatten(JsonScanner& scan) {
  std::string out;
  scan.object([&](std::string_view key) {
    out += std::string(key) + "=";
    scan.array([&] {
      const JsonInteger v = scan.integer();
      out += std::to_string(v.value) + ",";
    });
    out += ";";
  });
  EXPECT_TRUE(scan.at_end());
  return out;
}

JsonScanner::Reader reader_of(const std::string& text, std::size_t& at) {
  return [&text, &at](char* buffer, std::size_t capacity) {
    const std::size_t n = std::min(capacity, text.size() - at);
    std::memcpy(buffer, text.data() + at, n);
    at += n;
    return n;
  };
}

TEST(JsonScan, StreamingInChunksOfAnySizeReadsWhatTheWholeTextReads) {
  std::string text = "{\n";
  for (int i = 0; i < 200; ++i) {
    text += "  \"model.layers." + std::to_string(i) + ".mlp.experts.w\\u00e9ight\": [" + std::to_string(i) + ", " +
            std::to_string(i * 7) + "]" + (i + 1 < 200 ? ",\n" : "\n");
  }
  text += "}";
  JsonScanner whole(text);
  const std::string expected = flatten(whole);
  ASSERT_NE(expected.find("model.layers.199.mlp.experts.w\xc3\xa9ight=199,1393,;"), std::string::npos);
  // 1 byte is shorter than any line: the buffer grows; 64 splits lines; 1 MiB holds all.
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1} << 20}) {
    std::size_t at = 0;
    JsonScanner streamed(reader_of(text, at), chunk);
    EXPECT_EQ(flatten(streamed), expected) << "chunk " << chunk;
  }
}

TEST(JsonScan, ErrorsCarryTheByteOffsetOfTheWholeTextWhenStreaming) {
  const std::string text = "{\n\"a\": [1],\n\"b\": [2,]\n}";
  std::size_t at = 0;
  JsonScanner streamed(reader_of(text, at), 4);
  try {
    (void)flatten(streamed);
    FAIL() << "a trailing comma was accepted";
  } catch (const JsonScanError& e) {
    EXPECT_EQ(e.offset(), text.find(",]") + 1) << e.what();
  }
}

TEST(JsonScan, StringsDecodeEscapesAndSurrogatePairs) {
  JsonScanner scan(R"("a\"b\\c\/d\n\t\u0041\ud83d\ude00")");
  std::string scratch;
  EXPECT_EQ(scan.string(scratch), "a\"b\\c/d\n\tA\xf0\x9f\x98\x80");
  JsonScanner plain(R"(  "no escapes"  )");
  std::string unused;
  const std::string_view view = plain.string(unused);
  EXPECT_EQ(view, "no escapes");
  EXPECT_TRUE(unused.empty());  // a view into the text, not a copy
}

TEST(JsonScan, RefusesWhatIsNotJson) {
  const std::vector<std::string> bad = {
      "\"unterminated",       "\"tab\there\"",        "\"\\x\"",          "\"\\ud83d\"",
      "\"\\ude00\"",          "\"\xc0\xaf\"",         "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
      "\"\xe2\x82\"",         "01",                   "1.",               "-",
      "1e",                   "tru",                  "nul",              "[1,]",
      "{\"a\":1,}",           "{\"a\" 1}",            "{1:2}",            "[",
      "1e400",                "-2.5E+309",            std::string(400, '9'),
  };
  for (const auto& text : bad) {
    JsonScanner scan(text);
    EXPECT_THROW(
        {
          scan.skip_value();
          if (!scan.at_end()) scan.fail("text after the value");
        },
        JsonScanError)
        << text;
  }
  std::string deep(kMaxJsonDepth + 2, '[');
  deep += std::string(kMaxJsonDepth + 2, ']');
  JsonScanner scan(deep);
  EXPECT_THROW(scan.skip_value(), JsonScanError);
}

TEST(JsonScan, AcceptsEveryKindOfValueWhenSkipping) {
  JsonScanner scan(R"({"a":[true,false,null,-0,0.5,-1.25e-3,1E+9,1e-400,123456789012345678901234567890,"\u00e9",{},[]],"b":{"c":"d"}})");
  scan.skip_value();
  EXPECT_TRUE(scan.at_end());
}

TEST(JsonScan, IntegersSayWhyTheyAreNot) {
  const auto read = [](const std::string& text) {
    JsonScanner scan(text);
    return scan.integer();
  };
  EXPECT_EQ(read("12345").value, 12345);
  EXPECT_EQ(read("9223372036854775807").value, INT64_MAX);
  EXPECT_EQ(read("9223372036854775808").kind, JsonInteger::Kind::kTooLarge);
  EXPECT_EQ(read("123456789012345678901234").kind, JsonInteger::Kind::kTooLarge);
  EXPECT_EQ(read("-7").kind, JsonInteger::Kind::kNegative);
  EXPECT_EQ(read("-7").value, -7);
  EXPECT_EQ(read("-0").kind, JsonInteger::Kind::kInteger);
  EXPECT_EQ(read("2.0").kind, JsonInteger::Kind::kNotInteger);
  EXPECT_EQ(read("2e3").kind, JsonInteger::Kind::kNotInteger);
  EXPECT_EQ(read("0").value, 0);
}

TEST(JsonScan, HashesDifferForNamesThatDifferInOneByte) {
  EXPECT_NE(hash_bytes("model.layers.1.mlp.experts.0.w1.weight"), hash_bytes("model.layers.1.mlp.experts.0.w1.weigh"));
  EXPECT_NE(hash_bytes("model.layers.10.mlp"), hash_bytes("model.layers.01.mlp"));
  EXPECT_EQ(hash_bytes("same"), hash_bytes(std::string("same")));
}

}  // namespace
}  // namespace gpubudget::detail
