// Bundles: export a disk cache to one file, import it elsewhere, and refuse what was damaged
// or forged, entry by entry.
#include "remote/remote_sources.hpp"
#include "test_support.hpp"

#include <kreg/bundle.hpp>

#include <fstream>
#include <iterator>

namespace kreg {
namespace {

namespace fs = std::filesystem;
constexpr int kKernels = 5;

class Bundle : public ::testing::Test {
 protected:
  void SetUp() override {
    Registry reg(test::remote_options(source_dir(), ""));
    for (const std::string& name : test::register_remote_sources(reg, kKernels)) reg.compile(name);
  }
  fs::path source_dir() const { return scratch_.path() / "source"; }
  fs::path file() const { return scratch_.path() / "kernels.kbundle"; }
  // A fresh registry on `dir`: how many kernels it compiled to get them all.
  std::uint64_t compiles_on(const fs::path& dir) const {
    Registry reg(test::remote_options(dir, ""));
    for (const std::string& name : test::register_remote_sources(reg, kKernels)) reg.compile(name);
    return reg.stats().compiles;
  }
  std::string read_file() const {
    std::ifstream in(file(), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write_file(const std::string& bytes) const {
    std::ofstream(file(), std::ios::binary | std::ios::trunc) << bytes;
  }
  test::ScratchDir scratch_{"kreg_bundle_"};
};

TEST_F(Bundle, ExportThenImportServesAFreshProcessWithZeroCompiles) {
  const BundleReport out = export_bundle(file(), source_dir());
  EXPECT_EQ(out.entries, static_cast<std::size_t>(kKernels));
  EXPECT_EQ(out.refused, 0u);
  const BundleReport in = import_bundle(file(), scratch_.path() / "image");
  EXPECT_EQ(in.entries, static_cast<std::size_t>(kKernels));
  EXPECT_TRUE(in.problems.empty());
  EXPECT_EQ(compiles_on(scratch_.path() / "image"), 0u);
}

TEST_F(Bundle, AManifestsDigestsExportOnlyThoseKernels) {
  Registry reg(test::remote_options(source_dir(), ""));
  test::register_remote_sources(reg, kKernels);
  const std::vector<std::string> digests =
      reg.entry_digests({{"remote_k1", {}}, {"remote_k3", {}}});
  ASSERT_EQ(digests.size(), 2u);
  EXPECT_EQ(digests[0].size(), 32u);
  const BundleReport out = export_bundle(file(), source_dir(), digests);
  EXPECT_EQ(out.entries, 2u);
  import_bundle(file(), scratch_.path() / "image");
  EXPECT_EQ(compiles_on(scratch_.path() / "image"), static_cast<std::uint64_t>(kKernels - 2));
  const BundleReport missing = export_bundle(file(), source_dir(), {std::string(32, 'a')});
  EXPECT_EQ(missing.missing, 1u);
}

TEST_F(Bundle, ATamperedBundleIsRefusedEntryByEntry) {
  export_bundle(file(), source_dir());
  std::string bytes = read_file();
  bytes[bytes.size() - 100] ^= 0x04;  // inside the last entry
  write_file(bytes);
  const BundleReport in = import_bundle(file(), scratch_.path() / "image");
  EXPECT_EQ(in.entries, static_cast<std::size_t>(kKernels - 1));
  EXPECT_EQ(in.refused, 1u);
  ASSERT_EQ(in.problems.size(), 1u);
  EXPECT_NE(in.problems[0].find("checksum mismatch"), std::string::npos) << in.problems[0];
  EXPECT_EQ(compiles_on(scratch_.path() / "image"), 1u);
  // Cut short: what came before the cut is imported.
  write_file(bytes.substr(0, bytes.size() / 2));
  const BundleReport cut = import_bundle(file(), scratch_.path() / "cut");
  EXPECT_GE(cut.refused, 1u);
  EXPECT_LT(cut.entries, static_cast<std::size_t>(kKernels));
  // Not a bundle at all.
  write_file("not a bundle");
  test::expect_error(ErrorCode::InvalidArgument,
                     [&] { import_bundle(file(), scratch_.path() / "none"); });
}

TEST_F(Bundle, ASignedBundleImportsOnlyWithItsSecret) {
  export_bundle(file(), source_dir(), {}, BundleOptions{.secret = "image key"});
  const BundleReport wrong =
      import_bundle(file(), scratch_.path() / "wrong", BundleOptions{.secret = "other"});
  EXPECT_EQ(wrong.entries, 0u);
  EXPECT_EQ(wrong.refused, static_cast<std::size_t>(kKernels));
  const BundleReport right =
      import_bundle(file(), scratch_.path() / "right", BundleOptions{.secret = "image key"});
  EXPECT_EQ(right.entries, static_cast<std::size_t>(kKernels));
  // An unsigned bundle is refused where a secret is required.
  export_bundle(file(), source_dir());
  const BundleReport unsigned_in =
      import_bundle(file(), scratch_.path() / "unsigned", BundleOptions{.secret = "image key"});
  EXPECT_EQ(unsigned_in.entries, 0u);
  EXPECT_EQ(unsigned_in.refused, static_cast<std::size_t>(kKernels));
}

TEST_F(Bundle, AWholeCacheExportCarriesTuningRecords) {
  TuneSpace space;
  space.ints = {{300, {16, 32}}};
  int timed = 0;
  TuneOptions fake;
  fake.timer = [&timed](const Constants& c, const std::function<void()>&) {
    ++timed;
    return static_cast<double>(c.ints[0].second);
  };
  const char* source = R"(
#include <kreg/kernel.cuh>
KREG_CONSTANT_DEFAULT(int, tile, 300, 32);
extern "C" __global__ void tiled(int* out) { out[0] = tile; }
)";
  const auto tune_on = [&](const fs::path& dir) {
    RegistryOptions o = test::remote_options(dir, "");
    o.arch = "sm_90";
    Registry reg(o);
    reg.register_source("tiled", source);
    const TuneResult r = reg.tune("tiled", space, "bucket", {}, fake);
    EXPECT_EQ(constants_key(r.winner), "300:i16");
    reg.flush_disk_cache();
    return r.timed;
  };
  EXPECT_EQ(tune_on(source_dir()), 2U);
  const BundleReport out = export_bundle(file(), source_dir());
  EXPECT_EQ(out.entries, static_cast<std::size_t>(kKernels) + 2 + 2);  // and two binaries
  EXPECT_EQ(import_bundle(file(), scratch_.path() / "image").entries, out.entries);
  EXPECT_EQ(tune_on(scratch_.path() / "image"), 0U);
  EXPECT_EQ(timed, 2);
}

}  // namespace
}  // namespace kreg
