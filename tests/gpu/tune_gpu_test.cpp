// Registry::tune on the GPU: candidates timed with CUDA events on the current stream, the
// cheapest winning by a wide margin, the check called once per candidate, and the records
// serving a second registry on the same cache folder with no launch at all.
#include "gpu/device_buffer.hpp"
#include "test_support.hpp"

namespace kreg {
namespace {

constexpr const char* kSpin = R"(
#include <kreg/kernel.cuh>
KREG_CONSTANT_DEFAULT(int, rounds, 300, 1);
extern "C" __global__ void spin(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = out[i];
  for (int r = 0; r < rounds; ++r) x = x * 0.999f + 1.0f;  // a dependent chain: rounds cost
  out[i] = x;
}
)";

TEST(TuneGpu, EventsPickTheCheapestAndTheRecordsServeASecondRegistry) {
  KREG_REQUIRE_GPU();
  test::ScratchDir dir("kreg_tune_gpu_");
  RegistryOptions options = test::isolated_options();
  options.disk_cache = true;
  options.cache_dir = dir.path();
  constexpr int kN = 1 << 20;
  test::DeviceBuffer<float> buffer(std::vector<float>(kN, 1.0F));
  const Stream stream = current_stream();
  int launches = 0;
  const TuneRun run = [&](const Kernel& k) {
    ++launches;
    k.launch(Dim3{kN / 256}, Dim3{256}, 0, stream.native(), buffer.get(), kN);
  };
  TuneSpace space;
  space.ints = {{300, {4096, 1, 256}}};
  TuneOptions tune;
  tune.warmup = 2;
  tune.repeats = 10;
  int checks = 0;
  tune.check = [&](const Constants&) {
    ++checks;
    return true;
  };
  {
    Registry reg(options);
    reg.register_source("spin", kSpin);
    const TuneResult r = reg.tune("spin", space, "n1M", run, tune);
    EXPECT_EQ(constants_key(r.winner), "300:i1");
    EXPECT_EQ(r.timed, 3U);
    EXPECT_EQ(checks, 3);
    EXPECT_EQ(launches, 3 * (2 + 10));
    ASSERT_EQ(r.candidates.size(), 3U);
    for (const TuneResult::Candidate& c : r.candidates) EXPECT_TRUE(c.ok) << c.label << c.why;
    // 4096 rounds of a dependent chain cost far more than 1 or 256.
    EXPECT_GT(r.candidates[0].ms, 4 * r.candidates[1].ms);
    EXPECT_GT(r.candidates[0].ms, r.candidates[2].ms);
    EXPECT_DOUBLE_EQ(r.ms, r.candidates[1].ms);
    reg.flush_disk_cache();
  }
  Registry second(options);
  second.register_source("spin", kSpin);
  launches = 0;
  const TuneResult again = second.tune("spin", space, "n1M", run, tune);
  EXPECT_EQ(again.timed, 0U);
  EXPECT_EQ(launches, 0);
  EXPECT_EQ(constants_key(again.winner), "300:i1");
  EXPECT_EQ(constants_key(*second.tuned("spin", space, "n1M")), "300:i1");
}

}  // namespace
}  // namespace kreg
