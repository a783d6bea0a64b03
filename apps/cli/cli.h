// The gpubudget command line, callable in process: run_cli(args) returns the exit status and writes
// only to `out` (results) and `err` (diagnostics). main.cpp is a thin wrapper.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace gpubudget::cli {

// `args` excludes the program name. `executable` locates the bundled configs.
int run_cli(std::vector<std::string> args, std::ostream& out, std::ostream& err,
            const std::filesystem::path& executable = {});

}  // namespace gpubudget::cli
