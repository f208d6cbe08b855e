#pragma once
// How a fuzz target states an invariant: a broken one prints where and what, then aborts,
// which libFuzzer records as a crash and saves the input that caused it.

#include <kreg/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace kreg::fuzz {

[[noreturn]] inline void broken(const char* file, int line, const char* condition,
                                std::string_view what) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s\n  %.*s\n", file, line, condition,
               static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace kreg::fuzz

// `what` is evaluated only when `condition` fails, so it may build a message.
#define KREG_FUZZ_CHECK(condition, what)                                          \
  do {                                                                            \
    if (!(condition)) ::kreg::fuzz::broken(__FILE__, __LINE__, #condition, what); \
  } while (0)

namespace kreg::fuzz {

// What each target defines: one run on one input (see fuzz_main.cpp).
void test_one_input(std::string_view input);

// Runs `fn` and returns whether it threw. The only exception allowed is a kreg::Error with
// code InvalidArgument: outside input is refused that way, and anything else escaping is a
// bug (libFuzzer reports an uncaught exception as a crash).
template <class Fn>
bool refused(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    KREG_FUZZ_CHECK(e.code() == ErrorCode::InvalidArgument, e.what());
    return true;
  }
  return false;
}

}  // namespace kreg::fuzz
