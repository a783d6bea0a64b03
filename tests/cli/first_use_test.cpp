// What a new user meets first (docs/cli.md): the version, a mistyped command or flag answered with the
// name meant, and vLLM's flag names everywhere.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "gpubudget/version.h"

namespace gpubudget::cli {
namespace {

using test::CliRun;
CliRun run(std::vector<std::string> args) { return test::run_cli(std::move(args)); }

TEST(FirstUse, VersionFlagPrintsTheVersion) {
  const CliRun r = run({"--version"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("gpubudget ") + kVersion + "\n");
  EXPECT_EQ(run({"version"}).out, r.out);
}

TEST(FirstUse, MistypedCommandNamesTheCommandMeant) {
  const CliRun r = run({"fti", "meta-llama/Llama-3.1-8B", "--gpu", "h100"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown command 'fti'; did you mean fit?"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("commands: fit, weights, sweep"), std::string::npos) << r.err;
  // Nothing near: no guess, the list only.
  const CliRun far = run({"launch-rockets"});
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(FirstUse, MistypedFlagNamesTheFlagMeant) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      // a longer spelling of a flag (a prefix match), a transposition, one letter off
      {{"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-length", "4096"},
       "fit: unknown flag --max-model-length; did you mean --max-model-len?"},
      {{"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--kv-cache-dtpye", "fp8"},
       "fit: unknown flag --kv-cache-dtpye; did you mean --kv-cache-dtype?"},
      {{"plan", "meta-llama/Llama-3.1-8B", "--max-model-len", "8192", "--concurrency", "4", "--gpus", "h100"},
       "plan: unknown flag --gpus; did you mean --gpu?"},
      {{"fit", "meta-llama/Llama-3.1-8B", "--gpu=h100", "--enforce-eagre"},
       "fit: unknown flag --enforce-eagre; did you mean --enforce-eager?"},
  };
  for (const Case& c : cases) {
    const CliRun r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.expected;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
  }
  // A value that looks like nothing known is left to the flag's own check (here: a model id).
  EXPECT_EQ(run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-len", "4096"}).code, 0);
}

TEST(FirstUse, SweepTakesMaxModelLenAndStillReadsTargetLen) {
  const std::vector<std::string> base = {"sweep", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "-tp", "1,2",
                                         "--format", "json"};
  std::vector<std::string> new_name = base, old_name = base, both = base;
  new_name.insert(new_name.end(), {"--max-model-len", "32768"});
  old_name.insert(old_name.end(), {"--target-len", "32768"});
  both.insert(both.end(), {"--max-model-len", "32768", "--target-len", "32768"});
  const CliRun a = run(new_name), b = run(old_name), c = run(both);
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  const auto rows = nlohmann::json::parse(a.out);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0]["target_len"], 32768);
  EXPECT_EQ(a.err.find("--target-len"), std::string::npos) << a.err;
  EXPECT_NE(b.err.find("note: sweep --target-len is now --max-model-len"), std::string::npos) << b.err;
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.err.find("not both"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace gpubudget::cli
