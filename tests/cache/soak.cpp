#include "cache/soak.hpp"

#include "cuda/device.hpp"

#include <kreg/cache.hpp>
#include <kreg/kreg.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

namespace kreg::test {
namespace {

using Clock = std::chrono::steady_clock;
using Rng = std::mt19937_64;

constexpr std::size_t kKeptErrors = 10;

std::string name_of(int source) {
  return "soak_" + std::to_string(source);
}

// "SOAK2V4C7!": what the data of version 4 of soak_2, built with constant 7, holds.
std::string tag(int source, int variant, int scale) {
  return "SOAK" + std::to_string(source) + "V" + std::to_string(variant) + "C" +
         static_cast<char>('0' + scale) + "!";
}

// The template argument in a lowered name such as "_Z13soak_kernel_2ILi4EEvPf", or -1.
int lowered_variant(std::string_view symbol) {
  const std::size_t at = symbol.find("ILi");
  if (at == std::string_view::npos) return -1;
  int value = -1;
  for (char c : symbol.substr(at + 3)) {
    if (c < '0' || c > '9') break;
    value = (value < 0 ? 0 : value * 10) + (c - '0');
  }
  return value;
}

Constants constants_for(std::optional<int> scale) {
  Constants constants;
  if (scale) constants.ints = {{1, *scale}};
  return constants;
}

std::optional<int> pick_scale(Rng& rng) {
  if (rng() % 2 == 0) return std::nullopt;
  return static_cast<int>(rng() % 10);
}

// The versions of one source registered so far. Replacements of one name happen in order,
// under `writer`; a call that reads `done` before it starts and `started` after it ends
// must be served one of the versions in between.
struct Versions {
  std::mutex writer;
  std::atomic<int> started{0};
  std::atomic<int> done{0};
};

// Why `binary` is not a correct answer for (source, scale) while versions lo..hi were
// current; empty if it is.
std::string check(const Binary& binary, const std::string& arch, int source,
                  std::optional<int> scale, int lo, int hi, bool& unchecked) {
  const std::string name = name_of(source);
  const std::string key =
      name + (scale ? "|1:i" + std::to_string(*scale) : std::string()) + "@" + arch;
  if (binary.key() != key) return "key '" + binary.key() + "' where '" + key + "' was asked";
  const std::string_view symbol = binary.symbol(name);
  const int variant = lowered_variant(symbol);
  if (variant < 0) return key + ": no version in symbol '" + std::string(symbol) + "'";
  const std::string expected_tag = tag(source, variant, scale.value_or(1));
  const std::string_view image(binary.image().data(), binary.size());
  if (image.find(expected_tag) == std::string_view::npos) {
    return key + ": symbol of version " + std::to_string(variant) + " but the image lacks " +
           expected_tag;
  }
  if (hi - lo + 1 >= kSoakVariants) {
    unchecked = true;  // every variant was current at some point of the call
    return {};
  }
  for (int v = lo; v <= hi; ++v) {
    if (v % kSoakVariants == variant) return {};
  }
  return key + ": variant " + std::to_string(variant) + " served while versions " +
         std::to_string(lo) + ".." + std::to_string(hi) + " were current";
}

class Soak {
 public:
  explicit Soak(SoakOptions options)
      : options_(std::move(options)), gpu_(cuda::driver_available() && cuda::device_count() > 0) {}

  SoakResult run() {
    reg_ = std::make_unique<Registry>(registry_options());
    arch_ = reg_->arch();
    for (int s = 0; s < kSoakSources; ++s) reg_->register_source(name_of(s), soak_source(s, 0));
    const auto start = Clock::now();
    deadline_ = start + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(options_.seconds));
    std::vector<SoakCounts> counts(options_.threads);
    {
      std::vector<std::jthread> threads;
      for (unsigned t = 0; t < options_.threads; ++t) {
        threads.emplace_back([this, t, &counts] { work(t, counts[t]); });
      }
    }
    SoakResult result;
    result.threads = options_.threads;
    result.gpu = gpu_;
    for (const SoakCounts& c : counts) add(result.counts, c);
    const Stats stats = reg_->stats();
    result.counts.compiles = stats.compiles;
    result.counts.disk_hits = stats.disk_hits;
    reg_.reset();  // waits for the disk writes
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::lock_guard lock(errors_mutex_);
    result.counts.errors = errors_;
    result.counts.first_errors = first_errors_;
    return result;
  }

