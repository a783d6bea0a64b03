// The Hub's endpoints (docs/guide.md, "Models from the Hub"; as huggingface_hub uses them):
//   {endpoint}/api/models/{org}/{name}/revision/{revision}  -> {"sha": commit, "siblings": [{"rfilename"}]}
//   {endpoint}/{org}/{name}/resolve/{commit}/{file}         -> the file, or a redirect to the file CDN
// A failed answer carries X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo) and
// X-Error-Message; an anonymous request for a missing, private or gated repository gets 401.
#include "hub/hub_fetch.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "gpubudget/error.h"
#include "gpubudget/safetensors.h"
#include "hub/cache_layout.h"
#include "hub/http_client.h"
#include "core/json_reader.h"

namespace gpubudget::detail {

namespace {

namespace fs = std::filesystem;

// The largest model.safetensors.index.json fetched (as read_checkpoint_headers reads).
constexpr std::int64_t kMaxIndexBytes = std::int64_t{256} << 20;

struct FetchContext {
  const std::string& repo;
  const std::string& revision;
  const HubOptions& options;

  [[nodiscard]] std::string model_page() const { return options.endpoint + "/" + repo; }
};

[[noreturn]] void refuse(const FetchContext& c, const std::string& url, const std::string& reason) {
  throw InputError(fmt::format("{}: {} ({})", c.repo, reason, url));
}

// Throws the error a failed response means; returns for a 2xx answer. The error names `named_url`
// (the URL asked for: a file's resolve URL rather than the signed CDN address it redirected to).
void check_response(const FetchContext& c, const HttpResponse& r, const std::string& what,
                    const std::string& named_url = "") {
  const std::string& url = named_url.empty() ? r.url : named_url;
  switch (r.failure) {
    case HttpFailure::kNone: break;
    case HttpFailure::kUnreachable:
      refuse(c, url, fmt::format("cannot reach {} ({}); HF_HUB_OFFLINE=1 uses the cache", c.options.endpoint,
                                 r.failure_text));
    case HttpFailure::kTls:
      refuse(c, url, fmt::format("TLS failure talking to the Hub ({}); HF_HUB_OFFLINE=1 uses the cache", r.failure_text));
    case HttpFailure::kTimeout:
      refuse(c, url, fmt::format("no complete answer for {} within {} s (--hub-timeout)", what,
                                 static_cast<double>(c.options.timeout.count()) / 1000.0));
    case HttpFailure::kTooLarge: refuse(c, url, fmt::format("the answer for {} is larger than gpubudget accepts", what));
    case HttpFailure::kTruncated:
      refuse(c, url, fmt::format("the answer for {} was cut off before its announced length", what));
    case HttpFailure::kTooManyRedirects:
    case HttpFailure::kBadRedirect:
    case HttpFailure::kOther: refuse(c, url, fmt::format("fetching {} failed: {}", what, r.failure_text));
  }
  if (r.status >= 200 && r.status < 300) return;
  const std::string code = r.header("x-error-code");
  const std::string message = r.header("x-error-message");
  const std::string said = message.empty() ? "" : fmt::format(": \"{}\"", message);
  if (code == "RevisionNotFound") {
    refuse(c, url, fmt::format("no revision \"{}\" on the Hub (HTTP {}{})", c.revision, r.status, said));
  }
  if (code == "EntryNotFound") refuse(c, url, fmt::format("the repository has no {} (HTTP {}{})", what, r.status, said));
  if (code == "GatedRepo" || r.status == 401 || r.status == 403) {
    if (message.find("Invalid credentials") != std::string::npos || message.find("invalid credentials") != std::string::npos) {
      refuse(c, url, fmt::format("the Hub refused the token (HTTP {}{}); check HF_TOKEN or the token file", r.status,
                                 said));
    }
    const std::string access = c.options.token.empty()
                                   ? "accept the license on the model page and set HF_TOKEN"
                                   : "accept the license on the model page with the account of HF_TOKEN";
    refuse(c, url, fmt::format("no access (HTTP {}): the repository is gated or private, or does not exist; {} ({})",
                               r.status, access, c.model_page()));
  }
  if (r.status == 404) {
    refuse(c, url, code == "RepoNotFound" || code.empty()
                       ? fmt::format("no such repository on the Hub (HTTP 404{})", said)
                       : fmt::format("not found on the Hub (HTTP 404, {}{})", code, said));
  }
  if (r.status == 429) refuse(c, url, "the Hub is rate-limiting these requests (HTTP 429); try again later");
  refuse(c, url, fmt::format("the Hub answered HTTP {} for {}{}", r.status, what, said));
}

// A repository file name the fetch may write: relative, no "..", no empty or hidden parts.
bool is_safe_repo_path(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string::npos) return false;
  std::size_t begin = 0;
  while (begin <= name.size()) {
    const auto end = std::min(name.find('/', begin), name.size());
    const std::string part = name.substr(begin, end - begin);
    if (part.empty() || part == "." || part == ".." || part.front() == '.') return false;
    begin = end + 1;
  }
  return std::none_of(name.begin(), name.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20; });
}

