#pragma once
/// \file
/// Kept so that kernel sources may include <kreg/half.cuh>: the header is
/// <kreg/device/half.cuh>, with kreg's other device headers.
#include <kreg/device/half.cuh>
