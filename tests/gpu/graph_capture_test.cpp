// CUDA graph capture: ready ops and custom kernels launched on a capturing stream are
// captured and replay what they computed eagerly; work that is not ready is refused with a
// kreg::Error before any call that would break the capture.
#include "test_support.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace kreg {
namespace {

using test::contains;

constexpr int kRows = 8;
constexpr int kCols = 128;
constexpr int kCount = kRows * kCols;

class GraphCapture : public ::testing::Test {
 protected:
  void SetUp() override { KREG_REQUIRE_GPU(); }
};

const CustomKernel& blend() {
  static const CustomKernel kernel("capture_blend", {"x", "y"}, {"out"},
                                   "uint i = thread_position_in_grid.x;\n"
                                   "out[i] = 3.0f * x[i] - y[i];");
  return kernel;
}

// A copy of `a` made on the current stream, evaluated.
Array on_stream(const Array& a) {
  Array copy = ops::scale(a, 1.0F);
  copy.eval();
  copy.stream().synchronize();
  return copy;
}

// The captured step: three ops and a custom kernel, every result evaluated.
std::vector<Array> step(const Array& a, const Array& b) {
  const Array sum = ops::add(a, b);
  const Array product = ops::mul(sum, a);
  const Array soft = ops::softmax(product);
  const Array mixed = blend().apply({soft, b}, {OutputSpec{{kRows, kCols}, Dtype::Float32}},
                                    Dim3{kCount}, Dim3{256})[0];
  std::vector<Array> out{sum, product, soft, mixed};
  eval(out);
  return out;
}

// The same step in float64 on the host.
std::vector<std::vector<double>> reference(const std::vector<float>& a,
                                           const std::vector<float>& b) {
  std::vector<double> sum(kCount);
  std::vector<double> product(kCount);
  std::vector<double> soft(kCount);
  std::vector<double> mixed(kCount);
  for (int i = 0; i < kCount; ++i) {
    sum[i] = static_cast<double>(a[i]) + b[i];
    product[i] = sum[i] * a[i];
  }
  for (int r = 0; r < kRows; ++r) {
    const double* row = product.data() + static_cast<std::ptrdiff_t>(r) * kCols;
    const double top = *std::max_element(row, row + kCols);
    double total = 0;
    for (int c = 0; c < kCols; ++c) total += std::exp(row[c] - top);
    for (int c = 0; c < kCols; ++c) soft[r * kCols + c] = std::exp(row[c] - top) / total;
  }
  for (int i = 0; i < kCount; ++i) mixed[i] = 3.0 * soft[i] - b[i];
  return {sum, product, soft, mixed};
}

::testing::AssertionResult near(const std::vector<float>& got, const std::vector<double>& want) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double tolerance = 1e-5 * std::max(1.0, std::abs(want[i]));
    if (!(std::abs(got[i] - want[i]) <= tolerance)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got[i] << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<float> random_values(std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  std::vector<float> out(kCount);
  for (float& v : out) v = dist(rng);
  return out;
}

// Ends a capture that a failed assertion left open, so that the stream can be used again.
struct CaptureGuard {
  cudaStream_t stream;
  ~CaptureGuard() {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      cudaGraph_t graph = nullptr;
      if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr) {
        cudaGraphDestroy(graph);
      }
    }
  }
};

TEST_F(GraphCapture, OpsAndACustomKernelReplayTheirEagerResults) {
  Stream stream(0);
  const StreamScope scope(stream);
  auto* native = static_cast<cudaStream_t>(stream.native().native);
  std::mt19937 rng(17);
  const std::vector<float> a_values = random_values(rng);
  const std::vector<float> b_values = random_values(rng);
  // Inputs made on the capturing stream: a capture may not wait for other streams' work.
  const Array a = on_stream(Array::from_data(a_values, {kRows, kCols}));
  const Array b = on_stream(Array::from_data(b_values, {kRows, kCols}));

  // Eagerly first: the inputs move to the GPU and every kernel is made ready.
  std::vector<std::vector<float>> eager;
  const std::vector<std::vector<double>> want = reference(a_values, b_values);
  {
    const std::vector<Array> results = step(a, b);
    for (std::size_t i = 0; i < results.size(); ++i) {
      eager.push_back(results[i].to_vector<float>());
      EXPECT_TRUE(near(eager[i], want[i])) << "eager result " << i;
    }
  }

  const CaptureGuard guard{native};
  ASSERT_EQ(cudaStreamBeginCapture(native, cudaStreamCaptureModeGlobal), cudaSuccess);
  std::vector<Array> captured;
  try {
    captured = step(a, b);
  } catch (const Error& e) {
    FAIL() << "capturing the step threw: " << e.what();
  }
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(native, &graph), cudaSuccess);
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_GE(nodes, 4u);  // the four kernels, and the outputs' allocations
  // The outputs are the graph's allocations: a launch frees the last one's before it
  // allocates them again, at the same addresses.
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch),
            cudaSuccess);

  for (int replay = 0; replay < 100; ++replay) {
    ASSERT_EQ(cudaGraphLaunch(exec, native), cudaSuccess) << "replay " << replay;
    ASSERT_EQ(cudaStreamSynchronize(native), cudaSuccess) << "replay " << replay;
    for (std::size_t i = 0; i < captured.size(); ++i) {
      ASSERT_EQ(captured[i].to_vector<float>(), eager[i])
          << "replay " << replay << ", result " << i;
    }
  }

  // The graph reads its inputs where they are: new values in place, one more replay.
  const std::vector<float> a_next = random_values(rng);
  ASSERT_EQ(cudaMemcpyAsync(a.data(), a_next.data(), a_next.size() * sizeof(float),
                            cudaMemcpyHostToDevice, native),
            cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, native), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(native), cudaSuccess);
  const std::vector<std::vector<double>> want_next = reference(a_next, b_values);
  for (std::size_t i = 0; i < captured.size(); ++i) {
    EXPECT_TRUE(near(captured[i].to_vector<float>(), want_next[i])) << "result " << i;
  }

  captured.clear();  // frees the last launch's allocations
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(native), cudaSuccess);
}