std::string resolve_url(const FetchContext& c, const std::string& commit, const std::string& file) {
  std::string path;
  for (std::size_t begin = 0; begin <= file.size();) {
    const auto end = std::min(file.find('/', begin), file.size());
    if (!path.empty()) path += '/';
    path += percent_encode(file.substr(begin, end - begin));
    begin = end + 1;
  }
  return fmt::format("{}/{}/resolve/{}/{}", c.options.endpoint, c.repo, commit, path);
}

// The model info: the commit the revision is at and the repository's file names.
struct ModelInfo {
  std::string commit;
  std::set<std::string> files;
};

ModelInfo fetch_model_info(const FetchContext& c, HttpClient& http) {
  const std::string url =
      fmt::format("{}/api/models/{}/revision/{}", c.options.endpoint, c.repo, percent_encode(c.revision));
  const HttpResponse r = http.fetch_all({{url, std::nullopt, 0, kMaxHubApiResponseBytes}}).front();
  check_response(c, r, "the model info");
  nlohmann::json info;
  try {
    info = nlohmann::json::parse(r.body);
  } catch (const nlohmann::json::exception&) {
    refuse(c, url, "the model info is not JSON");
  }
  ModelInfo out;
  if (!info.is_object() || !info.contains("sha") || !info["sha"].is_string() ||
      !is_commit_id(info["sha"].get<std::string>())) {
    refuse(c, url, "the model info has no 40-hex-digit \"sha\" (the commit)");
  }
  out.commit = info["sha"].get<std::string>();
  if (!info.contains("siblings") || !info["siblings"].is_array()) refuse(c, url, "the model info has no \"siblings\" list");
  for (const auto& sibling : info["siblings"]) {
    if (!sibling.is_object() || !sibling.contains("rfilename") || !sibling["rfilename"].is_string()) {
      refuse(c, url, "a \"siblings\" entry has no \"rfilename\" string");
    }
    out.files.insert(sibling["rfilename"].get<std::string>());
  }
  return out;
}

// "bytes B-E/T" -> {B, E, T}; nullopt when malformed (or T is "*").
struct ContentRange {
  std::int64_t begin = 0, end = 0, total = 0;
};
std::optional<ContentRange> parse_content_range(const std::string& text) {
  ContentRange out;
  const char* p = text.data();
  const char* const end = text.data() + text.size();
  if (text.rfind("bytes ", 0) != 0) return std::nullopt;
  p += 6;
  const auto number = [&](std::int64_t& value, char stop) {
    const auto [next, error] = std::from_chars(p, end, value);
    if (error != std::errc() || value < 0 || (stop != '\0' && (next == end || *next != stop))) return false;
    if (stop == '\0' && next != end) return false;
    p = stop == '\0' ? next : next + 1;
    return true;
  };
  if (!number(out.begin, '-') || !number(out.end, '/') || !number(out.total, '\0')) return std::nullopt;
  if (out.end < out.begin || out.end >= out.total) return std::nullopt;
  return out;
}

// What one range answer holds: bytes from `begin`, and the file's size.
struct RangeAnswer {
  std::string bytes;
  std::int64_t file_bytes = 0;
};

