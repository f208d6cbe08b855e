#pragma once
// Manifests: the (name, constants) set a registry served, as JSON, so that the next process
// can prewarm exactly that set at load time; and the tuned winners it looked up
// (Registry::tuned, which the built-in ops ask for their shapes), so that the next process
// reads their records at load time too. A manifest without "tuned" is as valid.
//
//   {"format": "kreg-manifest", "version": 1,
//    "kernels": [{"name": "powi_f32", "constants": "200:b1|300:i3"}, ...],
//    "tuned": [{"name": "kreg::matmul_tma_bf16", "bucket": "m512_n4096_k4096",
//               "fixed": "200:b1", "ints": [[301, [256, 128]]], "bools": []}, ...]}

#include <kreg/registry.hpp>
#include <kreg/tune.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kreg::registry {

// One Registry::tuned question: a kernel, its space (with no rule: a rule cannot be written
// down) and a bucket.
struct TunedLookup {
  std::string name;
  std::string bucket;
  TuneSpace space;
};

// The text of a manifest listing `kernels` and `lookups`, in their order. Throws
// InvalidArgument for a name or bucket that is not UTF-8, which JSON cannot hold.
std::string manifest_text(const std::vector<KernelRequest>& kernels,
                          const std::vector<TunedLookup>& lookups = {});

// The requests `text` lists. Throws InvalidArgument, naming `origin` (the file it came
// from) and the problem, for anything but a well-formed manifest.
std::vector<KernelRequest> parse_manifest(std::string_view text,
                                          const std::filesystem::path& origin);
// The lookups `text` lists (none without "tuned"); throws as parse_manifest does.
std::vector<TunedLookup> parse_manifest_lookups(std::string_view text,
                                                const std::filesystem::path& origin);

// Written to a temp file and renamed, so a reader never sees half a manifest.
// Throws InvalidArgument if the file cannot be written, or as manifest_text does.
void write_manifest(const std::filesystem::path& path, const std::vector<KernelRequest>& kernels,
                    const std::vector<TunedLookup>& lookups = {});

// Throws InvalidArgument, naming the file and the problem, for an unreadable or malformed
// manifest, and for anything but a regular file of at most 64 MiB (a FIFO, a folder or
// /dev/zero must not hang the reader or fill memory).
std::vector<KernelRequest> read_manifest(const std::filesystem::path& path);
// Both lists of a manifest file, read once.
std::pair<std::vector<KernelRequest>, std::vector<TunedLookup>> read_manifest_and_lookups(
    const std::filesystem::path& path);

}  // namespace kreg::registry
