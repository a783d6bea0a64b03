// nvidia-smi's view of this machine's GPUs, for `fit --gpu auto`.
#include "gpubudget/gpu_detect.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/gpu_presets.h"

extern char** environ;

namespace gpubudget {

namespace {

constexpr std::size_t kMaxOutputBytes = 1 << 20;

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  return first == std::string_view::npos ? "" : std::string(text.substr(first, last - first + 1));
}

// "81559", "81559 MiB"; nullopt for "[N/A]", "[Not Supported]".
std::optional<std::int64_t> mib_field(const std::string& field, std::size_t line_number, const char* what) {
  std::string digits = field;
  if (digits.size() > 4 && digits.ends_with(" MiB")) digits.resize(digits.size() - 4);
  if (digits.empty() || digits.front() == '[') return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value < 0 || value > (std::int64_t{1} << 30)) {
    throw InputError(fmt::format("nvidia-smi, line {}: {} \"{}\" is not a MiB count", line_number, what, field));
  }
  return value;
}

// Runs `args` (args[0] from PATH) with stdout and stderr into one pipe; returns {exit status, output}.
std::pair<int, std::string> run_captured(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw InputError("nvidia-smi: cannot create a pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<std::string> copies = args;
  std::vector<char*> argv;
  for (auto& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw InputError(fmt::format("--gpu auto: {} is not on PATH (no NVIDIA driver here?); name the GPU with --gpu or "
                                 "--gpu-memory",
                                 args[0]));
  }
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (output.size() < kMaxOutputBytes) output.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    throw InputError(fmt::format("--gpu auto: {} gave no answer within {} s (a hung driver?)", args[0],
                                 timeout.count() / 1000));
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, output};
}

}  // namespace

std::vector<DetectedGpu> parse_nvidia_smi_csv(std::string_view text) {
  std::vector<DetectedGpu> out;
  std::size_t line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const auto end = std::min(text.find('\n', begin), text.size());
    const std::string line = trim(text.substr(begin, end - begin));
    begin = end + 1;
    ++line_number;
    if (line.empty() || line.rfind("name,", 0) == 0) continue;  // the header of --format=csv
    std::vector<std::string> fields;
    for (std::size_t at = 0; at <= line.size();) {
      const auto comma = std::min(line.find(',', at), line.size());
      fields.push_back(trim(std::string_view(line).substr(at, comma - at)));
      at = comma + 1;
    }
    if (fields.size() != 4) {
      throw InputError(fmt::format("nvidia-smi, line {}: expected name, memory.total, memory.used, compute_cap; got "
                                   "\"{}\"",
                                   line_number, line));
    }
    DetectedGpu g;
    g.index = static_cast<std::int64_t>(out.size());
    g.name = fields[0];
    g.total_mib = mib_field(fields[1], line_number, "memory.total");
    g.used_mib = mib_field(fields[2], line_number, "memory.used");
    const auto dot = fields[3].find('.');
    if (dot != std::string::npos) {
      ComputeCapability cc{};
      const auto [m, e1] = std::from_chars(fields[3].data(), fields[3].data() + dot, cc.major);
      const auto [n, e2] = std::from_chars(fields[3].data() + dot + 1, fields[3].data() + fields[3].size(), cc.minor);
      if (e1 == std::errc() && e2 == std::errc() && m == fields[3].data() + dot &&
          n == fields[3].data() + fields[3].size() && cc.major > 0 && cc.major < 100 && cc.minor >= 0 && cc.minor < 100) {
        g.compute_capability = cc;
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<DetectedGpu> detect_nvidia_gpus(std::chrono::milliseconds timeout) {
  const std::vector<std::string> args(std::begin(kNvidiaSmiQuery), std::end(kNvidiaSmiQuery));
  const auto [status, output] = run_captured(args, timeout);
  if (status != 0) {
    const std::string said = trim(output.substr(0, output.find('\n')));
    throw InputError(fmt::format("--gpu auto: nvidia-smi failed (exit {}): {}", status, said.empty() ? "no message" : said));
  }
  std::vector<DetectedGpu> gpus = parse_nvidia_smi_csv(output);
  // CUDA numbers the GPUs CUDA_VISIBLE_DEVICES lists, in its order; nvidia-smi ignores it.
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && *visible != '\0') {
    std::vector<DetectedGpu> chosen;
    std::string_view list(visible);
    bool all_indices = true;
    for (std::size_t at = 0; at <= list.size();) {
      const auto comma = std::min(list.find(',', at), list.size());
      const std::string item = trim(list.substr(at, comma - at));
      at = comma + 1;
      std::int64_t index = -1;
      const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), index);
      if (error != std::errc() || end != item.data() + item.size()) {
        all_indices = false;  // UUIDs or MIG names: nvidia-smi's list is kept
        break;
      }
      if (index >= 0 && index < static_cast<std::int64_t>(gpus.size())) chosen.push_back(gpus[static_cast<std::size_t>(index)]);
    }
    if (all_indices) {
      for (std::size_t i = 0; i < chosen.size(); ++i) chosen[i].index = static_cast<std::int64_t>(i);
      gpus = std::move(chosen);
    }
  }
  if (gpus.empty()) throw InputError("--gpu auto: nvidia-smi lists no GPU (or CUDA_VISIBLE_DEVICES hides them all)");
  return gpus;
}

GpuSpec gpu_for_detected(const DetectedGpu& detected, const ConfigDir& configs) {
  const std::string preset = gpu_preset_for_device_name(detected.name, configs);
  if (!preset.empty()) {
    GpuSpec g = load_gpu_preset(preset, configs);
    if (detected.total_mib && g.nvidia_smi_mib > 0 && *detected.total_mib != g.nvidia_smi_mib) {
      // The same card with ECC switched the other way (or another board): the CUDA-visible total moves
      // with nvidia-smi's.
      g.memory = g.memory + Bytes((*detected.total_mib - g.nvidia_smi_mib) * (std::int64_t{1} << 20));
      g.memory_source = fmt::format("preset {} moved by this GPU's nvidia-smi total ({} MiB against the preset's {} MiB)",
                                    g.name, *detected.total_mib, g.nvidia_smi_mib);
      g.nvidia_smi_mib = *detected.total_mib;
    }
    return g;
  }
  if (!detected.total_mib) {
    throw InputError(fmt::format("--gpu auto: \"{}\" is no preset and nvidia-smi states no memory total; give --gpu-memory",
                                 detected.name));
  }
  // 1% below nvidia-smi's total: the gaps the measured presets show run from 0.4% (B200) to 1.7% (T4).
  const auto total = static_cast<std::int64_t>(std::llround(static_cast<double>(*detected.total_mib) * 0.99)) << 20;
  GpuSpec g = custom_gpu(Bytes(total), detected.compute_capability);
  g.name = "auto";
  g.device_name = detected.name;
  g.nvidia_smi_mib = *detected.total_mib;
  g.memory_estimated = true;
  g.memory_source = fmt::format("ESTIMATED: nvidia-smi's {} MiB less 1% (no preset for \"{}\"; the gap to the "
                                "CUDA-visible total is 0.4 to 1.7% on the presets); give --gpu-memory with vLLM's "
                                "logged total for an exact budget",
                                *detected.total_mib, detected.name);
  return g;
}

}  // namespace gpubudget
