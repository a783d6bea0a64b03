#include "core/json_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget::detail {

namespace {

// Python's json module (and so transformers) writes and reads the non-standard tokens Infinity,
// -Infinity and NaN; Hugging Face configs contain them (Nemotron-H's time_step_limit). Outside
// strings they become the largest finite double and null, which no size computation reads.
std::string replace_python_number_tokens(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
      out += ch;
    } else if (text.compare(i, 8, "Infinity") == 0) {
      out += "1.7976931348623157e308";
      i += 7;
    } else if (text.compare(i, 3, "NaN") == 0) {
      out += "null";
      i += 2;
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

namespace {

// The deepest nesting accepted in a JSON input. Real configs nest four or five levels; nlohmann's
// parser is iterative but its serialiser and destructor recurse, so a hostile depth must stop here.
constexpr int kMaxJsonDepth = 128;

// The nesting depth of `text`'s arrays and objects (outside strings), counted without parsing.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') {
        ++i;
      } else if (ch == '"') {
        in_string = false;
      }
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_document(const std::string& text, const std::string& file) {
  if (const int depth = nesting_depth(text); depth > kMaxJsonDepth) {
    throw InputError(fmt::format("{}: JSON nested {} levels deep (limit {})", file, depth, kMaxJsonDepth));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed JSON at byte {}: {}", file, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw InputError(fmt::format("{}: malformed JSON: {}", file, e.what()));
  }
}

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& file) {
  if (text.find("Infinity") != std::string::npos || text.find("NaN") != std::string::npos) {
    return parse_document(replace_python_number_tokens(text), file);
  }
  return parse_document(text, file);
}

std::string read_text_file(const std::string& path, std::int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == ENAMETOOLONG) {
      throw InputError(fmt::format("{}: no such file", path));
    }
    throw InputError(fmt::format("{}: cannot be read", path));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw InputError(fmt::format("{}: cannot be read", path));
  if (S_ISDIR(info.st_mode)) throw InputError(fmt::format("{}: is a directory, expected a file", path));
  if (!S_ISREG(info.st_mode)) throw InputError(fmt::format("{}: not a regular file (a FIFO, socket or device)", path));
  if (info.st_size > max_bytes) {
    throw InputError(fmt::format("{}: {} bytes, above the {}-byte limit for this kind of file", path, info.st_size,
                                 max_bytes));
  }
  // One byte more than the size, so that the end shows in the second read, not a third.
  std::string text(static_cast<std::size_t>(info.st_size > 0 ? info.st_size : 0) + 1, '\0');
  std::size_t used = 0;
  for (;;) {
    if (used == text.size()) {  // the file grew while being read
      if (static_cast<std::int64_t>(used) > max_bytes) {
        throw InputError(fmt::format("{}: grew past the {}-byte limit while being read", path, max_bytes));
      }
      text.resize(2 * text.size() + 4096);
    }
    const ssize_t got = ::read(fd, text.data() + used, text.size() - used);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputError(fmt::format("{}: read error", path));
    }
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  text.resize(used);
  return text;
}

std::string render_value(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

std::string JsonReader::path(std::string_view key) const {
  return fmt::format("{}:{}/{}", file_, pointer_, key);
}

bool JsonReader::has(std::string_view key) const {
  if (reads_) reads_->insert(fmt::format("{}/{}", pointer_, key));
  if (!value_->is_object()) return false;
  const auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

void JsonReader::fail(std::string_view key, std::string_view expected) const {
  std::string got = "nothing (missing)";
  if (value_->is_object()) {
    const auto it = value_->find(key);
    if (it != value_->end()) got = render_value(*it);
  }
  throw InputError(fmt::format("{}: expected {}, got {}", path(key), expected, got));
}

JsonReader JsonReader::object(std::string_view key) const {
  if (!has(key) || !(*value_)[std::string(key)].is_object()) fail(key, "an object");
  JsonReader out((*value_)[std::string(key)], file_, fmt::format("{}/{}", pointer_, key));
  out.reads_ = reads_;
  return out;
}

void JsonReader::track_reads() {
  if (!reads_) reads_ = std::make_shared<std::set<std::string>>();
}

std::vector<std::string> JsonReader::unread_keys() const {
  std::vector<std::string> out;
  if (!reads_ || !value_->is_object()) return out;
  for (const auto& [key, unused] : value_->items()) {
    if (reads_->count(fmt::format("{}/{}", pointer_, key)) == 0) out.push_back(key);
  }
  return out;
}

std::optional<JsonReader> JsonReader::optional_object(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return object(key);
}

namespace {

// An integral JSON number as int64, or nullopt if it is not a number with an integral value.
std::optional<std::int64_t> as_integer(const nlohmann::json& v) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      return std::nullopt;
    }
    return v.get<std::int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return static_cast<std::int64_t>(d);
    }
  }
  return std::nullopt;
}

}  // namespace

