#pragma once
/// Shared-memory barriers (mbarrier) and the tensor copy engine (TMA), sm_90 and newer.
///
/// A barrier lives in 8 bytes of shared memory. It completes a phase when its expected
/// arrivals have arrived and the bytes announced with `barrier_expect` have landed; waiters
/// name the phase by its parity (0, 1, 0, ...). A tensor copy reads a box of a tensor described
/// by a tensor map (cuTensorMapEncodeTiled, passed as a `__grid_constant__` parameter) into
/// shared memory, zero-filling what lies past the tensor's edges, and counts its bytes on a
/// barrier.

namespace kreg {

/// Sets up a barrier that expects `arrivals` arrivals a phase. One thread does it, before a
/// block barrier that the other users wait on.
__device__ inline void barrier_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}

/// Makes initialized barriers visible to the copy engine.
__device__ inline void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Arrives once and announces `bytes` more to land before the phase completes.
__device__ inline void barrier_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

/// Arrives once.
__device__ inline void barrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/// Waits until the phase of parity `parity` has completed.
__device__ inline void barrier_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (done == 0);
}

/// The barriers of a ring of `Stages` shared-memory stages that one thread has the copy engine
/// fill and the consuming warps hand back, 16 bytes a stage at `bars`: a stage's `full` barrier
/// completes when its bytes have landed, its `empty` one when every consumer has arrived.
/// Fill t (0, 1, ...) of the ring goes to stage t % Stages, in round t / Stages.
template <unsigned Stages>
struct StageRing {
  unsigned bars;

  __device__ unsigned full(unsigned s) const { return bars + 8 * s; }
  __device__ unsigned empty(unsigned s) const { return bars + 8 * (Stages + s); }
  __device__ static unsigned stage(int t) { return static_cast<unsigned>(t) % Stages; }

  /// By one thread, before a block barrier: `consumers` arrivals hand a stage back.
  __device__ void init(unsigned consumers) const {
    for (unsigned s = 0; s < Stages; ++s) {
      barrier_init(full(s), 1);
      barrier_init(empty(s), consumers);
    }
    barrier_init_fence();
  }

  /// The feeder, before fill t: waits for the round before to be handed back.
  __device__ void wait_empty(int t) const {
    if (t >= static_cast<int>(Stages)) {
      barrier_wait(empty(stage(t)), (static_cast<unsigned>(t) / Stages - 1) & 1);
    }
  }

  /// A consumer, before reading fill t.
  __device__ void wait_full(int t) const {
    barrier_wait(full(stage(t)), (static_cast<unsigned>(t) / Stages) & 1);
  }
};

/// Brings a tensor map into the copy engine's cache ahead of its first use.
__device__ inline void tensor_map_prefetch(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

/// Copies the box at coordinates (x, y) (x along the contiguous dimension) of the 2-D tensor
/// `map` describes into shared memory at `dst`, its bytes counted on barrier `bar`.
__device__ inline void tensor_copy_2d(unsigned dst, const void* map, int x, int y, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

/// As tensor_copy_2d for a 3-D tensor: the box at (x, y, z).
__device__ inline void tensor_copy_3d(unsigned dst, const void* map, int x, int y, int z,
                                      unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(bar)
      : "memory");
}

}  // namespace kreg
