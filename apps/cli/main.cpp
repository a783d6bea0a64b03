#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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
  gpubudget::cli::Terminal terminal;
  terminal.out_is_tty = isatty(STDOUT_FILENO) == 1;
  terminal.err_is_tty = isatty(STDERR_FILENO) == 1;
  winsize size{};
  if (terminal.out_is_tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) terminal.out_columns = size.ws_col;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  terminal.no_color = (no_color != nullptr && *no_color != '\0') || (term != nullptr && std::strcmp(term, "dumb") == 0);
  return gpubudget::cli::run_cli(std::move(args), std::cout, std::cerr, exe, terminal);
}
