// A binary is stored on disk only if its key covers every file its compile read. Each test
// edits a header the key cannot hold between two registries (as two processes would see it)
// and checks that the second is not served the first one's binary.
#include "compiler/nvrtc_compiler.hpp"
#include "test_support.hpp"

#include <filesystem>
#include <fstream>
#include <vector>

namespace kreg {
namespace {

namespace fs = std::filesystem;

// Runs the test from another folder, and returns to the old one however it ends.
class CurrentDir {
 public:
  explicit CurrentDir(const fs::path& dir) : old_(fs::current_path()) { fs::current_path(dir); }
  ~CurrentDir() {
    std::error_code error;
    fs::current_path(old_, error);
  }
  CurrentDir(const CurrentDir&) = delete;
  CurrentDir& operator=(const CurrentDir&) = delete;

 private:
  fs::path old_;
};

class KeyCoverage : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(cache_);
    fs::create_directories(headers_);
    write_header(111);
  }
  RegistryOptions with_disk() const { return test::sm90_disk_options(cache_); }
  std::size_t entries() const {
    std::size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(cache_)) {
      n += e.path().extension() == ".kbin";
    }
    return n;
  }
  void write_header(int value) const {
    std::ofstream(header()) << "#pragma once\n#define KREG_TEST_VALUE " << value << "\n";
  }
  fs::path header() const { return headers_ / "value.cuh"; }

  struct Compiled {
    Origin origin;
    std::vector<char> image;
  };
  Compiled compile(const std::string& text) const {
    Registry reg(with_disk());
    reg.register_source("covered", text);
    const Binary& b = reg.compile("covered_kernel");
    Compiled out{b.origin(), {b.image().begin(), b.image().end()}};
    reg.flush_disk_cache();
    return out;
  }
  // Compiles `text` (which reads KREG_TEST_VALUE from the header), edits the header, and
  // compiles again in a new registry: that one must compile afresh, and see the edit.
  void expect_never_stale(const std::string& text) {
    SCOPED_TRACE(text);
    const Compiled first = compile(text);
    EXPECT_EQ(first.origin, Origin::Compiled);
    EXPECT_EQ(entries(), 0u) << "stored, though the key does not hold " << header();
    write_header(222);
    const Compiled second = compile(text);
    EXPECT_EQ(second.origin, Origin::Compiled);
    EXPECT_NE(second.image, first.image) << "the edit of the header did not reach the binary";
    write_header(111);
  }

  static std::string kernel() {
    return "extern \"C\" __global__ void covered_kernel(int* p) { p[0] = KREG_TEST_VALUE; }\n";
  }

  test::ScratchDir scratch_{"kreg_cover_"};
  fs::path cache_ = scratch_.path() / "cache";
  fs::path headers_ = scratch_.path() / "headers";
};

TEST_F(KeyCoverage, AnAbsoluteIncludeIsNeverStored) {
  expect_never_stale("#include \"" + header().string() + "\"\n" + kernel());
  expect_never_stale("#include <" + header().string() + ">\n" + kernel());
}

TEST_F(KeyCoverage, ADigraphIncludeIsNeverStored) {
  expect_never_stale("%:include \"" + header().string() + "\"\n" + kernel());
}

TEST_F(KeyCoverage, AnIncludeSplitByALineContinuationIsNeverStored) {
  expect_never_stale("#inc\\\nlude \"" + header().string() + "\"\n" + kernel());
  const std::string path = header().string();
  const std::size_t half = path.size() / 2;
  expect_never_stale("#include \"" + path.substr(0, half) + "\\\n" + path.substr(half) + "\"\n" +
                     kernel());
}

TEST_F(KeyCoverage, AnIncludeThroughAMacroIsNeverStored) {
  expect_never_stale("#define KREG_TEST_HEADER \"" + header().string() +
                     "\"\n#include KREG_TEST_HEADER\n" + kernel());
  expect_never_stale(
      "#define KREG_TEST_STR(x) #x\n#define KREG_TEST_XSTR(x) KREG_TEST_STR(x)\n"
      "#include KREG_TEST_XSTR(" +
      header().string() + ")\n" + kernel());
}

TEST_F(KeyCoverage, AnIncludeThatClimbsOutOfTheToolkitIsNeverStored) {
  const std::string toolkit = compiler::toolkit_include_dir();
  if (toolkit.empty()) GTEST_SKIP() << "no toolkit include folder";
  // `..` climbs the folder as it is on disk, so count the parts of the real path: a
  // toolkit reached through a link (/usr/local/cuda -> cuda-13.0/targets/...) is deeper
  // than its spelling.
  std::string up;
  for (const auto& part : fs::canonical(toolkit).relative_path()) {
    static_cast<void>(part);
    up += "../";
  }
  expect_never_stale("#include <" + up + header().relative_path().string() + ">\n" + kernel());
}

