// JsonReader: reads fields of a JSON document with type and range checks, and errors that name the
// file, the JSON pointer of the field and the offending value (nlohmann's own errors name none).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubudget::detail {

// Parses `text`; throws InputError "<file>: malformed JSON: ..." on a syntax error.
nlohmann::json parse_json(const std::string& text, const std::string& file);
// The largest configuration file read (config.json, quantization configs, profiles, presets: real ones
// are kilobytes to a few megabytes).
inline constexpr std::int64_t kMaxConfigFileBytes = std::int64_t{64} << 20;

// Reads a whole regular file of at most `max_bytes`; throws InputError naming it when it is missing, a
// directory, not a regular file (a FIFO or a device is refused before any read, so nothing blocks),
// larger than the limit, or unreadable.
std::string read_text_file(const std::string& path, std::int64_t max_bytes = kMaxConfigFileBytes);

class JsonReader {
 public:
  // `value` must outlive the reader (it keeps a pointer); a temporary, or an ordered_json converted on
  // the fly, is refused at compile time.
  JsonReader(const nlohmann::json& value, std::string file, std::string pointer = "");
  JsonReader(nlohmann::json&& value, std::string file, std::string pointer = "") = delete;

  [[nodiscard]] const nlohmann::json& value() const { return *value_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::string path(std::string_view key) const;

  // Present and not null.
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] JsonReader object(std::string_view key) const;  // required object
  [[nodiscard]] std::optional<JsonReader> optional_object(std::string_view key) const;

  // Integers in [min, max]; a float with an integral value (e.g. 4096.0) is accepted, 8.5 is not.
  [[nodiscard]] std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const;
  [[nodiscard]] std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t min,
                                                             std::int64_t max) const;
  [[nodiscard]] double number(std::string_view key, double min, double max) const;
  [[nodiscard]] std::optional<double> optional_number(std::string_view key, double min,
                                                      double max) const;
  [[nodiscard]] std::string string(std::string_view key) const;
  [[nodiscard]] std::optional<std::string> optional_string(std::string_view key) const;
  [[nodiscard]] bool boolean(std::string_view key, bool default_value) const;
  [[nodiscard]] std::vector<std::string> string_list(std::string_view key) const;  // absent → {}
  // An array of objects, one reader each (its errors name "key/i"); absent → {}.
  [[nodiscard]] std::vector<JsonReader> object_list(std::string_view key) const;
  [[nodiscard]] std::vector<std::int64_t> integer_list(std::string_view key, std::int64_t min,
                                                       std::int64_t max) const;
  [[nodiscard]] std::vector<double> number_list(std::string_view key, double min, double max) const;  // absent → {}

  // Rejects keys not in `known` (for gpubudget's own files, so that typos fail).
  void reject_unknown_keys(const std::vector<std::string_view>& known) const;

  // From now on, every key this reader (and every reader object() derives from it) is asked about is
  // recorded; unread_keys() lists this object's keys never asked about, in document order. A config
  // parse uses it to find the keys no family parser looked at.
  void track_reads();
  [[nodiscard]] std::vector<std::string> unread_keys() const;

  [[noreturn]] void fail(std::string_view key, std::string_view expected) const;

 private:
  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
  std::shared_ptr<std::set<std::string>> reads_;  // JSON pointers asked about; null = not tracked
};

// Compact rendering of a JSON value for error messages (long values are shortened).
std::string render_value(const nlohmann::json& value);

}  // namespace gpubudget::detail
