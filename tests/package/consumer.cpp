#include <kreg/kreg.hpp>

#include <cstdio>

int main() {
  kreg::Registry reg(kreg::RegistryOptions{.arch = "sm_90", .disk_cache = false, .warm_compiler = false});
  const kreg::Binary& binary = reg.compile("elementwise_add_f32");
  std::printf("%s: %zu bytes\n", binary.key().c_str(), binary.size());
  return binary.size() > 0 ? 0 : 1;
}