TEST_F(KeyCoverage, AHeaderInTheCurrentFolderIsNeverRead) {
  // NVRTC would find "value.cuh" next to a program named "covered.cu": in the current
  // folder. kreg's programs live in no folder, so the header is not found at all.
  const CurrentDir here(headers_);
  Registry reg(with_disk());
  reg.register_source("covered", "#include \"value.cuh\"\n" + kernel());
  const std::string message =
      test::expect_error(ErrorCode::CompileError, [&] { reg.compile("covered_kernel"); });
  EXPECT_TRUE(test::contains(message, "cannot open source file \"value.cuh\"")) << message;
  // Diagnostics name the program as the source's name, not the path NVRTC was given.
  EXPECT_TRUE(test::contains(message, "covered.cu(1)")) << message;
  EXPECT_FALSE(test::contains(message, "/dev/null")) << message;
}

TEST_F(KeyCoverage, AHeaderShadowingAToolkitHeaderInTheCurrentFolderChangesNothing) {
  if (compiler::toolkit_include_dir().empty()) GTEST_SKIP() << "no toolkit include folder";
  // The toolkit's vector_types.h is what every process compiles against, wherever it runs;
  // so the binary may be stored, and a process in a folder with a file of that name is
  // served the same binary it would compile.
  const std::string text =
      "#include \"vector_types.h\"\n#ifndef KREG_TEST_VALUE\n#define KREG_TEST_VALUE 7\n#endif\n" +
      kernel();
  const Compiled plain = compile(text);
  EXPECT_EQ(entries(), 1u);
  fs::remove_all(cache_);
  std::ofstream(headers_ / "vector_types.h") << "#define KREG_TEST_VALUE 111\n";
  const CurrentDir here(headers_);
  const Compiled shadowed = compile(text);
  EXPECT_EQ(shadowed.origin, Origin::Compiled);
  EXPECT_EQ(shadowed.image, plain.image) << "the current folder's vector_types.h was read";
  std::ofstream(headers_ / "vector_types.h") << "#define KREG_TEST_VALUE 222\n";
  const Compiled again = compile(text);
  EXPECT_EQ(again.origin, Origin::Disk);
  EXPECT_EQ(again.image, plain.image);
}

TEST_F(KeyCoverage, HasIncludeOfAPathOutsideTheToolkitIsNeverStored) {
  // Whether a file exists shapes the binary, yet no file is read; such sources are never
  // looked up or stored.
  const std::string probe = "#if __has_include(\"" + header().string() +
                            "\")\n#define KREG_TEST_VALUE 1\n#else\n#define KREG_TEST_VALUE 2\n"
                            "#endif\n";
  const Compiled with_file = compile(probe + kernel());
  EXPECT_EQ(entries(), 0u);
  fs::remove(header());
  const Compiled without_file = compile(probe + kernel());
  EXPECT_EQ(without_file.origin, Origin::Compiled);
  EXPECT_NE(without_file.image, with_file.image);
  EXPECT_EQ(entries(), 0u);
  // Through a macro the path cannot be read at all.
  compile("#define KREG_TEST_PATH \"" + header().string() +
          "\"\n#if __has_include(KREG_TEST_PATH)\n#endif\n#define KREG_TEST_VALUE 3\n" + kernel());
  EXPECT_EQ(entries(), 0u);
  // A toolkit header's existence changes only with the toolkit.
  compile("#if __has_include(<cuda_fp16.h>)\n#define KREG_TEST_VALUE 4\n#endif\n" + kernel());
  EXPECT_EQ(entries(), 1u);
}

TEST_F(KeyCoverage, AnIncludePathOfTheCallersIsNeverLookedUpOrStored) {
  RegistryOptions options = with_disk();
  options.compile_options = {"-I" + headers_.string()};
  for (int value : {111, 222}) {
    write_header(value);
    Registry reg(options);
    reg.register_source("covered", "#include \"value.cuh\"\n" + kernel());
    EXPECT_EQ(reg.compile("covered_kernel").origin(), Origin::Compiled);
    reg.flush_disk_cache();
    EXPECT_EQ(entries(), 0u);
  }
}

}  // namespace
}  // namespace kreg
