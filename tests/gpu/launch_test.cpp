// Launch forms and launch-time checks.
#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

namespace kreg {
namespace {

using test::contains;
using test::DeviceBuffer;
using test::expect_error;

using Launch = test::WithGpuRegistry<>;

TEST_F(Launch, VariadicAndRawFormsAgree) {
  const unsigned n = 4099;
  std::mt19937 rng(7);
  auto a = test::random_vector<float>(n, rng);
  auto b = test::random_vector<float>(n, rng);
  DeviceBuffer<float> da(a), db(b), typed(n), raw(n);
  const Kernel& k = reg_->get("elementwise_add_f32");
  typed.poison();
  raw.poison();
  k.launch(Dim3{(n + 127) / 128}, Dim3{128}, 0, nullptr, da.get(), db.get(), typed.get(), n);
  float* pa = da.get();
  float* pb = db.get();
  float* pout = raw.get();
  unsigned count = n;
  void* args[] = {&pa, &pb, &pout, &count};
  k.launch_raw(Dim3{(n + 127) / 128}, Dim3{128}, 0, nullptr, args);
  auto t = typed.download();
  auto r = raw.download();
  for (unsigned i = 0; i < n; ++i) {
    ASSERT_EQ(t[i], a[i] + b[i]) << i;
    ASSERT_EQ(r[i], t[i]) << i;
  }
}

TEST_F(Launch, OnAnExplicitStream) {
  cudaStream_t stream = nullptr;
  test::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  DeviceBuffer<float> x(std::vector<float>(1000, 2.0f)), y(std::vector<float>(1000, 1.0f));
  reg_->get("axpy_f32").launch(Dim3{4}, Dim3{256}, 0, stream, 3.0f, x.get(), y.get(), 1000u);
  test::cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  auto out = y.download();
  for (float v : out) ASSERT_EQ(v, 7.0f);
  cudaStreamDestroy(stream);
}

TEST_F(Launch, WrongArgumentCountOrSizeIsInvalidArgument) {
  DeviceBuffer<float> buf(16);
  const Kernel& k = reg_->get("elementwise_add_f32");
  std::string message = expect_error(ErrorCode::InvalidArgument, [&] {
    k.launch(Dim3{1}, Dim3{32}, 0, nullptr, buf.get(), buf.get(), buf.get());
  });
  EXPECT_TRUE(contains(message, "takes 4 parameters but 3")) << message;
  message = expect_error(ErrorCode::InvalidArgument, [&] {
    k.launch(Dim3{1}, Dim3{32}, 0, nullptr, buf.get(), buf.get(), buf.get(), std::size_t{16});
  });
  EXPECT_TRUE(contains(message, "parameter 3 is 4 bytes but the argument is 8")) << message;
  EXPECT_TRUE(contains(message, "elementwise_add_f32")) << message;
}

TEST_F(Launch, TooManyThreadsPerBlockIsInvalidArgument) {
  DeviceBuffer<float> buf(16);
  const Kernel& k = reg_->get("elementwise_add_f32");
  std::string message = expect_error(ErrorCode::InvalidArgument, [&] {
    k.launch(Dim3{1}, Dim3{2048}, 0, nullptr, buf.get(), buf.get(), buf.get(), 16u);
  });
  EXPECT_TRUE(contains(message, "2048 threads")) << message;
  expect_error(ErrorCode::InvalidArgument, [&] {
    k.launch(Dim3{0}, Dim3{32}, 0, nullptr, buf.get(), buf.get(), buf.get(), 16u);
  });
}

TEST_F(Launch, DriverRejectionIsLaunchErrorWithLabel) {
  DeviceBuffer<float> buf(16);
  const Kernel& k = reg_->get("elementwise_add_f32");
  // Far more dynamic shared memory than any GPU has.
  std::string message = expect_error(ErrorCode::LaunchError, [&] {
    k.launch(Dim3{1}, Dim3{32}, std::size_t{1} << 30, nullptr, buf.get(), buf.get(), buf.get(),
             16u);
  });
  EXPECT_TRUE(contains(message, "'elementwise_add_f32'")) << message;
  // The context is still healthy.
  k.launch(Dim3{1}, Dim3{32}, 0, nullptr, buf.get(), buf.get(), buf.get(), 16u);
  test::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// Past 48 KiB a kernel opts in once per GPU, for all the GPU allows: a larger request after a
// smaller one still launches, and one past the GPU's limit is still refused after the opt-in.
TEST_F(Launch, SharedMemoryPast48KiBOptsInOnceAndStaysBounded) {
  DeviceBuffer<float> buf(16);
  const Kernel& k = reg_->get("elementwise_add_f32");
  for (const std::size_t kib : {64, 96, 64}) {
    k.launch(Dim3{1}, Dim3{32}, kib * 1024, nullptr, buf.get(), buf.get(), buf.get(), 16u);
  }
  test::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::string message = expect_error(ErrorCode::LaunchError, [&] {
    k.launch(Dim3{1}, Dim3{32}, std::size_t{1} << 30, nullptr, buf.get(), buf.get(), buf.get(),
             16u);
  });
  EXPECT_TRUE(contains(message, "allows at most")) << message;
}

// A kernel that faults is reported at the next call that waits for its stream, as a
// LaunchError naming the kernel. The probe runs in a process of its own, because the fault
// leaves the context unusable.
TEST(KernelFault, SurfacesAsLaunchErrorWithTheLabelAtTheNextWait) {
  KREG_REQUIRE_GPU();
  const std::filesystem::path probe =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "kreg_fault_probe";
  ASSERT_TRUE(std::filesystem::exists(probe)) << probe;
  FILE* pipe = ::popen((probe.string() + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char chunk[512];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) output += chunk;
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output.rfind("LaunchError\n", 0), 0U) << output;
  EXPECT_TRUE(contains(output, "reads_wild_pointer")) << output;
  EXPECT_TRUE(contains(output, "CUDA_ERROR_ILLEGAL_ADDRESS")) << output;
  EXPECT_TRUE(contains(output, "unusable")) << output;
}

TEST_F(Launch, WorksFromAThreadWithoutACurrentContext) {
  DeviceBuffer<float> x(std::vector<float>(64, 1.0f)), y(std::vector<float>(64, 0.0f));
  const Kernel& k = reg_->get("axpy_f32");
  std::string failure;
  std::thread worker([&] {
    try {
      k.launch(Dim3{1}, Dim3{64}, 0, nullptr, 2.0f, x.get(), y.get(), 64u);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  worker.join();
  EXPECT_EQ(failure, "");
  for (float v : y.download()) ASSERT_EQ(v, 2.0f);
}

}  // namespace
}  // namespace kreg

namespace kreg {
namespace {

TEST(LaunchNvtx, RangesDoNotChangeResults) {
  KREG_REQUIRE_GPU();
  ::setenv("KREG_NVTX", "1", 1);
  Registry reg(test::isolated_options());
  ::unsetenv("KREG_NVTX");
  DeviceBuffer<float> x(std::vector<float>(256, 1.0f)), y(std::vector<float>(256, 1.0f));
  reg.get("axpy_f32").launch(Dim3{1}, Dim3{256}, 0, nullptr, 4.0f, x.get(), y.get(), 256u);
  for (float v : y.download()) ASSERT_EQ(v, 5.0f);
}

}  // namespace
}  // namespace kreg
