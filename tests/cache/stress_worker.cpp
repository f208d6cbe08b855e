// One process of the disk-cache stress test: prewarms the same sources as its siblings into
// one shared cache folder, round after round, with a fresh registry each round.
//   kreg_cache_stress_worker DIR ROUNDS
#include "cache/stress_sources.hpp"

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  try {
    for (int round = 0; round < std::atoi(argv[2]); ++round) {
      kreg::Registry reg(kreg::test::stress_options(argv[1]));
      const auto names = kreg::test::register_stress_sources(reg);
      const std::size_t ready = reg.prewarm(names);
      if (ready != names.size()) {
        std::fprintf(stderr, "round %d: %zu of %zu ready\n", round, ready, names.size());
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
