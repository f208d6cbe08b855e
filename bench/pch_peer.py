"""The peer for bench/pch.sh: CuPy's RawModule compiling the same heavy-header sources
(NVRTC, no precompiled header), one after another in one fresh process, CuPy's disk cache
empty. Prints lines in kreg_pch_bench's form, so pch.sh's medians apply.

    CUPY_CACHE_DIR=$(mktemp -d) python3 bench/pch_peer.py cub|half N
"""

import os
import sys
import time

import cupy as cp

kind, count = sys.argv[1], int(sys.argv[2])
include = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")


def source(i):
    if kind == "cub":
        return (
            "#include <cub/block/block_reduce.cuh>\n"
            f'extern "C" __global__ void heavy{i}(const float* in, float* out) {{\n'
            "  using Reduce = cub::BlockReduce<float, 128>;\n"
            "  __shared__ typename Reduce::TempStorage temp;\n"
            f"  const float sum = Reduce(temp).Sum(in[threadIdx.x] * {i}.0f);\n"
            "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
            "}\n"
        )
    return (
        "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
        f'extern "C" __global__ void heavy{i}(const __half* a, const __nv_bfloat16* b, '
        "float* out) {\n"
        "  const unsigned i = threadIdx.x;\n"
        f"  out[i] = __half2float(a[i]) * {i}.0f + __bfloat162float(b[i]);\n"
        "}\n"
    )


options = ("-std=c++17", "-I" + include, "-I" + os.path.join(include, "cccl"))
for i in range(count):
    start = time.perf_counter()
    module = cp.RawModule(code=source(i), options=options, backend="nvrtc")
    module.get_function(f"heavy{i}")  # compiles
    print(f"compile {i} {(time.perf_counter() - start) * 1e3:.1f}")
