// The command line's own error and the CLI's exit statuses (docs/cli.md).
#pragma once

#include "gpubudget/error.h"

namespace gpubudget::cli {

// The command line itself is wrong: an unknown flag, a value of the wrong syntax, flags that
// contradict each other (exit 2). A value that is well formed but wrong for the model or the GPU is
// an InputError (exit 3). The library's launch-argument parsers throw the same type.
using UsageError = ArgumentError;

// Process exit statuses of the gpubudget CLI.
enum class ExitCode : int {
  kFits = 0,        // computed; the judged length fits
  kDoesNotFit = 1,  // computed; the judged length does not fit
  kUsage = 2,       // bad command line
  kBadInput = 3,    // bad or unsupported input file/field/value
  kInternal = 4,    // a bug
};

}  // namespace gpubudget::cli
