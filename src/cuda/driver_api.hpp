#pragma once
// The driver entry points kreg uses, resolved at run time from libcuda.so.1. Only files in
// src/cuda include this header (and so cuda.h).

#include <kreg/error.hpp>

#include <cuda.h>

#include <string>
#include <string_view>

namespace kreg::cuda {

struct DriverApi {
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxGetState) cuDevicePrimaryCtxGetState = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) cuDevicePrimaryCtxRelease = nullptr;
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuLibraryLoadData) cuLibraryLoadData = nullptr;
  decltype(&::cuLibraryUnload) cuLibraryUnload = nullptr;
  decltype(&::cuLibraryGetKernel) cuLibraryGetKernel = nullptr;
  decltype(&::cuKernelGetAttribute) cuKernelGetAttribute = nullptr;
  decltype(&::cuKernelGetParamInfo) cuKernelGetParamInfo = nullptr;  // may be absent
  decltype(&::cuFuncLoad) cuFuncLoad = nullptr;                      // may be absent
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;  // may be absent
  // Arrays and custom kernels: streams, events, stream-ordered memory.
  decltype(&::cuCtxPushCurrent) cuCtxPushCurrent = nullptr;
  decltype(&::cuCtxPopCurrent) cuCtxPopCurrent = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuStreamCreate) cuStreamCreate = nullptr;
  decltype(&::cuStreamDestroy) cuStreamDestroy = nullptr;
  decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;
  decltype(&::cuStreamIsCapturing) cuStreamIsCapturing = nullptr;
  decltype(&::cuThreadExchangeStreamCaptureMode) cuThreadExchangeStreamCaptureMode = nullptr;
  decltype(&::cuStreamWaitEvent) cuStreamWaitEvent = nullptr;
  decltype(&::cuEventCreate) cuEventCreate = nullptr;
  decltype(&::cuEventDestroy) cuEventDestroy = nullptr;
  decltype(&::cuEventRecord) cuEventRecord = nullptr;
  decltype(&::cuEventSynchronize) cuEventSynchronize = nullptr;
  decltype(&::cuEventElapsedTime) cuEventElapsedTime = nullptr;
  decltype(&::cuMemPoolCreate) cuMemPoolCreate = nullptr;
  decltype(&::cuMemPoolDestroy) cuMemPoolDestroy = nullptr;
  decltype(&::cuMemPoolSetAttribute) cuMemPoolSetAttribute = nullptr;
  decltype(&::cuMemAllocFromPoolAsync) cuMemAllocFromPoolAsync = nullptr;
  decltype(&::cuMemFreeAsync) cuMemFreeAsync = nullptr;
  decltype(&::cuMemcpyHtoDAsync) cuMemcpyHtoDAsync = nullptr;
  decltype(&::cuMemcpyDtoHAsync) cuMemcpyDtoHAsync = nullptr;
  decltype(&::cuMemsetD8Async) cuMemsetD8Async = nullptr;
  decltype(&::cuMemsetD16Async) cuMemsetD16Async = nullptr;
  decltype(&::cuMemsetD32Async) cuMemsetD32Async = nullptr;
  decltype(&::cuMemsetD2D32Async) cuMemsetD2D32Async = nullptr;
  decltype(&::cuPointerGetAttribute) cuPointerGetAttribute = nullptr;
  decltype(&::cuKernelSetAttribute) cuKernelSetAttribute = nullptr;
  decltype(&::cuKernelGetFunction) cuKernelGetFunction = nullptr;
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;
  int version = 0;  // cuDriverGetVersion, e.g. 13000
};

// The driver, loaded and initialized (cuInit) on first use, or nullptr when this machine
// has none; `why` then says what failed. Never throws.
const DriverApi* driver_api(std::string* why = nullptr) noexcept;

// The driver or a NoDevice error naming the reason.
const DriverApi& driver();

// "CUDA_ERROR_X (description)".
std::string describe(CUresult result);

// Throws Error(code, "<what>: <describe(result)>") unless result is CUDA_SUCCESS.
void check(CUresult result, ErrorCode code, std::string_view what);

}  // namespace kreg::cuda
