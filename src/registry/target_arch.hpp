#pragma once
// The compile target a registry's options ask for, checked against what NVRTC can target.

#include <kreg/types.hpp>

#include <string>

namespace kreg::registry {

// RegistryOptions::arch, else KREG_ARCH, else "" (the device's, found later). Throws
// InvalidArgument for something that is not an arch, or one NVRTC cannot target.
std::string requested_arch(const RegistryOptions& options);

}  // namespace kreg::registry