// Runs `fn` on a capturing stream and expects the refusal; the capture must still be active
// and end with a graph.
void expect_refused_and_capture_intact(cudaStream_t native, const std::function<void()>& fn,
                                       const std::string& what) {
  const CaptureGuard guard{native};
  ASSERT_EQ(cudaStreamBeginCapture(native, cudaStreamCaptureModeGlobal), cudaSuccess);
  const std::string message = test::expect_error(ErrorCode::InvalidArgument, fn);
  EXPECT_TRUE(contains(message, "capturing a CUDA graph")) << what << ": " << message;
  EXPECT_TRUE(contains(message, "Prewarm")) << what << ": " << message;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(native, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive) << what << ": the capture was invalidated";
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(native, &graph), cudaSuccess) << what;
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

TEST_F(GraphCapture, AnUnpreparedKernelIsRefusedAndTheCaptureStaysValid) {
  Stream stream(0);
  const StreamScope scope(stream);
  auto* native = static_cast<cudaStream_t>(stream.native().native);
  const Array x = on_stream(Array::from_data<float>(std::vector<float>(kCount, 1.0F), {kCount}));

  // A custom kernel whose binary was never built, with a body no other test has.
  const CustomKernel fresh("capture_never_built", {"x"}, {"out"},
                           "uint i = thread_position_in_grid.x; out[i] = x[i] * 7.25f;");
  expect_refused_and_capture_intact(
      native,
      [&] {
        fresh.apply({x}, {OutputSpec{{kCount}, Dtype::Float32}}, Dim3{kCount}, Dim3{256})[0].eval();
      },
      "custom kernel");

  // A registry's get that would compile and load, under a StreamScope of the capturing stream.
  Registry reg(test::isolated_options());
  reg.register_source("capture_plain", "extern \"C\" __global__ void capture_plain(float* p) {}");
  expect_refused_and_capture_intact(
      native, [&] { (void)reg.get("capture_plain"); }, "get");
  EXPECT_FALSE(reg.is_cached("capture_plain"));
  EXPECT_EQ(reg.stats().compiles, 0u);  // refused before the compile

  // Host values cannot cross into a graph, nor can an array be read back in one.
  const Array host = Array::from_data<float>({1, 2, 3, 4}, {4});
  expect_refused_and_capture_intact(
      native, [&] { ops::add(host, host).eval(); }, "host input");
  expect_refused_and_capture_intact(
      native, [&] { (void)x.to_vector<float>(); }, "read back");
  // Nor may it wait for another stream's work.
  const Array elsewhere = [] {
    Stream other(0);
    const StreamScope other_scope(other);
    return on_stream(Array::from_data<float>(std::vector<float>(kCount, 2.0F), {kCount}));
  }();
  expect_refused_and_capture_intact(
      native, [&] { ops::add(x, elsewhere).eval(); }, "input from another stream");

  // After the capture, the same work runs and the kernel is ready for the next one.
  const std::vector<float> out =
      fresh.apply({x}, {OutputSpec{{kCount}, Dtype::Float32}}, Dim3{kCount}, Dim3{256})[0]
          .to_vector<float>();
  EXPECT_EQ(out, std::vector<float>(kCount, 7.25F));
  EXPECT_NO_THROW((void)reg.get("capture_plain"));
}

