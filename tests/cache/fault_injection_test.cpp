// Faults injected into the disk cache's system calls, NVRTC and the driver's library load
// (src/core/faults.hpp). Each must end in a correct binary or a clear kreg::Error; the
// registry must work as before once the fault is gone; and the cache folder must hold
// nothing half-written: no temp file, and only entries that read back whole.
#include "cache/cache_scan.hpp"
#include "core/faults.hpp"
#include "cuda/library.hpp"
#include "test_support.hpp"

#include <cuda.h>
#include <nvrtc.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace kreg {
namespace {

namespace fs = std::filesystem;
using core::faults::Armed;
using core::faults::Point;

constexpr const char* kProbe =
    "extern \"C\" __global__ void fault_probe(float* p) { p[threadIdx.x] += 1.0f; }\n";
constexpr const char* kOther =
    "extern \"C\" __global__ void fault_other(float* p) { p[threadIdx.x] *= 3.0f; }\n";
constexpr const char* kSpecialized =
    "#include <kreg/kernel.cuh>\nKREG_CONSTANT(int, times, 7);\n"
    "extern \"C\" __global__ void fault_times(float* p) { p[threadIdx.x] *= times; }\n";

class Faults : public ::testing::Test {
 protected:
  void TearDown() override { core::faults::disarm_all(); }

  // A registry on this test's cache folder, compiling in-process (the fault switch is
  // per process) for sm_90, with the three sources above.
  std::unique_ptr<Registry> registry() const {
    auto reg = std::make_unique<Registry>(test::sm90_disk_options(dir_));
    reg->register_source("fault_probe", kProbe);
    reg->register_source("fault_other", kOther);
    reg->register_source("fault_times", kSpecialized);
    return reg;
  }
  static std::vector<char> image(const Binary& binary) {
    return {binary.image().begin(), binary.image().end()};
  }
  // The binary of fault_probe as a registry stored it on disk.
  std::vector<char> stored_probe() const {
    auto reg = registry();
    std::vector<char> bytes = image(reg->compile("fault_probe"));
    reg->flush_disk_cache();
    test::expect_clean_cache(dir_, 1);
    return bytes;
  }

