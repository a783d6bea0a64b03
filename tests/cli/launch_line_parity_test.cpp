// One launch line, every front end: gpubudget's own fit flags, the pasted `vllm serve` line, the C ABI's
// "vllm_args" and the library's parse_vllm_args give the same fit document byte for byte
// (tests/data/launch_lines/cases.json; python/tests/test_vllm_args.py holds Python to the same
// documents). And every Deployment field is reached by a row of the engine-argument table and set by
// some case, so that a field added without its argument fails here.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "c_requests.h"
#include "cli/cli_run.h"
#include "gpubudget/config_dir.h"
#include "gpubudget/load.h"
#include "gpubudget/vllm_args.h"
#include "test_support.h"

namespace gpubudget {
namespace {

// Deployment members that no launch argument sets: what a logged startup measured beyond the estimate
// (diagnose carries it into its what-ifs).
const std::set<std::string> kNotLaunchArguments = {"kv_budget_correction"};

nlohmann::json cases() {
  std::ifstream in(std::string(GPUBUDGET_TEST_DATA_DIR) + "/launch_lines/cases.json");
  return nlohmann::json::parse(in)["cases"];
}

std::vector<std::string> words_of(const nlohmann::json& list) { return list.get<std::vector<std::string>>(); }

// `fit --gpu GPU [--vllm-version V] OUTPUT -- WORDS` for the case: the pasted line as the CLI reads it.
std::vector<std::string> pasted_fit(const nlohmann::json& c, const std::string& output,
                                    const std::vector<std::string>& words) {
  std::vector<std::string> args = {"fit", "--gpu", c["gpu"].get<std::string>(), output};
  if (c.contains("vllm_version")) {
    args.push_back("--vllm-version");
    args.push_back(c["vllm_version"].get<std::string>());
  }
  args.push_back("--");
  args.insert(args.end(), words.begin(), words.end());
  return args;
}

// The C ABI's request of `operation` for the case, with `words` as its vllm_args.
nlohmann::json request_for(const nlohmann::json& c, const std::string& operation, const std::vector<std::string>& words) {
  nlohmann::json request = {{"operation", operation},
                            {"config_dir", GPUBUDGET_TEST_CONFIG_DIR},
                            {"gpu", c["gpu"]},
                            {"vllm_args", words}};
  if (c.contains("vllm_version")) request["vllm_version"] = c["vllm_version"];
  return request;
}

// The members of `struct Deployment` as deployment.h declares them, one per line ("  TYPE name = ...;").
std::set<std::string> deployment_members() {
  std::ifstream in(std::string(GPUBUDGET_TEST_SOURCE_DIR) + "/include/gpubudget/deployment.h");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const auto start = all.find("struct Deployment {");
  const auto end = all.find("\n};", start);
  EXPECT_NE(start, std::string::npos);
  const std::string body = all.substr(start, end - start);
  // A member's line: "  TYPE name;", "  TYPE name = ...;" or "  TYPE name{...};" (std::regex is avoided:
  // GCC 12 warns inside libstdc++'s <regex> under the sanitizers).
  std::set<std::string> out;
  std::istringstream member_lines(body);
  for (std::string line; std::getline(member_lines, line);) {
    if (line.size() < 4 || line.rfind("  ", 0) != 0 || !std::isalpha(static_cast<unsigned char>(line[2])) ||
        line.back() != ';') {
      continue;
    }
    std::string head = line.substr(0, line.find_first_of("={;"));
    while (!head.empty() && head.back() == ' ') head.pop_back();
    const auto space = head.find_last_of(" &*");
    if (space != std::string::npos) out.insert(head.substr(space + 1));
  }
  // Every declaration line ("  X ...;", not a comment) must have been read as a member.
  std::size_t declarations = 0;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 3 && line.rfind("  ", 0) == 0 && std::isalpha(static_cast<unsigned char>(line[2])) &&
        line.back() == ';') {
      ++declarations;
    }
  }
  EXPECT_EQ(out.size(), declarations) << "the member pattern no longer reads every line of struct Deployment";
  return out;
}

