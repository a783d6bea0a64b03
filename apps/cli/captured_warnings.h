// What a command writes to stderr while it resolves its flags, held until the command has its result,
// and the lines of it that are warnings ("warning: …"): those also go into the JSON `warnings` and the
// count next to the verdict, so that a warning about a launch flag is seen where the answer is.
#pragma once

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace gpubudget::cli {

class CapturedWarnings {
 public:
  explicit CapturedWarnings(std::ostream& err) : err_(err) {}
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;
  ~CapturedWarnings() { flush(); }

  // Where to write notes and warnings meanwhile.
  std::ostream& stream() { return text_; }

  // The warnings written so far, without their "warning: " and newline, in order.
  [[nodiscard]] std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    std::istringstream lines(text_.str());
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(kPrefix, 0) == 0) out.push_back(line.substr(sizeof kPrefix - 1));
    }
    return out;
  }

  // Writes what was held to stderr (once; the destructor does it otherwise, also when the command throws).
  void flush() {
    err_ << text_.str();
    text_.str("");
  }

 private:
  static constexpr char kPrefix[] = "warning: ";
  std::ostream& err_;
  std::ostringstream text_;
};

}  // namespace gpubudget::cli
