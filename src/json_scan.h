// A forward-only reader of one JSON text (RFC 8259, strict), for the large, regular files where a
// document tree costs more than the answer: safetensors headers and model.safetensors.index.json
// (tens of megabytes and hundreds of thousands of entries for a large checkpoint).
//
// The caller walks the grammar it expects (object, key, value ...) and skips what it does not need;
// every byte is still checked, so a text that is not JSON is refused wherever it breaks, with the byte
// offset. Strings must be valid UTF-8; escapes are decoded. Nesting deeper than kMaxJsonDepth is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpubudget::detail {

inline constexpr int kMaxJsonDepth = 256;

// Not JSON, or not the JSON the caller expected. `offset` is the byte where reading stopped.
class JsonScanError : public std::runtime_error {
 public:
  JsonScanError(const std::string& what, std::size_t offset) : std::runtime_error(what), offset_(offset) {}
  [[nodiscard]] std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

// A JSON number read as an integer: `value` when it is one (no fraction or exponent) and fits in 64
// bits; `kind` says why not otherwise.
struct JsonInteger {
  enum class Kind { kInteger, kNegative, kNotInteger, kTooLarge };
  Kind kind = Kind::kInteger;
  std::int64_t value = 0;  // valid for kInteger and kNegative
};

class JsonScanner {
 public:
  // Reads `text`, which must outlive the scanner.
  explicit JsonScanner(std::string_view text);
  // Reads a text delivered by `read(buffer, capacity)` (bytes written; 0 at the end) through a buffer
  // of about `chunk_bytes`, so that a file of tens of megabytes passes through memory that stays hot.
  // Chunks end after a newline, which JSON allows only between tokens; a line longer than the buffer
  // grows it. Views returned by string() are then valid until the next call on the scanner.
  using Reader = std::function<std::size_t(char* buffer, std::size_t capacity)>;
  JsonScanner(Reader read, std::size_t chunk_bytes);
  ~JsonScanner();
  JsonScanner(const JsonScanner&) = delete;
  JsonScanner& operator=(const JsonScanner&) = delete;

  // Skips whitespace; true (and consumes it) when the next byte is `c`.
  bool consume(char c) {
    skip_whitespace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  // Skips whitespace and consumes `c`, or throws naming `expected`.
  void expect(char c, const char* expected) {
    if (!consume(c)) fail_expecting(expected);
  }
  // The next value's first byte after whitespace ('\0' at the end): '{', '[', '"', a digit, '-', 't' ...
  char peek() {
    skip_whitespace();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  // Reads a string value. The view points into the text when the string has no escapes, into
  // `scratch` otherwise; it stays valid until the next call with the same scratch.
  std::string_view string(std::string& scratch);
  // Reads a number.
  JsonInteger integer();
  // Reads a number and returns its text ("-12", "0.5", "1e-6"), checked against the grammar and refused
  // beyond a double's range; the view is valid until the next call on the scanner.
  std::string_view number_token();
  // Reads `true` or `false`.
  bool boolean();
  // Reads `null`.
  void null() { skip_whitespace(); literal("null"); }
  // Skips one value of any kind, checking it.
  void skip_value() { skip_value(0); }
  // True when only whitespace remains.
  bool at_end();
  // Bytes read so far from the start of the text.
  [[nodiscard]] std::size_t offset() const { return base_ + at_; }

  // Members of an object: calls member(key) with the scanner positioned at the value, which the
  // callback must read or skip. The key view is valid during the call.
  template <class Member>
  void object(Member&& member) {
    expect('{', "an object");
    if (consume('}')) return;
    std::string key_scratch;
    do {
      if (peek() != '"') fail("expected a member name");
      std::string_view key = string(key_scratch);
      if (stream_ && key.data() != key_scratch.data()) key = key_scratch.assign(key);  // outlive a refill
      expect(':', "':'");
      member(key);
    } while (consume(','));
    expect('}', "',' or '}'");
  }
  // Elements of an array: calls element() with the scanner positioned at each value.
  template <class Element>
  void array(Element&& element) {
    expect('[', "an array");
    if (consume(']')) return;
    do {
      element();
    } while (consume(','));
    expect(']', "',' or ']'");
  }

  [[noreturn]] void fail(const std::string& reason) const;

 private:
  void skip_whitespace() {
    for (;;) {
      while (at_ < text_.size() &&
             (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
        ++at_;
      }
      if (at_ < text_.size() || !stream_ || !refill()) return;
    }
  }
  // Streaming only: replaces the consumed chunk with the next one; false at the end of the text.
  bool refill();
  [[noreturn]] void fail_expecting(const char* expected) const;
  void skip_value(int depth);
  void literal(std::string_view word);
  void number_text(bool& is_integer);
  void decode_escape(std::string& out);
  void check_utf8();

  struct Stream;
  std::string_view text_;  // the whole text, or the current chunk when streaming
  std::size_t at_ = 0;     // position in text_
  std::size_t base_ = 0;   // offset of text_ in the whole text
  std::unique_ptr<Stream> stream_;
};

// A 64-bit hash of a byte string, for comparing large name sets by digest (not cryptographic).
std::uint64_t hash_bytes(std::string_view bytes);

}  // namespace gpubudget::detail
