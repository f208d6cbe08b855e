// The remote cache's costs (docs/performance.md, "The remote cache"):
//  1. a Redis hit on loopback, per kernel: fetch, signature and checksum checks, decode, and
//     with a GPU the load (get); without one, compile() stops before the load;
//  2. a fleet's cold start, simulated: N fresh processes on empty disk caches each prewarm
//     the built-ins and K user kernels, against an empty Redis, then a warm one, then (the
//     baseline) against their own warm disks with no Redis;
//  3. what a dead Redis adds to a get that must compile anyway.
// It starts its own redis-server on a loopback port unless --url names one.
//   kreg_remote_cache_bench [--processes N] [--user-kernels K] [--rounds R] [--url URL]
//                           [--secret S] [--precompiled]
// Without a GPU the target is KREG_BENCH_ARCH (default sm_90) and nothing is loaded.
#include <kreg/kreg.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// User kernels of a realistic size: a loop, a constant, a few lines each.
std::vector<std::string> register_user_kernels(kreg::Registry& reg, int count) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const std::string name = "fleet_user_" + std::to_string(i);
    reg.register_source(name,
                        "#include <kreg/kernel.cuh>\n"
                        "KREG_CONSTANT_DEFAULT(int, kUnroll, 300, 4);\n"
                        "extern \"C\" __global__ void " +
                            name +
                            "(const float* __restrict__ a, float* __restrict__ out, unsigned n) {\n"
                            "  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i >= n) return;\n"
                            "  float acc = a[i];\n"
                            "#pragma unroll\n"
                            "  for (int k = 0; k < kUnroll; ++k) acc = acc * " +
                            std::to_string(1.0 + i / 64.0) + "f + " + std::to_string(i) +
                            ".0f;\n"
                            "  out[i] = acc;\n"
                            "}\n");
    names.push_back(name);
  }
  return names;
}

kreg::RegistryOptions options_for(const std::string& arch, const fs::path& cache_dir,
                                  const std::string& url, const std::string& secret,
                                  bool precompiled) {
  kreg::RegistryOptions options;
  options.arch = arch;
  options.cache_dir = cache_dir;
  options.disk_cache = !cache_dir.empty();
  options.precompiled = precompiled;
  options.remote.url = url;
  options.remote.enabled = !url.empty();
  options.remote.secret = secret;
  return options;
}

// One fleet member: prewarms the built-ins and the user kernels, prints its figures.
int child(const std::string& arch, const fs::path& dir, const std::string& url,
          const std::string& secret, int user_kernels, bool precompiled) {
  const auto start = Clock::now();
  kreg::Registry reg(options_for(arch, dir, url, secret, precompiled));
  std::vector<kreg::KernelRequest> requests = reg.prewarm_all_requests();
  for (const std::string& name : register_user_kernels(reg, user_kernels)) {
    requests.push_back({name, {}});
  }
  const std::size_t ready = reg.prewarm(requests);
  const double ms = ms_since(start);
  reg.flush_disk_cache();
  const kreg::Stats s = reg.stats();
  std::printf("%.3f %zu %zu %llu %llu %llu %llu %.3f\n", ms, ready, requests.size(),
              static_cast<unsigned long long>(s.compiles),
              static_cast<unsigned long long>(s.remote_hits),
              static_cast<unsigned long long>(s.disk_hits),
              static_cast<unsigned long long>(s.precompiled_hits), s.remote_ms);
  return ready == requests.size() ? 0 : 1;
}

struct Fleet {
  double wall_ms = 0;     // first start to last finish
  double slowest_ms = 0;  // the slowest member's own time
  double mean_ms = 0;
  unsigned long long compiles = 0;
  unsigned long long remote_hits = 0;
  unsigned long long disk_hits = 0;
  unsigned long long precompiled_hits = 0;
  std::size_t ready = 0;
  std::size_t total = 0;
  bool ok = true;
};