  test::ScratchDir scratch_{"kreg_faults_"};
  const fs::path& dir_ = scratch_.path();
};

struct WriteFault {
  Point point;
  int error;
  const char* name;
};

class CacheWriteFaults : public Faults, public ::testing::WithParamInterface<WriteFault> {};

TEST_P(CacheWriteFaults, CompileIsServedNothingIsLeftAndLaterStoresLand) {
  const WriteFault fault = GetParam();
  const std::size_t before = core::faults::fired(fault.point);
  std::vector<char> compiled;
  {
    auto reg = registry();
    {
      Armed armed(fault.point, fault.error);
      const Binary& binary = reg->compile("fault_probe");
      EXPECT_EQ(binary.origin(), Origin::Compiled);
      EXPECT_GT(binary.size(), 0u);
      compiled = image(binary);
      reg->flush_disk_cache();  // the store, and its failure, happen on the writer thread
    }
    EXPECT_EQ(core::faults::fired(fault.point), before + 1);
    test::expect_clean_cache(dir_, 0);
    // The same registry stores again once the fault is gone.
    EXPECT_EQ(reg->compile("fault_other").origin(), Origin::Compiled);
    reg->flush_disk_cache();
    test::expect_clean_cache(dir_, 1);
    EXPECT_EQ(reg->stats().failures, 0u);
  }
  auto later = registry();
  const Binary& again = later->compile("fault_probe");
  EXPECT_EQ(again.origin(), Origin::Compiled);  // the failed store left nothing to read
  EXPECT_EQ(image(again), compiled);
  later->flush_disk_cache();
  test::expect_clean_cache(dir_, 2);
  auto third = registry();
  const Binary& from_disk = third->compile("fault_probe");
  EXPECT_EQ(from_disk.origin(), Origin::Disk);
  EXPECT_EQ(image(from_disk), compiled);
}

INSTANTIATE_TEST_SUITE_P(Faults, CacheWriteFaults,
                         ::testing::Values(WriteFault{Point::CreateFile, EACCES, "CreateEACCES"},
                                           WriteFault{Point::CreateFile, ENOSPC, "CreateENOSPC"},
                                           WriteFault{Point::Write, ENOSPC, "WriteENOSPC"},
                                           WriteFault{Point::Write, EDQUOT, "WriteEDQUOT"},
                                           WriteFault{Point::Sync, EIO, "SyncEIO"},
                                           WriteFault{Point::Rename, EACCES, "RenameEACCES"},
                                           WriteFault{Point::Rename, EXDEV, "RenameEXDEV"},
                                           WriteFault{Point::Rename, ENOSPC, "RenameENOSPC"},
                                           WriteFault{Point::MakeDir, EACCES, "EntryFolderEACCES"},
                                           WriteFault{Point::MakeDir, ENOSPC, "EntryFolderENOSPC"}),
                         [](const ::testing::TestParamInfo<WriteFault>& info) {
                           return std::string(info.param.name);
                         });

class FolderFaults : public Faults, public ::testing::WithParamInterface<int> {};

TEST_P(FolderFaults, AnUncreatableCacheFolderMeansMemoryOnlyUntilItCanBeMade) {
  const std::size_t before = core::faults::fired(Point::MakeDir);
  {
    Armed armed(Point::MakeDir, GetParam(), -1);
    auto reg = registry();
    EXPECT_TRUE(reg->cache_dir().empty());  // the disk cache is off, not failing
    EXPECT_EQ(reg->compile("fault_probe").origin(), Origin::Compiled);
    reg->flush_disk_cache();
    EXPECT_EQ(reg->compile("fault_probe").origin(), Origin::Compiled);  // served from memory
    EXPECT_EQ(reg->stats().compiles, 1u);
  }
  EXPECT_GT(core::faults::fired(Point::MakeDir), before);
  EXPECT_FALSE(fs::exists(dir_));
  auto reg = registry();
  EXPECT_EQ(reg->cache_dir(), dir_);
  reg->compile("fault_probe");
  reg->flush_disk_cache();
  test::expect_clean_cache(dir_, 1);
}

INSTANTIATE_TEST_SUITE_P(Faults, FolderFaults, ::testing::Values(EACCES, ENOSPC),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == EACCES ? "EACCES" : "ENOSPC");
                         });

TEST_F(Faults, ShortReadsOfAnEntryAreReadToTheEnd) {
  const std::vector<char> compiled = stored_probe();
  const std::size_t before = core::faults::fired(Point::Read);
  Armed armed(Point::Read, 0, -1);  // every read returns half of what it asked for
  auto reg = registry();
  const Binary& binary = reg->compile("fault_probe");
  EXPECT_EQ(binary.origin(), Origin::Disk);
  EXPECT_EQ(image(binary), compiled);
  EXPECT_GE(core::faults::fired(Point::Read), before + 2);
}

TEST_F(Faults, AnEntryThatEndsEarlyIsRecompiledAndReplaced) {
  const std::vector<char> compiled = stored_probe();
  {
    Armed armed(Point::ReadEof, 0);
    auto reg = registry();
    const Binary& binary = reg->compile("fault_probe");
    EXPECT_EQ(binary.origin(), Origin::Compiled);
    EXPECT_EQ(image(binary), compiled);
    EXPECT_EQ(reg->stats().disk_hits, 0u);
  }
  test::expect_clean_cache(dir_, 1);
  EXPECT_EQ(registry()->compile("fault_probe").origin(), Origin::Disk);
}

