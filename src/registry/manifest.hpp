#pragma once
// Manifests: the (name, constants) set a registry served, as JSON, so that the next process
// can prewarm exactly that set at load time.
//
//   {"format": "kreg-manifest", "version": 1,
//    "kernels": [{"name": "powi_f32", "constants": "200:b1|300:i3"}, ...]}

#include <kreg/registry.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::registry {

// The text of a manifest listing `kernels`, in their order. Throws InvalidArgument for a
// name that is not UTF-8, which JSON cannot hold.
std::string manifest_text(const std::vector<KernelRequest>& kernels);

// The requests `text` lists. Throws InvalidArgument, naming `origin` (the file it came
// from) and the problem, for anything but a well-formed manifest.
std::vector<KernelRequest> parse_manifest(std::string_view text,
                                          const std::filesystem::path& origin);

// Written to a temp file and renamed, so a reader never sees half a manifest.
// Throws InvalidArgument if the file cannot be written, or as manifest_text does.
void write_manifest(const std::filesystem::path& path, const std::vector<KernelRequest>& kernels);

// Throws InvalidArgument, naming the file and the problem, for an unreadable or malformed
// manifest, and for anything but a regular file of at most 64 MiB (a FIFO, a folder or
// /dev/zero must not hang the reader or fill memory).
std::vector<KernelRequest> read_manifest(const std::filesystem::path& path);

}  // namespace kreg::registry
