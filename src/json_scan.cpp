// JsonScanner (json_scan.h). Strings are scanned 16 bytes at a time for the bytes that need attention
// (quote, backslash, control characters, non-ASCII); everything else is plain byte-by-byte grammar.
#include "json_scan.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <string.h>  // memrchr

#include <fmt/format.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpubudget::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The first position at or after `at` holding '"', '\\', a control character (< 0x20) or a byte
// >= 0x80; `text.size()` when there is none.
std::size_t next_string_special(std::string_view text, std::size_t at) {
  const char* const data = text.data();
  const std::size_t size = text.size();
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i below_space = _mm_set1_epi8(0x1F);
  while (at + 16 <= size) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + at));
    const __m128i special = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
        _mm_cmpeq_epi8(_mm_max_epu8(bytes, below_space), below_space));  // unsigned byte <= 0x1F
    // movemask of the bytes themselves is their top bits: the non-ASCII ones.
    const int mask = _mm_movemask_epi8(special) | _mm_movemask_epi8(bytes);
    if (mask != 0) return at + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    at += 16;
  }
#endif
  for (; at < size; ++at) {
    const auto c = static_cast<unsigned char>(data[at]);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return at;
  }
  return size;
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace

void JsonScanner::fail(const std::string& reason) const { throw JsonScanError(reason, offset()); }

struct JsonScanner::Stream {
  Reader read;
  std::vector<char> buffer;
  std::size_t filled = 0;       // valid bytes in buffer
  std::size_t chunk_end = 0;    // buffer[0, chunk_end) is the chunk being read
  bool at_end_of_input = false;
};

JsonScanner::JsonScanner(std::string_view text) : text_(text) {}

JsonScanner::JsonScanner(Reader read, std::size_t chunk_bytes) : stream_(std::make_unique<Stream>()) {
  stream_->read = std::move(read);
  stream_->buffer.resize(chunk_bytes > 0 ? chunk_bytes : 1);
}

JsonScanner::~JsonScanner() = default;

bool JsonScanner::refill() {
  Stream& s = *stream_;
  // Keep what followed the last newline of the chunk just read.
  base_ += s.chunk_end;
  const std::size_t carry = s.filled - s.chunk_end;
  std::memmove(s.buffer.data(), s.buffer.data() + s.chunk_end, carry);
  s.filled = carry;
  s.chunk_end = 0;
  for (;;) {
    if (!s.at_end_of_input) {
      if (s.filled == s.buffer.size()) s.buffer.resize(s.buffer.size() * 2);  // a line longer than the buffer
      const std::size_t got = s.read(s.buffer.data() + s.filled, s.buffer.size() - s.filled);
      if (got == 0) s.at_end_of_input = true;
      s.filled += got;
    }
    const void* newline = s.filled > 0 ? ::memrchr(s.buffer.data(), '\n', s.filled) : nullptr;
    if (s.at_end_of_input) {
      s.chunk_end = s.filled;
      break;
    }
    if (newline != nullptr && s.filled == s.buffer.size()) {
      s.chunk_end = static_cast<std::size_t>(static_cast<const char*>(newline) - s.buffer.data()) + 1;
      break;
    }
  }
  text_ = std::string_view(s.buffer.data(), s.chunk_end);
  at_ = 0;
  return s.chunk_end > 0;
}

void JsonScanner::fail_expecting(const char* expected) const { fail(fmt::format("expected {}", expected)); }

bool JsonScanner::at_end() {
  skip_whitespace();
  return at_ == text_.size();
}

// One UTF-8 sequence starting at a byte >= 0x80 (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF); advances past it.
void JsonScanner::check_utf8() {
  const auto byte = [this](std::size_t i) {
    return i < text_.size() ? static_cast<unsigned char>(text_[i]) : 0u;
  };
  const unsigned lead = byte(at_);
  unsigned low = 0x80, high = 0xBF;
  std::size_t continuation = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuation = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuation = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuation = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    fail("ill-formed UTF-8 in a string");
  }
  for (std::size_t k = 1; k <= continuation; ++k) {
    const unsigned c = byte(at_ + k);
    const unsigned lo = k == 1 ? low : 0x80, hi = k == 1 ? high : 0xBF;
    if (c < lo || c > hi) fail("ill-formed UTF-8 in a string");
  }
  at_ += continuation + 1;
}

