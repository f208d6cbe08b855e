#pragma once
// Helpers shared by the test suites.

#include <kreg/kreg.hpp>

#include "cuda/device.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace kreg::test {

// A registry that compiles for sm_90 whether or not this machine has a GPU.
inline RegistryOptions sm90_options() {
  RegistryOptions options;
  options.arch = "sm_90";
  options.warm_compiler = false;
  return options;
}

// Why GPU tests cannot run here, or "" if they can.
inline std::string gpu_unavailable_reason() {
  std::string why;
  if (!cuda::driver_available(&why)) return why;
  if (cuda::device_count() == 0) return "the driver reports no GPU";
  return {};
}

// Runs `fn`, expects a kreg::Error with `code`, and returns its message.
inline std::string expect_error(ErrorCode code, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << "message: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected kreg::Error(" << to_string(code) << ")";
  return {};
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace kreg::test

#define KREG_REQUIRE_GPU()                                               \
  do {                                                                   \
    const std::string kreg_why = ::kreg::test::gpu_unavailable_reason(); \
    if (!kreg_why.empty()) GTEST_SKIP() << "no GPU: " << kreg_why;       \
  } while (0)

namespace kreg::test {

// A fixture whose tests skip without a GPU and otherwise get a fresh registry.
template <class Base = ::testing::Test>
class WithGpuRegistry : public Base {
 protected:
  void SetUp() override {
    KREG_REQUIRE_GPU();
    reg_ = std::make_unique<Registry>(RegistryOptions{.warm_compiler = false});
  }
  std::unique_ptr<Registry> reg_;
};

}  // namespace kreg::test
