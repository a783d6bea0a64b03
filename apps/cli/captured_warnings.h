// What a command writes to stderr while it resolves its flags, held until the command has its result,
// and the warnings among it: those also go into the JSON `warnings` (with their codes) and the count
// next to the verdict, so that a warning about a launch flag is seen where the answer is.
#pragma once

#include <ostream>
#include <sstream>
#include <utility>
#include <vector>

#include "gpubudget/notice.h"

namespace gpubudget::cli {

class CapturedWarnings {
 public:
  explicit CapturedWarnings(std::ostream& err) : err_(err) {}
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;
  ~CapturedWarnings() { flush(); }

  // Where to write notes meanwhile ("note: …" lines).
  std::ostream& stream() { return text_; }

  // Writes "warning: TEXT" in turn with the notes, and keeps the warning for the result.
  void warn(Notice warning) {
    text_ << "warning: " << warning.text << "\n";
    warnings_.push_back(std::move(warning));
  }

  // The warnings given so far, in order.
  [[nodiscard]] const std::vector<Notice>& warnings() const { return warnings_; }

  // Writes what was held to stderr (once; the destructor does it otherwise, also when the command throws).
  void flush() {
    err_ << text_.str();
    text_.str("");
  }

 private:
  std::ostream& err_;
  std::ostringstream text_;
  std::vector<Notice> warnings_;
};

}  // namespace gpubudget::cli
