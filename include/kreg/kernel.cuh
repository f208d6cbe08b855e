#pragma once
/// \file
/// Kept so that kernel sources may include <kreg/kernel.cuh>: the header is
/// <kreg/device/kernel.cuh>, with kreg's other device headers.
#include <kreg/device/kernel.cuh>
