#pragma once
// Whether the ops' Hopper kernels (wgmma and the copy engine, compiled as sm_90a) can serve a
// registry's device.

#include <kreg/registry.hpp>

#include <string>

namespace kreg::ops {

inline bool targets_wgmma(const Registry& registry) {
  const std::string arch = registry.arch();
  return arch == "sm_90" || arch == "sm_90a";
}

}  // namespace kreg::ops
