// Record and replay: a manifest written by one registry prewarms the same set in another.
#include "registry/manifest.hpp"

#include "test_support.hpp"

#include <sys/stat.h>

#include <fstream>
#include <thread>

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

TEST(Manifest, RecordAndReplayRoundTrip) {
  test::ScratchDir scratch("kreg_manifest_");
  std::filesystem::create_directories(scratch.path());
  const auto path = scratch.path() / "served.json";
  const Constants c{.bools = {{200, true}}, .ints = {{300, 5}}};
  {
    Registry first(test::sm90_options());
    first.prewarm({"elementwise_add_f32", "axpy_f64"});
    first.prewarm({{"powi_f32", c}});
    first.compile("axpy_f32");  // compiled only, never served as a kernel: not listed
    first.write_manifest(path);
  }
  Registry second(test::sm90_options());
  EXPECT_EQ(second.prewarm_manifest(path), 3u);
  EXPECT_TRUE(second.is_cached("elementwise_add_f32"));
  EXPECT_TRUE(second.is_cached("axpy_f64"));
  EXPECT_TRUE(second.is_cached("powi_f32", c));
  EXPECT_FALSE(second.is_cached("axpy_f32"));
  EXPECT_EQ(second.cached_count(), 3u);
}

TEST(Manifest, ConcurrentWritersNeverLeaveHalfAManifest) {
  test::ScratchDir scratch("kreg_manifest_");
  std::filesystem::create_directories(scratch.path());
  const auto path = scratch.path() / "shared.json";
  Registry reg(test::sm90_options());
  reg.prewarm({"elementwise_add_f32", "axpy_f32"});
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 20; ++i) reg.write_manifest(path);
    });
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(read_manifest(path).size(), 2u);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(scratch.path()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temp file left behind
}

TEST(Manifest, UnknownNamesAreSkippedOnReplay) {
  test::ScratchDir scratch("kreg_manifest_");
  std::filesystem::create_directories(scratch.path());
  const auto path = scratch.path() / "m.json";
  std::ofstream(path) << R"({"format": "kreg-manifest", "version": 1, "kernels": [
      {"name": "axpy_f32", "constants": ""}, {"name": "from_another_build"}]})";
  Registry reg(test::sm90_options());
  EXPECT_EQ(reg.prewarm_manifest(path), 1u);
}

TEST(Manifest, BadManifestsAreInvalidArguments) {
  test::ScratchDir scratch("kreg_manifest_");
  std::filesystem::create_directories(scratch.path());
  Registry reg(test::sm90_options());
  const struct {
    const char* text;
    const char* expect;
  } cases[] = {
      {"not json", "not JSON"},
      {R"({"format": "other"})", "not a kreg manifest"},
      {R"({"format": "kreg-manifest", "version": 99, "kernels": []})", "unsupported version"},
      {R"({"format": "kreg-manifest", "version": 1})", "no kernel list"},
      {R"({"format": "kreg-manifest", "version": 1, "kernels": [{"constants": ""}]})",
       "without a name"},
      {R"({"format": "kreg-manifest", "version": 1, "kernels": [{"name": "k", "constants": "1:x"}]})",
       "not a constant set"},
      {R"({"format": 1})", "not a kreg manifest"},
      {R"({"format": "kreg-manifest", "version": 1, "kernels": [{"name": "k", "constants": null}]})",
       "constants must be a string"},
      {R"({"format": "kreg-manifest", "version": "1", "kernels": []})", "unsupported version"},
      // Versions whose low 32 bits are 1: read as an int, they would pass for version 1.
      {R"({"format": "kreg-manifest", "version": 4294967297, "kernels": []})",
       "unsupported version"},
      {R"({"format": "kreg-manifest", "version": -4294967295, "kernels": []})",
       "unsupported version"},
  };
  for (const auto& c : cases) {
    const auto path = scratch.path() / "bad.json";
    std::ofstream(path, std::ios::trunc) << c.text;
    std::string message =
        expect_error(ErrorCode::InvalidArgument, [&] { reg.prewarm_manifest(path); });
    EXPECT_TRUE(contains(message, c.expect)) << message;
  }
  expect_error(ErrorCode::InvalidArgument,
               [&] { reg.prewarm_manifest(scratch.path() / "missing.json"); });
  expect_error(ErrorCode::InvalidArgument,
               [&] { reg.write_manifest(scratch.path() / "no" / "such" / "folder.json"); });
}

TEST(Manifest, OnlyRegularFilesOfBoundedSizeAreRead) {
  // None of these may block the reader or make it allocate what the file claims.
  test::ScratchDir scratch("kreg_manifest_");
  namespace fs = std::filesystem;
  fs::create_directories(scratch.path());
  const fs::path fifo = scratch.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path huge = scratch.path() / "huge.json";
  std::ofstream(huge).close();
  fs::resize_file(huge, std::uintmax_t{1} << 40);  // sparse: a terabyte of nothing
  const struct {
    fs::path path;
    const char* expect;
  } cases[] = {
      {fifo, "is a FIFO, not a regular file"},
      {scratch.path(), "is a folder, not a regular file"},
      {"/dev/zero", "is a device, not a regular file"},
      {huge, "is 1024.0 GiB, more than the 64.0 MiB allowed"},
      {scratch.path() / "missing.json", "cannot be opened: No such file or directory"},
  };
  for (const auto& c : cases) {
    const std::string message =
        expect_error(ErrorCode::InvalidArgument, [&] { read_manifest(c.path); });
    EXPECT_TRUE(contains(message, "manifest '" + c.path.string() + "': " + c.expect)) << message;
  }
  // A link to a manifest is the manifest.
  const fs::path real = scratch.path() / "real.json";
  registry::write_manifest(real, {{"axpy_f32", {}}});
  fs::create_symlink(real, scratch.path() / "link.json");
  EXPECT_EQ(read_manifest(scratch.path() / "link.json").size(), 1u);
}

// JSON holds only UTF-8, so such a name is refused with kreg's error, before anything is
// written, not with the JSON library's own exception. Entry names are ASCII in the C
// locale, but isalpha() takes more letters under others.
TEST(Manifest, NameThatIsNotUtf8IsAnInvalidArgument) {
  test::ScratchDir scratch("kreg_manifest_");
  std::filesystem::create_directories(scratch.path());
  const auto path = scratch.path() / "latin1.json";
  const std::vector<KernelRequest> kernels = {{"caf\xe9", {}}, {"powi_f32", {}}};
  const std::string message =
      expect_error(ErrorCode::InvalidArgument, [&] { registry::write_manifest(path, kernels); });
  EXPECT_TRUE(contains(message, "not UTF-8")) << message;
  EXPECT_FALSE(std::filesystem::exists(path));
  registry::write_manifest(path, {{"caf\xc3\xa9", {}}});
  const std::vector<KernelRequest> back = read_manifest(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "caf\xc3\xa9");
}

}  // namespace
}  // namespace kreg