std::set<std::string> fields_of(std::string_view flag) {
  std::set<std::string> out;
  for (const auto& row : vllm_arguments()) {
    if (row.flag != flag) continue;
    std::istringstream words{std::string(row.deployment_fields)};
    for (std::string w; words >> w;) out.insert(w);
  }
  return out;
}

TEST(LaunchLineParity, EveryDeploymentFieldHasAnEngineArgumentRow) {
  const auto members = deployment_members();
  ASSERT_GE(members.size(), 40u) << "the member pattern no longer reads deployment.h";
  std::set<std::string> reached;
  for (const auto& row : vllm_arguments()) {
    const auto fields = fields_of(row.flag);
    for (const auto& f : fields) {
      EXPECT_TRUE(members.count(f) != 0) << row.flag << " names " << f << ", which is no Deployment member";
    }
    reached.insert(fields.begin(), fields.end());
  }
  for (const auto& m : members) {
    if (kNotLaunchArguments.count(m) != 0) continue;
    EXPECT_TRUE(reached.count(m) != 0) << "Deployment::" << m
                                       << " has no row in vllm_arguments() (src/engine/vllm_args.cpp): no front "
                                          "end can set it";
  }
}

TEST(LaunchLineParity, TheCasesSetEveryDeploymentField) {
  std::set<std::string> set_by_cases;
  const EngineArgs engine_args = load_engine_args(ConfigDir{GPUBUDGET_TEST_CONFIG_DIR});
  for (const auto& c : cases()) {
    const auto line = parse_vllm_args(split_command_line(c["line"].get<std::string>()), engine_args);
    for (const auto& word : line.flags) {
      if (word.rfind("--", 0) == 0) {
        const auto fields = fields_of(word);
        set_by_cases.insert(fields.begin(), fields.end());
      } else {
        // VAR=VALUE: the members resolve_vllm_arguments sets from that variable.
        static const std::map<std::string, std::string> kVariable = {
            {"VLLM_PP_LAYER_PARTITION", "pp_layer_partition"},
            {"VLLM_DEEPEP_BUFFER_SIZE_MB", "deepep_buffer_size_mb"},
            {"VLLM_NIXL_EP_MAX_NUM_RANKS", "nixl_ep_max_num_ranks"},
            {"VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE", "allow_chunked_local_attn_with_hybrid_kv_cache"},
            {"VLLM_MLA_DISABLE", "mla_disabled"},
            {"VLLM_ATTENTION_BACKEND", "attention_backend"},
            {"VLLM_ALL2ALL_BACKEND", "all2all_backend"}};
        const auto it = kVariable.find(word.substr(0, word.find('=')));
        if (it != kVariable.end()) set_by_cases.insert(it->second);
      }
    }
  }
  for (const auto& m : deployment_members()) {
    if (kNotLaunchArguments.count(m) != 0) continue;
    EXPECT_TRUE(set_by_cases.count(m) != 0) << "no case of tests/data/launch_lines/cases.json sets Deployment::" << m;
  }
}

// The fit document `answer_request` gives for the case's line as "vllm_args".
std::string c_abi_document(const nlohmann::json& c, const std::vector<std::string>& vllm_args) {
  const auto answer = c_api::answer_request(request_for(c, "fit", vllm_args), GPUBUDGET_TEST_CONFIG_DIR);
  EXPECT_LE(answer.status, 1) << answer.document;
  return answer.document;
}