RangeAnswer range_answer(const FetchContext& c, const HttpResponse& r, const std::string& url, std::int64_t begin,
                         std::int64_t end, const std::string& what) {
  check_response(c, r, what, url);
  RangeAnswer out;
  if (r.status == 206) {
    const auto range = parse_content_range(r.header("content-range"));
    if (!range || range->begin != begin || range->end > end ||
        (range->end < end && range->end + 1 != range->total)) {
      refuse(c, url, fmt::format("the answer for {} has a malformed or mismatched Content-Range \"{}\" (asked "
                                   "for bytes {}-{})",
                                   what, r.header("content-range"), begin, end));
    }
    if (static_cast<std::int64_t>(r.body.size()) != range->end - range->begin + 1) {
      refuse(c, url, fmt::format("the answer for {} holds {} bytes, not the {} its Content-Range \"{}\" states", what,
                                   r.body.size(), range->end - range->begin + 1, r.header("content-range")));
    }
    out.file_bytes = range->total;
  } else if (begin == 0) {
    // A server that ignores Range sends the whole file; its first bytes are as good.
    std::int64_t length = static_cast<std::int64_t>(r.body.size());
    if (r.stopped_early) {
      const std::string text = r.header("content-length");
      const auto [next, error] = std::from_chars(text.data(), text.data() + text.size(), length);
      if (text.empty() || error != std::errc() || next != text.data() + text.size() ||
          length < static_cast<std::int64_t>(r.body.size())) {
        refuse(c, url, fmt::format("the answer for {} ignores the Range request and states no usable size", what));
      }
    }
    out.file_bytes = length;
  } else {
    refuse(c, url, fmt::format("the answer for {} ignores the Range request (HTTP {})", what, r.status));
  }
  // The Hub states an LFS file's size on the redirect to the CDN: the two must agree.
  const std::string linked = r.header("redirect-x-linked-size");
  if (!linked.empty() && linked != std::to_string(out.file_bytes)) {
    refuse(c, url, fmt::format("{}: the Hub states {} bytes (X-Linked-Size) but the file server's Content-Range "
                                 "states {}",
                                 what, linked, out.file_bytes));
  }
  out.bytes = r.body;
  return out;
}

std::uint64_t header_length(const std::string& first_bytes) {
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(first_bytes[static_cast<std::size_t>(i)]);
  return length;
}

// One shard's header, being fetched.
struct ShardFetch {
  std::string name;
  std::string url;        // resolve URL (named in messages and the manifest)
  std::int64_t file_bytes = 0;
  std::int64_t prefix_bytes = 0;  // 8 + N, once known
  std::string prefix;
  bool done = false;
};

// Takes shard `s`'s answer for the bytes from `begin` to `end`: the first (speculative) range or the
// rest of a longer header. Returns the request for the rest when the header is longer than the first
// answer; nullopt once the header is complete. Throws InputError for a failed or inconsistent answer.
std::optional<HttpRequest> take_header_bytes(const FetchContext& c, ShardFetch& s, const HttpResponse& r,
                                             std::int64_t begin, std::int64_t end) {
  const std::string what = fmt::format("the safetensors header of {}", s.name);
  const RangeAnswer a = range_answer(c, r, s.url, begin, end, what);
  if (begin > 0) {
    if (a.file_bytes != s.file_bytes || static_cast<std::int64_t>(s.prefix.size() + a.bytes.size()) != s.prefix_bytes) {
      refuse(c, s.url, fmt::format("{}: the second range answer disagrees with the first (a file of {} bytes, then {})",
                                   s.name, s.file_bytes, a.file_bytes));
    }
    s.prefix += a.bytes;
    s.done = true;
    return std::nullopt;
  }
  s.file_bytes = a.file_bytes;
  if (a.bytes.size() < 8) {
    refuse(c, s.url, fmt::format("{}: a {}-byte file, shorter than the 8-byte header length", s.name, a.file_bytes));
  }
  const std::uint64_t n = header_length(a.bytes);
  if (n > static_cast<std::uint64_t>(kMaxSafetensorsHeaderBytes)) {
    refuse(c, s.url, fmt::format("{}: header length {} exceeds the {}-byte limit", s.name, n, kMaxSafetensorsHeaderBytes));
  }
  s.prefix_bytes = static_cast<std::int64_t>(n) + 8;
  if (s.prefix_bytes > s.file_bytes) {
    refuse(c, s.url, fmt::format("{}: header length {} is past the end of the {}-byte file", s.name, n, s.file_bytes));
  }
  if (s.prefix_bytes <= static_cast<std::int64_t>(a.bytes.size())) {
    s.prefix = a.bytes.substr(0, static_cast<std::size_t>(s.prefix_bytes));
    s.done = true;
    return std::nullopt;
  }
  s.prefix = a.bytes;
  // The rest straight from where the first answer came from (the CDN), without the Hub's redirect.
  const auto have = static_cast<std::int64_t>(a.bytes.size());
  return HttpRequest{r.url, have, s.prefix_bytes - 1, s.prefix_bytes - have};
}

