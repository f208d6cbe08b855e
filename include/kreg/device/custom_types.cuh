#pragma once
/// \file
/// The names every custom kernel sees (see kreg/custom.cuh for the whole preamble): fixed-width
/// integers, Metal's scalar names, and `kreg::value_array` for arguments passed by value.
/// Includes nothing under NVRTC, so that sources still compile with `-minimal`.

#include <kreg/device/value_array.cuh>

// Under NVRTC these are the very types libcu++'s <cuda/std/cstdint> declares there (int64_t is
// long long), so a source may include both. NVRTC predefines no __INT64_TYPE__ and the like to
// take them from. Host compilers get them from their own C library.
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

// Metal's scalar names. glibc's <sys/types.h> declares uint and ushort as the same types.
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;

// Metal's namespace, so that `using namespace metal;` compiles in a body that uses none of the
// parts that fill it.
namespace metal {}