// `document` without the warnings that are the pasted line's own notes (flags it holds beyond the
// CLI's, such as --enable-eplb beside --eplb-config).
std::string without_notes(const std::string& document, const std::vector<Notice>& notes) {
  auto j = nlohmann::ordered_json::parse(document);
  auto& warnings = j["warnings"];
  auto& codes = j["warning_codes"];
  for (const auto& note : notes) {
    for (std::size_t i = 0; i < warnings.size(); ++i) {
      if (warnings[i] == note.text) {
        EXPECT_EQ(codes[i], notice_code_name(note.code)) << note.text;
        warnings.erase(i);
        codes.erase(i);
        break;
      }
    }
  }
  return j.dump(2);
}

TEST(LaunchLineParity, FlagsPastedLineAndCAbiGiveTheSameFitDocument) {
  const EngineArgs engine_args = load_engine_args(ConfigDir{GPUBUDGET_TEST_CONFIG_DIR});
  int compared = 0;
  for (const auto& c : cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<std::string> common = {"fit", "--gpu", c["gpu"].get<std::string>(), "--json"};
    if (c.contains("vllm_version")) {
      common.push_back("--vllm-version");
      common.push_back(c["vllm_version"].get<std::string>());
    }
    std::vector<std::string> with_flags = common;
    with_flags.insert(with_flags.begin() + 1, c["model"].get<std::string>());
    for (const auto& f : words_of(c["flags"])) with_flags.push_back(f);
    const auto flags_run = test::run_cli(with_flags);
    ASSERT_LE(flags_run.code, 1) << flags_run.err;

    const std::vector<std::string> words = split_command_line(c["line"].get<std::string>());
    const auto pasted_run = test::run_cli(pasted_fit(c, "--json", words));
    ASSERT_EQ(pasted_run.code, flags_run.code) << pasted_run.err;

    // The C ABI, with the line's words as they are, and with the words the library read back
    // (parse_vllm_args' flags, what Python's parse_vllm_serve hands on).
    const VllmLaunchLine line = parse_vllm_args(words, engine_args);
    EXPECT_EQ(line.model, c["model"].get<std::string>());
    const std::string from_words = c_abi_document(c, words);
    std::vector<std::string> read_back = line.flags;
    nlohmann::json read_back_request = request_for(c, "fit", read_back);
    read_back_request["model"] = c["model"];
    const std::string from_flags = c_api::answer_request(read_back_request, GPUBUDGET_TEST_CONFIG_DIR).document;

    EXPECT_EQ(pasted_run.out, from_words) << "the pasted line and the C ABI's vllm_args differ";
    EXPECT_EQ(without_notes(from_words, line.notes), nlohmann::ordered_json::parse(from_flags).dump(2))
        << "the line's words and the words parse_vllm_args read back differ";
    EXPECT_EQ(nlohmann::ordered_json::parse(flags_run.out).dump(2), without_notes(pasted_run.out, line.notes))
        << "fit's own flags and the pasted line differ";
    ++compared;
  }
  EXPECT_GE(compared, 30);
}

TEST(LaunchLineParity, TheCAbiGivesTheCliLaunchCommand) {
  // `fit --vllm-args` (the launch line with the length that fits, 5% below the edge) and the C ABI's
  // vllm_serve operation on the same line: one command, or none with the same exit status.
  int compared = 0;
  for (const auto& c : cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::vector<std::string> words = split_command_line(c["line"].get<std::string>());
    const auto cli = test::run_cli(pasted_fit(c, "--vllm-args", words));
    const auto answer = c_api::answer_request(request_for(c, "vllm_serve", words), GPUBUDGET_TEST_CONFIG_DIR);
    ASSERT_EQ(answer.status, cli.code) << answer.document << cli.err;
    const auto doc = nlohmann::json::parse(answer.document);
    if (cli.code == 0) {
      EXPECT_EQ(doc["vllm_serve"].get<std::string>() + "\n", cli.out);
      // The command launches the deployment that was judged: read back, it is the same deployment
      // (but for the length, now a number, and whatever follows from it).
      const auto judged = [&](const std::vector<std::string>& launch) {
        const auto run = test::run_cli(pasted_fit(c, "--json", launch));
        EXPECT_LE(run.code, 1) << run.err;
        auto deployment = nlohmann::json::parse(run.out)["deployment"];
        deployment.erase("max_model_len_auto");
        return deployment;
      };
      if (c["line"].get<std::string>().find("--entry-point llm") != std::string::npos) {
        // The offline LLM class has no command line: the note says so, and the settings are the same.
        EXPECT_NE(doc["note"].get<std::string>().find("--entry-point llm: the offline LLM class"), std::string::npos);
      } else {
        EXPECT_EQ(judged(split_command_line(doc["vllm_serve"].get<std::string>())), judged(words))
            << "the printed command launches another deployment: " << doc["vllm_serve"];
      }
      ++compared;
    } else {
      EXPECT_TRUE(doc["vllm_serve"].is_null());
    }
  }
  EXPECT_GE(compared, 25);
}

