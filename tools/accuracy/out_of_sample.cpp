#include "out_of_sample.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "gpubudget/error.h"

namespace gpubudget {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// configs/vllm/*.json, oldest first (a profile's base comes before it).
std::vector<fs::path> profiles_by_version(const fs::path& dir) {
  std::vector<std::pair<VllmVersionNumber, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    if (const auto v = parse_vllm_version(entry.path().stem().string())) found.emplace_back(*v, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [v, p] : found) out.push_back(std::move(p));
  return out;
}

// A scratch copy of `configs` whose vllm/ holds profiles calibrated on `training` rows; the rest links
// to the original.
class ScratchConfigs {
 public:
  ScratchConfigs(const ConfigDir& configs, const std::vector<ReplayRow>& training, const std::string& tag)
      : root_(fs::temp_directory_path() / fmt::format("gpubudget-oos-{}-{}", ::getpid(), tag)) {
    fs::remove_all(root_);
    fs::create_directories(root_ / "vllm");
    for (const auto& entry : fs::directory_iterator(configs.root)) {
      if (entry.path().filename() != "vllm") fs::create_symlink(fs::absolute(entry.path()), root_ / entry.path().filename());
    }
    // The hand-written rules as shipped; the coefficients (vllm/coefficients/) refitted on `training`,
    // in version order, so that each profile is fitted over its refitted base.
    const fs::path coefficients = root_ / "vllm" / "coefficients";
    fs::create_directories(coefficients);
    for (const auto& entry : fs::directory_iterator(configs.root / "vllm" / "coefficients")) {
      fs::copy_file(entry.path(), coefficients / entry.path().filename());
    }
    for (const auto& profile : profiles_by_version(configs.root / "vllm")) {
      const fs::path scratch = root_ / "vllm" / profile.filename();
      const std::string text = read_file(profile);
      std::ofstream(scratch, std::ios::binary) << text;
      try {
        const Calibration c = calibrate_profile(training, text, scratch.string(), (root_ / "vllm").string());
        for (const auto& t : c.terms) rows_per_term_[profile.stem().string()].push_back(t.rows);
        if (c.coefficients_json.empty()) {
          fs::remove(coefficients / profile.filename());
        } else {
          std::ofstream(coefficients / profile.filename(), std::ios::binary) << c.coefficients_json;
        }
      } catch (const InputError&) {
        // A profile without a calibration block keeps its coefficients.
      }
    }
  }
  ~ScratchConfigs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  ScratchConfigs(const ScratchConfigs&) = delete;
  ScratchConfigs& operator=(const ScratchConfigs&) = delete;
  [[nodiscard]] ConfigDir configs() const { return ConfigDir{root_}; }
  // Training rows of each fitted term, by profile version ("0.21" -> activation, non-torch, graphs).
  [[nodiscard]] const std::map<std::string, std::vector<std::size_t>>& rows_per_term() const { return rows_per_term_; }

 private:
  fs::path root_;
  std::map<std::string, std::vector<std::size_t>> rows_per_term_;
};

}  // namespace

std::string model_group(const ReplayRow& row) { return replayed_model(row); }
std::string gpu_group(const ReplayRow& row) { return row.gpu; }

std::vector<ReplayRow> leave_one_group_out(const std::vector<ReplayRow>& in_sample, const std::string& observations,
                                           const std::string& aliases, const ConfigDir& configs,
                                           const RowGroup& group) {
  // The observation lines by row id, to replay one group's rows.
  std::map<std::string, std::string> lines;
  {
    std::istringstream text(read_file(observations));
    for (std::string line; std::getline(text, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const auto row = nlohmann::json::parse(line, nullptr, false);
      if (row.is_object() && row.contains("id") && row["id"].is_string()) lines[row["id"].get<std::string>()] = line;
    }
  }
  std::vector<std::string> groups;
  for (const auto& r : in_sample) {
    if (r.status == "ok" && std::find(groups.begin(), groups.end(), group(r)) == groups.end()) groups.push_back(group(r));
  }
  // Which profiles' terms were fitted on rows at all (in sample): a term that had rows in sample and has
  // none without the group keeps the shipped coefficient, which was fitted on the group itself.
  const ScratchConfigs all(configs, in_sample, "all");
  std::map<std::string, ReplayRow> predicted;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<ReplayRow> training;
    std::string held_out;
    for (const auto& r : in_sample) {
      if (r.status != "ok") continue;
      if (group(r) == groups[g]) {
        held_out += lines.at(r.id) + "\n";
      } else {
        training.push_back(r);
      }
    }
    const ScratchConfigs scratch(configs, training, std::to_string(g));
    for (auto& r : replay_observation_text(held_out, observations, aliases, scratch.configs())) {
      const auto& fitted = all.rows_per_term();
      const auto& held = scratch.rows_per_term();
      if (const auto it = fitted.find(r.profile); it != fitted.end() && held.count(r.profile) != 0) {
        for (std::size_t t = 0; t < it->second.size(); ++t) {
          if (it->second[t] > 0 && held.at(r.profile)[t] == 0) {
            r.status = fmt::format("not predictable out of sample: every calibration row of profile {} is in its "
                                   "group ({})",
                                   r.profile, groups[g]);
          }
        }
      }
      predicted[r.id] = r;
    }
  }
  std::vector<ReplayRow> out;
  for (const auto& r : in_sample) {
    if (const auto it = predicted.find(r.id); it != predicted.end()) out.push_back(it->second);
  }
  return out;
}

}  // namespace gpubudget
