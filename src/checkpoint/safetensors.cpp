// Safetensors header reader (format: huggingface/safetensors, "Format" section; the validation mirrors
// the reference implementation's `Metadata::validate`). Headers and model.safetensors.index.json are
// parsed with simdjson On-Demand (bench/README.md: the 119-shard scan).
#include "gpubudget/safetensors.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <simdjson.h>

#include "gpubudget/error.h"

namespace gpubudget {

namespace dom = simdjson::dom;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw InputError(fmt::format("{}: invalid safetensors file: {}", path, reason));
}

// A JSON text in memory with the zeroed padding simdjson reads past its end.
class PaddedText {
 public:
  char* resize(std::size_t bytes) {
    if (bytes + simdjson::SIMDJSON_PADDING > buffer_.size()) buffer_.resize(bytes + simdjson::SIMDJSON_PADDING);
    size_ = bytes;
    std::memset(buffer_.data() + bytes, 0, simdjson::SIMDJSON_PADDING);
    return buffer_.data();
  }
  [[nodiscard]] const char* data() const { return buffer_.data(); }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  std::vector<char> buffer_;
  std::size_t size_ = 0;
};

// Parses `text` into `parser`'s document: the whole text is validated as JSON (strings as UTF-8),
// and string views into the document stay valid as long as the parser is not reused.
simdjson::error_code parse_json(dom::parser& parser, const PaddedText& text, dom::element& root) {
  return parser.parse(text.data(), text.size(), false).get(root);
}

std::string json_error(simdjson::error_code error) { return simdjson::error_message(error); }

// A non-negative integer element of a shape or data_offsets array of tensor `name`.
std::uint64_t non_negative(dom::element value, const std::string& path, std::string_view name, std::string_view what) {
  const auto refuse = [&](std::string_view reason) -> void {
    fail(path, fmt::format("tensor \"{}\" {} {}", name, what, reason));
  };
  switch (value.type()) {
    case dom::element_type::INT64: {
      const std::int64_t v = value.get_int64().value_unsafe();
      if (v < 0) refuse(fmt::format("is negative ({})", v));
      return static_cast<std::uint64_t>(v);
    }
    case dom::element_type::UINT64: return value.get_uint64().value_unsafe();
    default: refuse("is not an integer");
  }
  return 0;
}

// One tensor entry {"dtype", "shape", "data_offsets"}; other members are ignored, as the reference
// implementation's deserializer ignores them. Messages are built only on failure.
SafetensorsTensor parse_entry(dom::element value, std::string_view name, std::int64_t data_bytes,
                              const std::string& path) {
  const auto refuse = [&](std::string_view reason) -> void { fail(path, fmt::format("tensor \"{}\" {}", name, reason)); };
  dom::object entry;
  if (value.get_object().get(entry) != simdjson::SUCCESS) refuse("is not an object");
  SafetensorsTensor t;
  t.name = std::string(name);
  bool has_dtype = false, has_shape = false;
  std::array<std::uint64_t, 2> offsets{};
  std::size_t offset_count = 0;
  constexpr auto kMax = static_cast<std::uint64_t>(INT64_MAX);
  std::uint64_t elements = 1;
  bool elements_overflow = false;
  for (const dom::key_value_pair field : entry) {
    if (field.key == "dtype") {
      std::string_view dtype;
      if (field.value.get_string().get(dtype) != simdjson::SUCCESS) refuse("has no dtype string");
      t.dtype = std::string(dtype);
      has_dtype = true;
    } else if (field.key == "shape") {
      dom::array array;
      if (field.value.get_array().get(array) != simdjson::SUCCESS) refuse("has no shape array");
      t.shape.clear();
      t.shape.reserve(array.size());
      elements = 1;
      elements_overflow = false;
      for (const dom::element item : array) {
        // The reference implementation multiplies every dimension in turn: a zero later does not
        // excuse an overflow earlier.
        const std::uint64_t d = non_negative(item, path, name, "shape dimension");
        elements_overflow = elements_overflow || __builtin_mul_overflow(elements, d, &elements);
        if (d > kMax) refuse("shape dimension is too large");
        t.shape.push_back(static_cast<std::int64_t>(d));
      }
      has_shape = true;
    } else if (field.key == "data_offsets") {
      dom::array array;
      if (field.value.get_array().get(array) != simdjson::SUCCESS) refuse("has no [begin, end] data_offsets");
      offset_count = 0;
      for (const dom::element item : array) {
        const std::uint64_t offset =
            non_negative(item, path, name, offset_count == 0 ? "data_offsets begin" : "data_offsets end");
        if (offset_count < 2) offsets[offset_count] = offset;
        ++offset_count;
      }
    }
  }
  if (!has_dtype) refuse("has no dtype string");
  const auto element = safetensors_dtype_bytes(t.dtype);
  if (!element) refuse(fmt::format("has unknown dtype \"{}\"", t.dtype));
  if (!has_shape) refuse("has no shape array");
  if (offset_count != 2) refuse("has no [begin, end] data_offsets");
  if (offsets[0] > kMax || offsets[1] > kMax) refuse("has data_offsets beyond 64-bit byte counts");
  t.begin = static_cast<std::int64_t>(offsets[0]);
  t.end = static_cast<std::int64_t>(offsets[1]);
  if (t.end < t.begin) refuse(fmt::format("data_offsets [{}, {}] end before begin", t.begin, t.end));
  if (t.end > data_bytes) {
    refuse(fmt::format("data_offsets end {} is past the {} data bytes (truncated file?)", t.end, data_bytes));
  }
  // dtype x shape must be exactly the byte range.
  if (elements_overflow) refuse("shape overflows 64-bit element counts");
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(*element), &bytes) || bytes > kMax) {
    refuse("shape overflows 64-bit byte counts");
  }
  if (static_cast<std::uint64_t>(t.end - t.begin) != bytes) {
    refuse(fmt::format("holds {} bytes but dtype {} and shape need {}", t.end - t.begin, t.dtype, bytes));
  }
  return t;
}