 private:
  RegistryOptions registry_options() const {
    RegistryOptions options;
    options.arch = gpu_ ? "" : "sm_90";
    options.cache_dir = options_.dir;
    options.precompiled = false;
    options.warm_compiler = false;
    options.prewarm_threads = 2;
    options.compile_processes = 0;
    return options;
  }

  static void add(SoakCounts& total, const SoakCounts& c) {
    total.gets += c.gets;
    total.replacements += c.replacements;
    total.prewarms += c.prewarms;
    total.prewarmed += c.prewarmed;
    total.fresh += c.fresh;
    total.flushes += c.flushes;
    total.reads += c.reads;
    total.unchecked += c.unchecked;
  }

  void fail(const std::string& what) {
    std::lock_guard lock(errors_mutex_);
    ++errors_;
    if (first_errors_.size() < kKeptErrors) first_errors_.push_back(what);
  }

  void verdict(const std::string& problem, bool unchecked, SoakCounts& counts) {
    if (!problem.empty()) fail(problem);
    counts.unchecked += unchecked ? 1 : 0;
  }

  void work(unsigned index, SoakCounts& counts) {
    Rng rng(options_.seed * 1000 + index);
    while (Clock::now() < deadline_) {
      const unsigned op = rng() % 100;
      try {
        if (op < 50) {
          get_one(rng, counts);
        } else if (op < 65) {
          replace_one(rng, counts);
        } else if (op < 77) {
          prewarm_some(rng, counts);
        } else if (op < 82) {
          fresh_registry(rng, counts);
        } else if (op < 87) {
          reg_->flush_disk_cache();
          ++counts.flushes;
        } else {
          read_state(rng, counts);
        }
      } catch (const std::exception& e) {
        fail("operation " + std::to_string(op) + " threw: " + e.what());
      }
    }
  }

  void get_one(Rng& rng, SoakCounts& counts) {
    const int source = static_cast<int>(rng() % kSoakSources);
    const std::optional<int> scale = pick_scale(rng);
    Versions& versions = versions_[source];
    const int lo = versions.done.load();
    const Binary* binary = nullptr;
    if (gpu_) {
      const Kernel& kernel = reg_->get(name_of(source), constants_for(scale));
      binary = &kernel.binary();
    } else {
      binary = &reg_->compile(name_of(source), constants_for(scale));
    }
    const int hi = versions.started.load();
    bool unchecked = false;
    verdict(check(*binary, arch_, source, scale, lo, hi, unchecked), unchecked, counts);
    ++counts.gets;
  }

  void replace_one(Rng& rng, SoakCounts& counts) {
    const int source = static_cast<int>(rng() % kSoakSources);
    Versions& versions = versions_[source];
    std::lock_guard lock(versions.writer);
    const int next = versions.started.load() + 1;
    versions.started.store(next);
    reg_->register_source(name_of(source), soak_source(source, next % kSoakVariants));
    versions.done.store(next);
    ++counts.replacements;
  }

  void prewarm_some(Rng& rng, SoakCounts& counts) {
    std::vector<KernelRequest> requests(1 + rng() % 4);
    for (KernelRequest& request : requests) {
      request.name = name_of(static_cast<int>(rng() % kSoakSources));
      request.constants = constants_for(pick_scale(rng));
    }
    const std::size_t ready = reg_->prewarm(requests);
    if (ready != requests.size()) {
      fail("prewarm made " + std::to_string(ready) + " of " + std::to_string(requests.size()) +
           " ready");
    }
    ++counts.prewarms;
    counts.prewarmed += ready;
  }

  // Another registry on the folder, given the text now current: whatever it is served
  // (from disk, most often) must be exactly that version.
  void fresh_registry(Rng& rng, SoakCounts& counts) {
    const int source = static_cast<int>(rng() % kSoakSources);
    const int variant = versions_[source].done.load() % kSoakVariants;
    const std::optional<int> scale = pick_scale(rng);
    Registry other(registry_options());
    other.register_source(name_of(source), soak_source(source, variant));
    const Binary& binary = other.compile(name_of(source), constants_for(scale));
    bool unchecked = false;
    verdict(check(binary, arch_, source, scale, variant, variant, unchecked), unchecked, counts);
    ++counts.fresh;
  }

  void read_state(Rng& rng, SoakCounts& counts) {
    const std::string name = name_of(static_cast<int>(rng() % kSoakSources));
    // Readers of the registry's state run beside everything else; they must not block or
    // crash, and no compile or load may have failed.
    reg_->is_cached(name, constants_for(pick_scale(rng)));
    reg_->cached_count();
    if (reg_->stats().failures != 0) fail("the registry counted a failure");
    ++counts.reads;
  }

