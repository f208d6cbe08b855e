#pragma once
/// \file
/// kreg: a runtime registry of CUDA kernels. Include this one header.

#include <kreg/array.hpp>
#include <kreg/binary.hpp>
#include <kreg/bundle.hpp>
#include <kreg/cache.hpp>
#include <kreg/constants.hpp>
#include <kreg/custom_kernel.hpp>
#include <kreg/dtype.hpp>
#include <kreg/error.hpp>
#include <kreg/half.cuh>
#include <kreg/kernel.hpp>
#include <kreg/ops.hpp>
#include <kreg/registry.hpp>
#include <kreg/remote_cache.hpp>
#include <kreg/stream.hpp>
#include <kreg/tune.hpp>
#include <kreg/types.hpp>
#include <kreg/version.hpp>