// Sorts `names`, cheaply when they come in a few sorted runs (real checkpoints: transformers writes
// the index's keys sorted, safetensors a header's tensors sorted by name within each dtype); returns
// the first name that appears twice, if any.
std::optional<std::string_view> sort_and_find_twice(std::vector<std::string_view>& names) {
  std::vector<std::size_t> run_starts = {0};
  for (std::size_t i = 1; i < names.size() && run_starts.size() <= 16; ++i) {
    if (names[i] < names[i - 1]) run_starts.push_back(i);
  }
  if (run_starts.size() > 16) {
    std::sort(names.begin(), names.end());
  } else {
    for (std::size_t r = 1; r < run_starts.size(); ++r) {
      const auto end = r + 1 < run_starts.size() ? names.begin() + static_cast<std::ptrdiff_t>(run_starts[r + 1]) : names.end();
      std::inplace_merge(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(run_starts[r]), end);
    }
  }
  const auto twice = std::adjacent_find(names.begin(), names.end());
  if (twice == names.end()) return std::nullopt;
  return *twice;
}

// The header's tensor names, sorted (views into `file`, valid while its tensors are not moved).
// A name that appears twice is refused: JSON allows it, the reference implementation's map would keep one.
std::vector<std::string_view> sorted_names(const SafetensorsFile& file) {
  std::vector<std::string_view> names;
  names.reserve(file.tensors.size());
  for (const auto& t : file.tensors) names.emplace_back(t.name);
  if (const auto twice = sort_and_find_twice(names)) fail(file.path, fmt::format("tensor \"{}\" appears twice", *twice));
  return names;
}

