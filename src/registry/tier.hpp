#pragma once
// One place a binary can come from: the precompiled set, the disk cache, NVRTC. Tiers sit in
// a BuildChain (build_chain.hpp), which asks them in order and offers what a later one found
// to the earlier ones to keep.

#include <kreg/types.hpp>

#include "compiler/nvrtc_compiler.hpp"
#include "core/label.hpp"
#include "registry/counters.hpp"
#include "registry/source.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::registry {

// One (source, constant set) to build for one arch, as every tier sees it.
struct BuildRequest {
  const Source& source;
  const std::vector<core::ConstantValue>& values;
  std::string_view label;  // "name|200:b1", for messages
  std::string key;         // Binary::key(): "source|200:b1@sm_90"
  std::string arch;
  std::string storage;        // what `request` views besides the source
  compiler::Request request;  // views `source`, the embedded headers and `storage`
  std::string key_text;       // compiler::encode_key(request): what shapes the binary
  bool pooled = false;        // may compile in a worker process (a large prewarm)

  BuildRequest(const Source& s, const std::vector<core::ConstantValue>& v, std::string_view l,
               std::string binary_key, std::string target_arch,
               const std::vector<std::string>& global_options, bool pool);
  BuildRequest(const BuildRequest&) = delete;
  BuildRequest& operator=(const BuildRequest&) = delete;
};

// What a tier found: a successful compile result and where it came from.
struct Found {
  compiler::Result result;
  Origin origin = Origin::Compiled;
  double ms = 0;  // time to produce it: the compile, or the read and decode
  // Set for an image that lives as long as the process (the precompiled set): it is viewed,
  // never copied, and result.image is empty.
  std::span<const char> lasting_image;
};

class Tier {
 public:
  Tier() = default;
  virtual ~Tier() = default;
  Tier(const Tier&) = delete;
  Tier& operator=(const Tier&) = delete;

  // For logs, e.g. "disk".
  virtual std::string_view name() const noexcept = 0;
  // Whether the tier keeps binaries under the request's storage key (disk, remote). The chain
  // neither asks such a tier about a request whose key cannot cover what its compile may
  // read, nor offers it a binary whose compile read a file the key does not hold
  // (key_coverage.hpp), so a tier cannot forget the rule.
  virtual bool keyed() const noexcept { return false; }
  // Where the chain counts the tier's hits and the time its lookups take, when it does: a
  // hit's time always, a miss's too for a tier whose misses cost (the network).
  struct Timing {
    Counter hits;
    Counter ns;
    bool misses_too = false;
  };
  virtual std::optional<Timing> timing() const noexcept { return std::nullopt; }
  // The binary for `request`, or std::nullopt to ask the next tier. Throws only when the
  // build itself failed (a source that does not compile): a tier that cannot answer misses.
  // The chain sets the found binary's time for a tier with timing().
  virtual std::optional<Found> find(const BuildRequest& request) = 0;
  // Offered what a later tier found. A tier keeps what it may (a read-only one nothing);
  // never throws, since the caller already has its binary.
  virtual void store(const BuildRequest& request, const Found& found) noexcept = 0;
  // Returns once everything stored so far is where another process can find it.
  virtual void flush() {}

  // Small records that are not binaries (a tuning run's times), kept by a keyed tier under
  // their full key, checked as its binaries are. A tier that keeps none misses and drops.
  virtual std::optional<std::string> find_record(const std::string& /*key*/) {
    return std::nullopt;
  }
  virtual void store_record(const std::string& /*key*/, const std::string& /*payload*/) noexcept {}
};

// A stored payload (compiler::encode of a Result) as a Found, if it decodes to a successful
// result that fits `request`; anything else is a miss. A `lasting` payload outlives the
// process's binaries, so its image is viewed rather than copied.
std::optional<Found> decode_found(std::string_view payload, const BuildRequest& request,
                                  Origin origin, bool lasting = false);

// What a tier stores for `found`: compiler::encode of its result, image included.
std::string encode_found(const Found& found);

}  // namespace kreg::registry