  SoakOptions options_;
  bool gpu_;
  std::unique_ptr<Registry> reg_;
  std::string arch_;
  std::array<Versions, kSoakSources> versions_;
  Clock::time_point deadline_;
  std::mutex errors_mutex_;
  std::uint64_t errors_ = 0;
  std::vector<std::string> first_errors_;
};

}  // namespace

std::string soak_source(int source, int variant) {
  const std::string s = std::to_string(source);
  const std::string v = std::to_string(variant);
  std::string tag_chars;
  // "SOAK<s>V<v>C": the tag up to its constant, which the kernel adds at compile time.
  const std::string prefix = tag(source, variant, 0).substr(0, 6 + s.size() + v.size());
  for (char c : prefix) {
    tag_chars += '\'';
    tag_chars += c;
    tag_chars += "',";
  }
  return "#include <kreg/kernel.cuh>\n"
         "KREG_CONSTANT_DEFAULT(int, scale, 1, 1);\n"
         "// kreg:entry soak_" +
         s + "=soak_kernel_" + s + "<" + v +
         ">\n"
         "__device__ const char soak_tag_" +
         s + "[] = {" + tag_chars +
         "static_cast<char>('0' + scale), '!'};\n"
         "template <int Version>\n"
         "__global__ void soak_kernel_" +
         s +
         "(float* p) {\n"
         "  p[threadIdx.x] = soak_tag_" +
         s + "[threadIdx.x % sizeof(soak_tag_" + s + ")] * Version;\n}\n";
}

std::string check_soak_binary(const Binary& binary, const std::string& arch, int source,
                              int variant) {
  bool unchecked = false;
  return check(binary, arch, source, std::nullopt, variant, variant, unchecked);
}

SoakResult run_soak(const SoakOptions& options) {
  return Soak(options).run();
}

std::string SoakResult::summary() const {
  char line[512];
  std::snprintf(line, sizeof(line),
                "soak: %.1f s, %u threads, %s: %llu %s, %llu replacements, %llu prewarms "
                "(%llu kernels), %llu fresh registries, %llu flushes, %llu reads; %llu "
                "compiles, %llu disk hits; %llu unchecked; %llu errors",
                seconds, threads, gpu ? "GPU" : "no GPU",
                static_cast<unsigned long long>(counts.gets), gpu ? "gets" : "compiles (get)",
                static_cast<unsigned long long>(counts.replacements),
                static_cast<unsigned long long>(counts.prewarms),
                static_cast<unsigned long long>(counts.prewarmed),
                static_cast<unsigned long long>(counts.fresh),
                static_cast<unsigned long long>(counts.flushes),
                static_cast<unsigned long long>(counts.reads),
                static_cast<unsigned long long>(counts.compiles),
                static_cast<unsigned long long>(counts.disk_hits),
                static_cast<unsigned long long>(counts.unchecked),
                static_cast<unsigned long long>(counts.errors));
  return line;
}

ChurnCounts run_churn(const std::filesystem::path& dir, double seconds, std::uint64_t seed) {
  Rng rng(seed);
  ChurnCounts counts;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 180));
    const unsigned op = rng() % 100;
    if (op < 35) {
      counts.entries_removed += cache_clear(dir);
      ++counts.clears;
    } else if (op < 70) {
      counts.entries_removed += cache_trim(dir, 1 + rng() % (std::uint64_t{64} << 10));
      ++counts.trims;
    } else if (op < 95) {
      counts.bad_entries += cache_verify(dir, false).bad;
      ++counts.verifies;
    } else {
      std::error_code error;
      std::filesystem::remove_all(dir, error);  // what `rm -rf` of the cache does
      ++counts.removals;
    }
  }
  return counts;
}

std::string ChurnCounts::summary() const {
  char line[256];
  std::snprintf(
      line, sizeof(line),
      "churn: %llu clears and %llu trims (%llu entries removed), %llu verifies "
      "(%llu bad), %llu folder removals",
      static_cast<unsigned long long>(clears), static_cast<unsigned long long>(trims),
      static_cast<unsigned long long>(entries_removed), static_cast<unsigned long long>(verifies),
      static_cast<unsigned long long>(bad_entries), static_cast<unsigned long long>(removals));
  return line;
}

}  // namespace kreg::test
