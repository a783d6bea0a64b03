// Safetensors header reader (format: huggingface/safetensors, "Format" section; the validation mirrors
// the reference implementation's `Metadata::validate`).
#include "gpubudget/safetensors.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <set>
#include <thread>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "json_scan.h"

namespace gpubudget {

std::optional<std::int64_t> safetensors_dtype_bytes(std::string_view dtype) {
  struct Known {
    std::string_view name;
    std::int64_t bytes;
  };
  // Most common first: a large checkpoint asks once per tensor.
  static constexpr Known kKnown[] = {
      {"BF16", 2}, {"F8_E4M3", 1}, {"U8", 1},   {"F32", 4}, {"F16", 2},     {"I32", 4},
      {"I8", 1},   {"F8_E5M2", 1}, {"F8_E8M0", 1}, {"BOOL", 1}, {"I16", 2}, {"U16", 2},
      {"U32", 4},  {"I64", 8},     {"U64", 8},  {"F64", 8}, {"C64", 8}};
  for (const Known& k : kKnown) {
    if (k.name == dtype) return k.bytes;
  }
  return std::nullopt;
}

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw InputError(fmt::format("{}: invalid safetensors file: {}", path, reason));
}

// A non-negative integer element of a shape or data_offsets array; `what` names it for the message.
template <class What>
std::int64_t non_negative(detail::JsonScanner& scan, const std::string& path, const What& what) {
  const char c = scan.peek();
  if (c != '-' && (c < '0' || c > '9')) fail(path, fmt::format("{} is not an integer", what()));
  const detail::JsonInteger v = scan.integer();
  switch (v.kind) {
    case detail::JsonInteger::Kind::kInteger: return v.value;
    case detail::JsonInteger::Kind::kNegative: fail(path, fmt::format("{} is negative ({})", what(), v.value));
    case detail::JsonInteger::Kind::kTooLarge: fail(path, fmt::format("{} is too large", what()));
    case detail::JsonInteger::Kind::kNotInteger: break;
  }
  fail(path, fmt::format("{} is not an integer", what()));
}