TEST(LaunchLineParity, ArgumentsAndLinesThatCannotBeReadAreRefusedByName) {
  const EngineArgs engine_args = load_engine_args(ConfigDir{GPUBUDGET_TEST_CONFIG_DIR});
  const auto message = [&](const std::vector<std::string>& words) -> std::string {
    try {
      parse_vllm_args(words, engine_args);
    } catch (const ArgumentError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message({"--tensor-parallel-size", "0"}), "--tensor-parallel-size: expected an integer from 1 to 1024, got 0");
  EXPECT_EQ(message({"--tensor-parallel-size", "0x8"}),
            "--tensor-parallel-size: expected an integer from 1 to 1024, got 0x8");
  EXPECT_EQ(message({"--max-num-seqs", "1e3"}), "--max-num-seqs: expected an integer from 1 to 1048576, got 1e3");
  EXPECT_EQ(message({"--gpu-memory-utilization", "0x1p-1"}),
            "--gpu-memory-utilization: invalid value \"0x1p-1\" (expected a decimal fraction such as 0.9)");
  EXPECT_EQ(message({"serve", "model"}),
            "vllm arguments: expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...` or "
            "the engine arguments alone (--flag ...)");
  // A draft checkpoint to read and no loader to read it with: said, not a crash of the caller's process.
  const ConfigDir configs{GPUBUDGET_TEST_CONFIG_DIR};
  const auto eagle = parse_vllm_args(
      {"--speculative-config",
       R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})"},
      engine_args);
  const ModelSpec target = load_model("meta-llama/Llama-3.1-8B-Instruct", configs);
  VllmProfile profile = load_vllm_profile("", configs);
  test::expect_input_error([&] { (void)deployment_from_launch_line(eagle, target, profile, nullptr); },
                           "the draft model yuhuili/EAGLE3-LLaMA3.1-Instruct-8B would have to be read, and no loader "
                           "was given");
  const auto split_message = [](std::string_view line) -> std::string {
    try {
      split_command_line(line);
    } catch (const ArgumentError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(split_message("vllm serve m --speculative-config '{\"method\": \"mtp\""),
            "launch line: a single quote is not closed");
  EXPECT_EQ(split_message("vllm serve m; rm -rf /"),
            "launch line: ';' is shell syntax, not part of one vLLM command; give the command alone, with values "
            "written out");
  EXPECT_EQ(split_message("vllm serve m --max-model-len \"$LEN\""),
            "launch line: $ inside double quotes is shell expansion; give the value itself");
  // Quoting as a shell reads it: single quotes keep everything, a backslash-newline continues the line.
  EXPECT_EQ(split_command_line("A=1 vllm serve 'my model' \\\n  --kv-transfer-config \"{\\\"kv_connector\\\": 1}\""),
            (std::vector<std::string>{"A=1", "vllm", "serve", "my model", "--kv-transfer-config", "{\"kv_connector\": 1}"}));
}

}  // namespace
}  // namespace gpubudget
