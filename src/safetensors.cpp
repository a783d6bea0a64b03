// Safetensors header reader (format: huggingface/safetensors, "Format" section; the validation mirrors
// the reference implementation's `Metadata::validate`).
#include "gpubudget/safetensors.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"

namespace gpubudget {

std::optional<std::int64_t> safetensors_dtype_bytes(std::string_view dtype) {
  static const std::map<std::string_view, std::int64_t> kBytes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},     {"U32", 4},
      {"F32", 4},  {"I64", 8}, {"U64", 8}, {"F64", 8},     {"C64", 8}};
  const auto it = kBytes.find(dtype);
  if (it == kBytes.end()) return std::nullopt;
  return it->second;
}

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw InputError(fmt::format("{}: invalid safetensors file: {}", path, reason));
}

std::int64_t non_negative(const nlohmann::json& v, const std::string& path, const std::string& what) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) fail(path, fmt::format("{} is not an integer", what));
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) fail(path, fmt::format("{} {} is too large", what, u));
    return static_cast<std::int64_t>(u);
  }
  const auto i = v.get<std::int64_t>();
  if (i < 0) fail(path, fmt::format("{} is negative ({})", what, i));
  return i;
}

SafetensorsTensor parse_entry(const std::string& name, const nlohmann::json& entry, std::int64_t data_bytes,
                              const std::string& path) {
  const std::string where = fmt::format("tensor \"{}\"", name);
  if (!entry.is_object()) fail(path, where + " is not an object");
  SafetensorsTensor t;
  t.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) fail(path, where + " has no dtype string");
  t.dtype = dtype->get<std::string>();
  const auto element = safetensors_dtype_bytes(t.dtype);
  if (!element) fail(path, fmt::format("{} has unknown dtype \"{}\"", where, t.dtype));
  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) fail(path, where + " has no shape array");
  for (const auto& dim : *shape) t.shape.push_back(non_negative(dim, path, where + " shape dimension"));
  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2) {
    fail(path, where + " has no [begin, end] data_offsets");
  }
  t.begin = non_negative((*offsets)[0], path, where + " data_offsets begin");
  t.end = non_negative((*offsets)[1], path, where + " data_offsets end");
  if (t.end < t.begin) fail(path, fmt::format("{} data_offsets [{}, {}] end before begin", where, t.begin, t.end));
  if (t.end > data_bytes) {
    fail(path, fmt::format("{} data_offsets end {} is past the {} data bytes (truncated file?)", where, t.end,
                           data_bytes));
  }
  // dtype x shape must be exactly the byte range.
  std::int64_t bytes = *element;
  bool too_large = false;
  for (const auto d : t.shape) {
    if (d == 0) {
      bytes = 0;
      too_large = false;
      break;
    }
    too_large = too_large || __builtin_mul_overflow(bytes, d, &bytes);
  }
  if (too_large) fail(path, fmt::format("{} shape overflows 64-bit byte counts", where));
  if (t.end - t.begin != bytes) {
    fail(path, fmt::format("{} holds {} bytes but dtype {} and shape need {}", where, t.end - t.begin, t.dtype, bytes));
  }
  return t;
}

}  // namespace

SafetensorsFile parse_safetensors_header(std::string_view header_json, std::int64_t data_bytes,
                                         const std::string& path) {
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_json);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, fmt::format("the header is not JSON (at byte {})", e.byte));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    fail(path, fmt::format("the header is not valid JSON ({})", e.what()));
  }
  if (!header.is_object()) fail(path, "the header is not a JSON object");
  SafetensorsFile file;
  file.path = path;
  file.header_bytes = static_cast<std::int64_t>(header_json.size());
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(path, "__metadata__ is not an object");
      continue;
    }
    file.tensors.push_back(parse_entry(name, entry, data_bytes, path));
  }
  // The data section is the tensors back to back: no overlap and no gap.
  std::sort(file.tensors.begin(), file.tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::int64_t expected = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const auto& t : file.tensors) {
    if (t.begin < expected) {
      fail(path, fmt::format("tensors \"{}\" and \"{}\" overlap (bytes {} to {})", previous->name, t.name, t.begin,
                             expected));
    }
    if (t.begin > expected) {
      fail(path, fmt::format("{} bytes before tensor \"{}\" belong to no tensor", t.begin - expected, t.name));
    }
    expected = t.end;
    previous = &t;
  }
  return file;
}

