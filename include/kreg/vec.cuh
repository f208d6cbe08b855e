#pragma once
/// \file
/// Kept so that kernel sources may include <kreg/vec.cuh>: the header is
/// <kreg/device/vec.cuh>, with kreg's other device headers.
#include <kreg/device/vec.cuh>