Fleet run_fleet(const std::string& self, int processes, const fs::path& root,
                const std::string& arch, const std::string& url, const std::string& secret,
                int user_kernels, bool precompiled) {
  Fleet fleet;
  std::vector<pid_t> pids;
  pids.reserve(static_cast<std::size_t>(processes));
  const auto start = Clock::now();
  for (int p = 0; p < processes; ++p) {
    const fs::path out = root / ("member" + std::to_string(p) + ".out");
    std::vector<std::string> args = {self,
                                     "--child",
                                     arch,
                                     (root / ("disk" + std::to_string(p))).string(),
                                     url.empty() ? "-" : url,
                                     secret.empty() ? "-" : secret,
                                     std::to_string(user_kernels),
                                     precompiled ? "1" : "0"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    if (::posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) == 0) {
      pids.push_back(pid);
    }
    posix_spawn_file_actions_destroy(&actions);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    fleet.ok = fleet.ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  fleet.wall_ms = ms_since(start);
  for (int p = 0; p < processes; ++p) {
    std::ifstream in(root / ("member" + std::to_string(p) + ".out"));
    double ms = 0;
    double remote_ms = 0;
    std::size_t ready = 0;
    std::size_t total = 0;
    unsigned long long compiles = 0;
    unsigned long long remote = 0;
    unsigned long long disk = 0;
    unsigned long long pre = 0;
    if (!(in >> ms >> ready >> total >> compiles >> remote >> disk >> pre >> remote_ms)) {
      fleet.ok = false;
      continue;
    }
    fleet.slowest_ms = std::max(fleet.slowest_ms, ms);
    fleet.mean_ms += ms / processes;
    fleet.compiles += compiles;
    fleet.remote_hits += remote;
    fleet.disk_hits += disk;
    fleet.precompiled_hits += pre;
    fleet.ready += ready;
    fleet.total += total;
  }
  return fleet;
}

void print_fleet(const char* what, const Fleet& f) {
  std::printf(
      "fleet %-22s wall %9.1f ms  slowest %9.1f ms  mean %9.1f ms  ready %zu/%zu  "
      "compiles %llu  remote hits %llu  disk hits %llu  precompiled %llu%s\n",
      what, f.wall_ms, f.slowest_ms, f.mean_ms, f.ready, f.total, f.compiles, f.remote_hits,
      f.disk_hits, f.precompiled_hits, f.ok ? "" : "  (FAILED)");
}

// A redis-server of the benchmark's own, on a loopback port, nothing saved.
class OwnServer {
 public:
  explicit OwnServer(const fs::path& dir) {
    const int port = 20000 + static_cast<int>(::getpid() % 20000);
    url_ = "redis://127.0.0.1:" + std::to_string(port);
    std::vector<std::string> args = {"redis-server",
                                     "--port",
                                     std::to_string(port),
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--dir",
                                     dir.string(),
                                     "--logfile",
                                     (dir / "redis.log").string()};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawnp(&pid_, "redis-server", nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
      return;
    }
    kreg::RemoteCacheOptions probe;
    probe.url = url_;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // before it listens: a warning
    for (int i = 0; i < 400; ++i) {
      if (kreg::remote_cache_status(probe).reachable) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    stop();
  }
  ~OwnServer() { stop(); }
  OwnServer(const OwnServer&) = delete;
  OwnServer& operator=(const OwnServer&) = delete;
  bool running() const { return pid_ > 0; }
  const std::string& url() const { return url_; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid_ = -1;
  std::string url_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  bool precompiled = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--child" && argc == 8) {
      const std::string url = argv[4];
      const std::string secret = argv[5];
      return child(argv[2], argv[3], url == "-" ? "" : url, secret == "-" ? "" : secret,
                   std::atoi(argv[6]), std::string(argv[7]) == "1");
    }
    if (a == "--precompiled") {
      precompiled = true;
    } else if (a.starts_with("--") && i + 1 < argc) {
      flags[a] = argv[++i];
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const int processes =
      std::atoi(flags.contains("--processes") ? flags["--processes"].c_str() : "16");
  const int user_kernels =
      std::atoi(flags.contains("--user-kernels") ? flags["--user-kernels"].c_str() : "64");
  const int rounds = std::atoi(flags.contains("--rounds") ? flags["--rounds"].c_str() : "5");
  const std::string secret = flags.contains("--secret") ? flags["--secret"] : "";
  const std::string self = fs::canonical("/proc/self/exe").string();

  // The GPU's arch when there is one (then kernels are loaded), else KREG_BENCH_ARCH.
  std::string arch =
      kreg::Registry(kreg::RegistryOptions{.disk_cache = false, .warm_compiler = false}).arch();
  const bool gpu = !arch.empty();
  if (!gpu) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread starts
    const char* given = std::getenv("KREG_BENCH_ARCH");
    arch = given != nullptr ? given : "sm_90";
  }

  const fs::path root =
      fs::temp_directory_path() / ("kreg_remote_bench_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::unique_ptr<OwnServer> own;
  std::string url = flags.contains("--url") ? flags["--url"] : "";
  if (url.empty()) {
    own = std::make_unique<OwnServer>(root);
    if (!own->running()) {
      std::fprintf(stderr, "cannot start redis-server (install it, or give --url)\n");
      return 1;
    }
    url = own->url();
  }
  std::printf("remote cache %s, target %s, %s, %s\n", url.c_str(), arch.c_str(),
              gpu ? "GPU: hits include the load" : "no GPU: fetch and checks only, no load",
              secret.empty() ? "unsigned" : "signed");

  bool ok = true;
  // 1. Hit latency, per kernel.
  {
    kreg::Registry filler(options_for(arch, {}, url, secret, false));
    for (const std::string& name : register_user_kernels(filler, user_kernels))
      filler.compile(name);
    filler.flush_disk_cache();
    std::vector<double> per_kernel;
    std::vector<double> tier;
    for (int r = 0; r < rounds; ++r) {
      kreg::Registry reg(options_for(arch, {}, url, secret, false));
      for (const std::string& name : register_user_kernels(reg, user_kernels)) {
        const auto start = Clock::now();
        const kreg::Binary& b = gpu ? reg.get(name).binary() : reg.compile(name);
        per_kernel.push_back(ms_since(start));
        tier.push_back(b.milliseconds());
        if (b.origin() != kreg::Origin::Remote)
          std::fprintf(stderr, "%s: not a remote hit\n", name.c_str());
      }
    }
    std::printf(
        "hit  %s per kernel: median %.3f ms, p90 %.3f ms (the remote tier alone: median "
        "%.3f ms); %zu hits\n",
        gpu ? "get (fetch, check, load)" : "compile (fetch, check)", percentile(per_kernel, 0.5),
        percentile(per_kernel, 0.9), percentile(tier, 0.5), per_kernel.size());
  }

  // 2. The fleet: empty Redis, warm Redis, then warm local disks without Redis.
  {
    // A prefix of this run's own stands for an empty server, without FLUSHALL on a shared one.
    const std::string run_id =
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    const std::string fleet_url = url + (url.find('?') == std::string::npos ? "?" : "&") +
                                  "prefix=kreg-bench-" + run_id + ":";
    const fs::path cold_root = root / "cold";
    const fs::path warm_root = root / "warm";
    fs::create_directories(cold_root);
    fs::create_directories(warm_root);
    const Fleet cold =
        run_fleet(self, processes, cold_root, arch, fleet_url, secret, user_kernels, precompiled);
    const Fleet warm =
        run_fleet(self, processes, warm_root, arch, fleet_url, secret, user_kernels, precompiled);
    const Fleet disk =
        run_fleet(self, processes, warm_root, arch, "", secret, user_kernels, precompiled);
    print_fleet("empty Redis", cold);
    print_fleet("warm Redis", warm);
    print_fleet("warm disk, no Redis", disk);
    // Per member: process start and exit, the same in both, would blur the comparison.
    std::printf("warm Redis / warm disk: %.2fx a member's mean time (target <= 2x)\n",
                warm.mean_ms / disk.mean_ms);
    ok = cold.ok && warm.ok && disk.ok;
  }

  // 3. A dead server in front of a compile.
  {
    kreg::Registry reg(options_for(arch, {}, "redis://127.0.0.1:1", secret, false));
    reg.register_source("fleet_dead",
                        "extern \"C\" __global__ void fleet_dead(float* x) { x[0] = 1; }\n");
    reg.compile("fleet_dead");
    const kreg::Stats s = reg.stats();
    std::printf("dead Redis: %.3f ms spent on the remote tier before compiling (%llu error)\n",
                s.remote_ms, static_cast<unsigned long long>(s.remote_errors));
  }
  own.reset();
  fs::remove_all(root);
  return ok ? 0 : 1;
}
