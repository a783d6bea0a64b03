// Finding a model's files: a path, a bundled config, the local Hugging Face cache, or the Hugging Face
// Hub (docs/guide.md, "Models from the Hub").
//
// Resolution order for a MODEL argument (locate_model):
//   1. an existing path (a folder holding config.json, or a config.json);
//   2. a bundled id ("org/name" with <configs>/models/org__name), unless a revision is asked for;
//   3. the local Hugging Face cache (`models--org--name/refs/REV` → `snapshots/SHA/`), read only;
//   4. gpubudget's own cache of what an earlier run fetched (`<cache>/hub/models--org--name/...`);
//   5. the Hub at `endpoint` (unless `offline`): config.json, the quantization and processor configs,
//      model.safetensors.index.json and every shard's safetensors header (HTTP Range requests, many at
//      once), written atomically into gpubudget's cache, keyed by repository and commit.
// Never writes into the Hugging Face cache. Every failure is an InputError naming the repository and
// the URL; the token is sent to the Hub's host only and never appears in a message.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gpubudget {

struct ConfigDir;
struct ModelSpec;

// Progress of a Hub fetch, reported after every completed request of the safetensors header phase.
struct HubProgress {
  std::int64_t shards_done = 0;
  std::int64_t shards_total = 0;
  std::int64_t bytes_received = 0;  // response bodies so far, all requests of the fetch
};

struct HubOptions {
  std::string endpoint = "https://huggingface.co";  // $HF_ENDPOINT; no trailing slash
  std::string token;                  // $HF_TOKEN or the token file; "" = anonymous. Never printed.
  bool offline = false;               // $HF_HUB_OFFLINE=1: caches only, no network
  std::string revision;               // branch, tag or commit; "" = the reference's own, else "main"
  std::chrono::milliseconds timeout{60'000};  // per HTTP request, connection included
  std::filesystem::path cache_dir;    // gpubudget's cache ($XDG_CACHE_HOME/gpubudget); "" = none
  std::filesystem::path hf_cache_dir; // the Hugging Face hub cache ($HF_HUB_CACHE ...); "" = none
  bool refresh = false;               // ask the Hub for the revision's commit even when cached
  bool fetch_headers = true;          // fetch every shard's safetensors header
  std::function<void(const HubProgress&)> progress;  // nullptr = silent
};

// The largest timeout accepted (--hub-timeout), and the response sizes a fetch accepts.
inline constexpr std::chrono::milliseconds kMaxHubTimeout{3'600'000};
inline constexpr std::int64_t kMaxHubApiResponseBytes = 64 << 20;  // the model info JSON
inline constexpr std::int64_t kMaxHubShards = 100'000;             // files one index may list

// The options the environment sets, as huggingface_hub reads it: HF_ENDPOINT, HF_TOKEN (else the token
// file at $HF_TOKEN_PATH, $HF_HOME/token or ~/.cache/huggingface/token), HF_HUB_OFFLINE, HF_HUB_CACHE
// (else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub), and
// gpubudget's cache at $XDG_CACHE_HOME/gpubudget (else ~/.cache/gpubudget). InputError for a malformed
// value (HF_HUB_OFFLINE=maybe, an endpoint that is no http(s) URL).
HubOptions hub_options_from_environment();

// A Hub repository named by a MODEL argument: "org/name", "org/name@revision", or a pasted
// "https://huggingface.co/org/name[/tree/REV[/...]]" (also /blob/REV/... and /resolve/REV/...).
struct ModelReference {
  std::string repo;      // "org/name"
  std::string revision;  // "" when the text names none
};
// nullopt when `text` is no repository name; InputError when it looks like one but is malformed
// ("org/na me", "org/../x", an empty revision).
std::optional<ModelReference> parse_model_reference(std::string_view text);
// InputError (naming `context`, e.g. "--revision") unless `revision` can name a branch, tag or commit:
// 1 to 255 characters, no control characters, no empty, "." or ".." parts between slashes.
void check_revision(std::string_view context, const std::string& revision);

enum class ModelOrigin { kPath, kBundled, kHuggingFaceCache, kGpubudgetCache, kHub };

struct ModelLocation {
  std::filesystem::path config_path;  // the config.json to parse
  ModelOrigin origin = ModelOrigin::kPath;
  std::string repo;       // "org/name" for the cache and Hub origins, else ""
  std::string revision;   // as asked ("main")
  std::string commit;     // the commit the files are of; "" when unknown

  // The folder whose checkpoint headers describe the model (config_path's folder).
  [[nodiscard]] std::filesystem::path folder() const { return config_path.parent_path(); }
  // One line for a note: "Qwen/Qwen3-8B at 1a2b3c4d (fetched from https://huggingface.co)".
  [[nodiscard]] std::string description() const;
};

// Resolves `model` in the order above. InputError when it is found nowhere, naming what was tried.
ModelLocation locate_model(const std::string& model, const ConfigDir& configs, const HubOptions& hub);

// `model` is a directory holding config.json, a path to a config.json, or the Hugging Face id of a
// bundled model ("nvidia/Kimi-K2.5-NVFP4" → <root>/models/nvidia__Kimi-K2.5-NVFP4).
ModelSpec load_model(const std::string& model, const ConfigDir& configs);
// Parses the config (and the quantization config beside it) of a located model.
ModelSpec load_model(const ModelLocation& location);
// locate_model then load_model.
ModelSpec load_model(const std::string& model, const ConfigDir& configs, const HubOptions& hub);

}  // namespace gpubudget
