#pragma once
// Helpers shared by the test suites.

#include <kreg/kreg.hpp>

#include "cuda/device.hpp"
#include "custom/codegen.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace kreg::test {

// Options for tests: no disk cache (tests must not share state through the user's cache
// folder) and no precompiled set (compile counts must mean what they say), no background
// warm-up.
inline RegistryOptions isolated_options() {
  RegistryOptions options;
  options.disk_cache = false;
  options.precompiled = false;
  options.warm_compiler = false;
  return options;
}

// A registry that compiles for sm_90 whether or not this machine has a GPU.
inline RegistryOptions sm90_options() {
  RegistryOptions options = isolated_options();
  options.arch = "sm_90";
  return options;
}

// sm90_options with the disk cache on, in `dir`, and compiles in-process (workers would
// hide a test's own fault injection and compile counts).
inline RegistryOptions sm90_disk_options(const std::filesystem::path& dir) {
  RegistryOptions options = sm90_options();
  options.disk_cache = true;
  options.cache_dir = dir;
  options.compile_processes = 0;
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

// Compiles for sm_90, with no GPU needed, what `kernel.apply` would compile for these
// arguments (no template arguments). Returns "" on success, else the compiler's message
// followed by the numbered source.
inline std::string custom_compile_error(const CustomKernel& kernel,
                                        const std::vector<Array>& inputs,
                                        const std::vector<OutputSpec>& outputs) {
  static Registry registry(sm90_options());
  static int counter = 0;
  const std::string source = kernel.generated_source(inputs, outputs);
  const std::string entry = "custom_compile_" + std::to_string(counter++);
  SourceOptions options;
  // A kernel with Metal's vector types is generated inside namespace kreg_metal.
  const bool scoped = source.find("\nnamespace kreg_metal {\n") != std::string::npos;
  options.entries.push_back(entry + "=" + (scoped ? "kreg_metal::" : "") + "kreg_custom_" +
                            kernel.name());
  registry.register_source(entry, source, options);
  try {
    registry.compile(entry);
    return {};
  } catch (const Error& e) {
    return std::string(e.what()) + "\n" + lex::numbered(source);
  }
}

}  // namespace kreg::test

#define KREG_REQUIRE_GPU()                                               \
  do {                                                                   \
    const std::string kreg_why = ::kreg::test::gpu_unavailable_reason(); \
    if (!kreg_why.empty()) GTEST_SKIP() << "no GPU: " << kreg_why;       \
  } while (0)

namespace kreg::test {

// A folder of its own for the running test, empty at the start and removed at the end.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : path_(std::filesystem::path(::testing::TempDir()) /
              (prefix + std::to_string(::getpid()) + "_" + test_name())) {
    std::filesystem::remove_all(path_);
  }
  ~ScratchDir() {
    std::error_code error;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, error);
    std::filesystem::remove_all(path_, error);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  // One path component: a parameterized test's name ("Case/Param") holds a slash.
  static std::string test_name() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
  }

  std::filesystem::path path_;
};

// A fixture whose tests skip without a GPU and otherwise get a fresh registry.
template <class Base = ::testing::Test>
class WithGpuRegistry : public Base {
 protected:
  void SetUp() override {
    KREG_REQUIRE_GPU();
    reg_ = std::make_unique<Registry>(isolated_options());
  }
  std::unique_ptr<Registry> reg_;
};

}  // namespace kreg::test
