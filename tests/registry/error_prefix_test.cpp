// Every error names kreg once: kreg::Error::what() carries the prefix, and nothing that an
// error quotes (a lower layer's error, a compiler log, a prewarm failure) carries another.
#include "test_support.hpp"

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace kreg {
namespace {

using test::contains;

std::size_t prefixes_in(const std::string& text) {
  std::size_t count = 0;
  for (std::size_t at = text.find("kreg: "); at != std::string::npos;
       at = text.find("kreg: ", at + 1)) {
    ++count;
  }
  return count;
}

// Runs `fn`, which must throw a kreg::Error, and checks the prefix: once in what(), at the
// start, and never in message().
void expect_one_prefix(const std::string& what_case, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.starts_with("kreg: ")) << what_case << ": " << what;
    EXPECT_EQ(prefixes_in(what), 1u) << what_case << ": " << what;
    EXPECT_EQ(prefixes_in(std::string(e.message())), 0u) << what_case << ": " << e.message();
    return;
  }
  ADD_FAILURE() << what_case << ": no kreg::Error";
}

TEST(ErrorPrefix, AnArchNvrtcCannotTargetNamesKregOnce) {
  RegistryOptions options = test::isolated_options();
  options.arch = "sm_999";
  expect_one_prefix("sm_999", [&] { Registry reg(options); });
  try {
    Registry reg(options);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(e.message().starts_with("NVRTC ")) << e.message();
    EXPECT_TRUE(contains(std::string(e.message()), "cannot target sm_999")) << e.message();
  }
}

TEST(ErrorPrefix, RegistryErrorsNameKregOnce) {
  Registry reg(test::sm90_options());
  reg.register_source("broken", "extern \"C\" __global__ void broken() { int x = ; }");
  reg.register_source("mismatched",
                      "#include <kreg/kernel.cuh>\n"
                      "extern \"C\" __global__ void mismatched(int* p) {\n"
                      "  KREG_SIGNATURE(mismatched, void(float*));\n"
                      "}\n");
  expect_one_prefix("unknown kernel", [&] { reg.compile("nosuch"); });
  expect_one_prefix("empty name", [&] { reg.compile(""); });
  expect_one_prefix("compile error", [&] { reg.compile("broken"); });
  // The compiler's log quotes the device header's static_assert, which names its macro.
  expect_one_prefix("static_assert in the log", [&] { reg.compile("mismatched"); });
  expect_one_prefix("undeclared constant", [&] { reg.compile("broken", {.ints = {{7, 1}}}); });
  expect_one_prefix("malformed source", [&] { reg.register_source("bad", ""); });
  expect_one_prefix("bad constants text", [&] { (void)parse_constants("1:x"); });
}

TEST(ErrorPrefix, TheNoDeviceErrorQuotesTheDriversWithoutASecondPrefix) {
  if (test::gpu_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a GPU";
  if (std::getenv("KREG_ARCH") != nullptr) GTEST_SKIP() << "KREG_ARCH is set";
  Registry reg(test::isolated_options());
  expect_one_prefix("no GPU, no arch", [&] { reg.compile("elementwise_add_f32"); });
  Registry sm90(test::sm90_options());
  expect_one_prefix("get without a GPU", [&] { sm90.get("elementwise_add_f32"); });
}

TEST(ErrorPrefix, PrewarmFailuresCarryNoPrefix) {
  RegistryOptions options = test::sm90_options();
  options.builtins = false;
  Registry reg(options);
  reg.register_source("broken", "extern \"C\" __global__ void broken() { int x = ; }");
  const PrewarmReport report = reg.prewarm_all();
  ASSERT_FALSE(report.failures.empty());
  for (const std::string& failure : report.failures) {
    // "label: reason", shown by kreg: the reason does not name kreg again.
    EXPECT_EQ(prefixes_in(failure), 0u) << failure;
    EXPECT_TRUE(contains(failure, "broken: compiling 'broken'")) << failure;
  }
}

}  // namespace
}  // namespace kreg