// A registry made on another thread while this one captures in global mode (the mode
// torch.cuda.graph uses): its warm-up maps memory and starts NVRTC in relaxed mode, so the
// capture is neither refused nor invalidated by it.
TEST_F(GraphCapture, ARegistryMadeDuringAnotherThreadsCaptureLeavesItValid) {
  Stream stream(0);
  auto* native = static_cast<cudaStream_t>(stream.native().native);
  const CaptureGuard guard{native};
  ASSERT_EQ(cudaStreamBeginCapture(native, cudaStreamCaptureModeGlobal), cudaSuccess);
  std::thread other([] {
    RegistryOptions options = test::isolated_options();
    options.warm_compiler = true;
    const Registry reg(options);
    // Long enough for the warm-up to map the pool and compile; its thread joins at the end.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  other.join();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(native, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive) << "the capture was invalidated";
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(native, &graph), cudaSuccess);
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

// A decode whose keys are cut into splits runs a pair of kernels, the combine launched to
// overlap the first (sm_90 and newer): captured, the pair is two kernel nodes joined by a
// programmatic edge there, and every replay gives the eager result.
TEST_F(GraphCapture, SplitDecodeAttentionReplaysItsEagerResult) {
  Stream stream(0);
  const StreamScope scope(stream);
  auto* native = static_cast<cudaStream_t>(stream.native().native);
  constexpr int kTokens = 2048;  // 32 splits of 64 keys for each of the 8 KV heads
  constexpr int kPage = 16;
  constexpr int kPages = kTokens / kPage;
  constexpr int kKvHeads = 8;
  constexpr int kQHeads = 32;
  constexpr int kDim = 128;
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  const auto values = [&](std::size_t n) {
    std::vector<bfloat16> out(n);
    for (bfloat16& v : out) v = bfloat16(dist(rng));
    return out;
  };
  std::vector<std::int32_t> table(kPages);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);
  const Array q = Array::from_data(values(std::size_t{kQHeads} * kDim), {1, kQHeads, kDim});
  const Shape cache{kPages, kPage, kKvHeads, kDim};
  const Array k = Array::from_data(values(std::size_t{kTokens} * kKvHeads * kDim), cache);
  const Array v = Array::from_data(values(std::size_t{kTokens} * kKvHeads * kDim), cache);
  const Array block_table = Array::from_data(table, {1, kPages});
  const Array lens = Array::from_data(std::vector<std::int32_t>{kTokens}, {1});

  // Eagerly first: the inputs move to the GPU and both kernels are made ready.
  const auto floats = [](const Array& a) {
    std::vector<float> out;
    for (const bfloat16 x : a.to_vector<bfloat16>()) out.push_back(static_cast<float>(x));
    return out;
  };
  const std::vector<float> eager = floats(ops::decode_attention(q, k, v, block_table, lens));
  stream.synchronize();

  const CaptureGuard guard{native};
  ASSERT_EQ(cudaStreamBeginCapture(native, cudaStreamCaptureModeGlobal), cudaSuccess);
  Array captured;
  try {
    captured = ops::decode_attention(q, k, v, block_table, lens);
    captured.eval();
  } catch (const Error& e) {
    FAIL() << "capturing the decode threw: " << e.what();
  }
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(native, &graph), cudaSuccess);

  // The two kernels, and how the second depends on the first.
  std::size_t count = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(count);
  ASSERT_EQ(cudaGraphGetNodes(graph, nodes.data(), &count), cudaSuccess);
  std::vector<cudaGraphNode_t> kernels;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    ASSERT_EQ(cudaGraphNodeGetType(node, &type), cudaSuccess);
    if (type == cudaGraphNodeTypeKernel) kernels.push_back(node);
  }
  ASSERT_EQ(kernels.size(), 2u);
  std::size_t edges = 0;
  ASSERT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges), cudaSuccess);
  std::vector<cudaGraphNode_t> from(edges);
  std::vector<cudaGraphNode_t> to(edges);
  std::vector<cudaGraphEdgeData> data(edges);
  ASSERT_EQ(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &edges), cudaSuccess);
  int between = 0;
  bool programmatic = false;
  for (std::size_t e = 0; e < edges; ++e) {
    if (from[e] == kernels[0] && to[e] == kernels[1]) {
      ++between;
      programmatic = data[e].type == cudaGraphDependencyTypeProgrammatic;
    }
  }
  EXPECT_EQ(between, 1) << "the combine does not follow the first kernel directly";
  int major = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  EXPECT_EQ(programmatic, major >= 9) << "compute capability " << major;

  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch),
            cudaSuccess);
  for (int replay = 0; replay < 50; ++replay) {
    ASSERT_EQ(cudaGraphLaunch(exec, native), cudaSuccess) << "replay " << replay;
    ASSERT_EQ(cudaStreamSynchronize(native), cudaSuccess) << "replay " << replay;
    ASSERT_EQ(floats(captured), eager) << "replay " << replay;
  }
  captured = Array();  // frees the last launch's allocations
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(native), cudaSuccess);
}
}  // namespace
}  // namespace kreg
