// One process of the remote-cache tests: a registry with an empty or shared disk cache
// and the remote cache at URL builds the test kernels, then reports what it took.
//   kreg_remote_worker CACHE_DIR URL COUNT [SECRET]
// Prints "compiles=C remote_hits=H disk_hits=D remote_errors=E remote_rejected=R images=X",
// X a hash of every binary in order; exits 0 when every kernel was built, 1 otherwise.
#include "core/hash.hpp"
#include "remote/remote_sources.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: kreg_remote_worker CACHE_DIR URL COUNT [SECRET]\n");
    return 2;
  }
  try {
    kreg::RegistryOptions options = kreg::test::remote_options(argv[1], argv[2]);
    if (argc == 5) options.remote.secret = argv[4];
    kreg::Registry reg(options);
    const auto names = kreg::test::register_remote_sources(reg, std::atoi(argv[3]));
    std::string images;
    for (const std::string& name : names) {
      const kreg::Binary& binary = reg.compile(name);
      images.append(binary.image().data(), binary.image().size());
    }
    reg.flush_disk_cache();
    const kreg::Stats s = reg.stats();
    std::printf(
        "compiles=%llu remote_hits=%llu disk_hits=%llu remote_errors=%llu "
        "remote_rejected=%llu images=%016llx\n",
        static_cast<unsigned long long>(s.compiles), static_cast<unsigned long long>(s.remote_hits),
        static_cast<unsigned long long>(s.disk_hits),
        static_cast<unsigned long long>(s.remote_errors),
        static_cast<unsigned long long>(s.remote_rejected),
        static_cast<unsigned long long>(kreg::core::hash64(images)));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
