#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::error_code ec;
  // The kernel's link is already absolute and resolved (canonical() would readlink every component).
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe = argv[0];
  return gpubudget::cli::run_cli(std::move(args), std::cout, std::cerr, exe);
}