// At a backslash: appends the decoded character to `out` and advances past the escape.
void JsonScanner::decode_escape(std::string& out) {
  const auto hex4 = [this](std::size_t from) {
    if (from + 4 > text_.size()) fail("truncated \\u escape");
    std::uint32_t v = 0;
    for (std::size_t i = from; i < from + 4; ++i) {
      const char c = text_[i];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else fail("invalid \\u escape");
    }
    return v;
  };
  if (at_ + 1 >= text_.size()) fail("unterminated string");
  const char kind = text_[at_ + 1];
  at_ += 2;
  switch (kind) {
    case '"': out.push_back('"'); return;
    case '\\': out.push_back('\\'); return;
    case '/': out.push_back('/'); return;
    case 'b': out.push_back('\b'); return;
    case 'f': out.push_back('\f'); return;
    case 'n': out.push_back('\n'); return;
    case 'r': out.push_back('\r'); return;
    case 't': out.push_back('\t'); return;
    case 'u': break;
    default: at_ -= 1; fail("invalid escape in a string");
  }
  std::uint32_t code_point = hex4(at_);
  at_ += 4;
  if (code_point >= 0xDC00 && code_point <= 0xDFFF) fail("a \\u escape is a lone low surrogate");
  if (code_point >= 0xD800 && code_point <= 0xDBFF) {
    if (at_ + 1 >= text_.size() || text_[at_] != '\\' || text_[at_ + 1] != 'u') {
      fail("a \\u escape is a high surrogate without its low half");
    }
    const std::uint32_t low = hex4(at_ + 2);
    if (low < 0xDC00 || low > 0xDFFF) fail("a \\u escape is a high surrogate without its low half");
    at_ += 6;
    code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
  }
  append_utf8(out, code_point);
}

std::string_view JsonScanner::string(std::string& scratch) {
  skip_whitespace();
  if (at_ >= text_.size() || text_[at_] != '"') fail("expected a string");
  ++at_;
  const std::size_t start = at_;
  std::size_t segment = start;  // first byte not yet copied to scratch (escaped strings only)
  bool escaped = false;
  for (;;) {
    at_ = next_string_special(text_, at_);
    if (at_ >= text_.size()) fail("unterminated string");
    const auto c = static_cast<unsigned char>(text_[at_]);
    if (c == '"') {
      std::string_view out;
      if (escaped) {
        scratch.append(text_.data() + segment, at_ - segment);
        out = scratch;
      } else {
        out = text_.substr(start, at_ - start);
      }
      ++at_;
      return out;
    }
    if (c == '\\') {
      if (!escaped) scratch.clear();
      escaped = true;
      scratch.append(text_.data() + segment, at_ - segment);
      decode_escape(scratch);
      segment = at_;
    } else if (c < 0x20) {
      fail("a control character in a string");
    } else {
      check_utf8();
    }
  }
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
void JsonScanner::number_text(bool& is_integer) {
  is_integer = true;
  const std::size_t start = at_;
  const auto digits = [this] {
    const std::size_t from = at_;
    while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
    if (at_ == from) fail("a number without digits");
  };
  if (at_ < text_.size() && text_[at_] == '-') ++at_;
  if (at_ < text_.size() && text_[at_] == '0') {
    ++at_;
    if (at_ < text_.size() && is_digit(text_[at_])) fail("a number with a leading zero");
  } else {
    digits();
  }
  if (at_ < text_.size() && text_[at_] == '.') {
    is_integer = false;
    ++at_;
    digits();
  }
  if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
    is_integer = false;
    ++at_;
    if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
    digits();
  }
  // Like the reference implementation (serde_json) and nlohmann, a number beyond a double's range is
  // refused, wherever it is (1e400, or an integer of 400 digits).
  if (!is_integer || at_ - start > 18) {
    const std::string token(text_.substr(start, at_ - start));
    if (!std::isfinite(std::strtod(token.c_str(), nullptr))) fail("a number out of range");
  }
}