TEST_F(Faults, NvrtcOutOfMemoryIsACompileErrorNamingTheKernelAndIsNotCached) {
  auto reg = registry();
  const Constants constants{.ints = {{7, 3}}};
  {
    Armed armed(Point::NvrtcCompile, NVRTC_ERROR_OUT_OF_MEMORY);
    const std::string message = test::expect_error(ErrorCode::CompileError,
                                                   [&] { reg->compile("fault_times", constants); });
    EXPECT_TRUE(test::contains(message, "'fault_times|7:i3'")) << message;
    EXPECT_TRUE(test::contains(message, "key 'fault_times|7:i3@sm_90'")) << message;
    EXPECT_TRUE(test::contains(message, nvrtcGetErrorString(NVRTC_ERROR_OUT_OF_MEMORY))) << message;
  }
  EXPECT_EQ(reg->stats().failures, 1u);
  EXPECT_EQ(reg->stats().compiles, 0u);
  reg->flush_disk_cache();
  test::expect_clean_cache(dir_, 0);
  // Nothing of the failure was kept: the next request compiles, and is stored.
  const Binary& binary = reg->compile("fault_times", constants);
  EXPECT_EQ(binary.origin(), Origin::Compiled);
  EXPECT_EQ(binary.key(), "fault_times|7:i3@sm_90");
  reg->flush_disk_cache();
  test::expect_clean_cache(dir_, 1);
}

TEST_F(Faults, AnNvrtcThatRefusesTheIncludeTraceStillCompilesButStoresNothing) {
  // As an NVRTC without the front-end options that list the files read would answer.
  auto reg = registry();
  const std::size_t before = core::faults::fired(Point::NvrtcCompile);
  {
    Armed armed(Point::NvrtcCompile, NVRTC_ERROR_INVALID_OPTION);
    const Binary& binary = reg->compile("fault_probe");
    EXPECT_EQ(binary.origin(), Origin::Compiled);
    EXPECT_EQ(core::faults::fired(Point::NvrtcCompile), before + 1);
    reg->flush_disk_cache();
    test::expect_clean_cache(dir_, 0);
    EXPECT_EQ(image(binary), image(registry()->compile("fault_probe")));
  }
  reg->flush_disk_cache();
  test::expect_clean_cache(dir_, 1);  // the second registry's compile, traced, was stored
  EXPECT_EQ(reg->stats().failures, 0u);
}

TEST_F(Faults, NvrtcOutOfMemoryDuringPrewarmFailsThatKernelOnly) {
  auto reg = registry();
  {
    Armed armed(Point::NvrtcCompile, NVRTC_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(reg->prewarm({"fault_probe"}), 0u);
  }
  EXPECT_EQ(reg->stats().failures, 1u);
  EXPECT_EQ(reg->prewarm({"fault_probe", "fault_other"}), 2u);
  EXPECT_EQ(reg->stats().compiles, 2u);
  reg->flush_disk_cache();
  test::expect_clean_cache(dir_, 2);
}

TEST_F(Faults, ARefusedBinaryIsALoadErrorNamingItsKey) {
  auto reg = registry();
  const Binary& binary = reg->compile("fault_probe");
  const std::size_t before = core::faults::fired(Point::LibraryLoad);
  {
    Armed armed(Point::LibraryLoad, CUDA_ERROR_INVALID_IMAGE);
    const std::string message = test::expect_error(
        ErrorCode::LoadError, [&] { cuda::Library library(binary.image(), binary.key()); });
    EXPECT_TRUE(test::contains(message, "'fault_probe@sm_90'")) << message;
  }
  EXPECT_EQ(core::faults::fired(Point::LibraryLoad), before + 1);
  // Disarmed, the driver answers: without one that is NoDevice, with a GPU a library.
  if (!test::gpu_unavailable_reason().empty()) {
    test::expect_error(ErrorCode::NoDevice,
                       [&] { cuda::Library library(binary.image(), binary.key()); });
  } else {
    EXPECT_NO_THROW(cuda::Library(binary.image(), binary.key()));
  }
}

TEST_F(Faults, ASwitchArmedForNTimesFailsExactlyNCalls) {
  const std::size_t before = core::faults::fired(Point::Rename);
  Armed armed(Point::Rename, EBUSY, 2);
  EXPECT_EQ(core::faults::hit(Point::Rename), EBUSY);
  EXPECT_EQ(core::faults::hit(Point::Rename), EBUSY);
  EXPECT_FALSE(core::faults::hit(Point::Rename).has_value());
  EXPECT_FALSE(core::faults::hit(Point::Write).has_value());
  EXPECT_EQ(core::faults::fired(Point::Rename), before + 2);
}

}  // namespace
}  // namespace kreg
