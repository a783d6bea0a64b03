// The vLLM profiles as deltas (docs/vllm-versions.md §Files): a release states what changed, backends
// are keyed by id so that one entry changes in one line, the oldest profile names every rule key, and
// messages take the version a behaviour arrived in from the profiles.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "engine/profile_history.h"
#include "engine/profile_reader.h"
#include "test_support.h"

namespace gpubudget {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path profiles_dir() { return test::configs().root / "vllm"; }

nlohmann::json resolved(const std::string& version) {
  const auto path = profiles_dir() / (version + ".json");
  return detail::resolve_profile_json(read(path), path.string());
}

// Every key path of `j` ("/kv_cache/need"), not descending into the objects whose keys are data
// (backend ids, quantization algorithms, message names).
void key_paths(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
  static const std::set<std::string> data_keyed = {"/attention_backends", "/mxfp4_moe_backends",
                                                   "/kv_cache/modelopt_kv_cache_dtypes", "/overheads"};
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix + "/" + key;
    out.insert(path);
    if (value.is_object() && !data_keyed.count(path)) key_paths(value, path, out);
  }
}

TEST(ProfileDeltas, TheOldestProfileNamesEveryRuleKey) {
  const auto versions = list_vllm_profiles(test::configs());
  ASSERT_GE(versions.size(), 10u);
  std::set<std::string> root;
  key_paths(resolved(versions.front()), "", root);
  for (const auto& version : versions) {
    std::set<std::string> keys;
    key_paths(resolved(version), "", keys);
    for (const auto& key : keys) EXPECT_TRUE(root.count(key)) << version << " sets " << key << ", which " << versions.front() << " does not state";
  }
}

TEST(ProfileDeltas, EachBackendIdIsOneLineAndEveryReleaseOnlyItsChanges) {
  // No profile restates its base's backends: a derived file's backend entries are those that changed.
  for (const auto& entry : fs::directory_iterator(profiles_dir())) {
    if (entry.path().extension() != ".json") continue;
    const std::string text = read(entry.path());
    const auto own = nlohmann::json::parse(text);
    for (const char* table : {"attention_backends", "mxfp4_moe_backends"}) {
      if (!own.contains(table)) continue;
      ASSERT_TRUE(own[table].is_object()) << entry.path() << " " << table;
      for (const auto& [id, backend] : own[table].items()) {
        // The entry's whole text sits on the line of its id.
        const auto at = text.find("\"" + id + "\": {");
        ASSERT_NE(at, std::string::npos) << entry.path() << " " << id;
        const auto line_end = text.find('\n', at);
        EXPECT_EQ(nlohmann::json::parse(text.substr(at + id.size() + 4, line_end - at - id.size() - 4 -
                                                    (text[line_end - 1] == ',' ? 1 : 0))),
                  backend)
            << entry.path() << " " << id;
      }
    }
    if (!own.contains("extends")) continue;
    const auto base = resolved(own["extends"].get<std::string>());
    for (const char* table : {"attention_backends", "mxfp4_moe_backends"}) {
      if (!own.contains(table)) continue;
      for (const auto& [id, patch] : own[table].items()) {
        if (patch.is_null() || !base[table].contains(id)) continue;
        for (const auto& [key, value] : patch.items()) {
          EXPECT_NE(base[table][id].value(key, nlohmann::json()), value)
              << entry.path() << " restates " << table << "/" << id << "/" << key;
        }
      }
    }
  }
}

// A scratch profile directory: the shipped profiles plus `extra` files (name → text).
fs::path scratch_profiles(const std::string& name, const std::map<std::string, std::string>& extra) {
  const auto dir = fs::temp_directory_path() / ("gpubudget-profile-deltas-" + name) / "vllm";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir.parent_path());
  fs::copy(profiles_dir(), dir, fs::copy_options::recursive);
  for (const auto& [file, text] : extra) std::ofstream(dir / file) << text;
  return dir;
}

