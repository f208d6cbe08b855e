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

}  // namespace kreg
