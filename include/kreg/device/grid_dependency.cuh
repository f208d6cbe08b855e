#pragma once
/// Programmatic dependent launch, the device side: a kernel launched to overlap the one before
/// it on its stream (sm_90 and newer) may start while that one still runs, and must wait for
/// it before it reads what it wrote. On older GPUs, or for an ordinary launch, both calls do
/// nothing.

namespace kreg {

/// Blocks until every kernel this one was launched to overlap has finished and its writes
/// are visible.
__device__ inline void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the kernel launched to overlap this one start as soon as every block of this one has
/// called it (or exited), rather than when this one ends: its blocks then wait on the
/// multiprocessors, so that the launch itself is out of the way.
__device__ inline void release_dependent_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace kreg