// Fetches every shard's first 8 + N bytes, all shards at once: one speculative range each, and for a
// header longer than it, the rest as soon as its first answer is in. Reports progress after every
// answer; the first failure (in shard order) is thrown once every transfer has ended.
void fetch_shard_headers(const FetchContext& c, HttpClient& http, std::vector<ShardFetch>& shards,
                         std::int64_t& bytes_received) {
  std::int64_t done = 0;
  const auto report = [&] {
    if (c.options.progress) c.options.progress({done, static_cast<std::int64_t>(shards.size()), bytes_received});
  };
  std::vector<HttpRequest> first;
  for (const auto& s : shards) first.push_back({s.url, 0, kSpeculativeHeaderBytes - 1, kSpeculativeHeaderBytes});
  std::vector<std::exception_ptr> errors(shards.size());
  std::vector<std::int64_t> asked_begin(shards.size(), 0), asked_end(shards.size(), kSpeculativeHeaderBytes - 1);
  report();
  (void)http.fetch_all(first, [&](std::size_t i, const HttpResponse& r) -> std::optional<HttpRequest> {
    bytes_received += static_cast<std::int64_t>(r.body.size());
    std::optional<HttpRequest> next;
    try {
      next = take_header_bytes(c, shards[i], r, asked_begin[i], asked_end[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
    if (next) {
      asked_begin[i] = *next->range_begin;
      asked_end[i] = next->range_end;
    } else {
      ++done;
    }
    report();
    return next;
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    throw InputError(fmt::format("{}: cannot write gpubudget's cache (set XDG_CACHE_HOME to a writable folder)",
                                 path.string()));
  }
}

// A folder under `parent` no other process uses, removed on destruction unless released.
class TemporaryFolder {
 public:
  explicit TemporaryFolder(const fs::path& parent) {
    static std::atomic<int> counter{0};
    path_ = parent / fmt::format(".partial-{}-{}", ::getpid(), counter++);
    std::error_code ec;
    fs::remove_all(path_, ec);
    fs::create_directories(path_, ec);
    if (ec) {
      throw InputError(fmt::format("{}: cannot create a folder in gpubudget's cache ({}); set XDG_CACHE_HOME to a "
                                   "writable folder",
                                   path_.string(), ec.message()));
    }
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  ~TemporaryFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }
  // Renames the folder to `target`; when another process got there first, its copy is kept.
  void publish(const fs::path& target) {
    std::error_code ec;
    fs::rename(path_, target, ec);
    if (ec && !fs::is_directory(target)) {
      throw InputError(fmt::format("{}: cannot write gpubudget's cache ({}); set XDG_CACHE_HOME to a writable folder",
                                   target.string(), ec.message()));
    }
    if (!ec) path_.clear();
  }

 private:
  fs::path path_;
};

}  // namespace

HubSnapshot fetch_hub_snapshot(const std::string& repo, const std::string& revision, const HubOptions& options,
                               const fs::path& repo_dir) {
  const FetchContext c{repo, revision, options};
  HttpClient http(url_origin(options.endpoint), options.token, options.timeout);
  const ModelInfo info = fetch_model_info(c, http);
  const fs::path snapshots = repo_dir / "snapshots";
  const fs::path target = snapshots / info.commit;
  std::error_code ec;
  if (fs::is_directory(target, ec)) {
    write_cached_ref(repo_dir, revision, info.commit);
    return {target, info.commit};
  }
  if (info.files.count("config.json") == 0) {
    const bool adapter = info.files.count("adapter_config.json") != 0;
    refuse(c, fmt::format("{}/api/models/{}/revision/{}", options.endpoint, repo, percent_encode(revision)),
           adapter ? "a LoRA adapter repository (adapter_config.json, no config.json): size its base model"
                   : "the repository has no config.json (a GGUF-only or non-transformers repository?)");
  }
  // The configuration files, all at once.
  std::vector<std::string> names;
  std::vector<HttpRequest> requests;
  for (const char* file : kHubConfigFiles) {
    if (info.files.count(file) == 0) continue;
    names.emplace_back(file);
    const std::int64_t cap = std::string_view(file) == "model.safetensors.index.json" ? kMaxIndexBytes : kMaxConfigFileBytes;
    requests.push_back({resolve_url(c, info.commit, file), std::nullopt, 0, cap});
  }
  std::int64_t bytes_received = 0;
  const std::vector<HttpResponse> files = http.fetch_all(requests);
  TemporaryFolder folder(snapshots);
  for (std::size_t i = 0; i < files.size(); ++i) {
    check_response(c, files[i], names[i], requests[i].url);
    bytes_received += static_cast<std::int64_t>(files[i].body.size());
    write_file(folder.path() / names[i], files[i].body);
  }
  // The shards: the ones the index names (each in the file list), else every top-level .safetensors.
  std::vector<std::string> shard_names;
  if (info.files.count("model.safetensors.index.json") != 0) {
    const fs::path index = folder.path() / "model.safetensors.index.json";
    try {
      shard_names = read_index_shard_names(index.string());
    } catch (const InputError& e) {
      // The message names the temporary copy; the user knows the file by its URL.
      std::string reason = e.what();
      for (auto at = reason.find(index.string()); at != std::string::npos; at = reason.find(index.string())) {
        reason.replace(at, index.string().size(), "model.safetensors.index.json");
      }
      refuse(c, resolve_url(c, info.commit, "model.safetensors.index.json"), reason);
    }
    for (const auto& name : shard_names) {
      if (!is_safe_repo_path(name)) {
        refuse(c, resolve_url(c, info.commit, "model.safetensors.index.json"),
               fmt::format("the index names shard \"{}\", outside the repository", name));
      }
      if (info.files.count(name) == 0) {
        refuse(c, resolve_url(c, info.commit, "model.safetensors.index.json"),
               fmt::format("the index names shard \"{}\", which the repository does not have", name));
      }
    }
  } else {
    for (const auto& name : info.files) {
      if (name.size() > 12 && name.ends_with(".safetensors") && name.find('/') == std::string::npos &&
          is_safe_repo_path(name)) {
        shard_names.push_back(name);
      }
    }
  }
  if (static_cast<std::int64_t>(shard_names.size()) > kMaxHubShards) {
    refuse(c, resolve_url(c, info.commit, "model.safetensors.index.json"),
           fmt::format("{} shards, above the {} gpubudget reads", shard_names.size(), kMaxHubShards));
  }
  if (!shard_names.empty()) {
    std::vector<ShardFetch> shards;
    for (const auto& name : shard_names) {
      ShardFetch s;
      s.name = name;
      s.url = resolve_url(c, info.commit, name);
      shards.push_back(std::move(s));
    }
    fetch_shard_headers(c, http, shards, bytes_received);
    nlohmann::ordered_json manifest;
    manifest["repo"] = repo;
    manifest["commit"] = info.commit;
    manifest["shards"] = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < shards.size(); ++i) {
      const ShardFetch& s = shards[i];
      // Validated now, so that a lying header is refused (naming its URL) before anything is cached.
      const std::string_view header(s.prefix.data() + 8, s.prefix.size() - 8);
      (void)parse_safetensors_header(header, s.file_bytes - s.prefix_bytes, s.url);
      const std::string copy = fmt::format("{:05}.bin", i);
      write_file(folder.path() / kHeaderCopiesFolder / copy, s.prefix);
      manifest["shards"][s.name] = {{"bytes", s.file_bytes}, {"copy", copy}, {"url", s.url}};
    }
    write_file(folder.path() / kHeaderCopiesManifest, manifest.dump(1));
  }
  folder.publish(target);
  write_cached_ref(repo_dir, revision, info.commit);
  return {target, info.commit};
}

}  // namespace gpubudget::detail