SafetensorsFile parse_header(dom::parser& parser, const PaddedText& text, std::int64_t data_bytes,
                             const std::string& path) {
  SafetensorsFile file;
  file.path = path;
  file.header_bytes = static_cast<std::int64_t>(text.size());
  dom::element root;
  if (auto error = parse_json(parser, text, root)) fail(path, "the header is not JSON (" + json_error(error) + ")");
  dom::object header;
  if (root.get_object().get(header) != simdjson::SUCCESS) fail(path, "the header is not a JSON object");
  for (const dom::key_value_pair field : header) {
    if (field.key == "__metadata__") {
      if (!field.value.is_object()) fail(path, "__metadata__ is not an object");
      continue;
    }
    file.tensors.push_back(parse_entry(field.value, field.key, data_bytes, path));
  }
  // The data section is the tensors back to back: no overlap and no gap.
  const auto by_offset = [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  };
  if (!std::is_sorted(file.tensors.begin(), file.tensors.end(), by_offset)) {
    std::sort(file.tensors.begin(), file.tensors.end(), by_offset);
  }
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

// A regular file opened for reading with POSIX calls (a FIFO or a device is refused before any read).
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {
    if (fd_ < 0) throw InputError(fmt::format("{}: cannot open the file ({})", path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw InputError(fmt::format("{}: not a regular file", path));
    }
    size_ = static_cast<std::int64_t>(st.st_size);
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ~ReadOnlyFile() { ::close(fd_); }

  [[nodiscard]] std::int64_t size() const { return size_; }
  // Reads exactly `bytes` bytes at `offset` into `out`; `what` names them in the error.
  void read_at(std::int64_t offset, char* out, std::size_t bytes, const char* what) const {
    std::size_t done = 0;
    while (done < bytes) {
      const ssize_t got = ::pread(fd_, out + done, bytes - done, static_cast<off_t>(offset) + static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) fail(path_, fmt::format("cannot read {}", what));
      done += static_cast<std::size_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_;
  std::int64_t size_ = 0;
};

// What one thread keeps between the headers it reads: the parser's buffers and the header text.
struct HeaderReader {
  dom::parser parser;
  PaddedText text;
};

// The header of the shard whose first bytes are in the file at `path`: the whole shard, or (with
// `shard_bytes`) a copy of its first 8 + N bytes and the shard's real size. `shown` names the shard
// in messages ("" = `path`).
SafetensorsFile read_header(const std::string& path, std::optional<std::int64_t> shard_bytes = std::nullopt,
                            const std::string& shown = "") {
  const std::string& name = shown.empty() ? path : shown;
  const ReadOnlyFile in(path);
  const std::int64_t file_bytes = shard_bytes.value_or(in.size());
  if (file_bytes < 8 || in.size() < 8) {
    fail(name, fmt::format("{} bytes, shorter than the 8-byte header length", std::min(file_bytes, in.size())));
  }
  unsigned char length_bytes[8];
  in.read_at(0, reinterpret_cast<char*>(length_bytes), 8, "the 8-byte header length");
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | length_bytes[i];
  if (length > static_cast<std::uint64_t>(kMaxSafetensorsHeaderBytes)) {
    fail(name, fmt::format("header length {} exceeds the {}-byte limit", length, kMaxSafetensorsHeaderBytes));
  }
  if (static_cast<std::int64_t>(length) > file_bytes - 8) {
    fail(name, fmt::format("header length {} is past the end of the {}-byte file", length, file_bytes));
  }
  if (static_cast<std::int64_t>(length) > in.size() - 8) {
    fail(name, fmt::format("the header copy {} holds {} bytes, fewer than the {}-byte header", path, in.size(), 8 + length));
  }
  thread_local HeaderReader reader;
  in.read_at(8, reader.text.resize(static_cast<std::size_t>(length)), static_cast<std::size_t>(length), "the header");
  SafetensorsFile file =
      parse_header(reader.parser, reader.text, file_bytes - 8 - static_cast<std::int64_t>(length), name);
  file.file_bytes = file_bytes;
  return file;
}

}  // namespace

SafetensorsFile parse_safetensors_header(std::string_view header_json, std::int64_t data_bytes,
                                         const std::string& path) {
  if (static_cast<std::int64_t>(header_json.size()) > kMaxSafetensorsHeaderBytes) {
    fail(path, fmt::format("header length {} exceeds the {}-byte limit", header_json.size(), kMaxSafetensorsHeaderBytes));
  }
  HeaderReader reader;
  std::memcpy(reader.text.resize(header_json.size()), header_json.data(), header_json.size());
  SafetensorsFile file = parse_header(reader.parser, reader.text, data_bytes, path);
  (void)sorted_names(file);  // refuses a name that appears twice
  return file;
}

SafetensorsFile read_safetensors_header(const std::string& path) {
  SafetensorsFile file = read_header(path);
  (void)sorted_names(file);  // refuses a name that appears twice
  return file;
}

namespace {

// model.safetensors.index.json's weight_map: the tensor names the index puts in each file. Names are
// views into the parser's document, which lives as long as the map.
struct WeightMap {
  dom::parser parser;
  PaddedText text;
  std::vector<std::string> files;                     // distinct file names, in order of appearance
  std::vector<std::vector<std::string_view>> names;            // per file, sorted
};

// The largest index read (real ones: tens of MB for the largest checkpoints; simdjson's document of it
// takes a few times its size).
constexpr std::int64_t kMaxIndexBytes = std::int64_t{256} << 20;

void read_weight_map(const std::string& index_path, WeightMap& map) {
  const ReadOnlyFile in(index_path);
  if (in.size() > kMaxIndexBytes) {
    throw InputError(fmt::format("{}: {} bytes, above the {}-byte limit for an index", index_path, in.size(),
                                 kMaxIndexBytes));
  }
  in.read_at(0, map.text.resize(static_cast<std::size_t>(in.size())), static_cast<std::size_t>(in.size()), "the index");
  const std::string weight_map_error =
      fmt::format("{}:/weight_map: expected an object of tensor name -> file", index_path);
  dom::element root;
  if (auto error = parse_json(map.parser, map.text, root)) {
    throw InputError(fmt::format("{}: malformed JSON: {}", index_path, json_error(error)));
  }
  dom::element weight_map_element;
  dom::object weight_map;
  if (!root.is_object() || root["weight_map"].get(weight_map_element) != simdjson::SUCCESS ||
      weight_map_element.get_object().get(weight_map) != simdjson::SUCCESS) {
    throw InputError(weight_map_error);
  }
  std::unordered_map<std::string_view, std::uint32_t> file_ids;
  for (const dom::key_value_pair entry : weight_map) {
    std::string_view file;
    if (entry.value.get_string().get(file) != simdjson::SUCCESS) {
      throw InputError(fmt::format("{}:/weight_map/{}: expected a file name", index_path, entry.key));
    }
    if (file.empty() || file.find('/') != std::string_view::npos || file == "." || file == "..") {
      throw InputError(fmt::format("{}:/weight_map/{}: file \"{}\" is outside the model folder", index_path,
                                   entry.key, file));
    }
    const auto [at, added] = file_ids.try_emplace(file, static_cast<std::uint32_t>(map.files.size()));
    if (added) {
      map.files.emplace_back(file);
      map.names.emplace_back();
    }
    map.names[at->second].emplace_back(entry.key);
  }
  // Sorted once per file; a name listed twice for one file is refused here, for two files when the
  // second file's header is compared.
  for (auto& names : map.names) {
    if (const auto twice = sort_and_find_twice(names)) {
      throw InputError(fmt::format("{}: the index lists tensor \"{}\" more than once", index_path, *twice));
    }
  }
}

// The header of the file the index calls `files[file]` must hold exactly the tensors the index maps
// to it: the two sorted name lists are compared, and the first difference is the error.
void check_against_index(const std::string& index_path, const WeightMap& map, std::uint32_t file,
                         const std::vector<std::string_view>& header_names) {
  const std::string& name = map.files[file];
  const std::vector<std::string_view>& listed = map.names[file];
  const auto [in_index, in_header] = std::mismatch(listed.begin(), listed.end(), header_names.begin(), header_names.end());
  if (in_index == listed.end() && in_header == header_names.end()) return;
  if (in_header == header_names.end() || (in_index != listed.end() && *in_index < *in_header)) {
    throw InputError(
        fmt::format("{}: the index maps tensor \"{}\" to {}, which does not hold it", index_path, *in_index, name));
  }
  throw InputError(fmt::format("{}: {} holds tensor \"{}\", which the index does not map to it", index_path, name,
                               *in_header));
}

// One shard to read: the file itself, or a header copy (hub_snapshot.h) with the shard's real size.
struct ShardFile {
  std::string path;
  std::optional<std::int64_t> shard_bytes;  // set for a header copy
  std::string shown;                         // the shard's name in messages ("" = path)
};

SafetensorsFile read_shard(const ShardFile& shard) { return read_header(shard.path, shard.shard_bytes, shard.shown); }

// The headers of `shards` in their order, each with its sorted tensor names and the error that stopped
// its read (if any).
struct ShardReads {
  std::vector<SafetensorsFile> files;
  std::vector<std::vector<std::string_view>> names;
  std::vector<std::exception_ptr> errors;
};

// Reads the headers of `shards` on worker threads (up to one per core; a large checkpoint has over a
// hundred shards) while the calling thread does `meanwhile` (reading the index), then helps.
template <class Meanwhile>
ShardReads read_shards(const std::vector<ShardFile>& shards, Meanwhile&& meanwhile) {
  ShardReads reads{std::vector<SafetensorsFile>(shards.size()), std::vector<std::vector<std::string_view>>(shards.size()),
                   std::vector<std::exception_ptr>(shards.size())};
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < shards.size(); i = next++) {
      try {
        reads.files[i] = read_shard(shards[i]);
        reads.names[i] = sorted_names(reads.files[i]);
      } catch (...) {
        reads.errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), shards.size(), 16});
  {
    std::vector<std::jthread> pool;  // joined on leaving the block, also when `meanwhile` throws
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    try {
      meanwhile();
    } catch (...) {
      next = shards.size();  // the workers stop after their current shard
      throw;
    }
    work();
  }
  return reads;
}

// A folder's shards by file name: its *.safetensors files, or the header copies its
// safetensors-headers.json lists (a snapshot fetched from the Hub, hub_snapshot.cpp).
std::map<std::string, ShardFile> folder_shards(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, ShardFile> shards;
  std::error_code ec;
  const fs::path manifest = dir / kHeaderCopiesManifest;
  if (fs::exists(manifest, ec)) {
    const std::string path = manifest.string();
    const ReadOnlyFile in(path);
    if (in.size() > kMaxIndexBytes) fail(path, fmt::format("{} bytes, above the {}-byte limit", in.size(), kMaxIndexBytes));
    PaddedText text;
    in.read_at(0, text.resize(static_cast<std::size_t>(in.size())), static_cast<std::size_t>(in.size()), "the list");
    dom::parser parser;
    dom::element root;
    dom::object list;
    if (parse_json(parser, text, root) != simdjson::SUCCESS || root["shards"].get_object().get(list) != simdjson::SUCCESS) {
      throw InputError(fmt::format("{}: expected {{\"shards\": {{name: {{\"bytes\", \"copy\", \"url\"}}}}}}", path));
    }
    for (const dom::key_value_pair entry : list) {
      std::int64_t bytes = 0;
      std::string_view copy, url;
      if (entry.value["bytes"].get_int64().get(bytes) != simdjson::SUCCESS || bytes < 0 ||
          entry.value["copy"].get_string().get(copy) != simdjson::SUCCESS ||
          entry.value["url"].get_string().get(url) != simdjson::SUCCESS || copy.find('/') != std::string_view::npos ||
          copy.empty() || copy[0] == '.') {
        throw InputError(fmt::format("{}:/shards/{}: expected {{\"bytes\", \"copy\", \"url\"}} with a copy in {}", path,
                                     entry.key, kHeaderCopiesFolder));
      }
      shards.emplace(std::string(entry.key),
                     ShardFile{(dir / kHeaderCopiesFolder / std::string(copy)).string(), bytes, std::string(url)});
    }
    return shards;
  }
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".safetensors") shards.emplace(e.path().filename().string(), ShardFile{e.path().string(), {}, {}});
  }
  return shards;
}

}  // namespace

