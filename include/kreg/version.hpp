#pragma once
/// \file
/// Version numbers of the library and of the tools it was built with.

#include <string>
#include <vector>

namespace kreg {

/// kreg's version, e.g. "0.1.0".
const char* version() noexcept;
/// The NVRTC version this process uses, e.g. "13.0".
std::string nvrtc_version();
/// The archs NVRTC can target, e.g. {"sm_75", ..., "sm_120"}.
std::vector<std::string> supported_archs();
/// The CUDA driver's version, e.g. "13.0"; empty when there is no driver, with the reason in
/// `why`.
std::string driver_version(std::string* why = nullptr);
/// The archs the embedded precompiled set has machine code for, e.g. {"sm_80", "sm_90"}.
std::vector<std::string> precompiled_archs();
/// The GPUs this process sees, e.g. {"NVIDIA H200 (sm_90)"}; empty without a driver.
std::vector<std::string> devices();

}  // namespace kreg
