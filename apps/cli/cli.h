// The gpubudget command line, callable in process: run_cli(args) returns the exit status and writes
// only to `out` (results) and `err` (diagnostics). main.cpp is a thin wrapper.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "terminal_style.h"

namespace gpubudget::cli {

// `args` excludes the program name. `executable` locates the bundled configs; `terminal` says which
// streams are terminals (colour, terminal_style.h; the default: none is).
int run_cli(std::vector<std::string> args, std::ostream& out, std::ostream& err,
            const std::filesystem::path& executable = {}, const Terminal& terminal = {});

}  // namespace gpubudget::cli