std::optional<CheckpointHeaders> read_checkpoint_headers(const std::string& model_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return std::nullopt;
  const fs::path dir(model_dir);
  const std::map<std::string, ShardFile> by_name = folder_shards(dir);
  std::vector<ShardFile> shards;
  std::map<std::string, std::size_t> position;  // file name -> position in `shards`
  for (const auto& [name, shard] : by_name) {
    position.emplace(name, shards.size());
    shards.push_back(shard);
  }
  CheckpointHeaders headers;
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::exists(index, ec)) {
    if (shards.empty()) return std::nullopt;
    ShardReads reads = read_shards(shards, [] {});
    for (std::size_t i = 0; i < shards.size(); ++i) {
      if (reads.errors[i]) std::rethrow_exception(reads.errors[i]);
      headers.files.push_back(std::move(reads.files[i]));
    }
    return headers;
  }
  // The folder's shards are read while the index is; the index then picks the files it lists, by
  // name (files it does not list are no part of the checkpoint, and their errors are ignored).
  headers.index_path = index.string();
  WeightMap map;
  ShardReads reads = read_shards(shards, [&] { read_weight_map(headers.index_path, map); });
  std::vector<std::pair<std::string, std::uint32_t>> listed;  // file name, id in the index
  for (std::uint32_t id = 0; id < map.files.size(); ++id) listed.emplace_back(map.files[id], id);
  std::sort(listed.begin(), listed.end());
  for (const auto& [name, id] : listed) {
    const auto at = position.find(name);
    if (at == position.end()) {
      // Listed under another extension: read it (or say why not) by its name.
      SafetensorsFile file = read_header((dir / name).string());
      check_against_index(headers.index_path, map, id, sorted_names(file));
      headers.files.push_back(std::move(file));
      continue;
    }
    if (reads.errors[at->second]) std::rethrow_exception(reads.errors[at->second]);
    check_against_index(headers.index_path, map, id, reads.names[at->second]);
    headers.files.push_back(std::move(reads.files[at->second]));
  }
  return headers;
}

std::vector<std::string> read_index_shard_names(const std::string& index_path) {
  WeightMap map;
  read_weight_map(index_path, map);
  std::vector<std::string> names = map.files;
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gpubudget