std::int64_t JsonReader::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  const auto value = optional_integer(key, min, max);
  if (!value) fail(key, fmt::format("an integer in [{}, {}]", min, max));
  return *value;
}

std::optional<std::int64_t> JsonReader::optional_integer(std::string_view key, std::int64_t min,
                                                         std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  const auto value = as_integer((*value_)[std::string(key)]);
  if (!value || *value < min || *value > max) {
    fail(key, fmt::format("an integer in [{}, {}]", min, max));
  }
  return value;
}

double JsonReader::number(std::string_view key, double min, double max) const {
  const auto value = optional_number(key, min, max);
  if (!value) fail(key, fmt::format("a number in [{}, {}]", min, max));
  return *value;
}

std::optional<double> JsonReader::optional_number(std::string_view key, double min,
                                                  double max) const {
  if (!has(key)) return std::nullopt;
  const auto& v = (*value_)[std::string(key)];
  if (!v.is_number()) fail(key, fmt::format("a number in [{}, {}]", min, max));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) fail(key, fmt::format("a number in [{}, {}]", min, max));
  return d;
}

std::string JsonReader::string(std::string_view key) const {
  const auto value = optional_string(key);
  if (!value) fail(key, "a string");
  return *value;
}

std::optional<std::string> JsonReader::optional_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = (*value_)[std::string(key)];
  if (!v.is_string()) fail(key, "a string");
  return v.get<std::string>();
}

bool JsonReader::boolean(std::string_view key, bool default_value) const {
  if (!has(key)) return default_value;
  const auto& v = (*value_)[std::string(key)];
  if (!v.is_boolean()) fail(key, "true or false");
  return v.get<bool>();
}

std::vector<std::string> JsonReader::string_list(std::string_view key) const {
  std::vector<std::string> out;
  if (!has(key)) return out;
  const auto& v = (*value_)[std::string(key)];
  if (!v.is_array()) fail(key, "an array of strings");
  for (const auto& item : v) {
    if (!item.is_string()) fail(key, "an array of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<JsonReader> JsonReader::object_list(std::string_view key) const {
  std::vector<JsonReader> out;
  if (!has(key)) return out;
  const auto& v = (*value_)[std::string(key)];
  if (!v.is_array()) fail(key, "an array of objects");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_object()) fail(key, "an array of objects");
    JsonReader item(v[i], file_, fmt::format("{}/{}/{}", pointer_, key, i));
    item.reads_ = reads_;
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<std::int64_t> JsonReader::integer_list(std::string_view key, std::int64_t min,
                                                   std::int64_t max) const {
  std::vector<std::int64_t> out;
  if (!has(key)) return out;
  const auto& v = (*value_)[std::string(key)];
  const auto expected = fmt::format("an array of integers in [{}, {}]", min, max);
  if (!v.is_array()) fail(key, expected);
  for (const auto& item : v) {
    const auto value = as_integer(item);
    if (!value || *value < min || *value > max) fail(key, expected);
    out.push_back(*value);
  }
  return out;
}

std::vector<double> JsonReader::number_list(std::string_view key, double min, double max) const {
  std::vector<double> out;
  if (!has(key)) return out;
  const auto& v = (*value_)[std::string(key)];
  const auto expected = fmt::format("an array of numbers in [{}, {}]", min, max);
  if (!v.is_array()) fail(key, expected);
  for (const auto& item : v) {
    if (!item.is_number()) fail(key, expected);
    const double d = item.get<double>();
    if (!std::isfinite(d) || d < min || d > max) fail(key, expected);
    out.push_back(d);
  }
  return out;
}

void JsonReader::reject_unknown_keys(const std::vector<std::string_view>& known) const {
  if (!value_->is_object()) return;
  for (const auto& [key, unused] : value_->items()) {
    bool found = false;
    for (const auto k : known) found = found || (k == key);
    if (!found) {
      throw InputError(fmt::format("{}: unknown key (allowed: {})", path(key), fmt::join(known, ", ")));
    }
  }
}

}  // namespace gpubudget::detail
