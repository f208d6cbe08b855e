#pragma once
// A kernel parameter that ops fill with a tensor map (cuTensorMapEncodeTiled) for the copy
// engine: passed by value, `const __grid_constant__`, so that the copy engine reads it from
// the parameter space. CUtensorMap has this size and alignment.

namespace kreg::contracts {

struct alignas(64) TensorMap {
  unsigned long long words[16];
};

}  // namespace kreg::contracts