// One tensor entry {"dtype", "shape", "data_offsets"}; other members are skipped, as the reference
// implementation's deserializer does.
SafetensorsTensor parse_entry(detail::JsonScanner& scan, std::string_view name, std::int64_t data_bytes,
                              const std::string& path, std::string& scratch) {
  const auto where = [name] { return fmt::format("tensor \"{}\"", name); };
  if (scan.peek() != '{') fail(path, where() + " is not an object");
  SafetensorsTensor t;
  t.name = std::string(name);
  bool has_dtype = false, has_shape = false;
  int offsets = -1;
  scan.object([&](std::string_view key) {
    if (key == "dtype") {
      if (scan.peek() != '"') fail(path, where() + " has no dtype string");
      t.dtype = std::string(scan.string(scratch));
      has_dtype = true;
    } else if (key == "shape") {
      if (scan.peek() != '[') fail(path, where() + " has no shape array");
      t.shape.clear();
      scan.array([&] { t.shape.push_back(non_negative(scan, path, [&] { return where() + " shape dimension"; })); });
      has_shape = true;
    } else if (key == "data_offsets") {
      if (scan.peek() != '[') fail(path, where() + " has no [begin, end] data_offsets");
      offsets = 0;
      scan.array([&] {
        const std::int64_t v = non_negative(
            scan, path, [&] { return where() + (offsets == 0 ? " data_offsets begin" : " data_offsets end"); });
        if (offsets == 0) t.begin = v;
        if (offsets == 1) t.end = v;
        ++offsets;
      });
    } else {
      scan.skip_value();
    }
  });
  if (!has_dtype) fail(path, where() + " has no dtype string");
  const auto element = safetensors_dtype_bytes(t.dtype);
  if (!element) fail(path, fmt::format("{} has unknown dtype \"{}\"", where(), t.dtype));
  if (!has_shape) fail(path, where() + " has no shape array");
  if (offsets != 2) fail(path, where() + " has no [begin, end] data_offsets");
  if (t.end < t.begin) fail(path, fmt::format("{} data_offsets [{}, {}] end before begin", where(), t.begin, t.end));
  if (t.end > data_bytes) {
    fail(path, fmt::format("{} data_offsets end {} is past the {} data bytes (truncated file?)", where(), t.end,
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
  if (too_large) fail(path, fmt::format("{} shape overflows 64-bit byte counts", where()));
  if (t.end - t.begin != bytes) {
    fail(path, fmt::format("{} holds {} bytes but dtype {} and shape need {}", where(), t.end - t.begin, t.dtype, bytes));
  }
  return t;
}

// A tensor named twice in one header (JSON allows it; the reference implementation's map would keep one).
void refuse_duplicate_names(const SafetensorsFile& file) {
  std::vector<std::pair<std::uint64_t, std::size_t>> hashes;
  hashes.reserve(file.tensors.size());
  for (std::size_t i = 0; i < file.tensors.size(); ++i) hashes.emplace_back(detail::hash_bytes(file.tensors[i].name), i);
  std::sort(hashes.begin(), hashes.end());
  for (std::size_t i = 1; i < hashes.size(); ++i) {
    if (hashes[i].first != hashes[i - 1].first) continue;
    const std::string& name = file.tensors[hashes[i].second].name;
    if (name == file.tensors[hashes[i - 1].second].name) fail(file.path, fmt::format("tensor \"{}\" appears twice", name));
  }
}

}  // namespace

namespace {

SafetensorsFile parse_header(std::string_view header_json, std::int64_t data_bytes, const std::string& path,
                             bool check_duplicate_names) {
  SafetensorsFile file;
  file.path = path;
  file.header_bytes = static_cast<std::int64_t>(header_json.size());
  detail::JsonScanner scan(header_json);
  try {
    if (scan.peek() != '{') {
      scan.skip_value();
      if (scan.at_end()) fail(path, "the header is not a JSON object");
      scan.fail("text after the value");
    }
    std::string scratch;
    // About one tensor per 100 header bytes in real checkpoints; reserving avoids moving them all as
    // the vector grows.
    file.tensors.reserve(std::min<std::size_t>(header_json.size() / 100, 1u << 20));
    scan.object([&](std::string_view name) {
      if (name == "__metadata__") {
        if (scan.peek() != '{') fail(path, "__metadata__ is not an object");
        scan.skip_value();
        return;
      }
      file.tensors.push_back(parse_entry(scan, name, data_bytes, path, scratch));
    });
    if (!scan.at_end()) scan.fail("text after the header object");
  } catch (const detail::JsonScanError& e) {
    fail(path, fmt::format("the header is not JSON (at byte {}: {})", e.offset(), e.what()));
  }
  if (check_duplicate_names) refuse_duplicate_names(file);
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

}  // namespace

SafetensorsFile parse_safetensors_header(std::string_view header_json, std::int64_t data_bytes,
                                         const std::string& path) {
  return parse_header(header_json, data_bytes, path, true);
}

namespace {

// A file opened for reading with POSIX calls: headers are read once, whole, at known offsets, so
// stream buffering would only copy them twice.
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
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
  // Reads up to `capacity` bytes at `offset`; 0 at the end of the file.
  std::size_t read_some(std::int64_t offset, char* out, std::size_t capacity) const {
    for (;;) {
      const ssize_t got = ::pread(fd_, out, capacity, static_cast<off_t>(offset));
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) {
        throw InputError(fmt::format("{}: cannot read at byte {} ({})", path_, offset, std::strerror(errno)));
      }
    }
  }
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

// A buffer kept by each thread for the headers it reads, so that the hundred-odd headers of a large
// checkpoint reuse memory the thread already touched (fresh pages are the slow part of reading them).
// Buffers above kKeptBufferBytes are not kept.
class HeaderBuffer {
 public:
  static constexpr std::size_t kKeptBufferBytes = 4u << 20;  // real shards: 0.3-2 MB of header
  char* get(std::size_t bytes) {
    if (bytes > kKeptBufferBytes) {
      large_.reset(new char[bytes]);
      return large_.get();
    }
    large_.reset();
    if (bytes > capacity_) {
      kept_.reset(new char[bytes]);
      capacity_ = bytes;
    }
    return kept_.get();
  }

 private:
  std::unique_ptr<char[]> kept_;
  std::size_t capacity_ = 0;
  std::unique_ptr<char[]> large_;
};

SafetensorsFile read_header(const std::string& path, bool check_duplicate_names) {
  const ReadOnlyFile in(path);
  const std::int64_t file_bytes = in.size();
  if (file_bytes < 8) fail(path, fmt::format("{} bytes, shorter than the 8-byte header length", file_bytes));
  unsigned char length_bytes[8];
  in.read_at(0, reinterpret_cast<char*>(length_bytes), 8, "the 8-byte header length");
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | length_bytes[i];
  if (length > static_cast<std::uint64_t>(kMaxSafetensorsHeaderBytes)) {
    fail(path, fmt::format("header length {} exceeds the {}-byte limit", length, kMaxSafetensorsHeaderBytes));
  }
  if (static_cast<std::int64_t>(length) > file_bytes - 8) {
    fail(path, fmt::format("header length {} is past the end of the {}-byte file", length, file_bytes));
  }
  thread_local HeaderBuffer buffer;
  char* const header = buffer.get(static_cast<std::size_t>(length));
  in.read_at(8, header, static_cast<std::size_t>(length), "the header");
  SafetensorsFile file = parse_header(std::string_view(header, static_cast<std::size_t>(length)),
                                      file_bytes - 8 - static_cast<std::int64_t>(length), path, check_duplicate_names);
  file.file_bytes = file_bytes;
  return file;
}

}  // namespace

SafetensorsFile read_safetensors_header(const std::string& path) { return read_header(path, true); }

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

namespace {

// What model.safetensors.index.json says one file holds: how many tensors, and an order-independent
// digest of their names (a sum and an xor of 64-bit name hashes) to compare with the file's header.
struct IndexedFile {
  std::string name;
  std::int64_t count = 0;
  std::uint64_t hash_sum = 0;
  std::uint64_t hash_xor = 0;

  void add(std::string_view tensor) {
    const std::uint64_t h = detail::hash_bytes(tensor);
    ++count;
    hash_sum += h;
    hash_xor ^= (h << 17) | (h >> 47);
  }
};

// Reads the index: calls on_entry(tensor, file) for each weight_map entry, after checking that the
// file name stays inside the model folder.
template <class OnEntry>
void scan_index(const std::string& index_path, OnEntry&& on_entry) {
  // Streamed in 1 MiB chunks: the index of a large checkpoint is tens of megabytes.
  const ReadOnlyFile index_file(index_path);
  std::int64_t offset = 0;
  detail::JsonScanner scan(
      [&](char* out, std::size_t capacity) {
        const std::size_t got = index_file.read_some(offset, out, capacity);
        offset += static_cast<std::int64_t>(got);
        return got;
      },
      std::size_t{1} << 20);
  bool has_weight_map = false;
  const std::string weight_map_error =
      fmt::format("{}:/weight_map: expected an object of tensor name -> file", index_path);
  try {
    if (scan.peek() != '{') {
      scan.skip_value();
      if (!scan.at_end()) scan.fail("text after the value");
      throw InputError(weight_map_error);
    }
    std::string file_scratch;
    scan.object([&](std::string_view key) {
      if (key != "weight_map") {
        scan.skip_value();
        return;
      }
      if (scan.peek() != '{') throw InputError(weight_map_error);
      has_weight_map = true;
      scan.object([&](std::string_view tensor) {
        if (scan.peek() != '"') {
          throw InputError(fmt::format("{}:/weight_map/{}: expected a file name", index_path, tensor));
        }
        const std::string_view file = scan.string(file_scratch);
        if (file.find('/') != std::string_view::npos || file.find("..") != std::string_view::npos) {
          throw InputError(fmt::format("{}:/weight_map/{}: file \"{}\" is outside the model folder", index_path,
                                       tensor, file));
        }
        on_entry(tensor, file);
      });
    });
    if (!scan.at_end()) scan.fail("text after the index object");
  } catch (const detail::JsonScanError& e) {
    throw InputError(fmt::format("{}: malformed JSON at byte {}: {}", index_path, e.offset(), e.what()));
  }
  if (!has_weight_map) throw InputError(weight_map_error);
}

// The exact difference between what the index maps to `file` and what its header holds, as an
// InputError; called only when the digests disagree.
[[noreturn]] void report_index_mismatch(const std::string& index_path,
                                        const SafetensorsFile& header, const std::string& file) {
  std::vector<std::string> listed;
  scan_index(index_path, [&](std::string_view tensor, std::string_view in_file) {
    if (in_file == file) listed.emplace_back(tensor);
  });
  std::sort(listed.begin(), listed.end());
  for (std::size_t i = 1; i < listed.size(); ++i) {
    if (listed[i] == listed[i - 1]) {
      throw InputError(fmt::format("{}: the index lists tensor \"{}\" more than once", index_path, listed[i]));
    }
  }
  std::set<std::string> present;
  for (const auto& t : header.tensors) present.insert(t.name);
  for (const auto& t : listed) {
    if (present.count(t) == 0) {
      throw InputError(
          fmt::format("{}: the index maps tensor \"{}\" to {}, which does not hold it", index_path, t, file));
    }
  }
  const std::set<std::string> listed_set(listed.begin(), listed.end());
  for (const auto& t : present) {
    if (listed_set.count(t) == 0) {
      throw InputError(
          fmt::format("{}: {} holds tensor \"{}\", which the index does not list", index_path, file, t));
    }
  }
  throw InputError(fmt::format("{}: the index and {} disagree on its tensors", index_path, file));
}

// One shard's header as read by a worker, with the digest of its tensor names.
struct ParsedShard {
  SafetensorsFile file;
  IndexedFile names;
  std::exception_ptr error;
};

// Reads the headers of `paths` on worker threads (up to one per core; a large checkpoint has over a
// hundred shards) while the calling thread does `meanwhile` (reading the index), then helps. With an
// index, a tensor named twice in a header already fails the index comparison, so
// `check_duplicate_names` is false there.
template <class Meanwhile>
std::vector<ParsedShard> read_shards(const std::vector<std::string>& paths, bool check_duplicate_names,
                                     Meanwhile&& meanwhile) {
  std::vector<ParsedShard> shards(paths.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      try {
        shards[i].file = read_header(paths[i], check_duplicate_names);
        for (const auto& t : shards[i].file.tensors) shards[i].names.add(t.name);
      } catch (...) {
        shards[i].error = std::current_exception();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), paths.size(), 16});
  {
    std::vector<std::jthread> pool;  // joined on leaving the block, also when `meanwhile` throws
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    try {
      meanwhile();
    } catch (...) {
      next = paths.size();  // the workers stop after their current shard
      throw;
    }
    work();
  }
  return shards;
}

std::vector<std::string> safetensors_files_in(const std::filesystem::path& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".safetensors") paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

std::optional<CheckpointHeaders> read_checkpoint_headers(const std::string& model_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return std::nullopt;
  CheckpointHeaders headers;
  const fs::path index = fs::path(model_dir) / "model.safetensors.index.json";
  const std::vector<std::string> paths = safetensors_files_in(model_dir);
  if (!fs::exists(index, ec)) {
    if (paths.empty()) return std::nullopt;
    for (auto& shard : read_shards(paths, true, [] {})) {
      if (shard.error) std::rethrow_exception(shard.error);
      headers.files.push_back(std::move(shard.file));
    }
    return headers;
  }
  // The folder's shards are read while the index is: the index then picks the ones it lists (files
  // it does not list are no part of the checkpoint, and their errors are ignored).
  headers.index_path = index.string();
  std::vector<IndexedFile> indexed;
  std::vector<ParsedShard> shards = read_shards(paths, false, [&] {
    std::unordered_map<std::string, std::size_t> file_ids;
    std::size_t last = 0;
    scan_index(headers.index_path, [&](std::string_view tensor, std::string_view file) {
      // Shards list their tensors together: the previous entry's file is the usual answer.
      if (indexed.empty() || indexed[last].name != file) {
        const auto [it, added] = file_ids.try_emplace(std::string(file), indexed.size());
        if (added) indexed.push_back({std::string(file)});
        last = it->second;
      }
      indexed[last].add(tensor);
    });
  });
  std::sort(indexed.begin(), indexed.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const IndexedFile& listed : indexed) {
    const std::string path = (fs::path(model_dir) / listed.name).string();
    const auto at = std::lower_bound(paths.begin(), paths.end(), path);
    if (at == paths.end() || *at != path) (void)read_header(path, false);  // throws: missing or unreadable
    ParsedShard& shard = shards[static_cast<std::size_t>(at - paths.begin())];
    if (shard.error) std::rethrow_exception(shard.error);
    if (shard.names.count != listed.count || shard.names.hash_sum != listed.hash_sum ||
        shard.names.hash_xor != listed.hash_xor) {
      report_index_mismatch(headers.index_path, shard.file, listed.name);
    }
    headers.files.push_back(std::move(shard.file));
  }
  return headers;
}

}  // namespace gpubudget