JsonInteger JsonScanner::integer() {
  skip_whitespace();
  const std::size_t start = at_;
  // The common case first: a short run of digits without sign, fraction or exponent.
  if (at_ < text_.size() && text_[at_] >= '1' && text_[at_] <= '9') {
    std::size_t end = at_;
    std::int64_t value = 0;
    while (end < text_.size() && end - at_ < 18 && is_digit(text_[end])) {
      value = value * 10 + (text_[end] - '0');
      ++end;
    }
    const char next = end < text_.size() ? text_[end] : '\0';
    if (!is_digit(next) && next != '.' && next != 'e' && next != 'E') {
      at_ = end;
      return {JsonInteger::Kind::kInteger, value};
    }
  }
  if (at_ >= text_.size() || (text_[at_] != '-' && !is_digit(text_[at_]))) fail("expected a number");
  bool is_integer = true;
  number_text(is_integer);
  JsonInteger out;
  if (!is_integer) {
    out.kind = JsonInteger::Kind::kNotInteger;
    return out;
  }
  const bool negative = text_[start] == '-';
  std::uint64_t magnitude = 0;
  bool overflow = false;
  for (std::size_t i = start + (negative ? 1 : 0); i < at_; ++i) {
    const auto digit = static_cast<std::uint64_t>(text_[i] - '0');
    overflow = overflow || __builtin_mul_overflow(magnitude, 10u, &magnitude) ||
               __builtin_add_overflow(magnitude, digit, &magnitude);
  }
  constexpr auto kMax = static_cast<std::uint64_t>(INT64_MAX);
  if (negative && magnitude != 0) {
    out.kind = JsonInteger::Kind::kNegative;
    out.value = overflow || magnitude > kMax ? INT64_MIN : -static_cast<std::int64_t>(magnitude);
  } else if (overflow || magnitude > kMax) {
    out.kind = JsonInteger::Kind::kTooLarge;
  } else {
    out.value = static_cast<std::int64_t>(magnitude);
  }
  return out;
}

std::string_view JsonScanner::number_token() {
  skip_whitespace();
  if (at_ >= text_.size() || (text_[at_] != '-' && !is_digit(text_[at_]))) fail("expected a number");
  const std::size_t start = at_;
  bool is_integer = true;
  number_text(is_integer);
  return text_.substr(start, at_ - start);
}

bool JsonScanner::boolean() {
  if (peek() == 't') {
    literal("true");
    return true;
  }
  literal("false");
  return false;
}

void JsonScanner::literal(std::string_view word) {
  if (text_.substr(at_, word.size()) != word) fail("expected a value");
  at_ += word.size();
}

void JsonScanner::skip_value(int depth) {
  if (depth > kMaxJsonDepth) fail(fmt::format("nested deeper than {} levels", kMaxJsonDepth));
  switch (peek()) {
    case '{': object([&](std::string_view) { skip_value(depth + 1); }); return;
    case '[': array([&] { skip_value(depth + 1); }); return;
    case '"': {
      std::string scratch;
      (void)string(scratch);
      return;
    }
    case 't': literal("true"); return;
    case 'f': literal("false"); return;
    case 'n': literal("null"); return;
    default: {
      const char c = peek();
      if (c != '-' && !is_digit(c)) fail("expected a value");
      bool is_integer = true;
      number_text(is_integer);
    }
  }
}

std::uint64_t hash_bytes(std::string_view bytes) {
  constexpr std::uint64_t kMultiplier = 0x9FB21C651E98DF25ULL;
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (bytes.size() * 0xFF51AFD7ED558CCDULL);
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * kMultiplier;
    h ^= h >> 32;
  }
  if (i < bytes.size()) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, bytes.size() - i);
    h = (h ^ word) * kMultiplier;
  }
  // MurmurHash3's 64-bit finalizer.
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace gpubudget::detail
