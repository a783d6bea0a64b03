#include "gpubudget/argument_values.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/decimal_text.h"
#include "gpubudget/error.h"

namespace gpubudget {

namespace {

[[noreturn]] void bad(const std::string& flag, const std::string& text, const std::string& expected) {
  throw ArgumentError(fmt::format("{}: invalid value \"{}\" (expected {})", flag, text, expected));
}

// A plain decimal ("131072", "1.5", ".5"): digits with at most one '.', at least one digit, at most 30
// characters (more is no size anyone means). No sign, exponent, spaces or hex.
bool parse_decimal(const std::string& digits, double& value) {
  if (digits.empty() || digits.size() > 30) return false;
  bool dot = false, any_digit = false;
  for (char ch : digits) {
    if (ch == '.') {
      if (dot) return false;
      dot = true;
    } else if (std::isdigit(static_cast<unsigned char>(ch))) {
      any_digit = true;
    } else {
      return false;
    }
  }
  if (!any_digit) return false;
  const auto parsed = detail::parse_decimal(digits);  // strtod: the WebAssembly build has no from_chars(double)
  if (!parsed) return false;
  value = *parsed;
  return true;
}

}  // namespace

std::int64_t parse_human_int(const std::string& flag, const std::string& text) {
  const std::string expected = "an integer, optionally with k/m/g/t (x1000) or K/M/G/T (x1024)";
  if (text.empty()) bad(flag, text, expected);
  const char last = text.back();
  double scale = 1;
  std::string digits = text;
  bool binary = false;
  switch (last) {
    case 'k': scale = 1e3; break;
    case 'm': scale = 1e6; break;
    case 'g': scale = 1e9; break;
    case 't': scale = 1e12; break;
    case 'K': scale = 1024.0; binary = true; break;
    case 'M': scale = 1024.0 * 1024; binary = true; break;
    case 'G': scale = 1024.0 * 1024 * 1024; binary = true; break;
    case 'T': scale = 1024.0 * 1024 * 1024 * 1024; binary = true; break;
    default: break;
  }
  if (scale != 1) digits = text.substr(0, text.size() - 1);
  double value = 0;
  if (!parse_decimal(digits, value)) bad(flag, text, expected);
  if (binary && digits.find('.') != std::string::npos) bad(flag, text, "no decimals with a binary suffix");
  const double result = value * scale;
  if (result != std::floor(result)) bad(flag, text, expected);
  if (result > 9.0e15) bad(flag, text, "a value of at most 9e15");
  return static_cast<std::int64_t>(result);
}

double parse_fraction(const std::string& flag, const std::string& text) {
  double value = 0;
  if (!parse_decimal(text, value)) bad(flag, text, "a decimal fraction such as 0.9");
  return value;
}

double parse_gib(const std::string& flag, const std::string& text) {
  double value = 0;
  if (!parse_decimal(text, value)) bad(flag, text, "a decimal number of GiB such as 64 or 0.5");
  return value;
}

MaxModelLenFlag parse_max_model_len(const std::string& text) {
  if (text.empty()) return {};
  if (text == "auto" || text == "-1") return {std::nullopt, true};
  const auto value = parse_human_int("--max-model-len", text);
  if (value < 1) bad("--max-model-len", text, "a positive length, auto or -1");
  return {value, false};
}

std::optional<bool> paired_flag(const std::string& flag, bool given, bool negated) {
  if (given && negated) {
    throw ArgumentError(fmt::format("{} and --no-{} contradict each other; give one", flag, flag.substr(2)));
  }
  if (!given && !negated) return std::nullopt;
  return given;
}

bool env_bool(const std::string& var, const std::string& value) {
  if (value == "1" || value == "true" || value == "True") return true;
  if (value == "0" || value == "false" || value == "False") return false;
  throw ArgumentError(fmt::format("--vllm-env {}={}: expected 0 or 1", var, value));
}

std::string kv_connector_of(const std::string& flag, const std::string& json_text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception&) {
    throw ArgumentError(fmt::format("{}: expected a JSON object such as '{{\"kv_connector\": \"NixlConnector\"}}', got {}",
                                 flag, json_text));
  }
  if (!j.is_object()) throw ArgumentError(fmt::format("{}: expected a JSON object, got {}", flag, json_text));
  if (!j.contains("kv_connector") || j["kv_connector"].is_null()) return "";
  if (!j["kv_connector"].is_string() || j["kv_connector"].get<std::string>().size() > 256) {
    throw ArgumentError(fmt::format("{}: kv_connector must be a connector's class name, got {}", flag,
                                 j["kv_connector"].dump()));
  }
  return j["kv_connector"].get<std::string>();
}

std::int64_t parse_memory_size(const std::string& flag, const std::string& text) {
  struct Unit {
    const char* suffix;
    double scale;
  };
  static const Unit kUnits[] = {{"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0},
                                {"KiB", 1024.0},          {"TB", 1e12},          {"GB", 1e9},
                                {"MB", 1e6},              {"KB", 1e3},           {"B", 1}};
  const std::string expected = "a size such as 96GiB, 97887MiB, 80GB or a byte count";
  for (const auto& unit : kUnits) {
    const std::string suffix = unit.suffix;
    if (text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
      double value = 0;
      if (!parse_decimal(text.substr(0, text.size() - suffix.size()), value)) bad(flag, text, expected);
      const double bytes = std::floor(value * unit.scale);
      if (bytes < 1 || bytes > 9.0e15) bad(flag, text, expected);
      return static_cast<std::int64_t>(bytes);
    }
  }
  double value = 0;
  if (!parse_decimal(text, value) || value < 1 || value != std::floor(value) || value > 9.0e15) {
    bad(flag, text, expected);
  }
  return static_cast<std::int64_t>(value);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const auto comma = text.find(',', begin);
    parts.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return parts;
    begin = comma + 1;
  }
}

std::vector<std::string> expand_vllm_short_flags(std::vector<std::string> args) {
  static const std::pair<const char*, const char*> kShort[] = {{"-tp", "--tensor-parallel-size"},
                                                               {"-pp", "--pipeline-parallel-size"},
                                                               {"-dp", "--data-parallel-size"},
                                                               {"-dcp", "--decode-context-parallel-size"}};
  for (auto& arg : args) {
    for (const auto& [short_name, long_name] : kShort) {
      const std::string s = short_name;
      if (arg == s) {
        arg = long_name;
      } else if (arg.rfind(s + "=", 0) == 0) {
        arg = std::string(long_name) + arg.substr(s.size());
      }
    }
  }
  return args;
}

std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace gpubudget
