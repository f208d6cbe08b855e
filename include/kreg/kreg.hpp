#pragma once
/// \file
/// kreg: a runtime registry of CUDA kernels. Include this one header.

#include <kreg/binary.hpp>
#include <kreg/cache.hpp>
#include <kreg/constants.hpp>
#include <kreg/error.hpp>
#include <kreg/kernel.hpp>
#include <kreg/registry.hpp>
#include <kreg/types.hpp>
#include <kreg/version.hpp>
