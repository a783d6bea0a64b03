// JsonOut: writes one JSON document straight into a string, laid out exactly as nlohmann::json's
// dump(2) lays out the same tree (two-space indentation, `"key": value`, `[]` and `{}` when empty),
// without building the tree. The fit report is written this way: a tree of ~150 values cost more
// instructions to build and serialise than the whole fit computation.
//
// Usage: begin_object()/begin_array() open a container (with a key inside an object), field() writes
// a member, element() an array element, end() closes the innermost container. Strings are escaped as
// nlohmann escapes them (invalid UTF-8 becomes U+FFFD); doubles are written as nlohmann writes them.
// Misuse (a field outside an object, end() with nothing open) is a programming error: asserted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubudget::cli {

class JsonOut {
 public:
  explicit JsonOut(std::string& out) : out_(out) {}

  JsonOut& begin_object();
  JsonOut& begin_object(std::string_view key);
  JsonOut& begin_array();
  JsonOut& begin_array(std::string_view key);
  JsonOut& end();

  JsonOut& field(std::string_view key, std::string_view value);
  JsonOut& field(std::string_view key, const char* value) { return field(key, std::string_view(value)); }
  JsonOut& field(std::string_view key, std::int64_t value);
  JsonOut& field(std::string_view key, std::uint64_t value);
  JsonOut& field(std::string_view key, int value) { return field(key, static_cast<std::int64_t>(value)); }
  JsonOut& field(std::string_view key, double value);
  JsonOut& field(std::string_view key, bool value);
  JsonOut& field(std::string_view key, std::nullptr_t);
  // `value`, or null when it is empty.
  JsonOut& field_or_null(std::string_view key, std::string_view value);

  JsonOut& element(std::string_view value);
  JsonOut& element(std::int64_t value);
  JsonOut& element(double value);
  JsonOut& element(bool value);
  JsonOut& element(std::nullptr_t);

  // True once the outermost container is closed.
  [[nodiscard]] bool complete() const { return started_ && open_.empty(); }

 private:
  // Starts a value at the current position: the separator and indentation inside a container.
  void next_element();
  void key(std::string_view key);
  void open(char bracket);
  // Opens a container as an array element (or the document), or as an object member named `key`.
  void open_element(char bracket);
  void open_member(std::string_view key, char bracket);
  void string(std::string_view value);
  void number(double value);
  void integer(std::int64_t value);

  struct Open {
    char close;
    bool empty;
  };
  std::string& out_;
  std::vector<Open> open_;
  bool started_ = false;
};

}  // namespace gpubudget::cli
