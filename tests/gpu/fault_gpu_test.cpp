// Injected faults on the path a `get` takes on a GPU: the driver refusing a binary, NVRTC out
// of memory, a disk that cannot be written. Each is a clear error or a served kernel, and the
// next `get` works. Without a GPU they skip (the CPU side is in cache/fault_injection_test).
#include "cache/cache_scan.hpp"
#include "core/faults.hpp"
#include "test_support.hpp"

#include <cuda.h>
#include <nvrtc.h>

#include <cerrno>
#include <filesystem>

namespace kreg {
namespace {

using core::faults::Armed;
using core::faults::Point;
using test::contains;
using test::expect_error;

class FaultsGpu : public test::WithGpuRegistry<> {
 protected:
  void TearDown() override { core::faults::disarm_all(); }
};

TEST_F(FaultsGpu, ARefusedLoadIsALoadErrorAndTheNextGetLoads) {
  {
    Armed armed(Point::LibraryLoad, CUDA_ERROR_OUT_OF_MEMORY);
    const std::string message = expect_error(ErrorCode::LoadError, [&] { reg_->get("axpy_f32"); });
    EXPECT_TRUE(contains(message, "kernel 'axpy_f32'")) << message;
    EXPECT_TRUE(contains(message, "CUDA_ERROR_OUT_OF_MEMORY")) << message;
  }
  EXPECT_FALSE(reg_->is_cached("axpy_f32"));
  EXPECT_EQ(reg_->cached_count(), 0u);
  EXPECT_EQ(reg_->stats().failures, 1u);
  const Kernel& kernel = reg_->get("axpy_f32");
  EXPECT_EQ(kernel.label(), "axpy_f32");
  EXPECT_NE(kernel.native_handle(), nullptr);
  EXPECT_TRUE(reg_->is_cached("axpy_f32"));
  EXPECT_EQ(reg_->stats().compiles, 1u);  // the binary was kept; only the load was retried
  EXPECT_EQ(reg_->stats().loads, 1u);
  EXPECT_EQ(&reg_->get("axpy_f32"), &kernel);
}

TEST_F(FaultsGpu, NvrtcOutOfMemoryFailsOneGetAndTheNextCompiles) {
  {
    Armed armed(Point::NvrtcCompile, NVRTC_ERROR_OUT_OF_MEMORY);
    const std::string message =
        expect_error(ErrorCode::CompileError, [&] { reg_->get("elementwise_add_f32"); });
    EXPECT_TRUE(contains(message, "'elementwise_add_f32'")) << message;
  }
  EXPECT_FALSE(reg_->is_cached("elementwise_add_f32"));
  EXPECT_EQ(reg_->get("elementwise_add_f32").label(), "elementwise_add_f32");
  EXPECT_EQ(reg_->stats().compiles, 1u);
}

TEST_F(FaultsGpu, GetIsServedWhileTheCacheCannotBeWritten) {
  test::ScratchDir scratch("kreg_faults_gpu_");
  RegistryOptions options = test::isolated_options();
  options.disk_cache = true;
  options.cache_dir = scratch.path();
  options.compile_processes = 0;
  Registry reg(options);
  {
    Armed armed(Point::Write, ENOSPC, -1);
    EXPECT_NE(reg.get("axpy_f32").native_handle(), nullptr);
    reg.flush_disk_cache();
  }
  test::expect_clean_cache(scratch.path(), 0);
  EXPECT_NE(reg.get("elementwise_add_f32").native_handle(), nullptr);
  reg.flush_disk_cache();
  test::expect_clean_cache(scratch.path(), 1);
}

}  // namespace
}  // namespace kreg
