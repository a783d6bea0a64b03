// Where a MODEL argument's config.json is: a path, a bundled config, the Hugging Face cache,
// gpubudget's cache, or the Hub (hub.h gives the order).
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/hub.h"
#include "model/generic.h"
#include "gpubudget/config_dir.h"
#include "gpubudget/model_config.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/safetensors.h"
#include "hub/cache_layout.h"
#include "hub/hub_fetch.h"
#include "core/json_reader.h"

namespace gpubudget {

namespace {

namespace fs = std::filesystem;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// huggingface_hub's reading of a boolean variable, stricter: a value it would silently take as false
// ("maybe") is refused.
bool environment_flag(const char* name) {
  std::string value = environment(name);
  for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (value == "1" || value == "ON" || value == "YES" || value == "TRUE") return true;
  if (value.empty() || value == "0" || value == "OFF" || value == "NO" || value == "FALSE") return false;
  throw InputError(fmt::format("{}={}: expected 1/0, true/false, yes/no or on/off", name, environment(name)));
}

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

// The folder `path` as it was found: a folder holding config.json, or a config.json.
ModelLocation local_path(const std::string& model, const fs::path& given) {
  std::error_code ec;
  ModelLocation out;
  out.origin = ModelOrigin::kPath;
  if (!fs::is_directory(given, ec)) {
    out.config_path = given;
    return out;
  }
  out.config_path = given / "config.json";
  if (!fs::exists(out.config_path, ec)) {
    throw InputError(fmt::format("{}: directory has no config.json{}", model,
                                 fs::exists(given / "config.partial.json", ec)
                                     ? " (only config.partial.json, an incomplete excerpt of the real config)"
                                     : ""));
  }
  return out;
}

std::optional<ModelLocation> cached_snapshot(const fs::path& cache_root, const std::string& repo,
                                             const std::string& revision, ModelOrigin origin) {
  if (cache_root.empty()) return std::nullopt;
  const fs::path repo_dir = cache_root / detail::cache_repo_folder(repo);
  const auto commit = detail::cached_commit(repo_dir, revision);
  if (!commit) return std::nullopt;
  std::error_code ec;
  const fs::path config = repo_dir / "snapshots" / *commit / "config.json";
  if (!fs::exists(config, ec)) return std::nullopt;  // also a dangling symlink: an incomplete download
  ModelLocation out;
  out.config_path = config;
  out.origin = origin;
  out.repo = repo;
  out.revision = revision;
  out.commit = *commit;
  return out;
}

}  // namespace

HubOptions hub_options_from_environment() {
  HubOptions o;
  if (const std::string endpoint = environment("HF_ENDPOINT"); !endpoint.empty()) {
    if (endpoint.rfind("https://", 0) != 0 && endpoint.rfind("http://", 0) != 0) {
      throw InputError(fmt::format("HF_ENDPOINT={}: expected an http:// or https:// URL", endpoint));
    }
    o.endpoint = endpoint;
    while (o.endpoint.size() > 8 && o.endpoint.back() == '/') o.endpoint.pop_back();
  }
  o.offline = environment_flag("HF_HUB_OFFLINE");
  const std::string home = environment("HOME");
  const std::string xdg = environment("XDG_CACHE_HOME");
  const fs::path user_cache = !xdg.empty() ? fs::path(xdg) : home.empty() ? fs::path() : fs::path(home) / ".cache";
  const std::string hf_home_env = environment("HF_HOME");
  const fs::path hf_home = !hf_home_env.empty() ? fs::path(hf_home_env)
                           : user_cache.empty() ? fs::path()
                                                : user_cache / "huggingface";
  if (const std::string hub = environment("HF_HUB_CACHE"); !hub.empty()) {
    o.hf_cache_dir = hub;
  } else if (const std::string old = environment("HUGGINGFACE_HUB_CACHE"); !old.empty()) {
    o.hf_cache_dir = old;
  } else if (!hf_home.empty()) {
    o.hf_cache_dir = hf_home / "hub";
  }
  if (!user_cache.empty()) o.cache_dir = user_cache / "gpubudget";
  // The token: HF_TOKEN, the older HUGGING_FACE_HUB_TOKEN, then the token file.
  o.token = trimmed(environment("HF_TOKEN"));
  if (o.token.empty()) o.token = trimmed(environment("HUGGING_FACE_HUB_TOKEN"));
  if (o.token.empty() && !environment_flag("HF_HUB_DISABLE_IMPLICIT_TOKEN")) {
    const std::string token_path = environment("HF_TOKEN_PATH");
    const fs::path file = !token_path.empty() ? fs::path(token_path) : hf_home.empty() ? fs::path() : hf_home / "token";
    std::error_code ec;
    if (!file.empty() && fs::is_regular_file(file, ec)) o.token = trimmed(detail::read_text_file(file.string(), 4096));
  }
  return o;
}

std::string ModelLocation::description() const {
  const std::string at = commit.empty() ? "" : fmt::format(" at {}", commit.substr(0, 12));
  switch (origin) {
    case ModelOrigin::kPath: return config_path.string();
    case ModelOrigin::kBundled: return fmt::format("{} (bundled config)", config_path.string());
    case ModelOrigin::kHuggingFaceCache: return fmt::format("{}{} from the Hugging Face cache ({})", repo, at, folder().string());
    case ModelOrigin::kGpubudgetCache: return fmt::format("{}{} from gpubudget's cache ({})", repo, at, folder().string());
    case ModelOrigin::kHub: return fmt::format("{}{} fetched from the Hub into {}", repo, at, folder().string());
  }
  return config_path.string();
}

ModelLocation locate_model(const std::string& model, const ConfigDir& configs, const HubOptions& hub) {
  std::error_code ec;
  const fs::path given(model);
  if (!model.empty() && fs::exists(given, ec)) return local_path(model, given);
  const std::optional<ModelReference> reference = parse_model_reference(model);
  const std::string not_found = fmt::format("{}: no such file or directory, and not a bundled model id (see `gpubudget "
                                            "models`; bundled models live in {})",
                                            model, (configs.root / "models").string());
  if (!reference) throw InputError(not_found);
  const std::string& repo = reference->repo;
  if (!reference->revision.empty() && !hub.revision.empty() && reference->revision != hub.revision) {
    throw InputError(fmt::format("{}: the revision \"{}\" disagrees with --revision {}", model, reference->revision,
                                 hub.revision));
  }
  if (!hub.revision.empty()) check_revision("--revision", hub.revision);
  const std::string asked = !reference->revision.empty() ? reference->revision : hub.revision;
  std::string partial;  // a bundled excerpt of the config, not enough to size the model
  if (asked.empty()) {
    // A bundled config stands for the repository when no revision is asked for.
    const fs::path bundled = configs.root / "models" / (repo.substr(0, repo.find('/')) + "__" + repo.substr(repo.find('/') + 1));
    if (fs::exists(bundled / "config.json", ec)) {
      ModelLocation out;
      out.config_path = bundled / "config.json";
      out.origin = ModelOrigin::kBundled;
      out.repo = repo;
      return out;
    }
    if (fs::exists(bundled / "config.partial.json", ec)) partial = (bundled / "config.partial.json").string();
  }
  const std::string revision = asked.empty() ? "main" : asked;
  if (auto found = cached_snapshot(hub.hf_cache_dir, repo, revision, ModelOrigin::kHuggingFaceCache)) return *found;
  const fs::path own_cache = hub.cache_dir.empty() ? fs::path() : hub.cache_dir / "hub";
  if (!hub.refresh || hub.offline) {
    if (auto found = cached_snapshot(own_cache, repo, revision, ModelOrigin::kGpubudgetCache)) return *found;
  }
  if (hub.offline) {
    if (!partial.empty()) {
      throw InputError(fmt::format("{}: only a partial config is bundled ({}): an incomplete excerpt of the real "
                                   "config.json, not enough to size the model{}",
                                   model, partial, hub.cache_dir.empty() ? "" : " (and HF_HUB_OFFLINE=1 forbids fetching it)"));
    }
    if (hub.hf_cache_dir.empty() && hub.cache_dir.empty()) throw InputError(not_found);
    throw InputError(fmt::format("{}: not a path or bundled model id, and revision {} is in neither the Hugging Face "
                                 "cache ({}) nor gpubudget's ({}); HF_HUB_OFFLINE=1 forbids fetching it",
                                 model, revision, hub.hf_cache_dir.string(), own_cache.string()));
  }
  if (hub.cache_dir.empty()) {
    throw InputError(fmt::format("{}: gpubudget has no cache folder to fetch into: set XDG_CACHE_HOME or HOME", model));
  }
  const detail::HubSnapshot snapshot = [&] {
    try {
      return detail::fetch_hub_snapshot(repo, revision, hub, own_cache / detail::cache_repo_folder(repo));
    } catch (const InputError& e) {
      if (partial.empty()) throw;
      throw InputError(fmt::format("{} (only an excerpt of its config is bundled, {}, not enough to size the model)",
                                   e.what(), partial));
    }
  }();
  ModelLocation out;
  out.config_path = snapshot.folder / "config.json";
  out.origin = ModelOrigin::kHub;
  out.repo = repo;
  out.revision = revision;
  out.commit = snapshot.commit;
  return out;
}

namespace {

// A tied model whose checkpoint still stores lm_head.weight (Qwen3-0.6B and -1.7B do; vLLM's loaders
// skip it): only the folder's headers can tell. Unreadable headers are left to the comparison that
// reports them (fit, weights).
// The tensor names of the folder's checkpoint, or nullopt when it has no (readable) safetensors headers.
std::optional<std::vector<std::string>> checkpoint_tensor_names(const fs::path& folder) {
  try {
    const auto headers = read_checkpoint_headers(folder.string());
    if (!headers) return std::nullopt;
    std::vector<std::string> names;
    for (const auto& file : headers->files) {
      for (const auto& t : file.tensors) names.push_back(t.name);
    }
    return names;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void mark_stored_tied_head(ModelSpec& model, const fs::path& folder) {
  const auto names = checkpoint_tensor_names(folder);
  if (!names) return;
  model.checkpoint_stores_tied_head = std::any_of(names->begin(), names->end(), [](const std::string& n) {
    return canonical_module_name(n) == "lm_head.weight";
  });
}

// An EAGLE head shares the target's embedding and head unless its checkpoint stores its own
// (process_eagle_weight: any loaded name holding "embed_tokens" / "lm_head").
void mark_eagle_head_tensors(ModelSpec& model, const fs::path& folder) {
  const auto names = checkpoint_tensor_names(folder);
  if (!names) return;
  const auto holds = [&](std::string_view part) {
    return std::any_of(names->begin(), names->end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
  };
  model.eagle_head->stores_embedding = holds("embed_tokens");
  model.eagle_head->stores_lm_head = holds("lm_head");
}

// A bundled config has no headers; its source.json records what the published checkpoint stores
// ("checkpoint_stores_tied_head", with the evidence beside it).
void mark_bundled_tied_head(ModelSpec& model, const fs::path& folder) {
  const fs::path source = folder / "source.json";
  std::error_code ec;
  if (!fs::exists(source, ec)) return;
  const nlohmann::json j = detail::parse_json(detail::read_text_file(source.string()), source.string());
  const auto it = j.find("checkpoint_stores_tied_head");
  if (it == j.end()) return;
  if (!it->is_boolean()) {
    throw InputError(fmt::format("{}: checkpoint_stores_tied_head: expected true or false, got {}", source.string(),
                                 it->dump()));
  }
  model.checkpoint_stores_tied_head = model.checkpoint_stores_tied_head || it->get<bool>();
}

}  // namespace

ModelSpec load_model(const ModelLocation& location) {
  const std::string text = detail::read_text_file(location.config_path.string());
  const fs::path quant_path = location.config_path.parent_path() / "hf_quant_config.json";
  std::error_code ec;
  std::string quant_text;
  if (fs::exists(quant_path, ec)) quant_text = detail::read_text_file(quant_path.string());
  try {
    ModelSpec model = parse_model_config(text, quant_text, location.config_path.string());
    if (model.tie_word_embeddings) {
      mark_stored_tied_head(model, location.config_path.parent_path());
      if (location.origin == ModelOrigin::kBundled) mark_bundled_tied_head(model, location.config_path.parent_path());
    }
    if (model.eagle_head) mark_eagle_head_tensors(model, location.config_path.parent_path());
    return model;
  } catch (const detail::UnknownArchitectureError& e) {
    // An architecture no family knows: the checkpoint's own headers, when the folder has them.
    if (!e.generic_allowed()) throw;
    const auto headers = read_checkpoint_headers(location.config_path.parent_path().string());
    if (!headers) throw;
    return parse_model_config(text, quant_text, location.config_path.string(), *headers);
  }
}

ModelSpec load_model(const std::string& model, const ConfigDir& configs, const HubOptions& hub) {
  return load_model(locate_model(model, configs, hub));
}

ModelSpec load_model(const std::string& model, const ConfigDir& configs) {
  HubOptions local;  // a path or a bundled id only
  local.offline = true;
  return load_model(model, configs, local);
}

}  // namespace gpubudget
