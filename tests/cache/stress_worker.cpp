// A process of the disk-cache stress tests, run beside its siblings on one cache folder:
//   kreg_cache_stress_worker DIR ROUNDS        prewarm the stress set, a fresh registry a round
//   kreg_cache_stress_worker soak DIR SECONDS SEED THREADS    the soak (soak.hpp)
//   kreg_cache_stress_worker churn DIR SECONDS SEED           clear, trim, verify, remove
// Prints a summary line; exits 0 when everything checked out, 1 otherwise, 2 on bad usage.
#include "cache/soak.hpp"
#include "cache/stress_sources.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

int prewarm_rounds(const char* dir, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    kreg::Registry reg(kreg::test::stress_options(dir));
    const auto names = kreg::test::register_stress_sources(reg);
    const std::size_t ready = reg.prewarm(names);
    if (ready != names.size()) {
      std::fprintf(stderr, "round %d: %zu of %zu ready\n", round, ready, names.size());
      return 1;
    }
  }
  return 0;
}

int soak(const char* dir, double seconds, std::uint64_t seed, unsigned threads) {
  const kreg::test::SoakResult result = kreg::test::run_soak({dir, seconds, threads, seed});
  std::printf("%s\n", result.summary().c_str());
  for (const std::string& error : result.counts.first_errors) {
    std::printf("error: %s\n", error.c_str());
  }
  return result.counts.errors == 0 && result.counts.gets > 0 ? 0 : 1;
}

int churn(const char* dir, double seconds, std::uint64_t seed) {
  const kreg::test::ChurnCounts counts = kreg::test::run_churn(dir, seconds, seed);
  std::printf("%s\n", counts.summary().c_str());
  return counts.bad_entries == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "soak" && argc == 6) {
      return soak(argv[2], std::atof(argv[3]), std::strtoull(argv[4], nullptr, 10),
                  static_cast<unsigned>(std::atoi(argv[5])));
    }
    if (mode == "churn" && argc == 5) {
      return churn(argv[2], std::atof(argv[3]), std::strtoull(argv[4], nullptr, 10));
    }
    if (argc == 3) return prewarm_rounds(argv[1], std::atoi(argv[2]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: %s DIR ROUNDS | soak DIR SECONDS SEED THREADS | churn DIR SECONDS SEED\n",
               argv[0]);
  return 2;
}
