// Share compiled kernels across a fleet: a remote cache on Redis that registries ask after
// their disk cache, and bundles that carry a disk cache into a container image.
//
// Run it with KREG_REMOTE_CACHE=redis://host:6379 (and KREG_REMOTE_CACHE_SECRET=...) to use
// a real server; without one it points at a port where nothing listens, to show that a
// missing server costs a miss, never a failure.
#include <kreg/kreg.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

static const char* kScale = R"(
extern "C" __global__ void fleet_scale(float* x, float s, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
)";

int main() {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "kreg_example_fleet_cache";
  fs::remove_all(root);
  try {
    kreg::RegistryOptions options;
    options.cache_dir = root / "build-machine";
    if (kreg::Registry(kreg::RegistryOptions{.warm_compiler = false}).arch().empty()) {
      options.arch = "sm_90";  // no GPU: compile only
    }
    // KREG_REMOTE_CACHE, when set, names the server; else a port nobody listens on.
    if (std::getenv("KREG_REMOTE_CACHE") == nullptr) {
      options.remote.url = "redis://127.0.0.1:1";
    }
    options.remote.operation_timeout = std::chrono::milliseconds(300);
    const kreg::RemoteCacheStatus remote = kreg::remote_cache_status(options.remote);
    std::printf("remote cache %s: %s\n", remote.url.c_str(),
                remote.reachable ? "reachable" : ("unreachable (" + remote.error + ")").c_str());

    std::vector<std::string> digests;
    {
      kreg::Registry reg(options);
      reg.register_source("fleet_scale", kScale);
      const kreg::Binary& binary = reg.compile("fleet_scale");
      const kreg::Stats stats = reg.stats();
      std::printf("fleet_scale: %s in %.2f ms (remote: %llu hits, %llu misses, %llu errors)\n",
                  kreg::to_string(binary.origin()), binary.milliseconds(),
                  static_cast<unsigned long long>(stats.remote_hits),
                  static_cast<unsigned long long>(stats.remote_misses),
                  static_cast<unsigned long long>(stats.remote_errors));
      digests = reg.entry_digests({{"fleet_scale", {}}});
    }  // the registry's writes (disk, and Redis if reachable) are finished here

    // Bake what was built into one file, and unpack it where a fresh machine looks.
    const fs::path bundle = root / "kernels.kbundle";
    const kreg::BundleReport out = kreg::export_bundle(bundle, options.cache_dir, digests);
    const kreg::BundleReport in = kreg::import_bundle(bundle, root / "image");
    std::printf("bundle: %zu entries exported, %zu imported, %zu refused\n", out.entries,
                in.entries, in.refused);

    kreg::RegistryOptions fresh = options;
    fresh.cache_dir = root / "image";
    fresh.remote.enabled = false;
    kreg::Registry reg(fresh);
    reg.register_source("fleet_scale", kScale);
    std::printf("fresh machine: fleet_scale from %s, %llu compiles\n",
                kreg::to_string(reg.compile("fleet_scale").origin()),
                static_cast<unsigned long long>(reg.stats().compiles));
    fs::remove_all(root);
    return reg.stats().compiles == 0 ? 0 : 1;
  } catch (const kreg::Error& e) {
    std::fprintf(stderr, "kreg: %s\n", e.what());
    fs::remove_all(root);
    return 1;
  }
}
