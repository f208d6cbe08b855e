#pragma once
// A kernel launched to overlap the one before it on its stream (programmatic dependent
// launch, sm_90 and newer): the driver may start it while that one is still running, so
// that its launch and its blocks' start are out of the way when the first one ends. The
// kernel must call kreg::wait_for_prior_grid() (kreg/device/grid_dependency.cuh) before it
// reads anything the kernel before it wrote. Inside a stream capture the overlap becomes a
// programmatic edge of the graph.

#include <kreg/kernel.hpp>

// cuda::launch_dependent, declared in kreg/kernel.hpp (it reaches the kernel's launch
// internals): Kernel::launch_checked with the overlap allowed where the GPU and the driver
// have it, an ordinary launch elsewhere.
