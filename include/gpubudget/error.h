// The library's errors. Only load/validate code throws; computations on validated specs do not.
//
//   InputError — a file, field or value supplied by the caller is missing, malformed, inconsistent,
//                beyond its documented limit or unsupported. The message names the file, the JSON path
//                or flag, and the value (the CLI's exit 3, the C ABI's status 3).
//   ArgumentError — an InputError in a launch argument itself: an unknown flag, a value of the wrong
//                syntax, flags that contradict each other (vllm_args.h; the CLI's exit 2, the C ABI's
//                status 3).
// "Does not fit" is never an error: it is a value in FitResult. Anything else thrown is a bug.
#pragma once

#include <stdexcept>
#include <string>

namespace gpubudget {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InputError : public Error {
 public:
  using Error::Error;
};

class ArgumentError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace gpubudget
