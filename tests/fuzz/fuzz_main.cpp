// libFuzzer's entry point, shared by every target: the input as text, to the target's
// test_one_input. An invariant that breaks aborts (fuzz_check.hpp); returning means the
// input passed.
#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kreg::fuzz::test_one_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
