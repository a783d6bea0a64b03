#include "gpubudget/engine_args.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"

namespace gpubudget {

const EngineFlag* EngineArgs::find(const std::string& name) const {
  for (const auto& f : flags) {
    if (f.flag == name) return &f;
    for (const auto& a : f.aliases) {
      if (a == name) return &f;
    }
  }
  return nullptr;
}

EngineArgs load_engine_args(const ConfigDir& configs) {
  const std::string path = (configs.root / "vllm-engine-args.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read vLLM's engine-argument list", path));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  const auto fail = [&](const std::string& where, const std::string& expected) {
    throw InputError(fmt::format("{}:{}: expected {}", path, where, expected));
  };
  if (json.is_discarded()) fail("", "valid JSON");
  if (!json.is_object() || !json.contains("schema_version") || json["schema_version"] != 1) {
    fail("/schema_version", "1 in a JSON object");
  }
  EngineArgs out;
  if (!json.contains("vllm_commit") || !json["vllm_commit"].is_string()) fail("/vllm_commit", "a string");
  out.vllm_commit = json["vllm_commit"].get<std::string>();
  if (!json.contains("flags") || !json["flags"].is_array()) fail("/flags", "an array");
  for (std::size_t i = 0; i < json["flags"].size(); ++i) {
    const auto& f = json["flags"][i];
    const std::string at = fmt::format("/flags/{}", i);
    const auto text_of = [&](const char* key) {
      if (!f.is_object() || !f.contains(key) || !f[key].is_string()) fail(at + "/" + key, "a string");
      return f[key].get<std::string>();
    };
    EngineFlag flag;
    flag.flag = text_of("flag");
    if (f.contains("aliases")) {
      if (!f["aliases"].is_array()) fail(at + "/aliases", "an array of strings");
      for (const auto& a : f["aliases"]) {
        if (!a.is_string()) fail(at + "/aliases", "an array of strings");
        flag.aliases.push_back(a.get<std::string>());
      }
    }
    if (!f.contains("takes_value") || !f["takes_value"].is_boolean()) fail(at + "/takes_value", "true or false");
    flag.takes_value = f["takes_value"].get<bool>();
    const std::string status = text_of("status");
    if (status == "read") {
      flag.status = EngineFlagStatus::kRead;
    } else if (status == "no_gpu_memory_effect") {
      flag.status = EngineFlagStatus::kNoGpuMemoryEffect;
    } else if (status == "not_modelled") {
      flag.status = EngineFlagStatus::kNotModelled;
    } else {
      fail(at + "/status", "\"read\", \"no_gpu_memory_effect\" or \"not_modelled\"");
    }
    (void)text_of("source");
    flag.effect = text_of("effect");
    out.flags.push_back(std::move(flag));
  }
  return out;
}

}  // namespace gpubudget