TEST(ProfileDeltas, AReleaseChangesOneBackendInOneLine) {
  const auto dir = scratch_profiles("one-line", {{"9.0.json", R"({"extends": "0.22", "version": "9.0",
    "attention_backends": {"TRITON_MLA@rocm": {"kv_cache_dtypes": ["bfloat16", "float16", "float32", "fp8"]}}})"}});
  const auto base = load_vllm_profile_file((dir / "0.22.json").string());
  const auto next = load_vllm_profile_file((dir / "9.0.json").string());
  ASSERT_EQ(next.attention_backends.size(), base.attention_backends.size());
  int changed = 0;
  for (std::size_t i = 0; i < base.attention_backends.size(); ++i) {
    const auto& a = base.attention_backends[i];
    const auto& b = next.attention_backends[i];
    EXPECT_EQ(a.name, b.name);  // the priority order is the base's
    if (a.kv_cache_dtypes != b.kv_cache_dtypes) {
      ++changed;
      EXPECT_EQ(b.name, "TRITON_MLA");
      EXPECT_EQ(b.platform, Platform::kRocm);
      EXPECT_EQ(b.block_size, a.block_size);  // the rest of the entry is inherited
    }
  }
  EXPECT_EQ(changed, 1);
  fs::remove_all(dir.parent_path());
}

TEST(ProfileDeltas, NullRemovesABackendAndThePriorityMustListEveryId) {
  const auto dir = scratch_profiles("null", {
      {"9.0.json", R"({"extends": "0.22", "version": "9.0", "attention_backends": {"ROCM_ATTN": null}})"},
      {"9.1.json", R"({"extends": "0.22", "version": "9.1", "attention_backend_priority": ["FLASHINFER@sm10"]})"},
      {"9.2.json", R"({"extends": "0.22", "version": "9.2", "attention_backend_priority": ["NOPE"]})"}});
  test::expect_input_error([&] { (void)load_vllm_profile_file((dir / "9.0.json").string()); },
                           "9.0.json:/attention_backend_priority: expected ids of attention_backends entries (\"ROCM_ATTN\" has none)");
  test::expect_input_error([&] { (void)load_vllm_profile_file((dir / "9.1.json").string()); },
                           "9.1.json:/attention_backend_priority: expected every id of attention_backends (\"CUTLASS_MLA\" is missing)");
  test::expect_input_error([&] { (void)load_vllm_profile_file((dir / "9.2.json").string()); },
                           "(\"NOPE\" has none)");
  fs::remove_all(dir.parent_path());
}

// The shipped profiles' own data: auto-fit is first true in 0.14.json, the prefetch offloader in
// 0.17.json, --kv-cache-dtype-skip-layers in 0.19.json.
TEST(ProfileDeltas, MessagesNameTheReleaseFromTheProfiles) {
  const auto v013 = load_vllm_profile("0.13", test::configs());
  EXPECT_EQ(detail::first_version_where(v013, [](const VllmProfile& p) { return p.kv_cache.auto_fit_max_model_len; }), "0.14");
  EXPECT_EQ(detail::first_version_where(v013, [](const VllmProfile& p) { return p.prefetch_offloader; }), "0.17");
  EXPECT_EQ(detail::first_version_where(v013, [](const VllmProfile& p) { return p.kv_cache.skip_layers; }), "0.19");
  EXPECT_EQ(detail::arrival_phrase(v013, [](const VllmProfile&) { return false; }), "no vLLM release gpubudget models has it");
  // A profile not in a profile directory has no history.
  VllmProfile loose = v013;
  loose.source = "/tmp/mine.json";
  EXPECT_EQ(detail::first_version_where(loose, [](const VllmProfile&) { return true; }), "");

  Deployment d;
  d.kv_cache_dtype_skip_layers = {"0"};
  test::expect_input_error([&] { (void)fit(test::bundled("meta-llama/Llama-3.1-8B"), load_gpu_preset("h100", test::configs()), d, v013); },
                           "--kv-cache-dtype-skip-layers: vLLM 0.13 has no such option (it arrived in vLLM 0.19)");
}

}  // namespace
}  // namespace gpubudget