SafetensorsFile read_safetensors_header(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read the file ({})", path, ec.message()));
  const auto file_bytes = static_cast<std::int64_t>(size);
  if (file_bytes < 8) fail(path, fmt::format("{} bytes, shorter than the 8-byte header length", file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the file", path));
  unsigned char length_bytes[8];
  in.read(reinterpret_cast<char*>(length_bytes), 8);
  if (!in) fail(path, "cannot read the 8-byte header length");
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | length_bytes[i];
  if (length > static_cast<std::uint64_t>(kMaxSafetensorsHeaderBytes)) {
    fail(path, fmt::format("header length {} exceeds the {}-byte limit", length, kMaxSafetensorsHeaderBytes));
  }
  if (static_cast<std::int64_t>(length) > file_bytes - 8) {
    fail(path, fmt::format("header length {} is past the end of the {}-byte file", length, file_bytes));
  }
  std::string header(static_cast<std::size_t>(length), '\0');
  in.read(header.data(), static_cast<std::streamsize>(length));
  if (!in) fail(path, "cannot read the header");
  SafetensorsFile file = parse_safetensors_header(header, file_bytes - 8 - static_cast<std::int64_t>(length), path);
  file.file_bytes = file_bytes;
  return file;
}

std::int64_t CheckpointHeaders::tensor_bytes() const {
  std::int64_t total = 0;
  for (const auto& f : files) {
    for (const auto& t : f.tensors) total += t.bytes();
  }
  return total;
}

std::int64_t CheckpointHeaders::tensor_count() const {
  std::int64_t total = 0;
  for (const auto& f : files) total += static_cast<std::int64_t>(f.tensors.size());
  return total;
}

std::optional<CheckpointHeaders> read_checkpoint_headers(const std::string& model_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return std::nullopt;
  CheckpointHeaders headers;
  const fs::path index = fs::path(model_dir) / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    headers.index_path = index.string();
    nlohmann::json json;
    try {
      std::ifstream in(index);
      json = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(fmt::format("{}: malformed JSON at byte {}", index.string(), e.byte));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: malformed JSON: {}", index.string(), e.what()));
    }
    if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object()) {
      throw InputError(fmt::format("{}:/weight_map: expected an object of tensor name -> file", index.string()));
    }
    std::map<std::string, std::set<std::string>> by_file;
    for (const auto& [tensor, file] : json["weight_map"].items()) {
      if (!file.is_string()) {
        throw InputError(fmt::format("{}:/weight_map/{}: expected a file name", index.string(), tensor));
      }
      const auto name = file.get<std::string>();
      if (name.find('/') != std::string::npos || name.find("..") != std::string::npos) {
        throw InputError(fmt::format("{}:/weight_map/{}: file \"{}\" is outside the model folder", index.string(),
                                     tensor, name));
      }
      by_file[name].insert(tensor);
    }
    for (const auto& [name, tensors] : by_file) {
      SafetensorsFile f = read_safetensors_header((fs::path(model_dir) / name).string());
      std::set<std::string> present;
      for (const auto& t : f.tensors) present.insert(t.name);
      if (present != tensors) {
        for (const auto& t : tensors) {
          if (present.count(t) == 0) {
            throw InputError(fmt::format("{}: the index maps tensor \"{}\" to {}, which does not hold it",
                                         index.string(), t, name));
          }
        }
        for (const auto& t : present) {
          if (tensors.count(t) == 0) {
            throw InputError(fmt::format("{}: {} holds tensor \"{}\", which the index does not list", index.string(),
                                         name, t));
          }
        }
      }
      headers.files.push_back(std::move(f));
    }
    return headers;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(model_dir, ec)) {
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  }
  if (files.empty()) return std::nullopt;
  std::sort(files.begin(), files.end());
  for (const auto& p : files) headers.files.push_back(read_safetensors_header(p.string()));
  return headers;
}

}  // namespace gpubudget
