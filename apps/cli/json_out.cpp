#include "json_out.h"

#include <cassert>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpubudget::cli {

void JsonOut::next_element() {
  if (open_.empty()) {
    assert(!started_ && "one document per JsonOut");
    started_ = true;
    return;
  }
  out_ += open_.back().empty ? "\n" : ",\n";
  open_.back().empty = false;
  out_.append(2 * open_.size(), ' ');
}

void JsonOut::key(std::string_view key) {
  assert(!open_.empty() && open_.back().close == '}' && "a field belongs in an object");
  next_element();
  string(key);
  out_ += ": ";
}

void JsonOut::open(char bracket) {
  out_ += bracket;
  open_.push_back({bracket == '{' ? '}' : ']', true});
}

void JsonOut::open_element(char bracket) {
  assert((open_.empty() || open_.back().close == ']') && "a member of an object needs a key");
  next_element();
  open(bracket);
}

void JsonOut::open_member(std::string_view k, char bracket) {
  key(k);
  open(bracket);
}

JsonOut& JsonOut::begin_object() {
  open_element('{');
  return *this;
}

JsonOut& JsonOut::begin_object(std::string_view k) {
  open_member(k, '{');
  return *this;
}

JsonOut& JsonOut::begin_array() {
  open_element('[');
  return *this;
}

JsonOut& JsonOut::begin_array(std::string_view k) {
  open_member(k, '[');
  return *this;
}

JsonOut& JsonOut::end() {
  assert(!open_.empty() && "end() with nothing open");
  const Open closing = open_.back();
  open_.pop_back();
  if (!closing.empty) {
    out_ += '\n';
    out_.append(2 * open_.size(), ' ');
  }
  out_ += closing.close;
  return *this;
}

void JsonOut::string(std::string_view value) {
  bool plain = true;  // printable ASCII without quote or backslash: written as is
  for (const char c : value) plain = plain && c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  if (plain) {
    out_ += '"';
    out_ += value;
    out_ += '"';
    return;
  }
  // nlohmann's own escaping (control characters, quote, backslash; UTF-8 kept), with invalid UTF-8
  // replaced rather than thrown.
  out_ += nlohmann::json(std::string(value)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonOut::number(double value) { out_ += nlohmann::json(value).dump(); }

void JsonOut::integer(std::int64_t value) { out_ += fmt::format_int(value).str(); }

JsonOut& JsonOut::field(std::string_view k, std::string_view value) {
  key(k);
  string(value);
  return *this;
}

JsonOut& JsonOut::field(std::string_view k, std::int64_t value) {
  key(k);
  integer(value);
  return *this;
}

JsonOut& JsonOut::field(std::string_view k, std::uint64_t value) {
  key(k);
  out_ += fmt::format_int(value).str();
  return *this;
}

JsonOut& JsonOut::field(std::string_view k, double value) {
  key(k);
  number(value);
  return *this;
}

JsonOut& JsonOut::field(std::string_view k, bool value) {
  key(k);
  out_ += value ? "true" : "false";
  return *this;
}

JsonOut& JsonOut::field(std::string_view k, std::nullptr_t) {
  key(k);
  out_ += "null";
  return *this;
}

JsonOut& JsonOut::field_or_null(std::string_view k, std::string_view value) {
  return value.empty() ? field(k, nullptr) : field(k, value);
}

JsonOut& JsonOut::element(std::string_view value) {
  next_element();
  string(value);
  return *this;
}

JsonOut& JsonOut::element(std::int64_t value) {
  next_element();
  integer(value);
  return *this;
}

JsonOut& JsonOut::element(double value) {
  next_element();
  number(value);
  return *this;
}

JsonOut& JsonOut::element(bool value) {
  next_element();
  out_ += value ? "true" : "false";
  return *this;
}

JsonOut& JsonOut::element(std::nullptr_t) {
  next_element();
  out_ += "null";
  return *this;
}

}  // namespace gpubudget::cli
