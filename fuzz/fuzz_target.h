// The libFuzzer entry point every fuzz target defines. Built two ways (fuzz/CMakeLists.txt): with
// clang's -fsanitize=fuzzer for fuzzing (scripts/fuzz.sh), and with replay_main.cpp as an ordinary
// program that runs the committed corpus in the test suite.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
