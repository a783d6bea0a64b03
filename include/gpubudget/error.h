// The error hierarchy. Only load/validate code throws; computations on validated specs do not.
//
// How to choose:
//   InputError   — a file, field or value supplied by the user is missing, malformed, inconsistent or
//                  unsupported (exit 3). The message names the file, the JSON path or flag, the value.
//   UsageError   — the command line itself is wrong (exit 2).
// "Does not fit" is never an error: it is a value in FitResult.
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

class UsageError : public Error {
 public:
  using Error::Error;
};

// Process exit statuses of the gpubudget CLI (docs/cli.md).
enum class ExitCode : int {
  kFits = 0,        // computed; the judged length fits
  kDoesNotFit = 1,  // computed; the judged length does not fit
  kUsage = 2,       // bad command line
  kBadInput = 3,    // bad or unsupported input file/field/value
  kInternal = 4,    // a bug
};

}  // namespace gpubudget
