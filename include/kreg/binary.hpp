#pragma once
/// \file
/// A compiled kernel source: machine code for one arch and one constant set.

#include <kreg/types.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kreg {

namespace core {
struct BinaryParts;  // what kreg makes a Binary from
}  // namespace core

/// The result of compiling one source with one constant set for one arch. It holds every
/// entry point of the source. Binaries are immutable and live as long as their registry.
class Binary {
 public:
  /// One entry point: the name `get` takes, and the symbol the binary exports for it
  /// (the lowered name for a template instantiation).
  struct Symbol {
    std::string name;
    std::string symbol;
  };

  /// Binaries are made by registries only.
  explicit Binary(core::BinaryParts parts);

  /// The name of the source this was built from.
  const std::string& source_name() const noexcept { return source_name_; }
  /// The cache key: "source|constants@arch", e.g. "attn|200:b1|300:i64@sm_90".
  const std::string& key() const noexcept { return key_; }
  /// The target, e.g. "sm_90" or "sm_90a".
  const std::string& arch() const noexcept { return arch_; }
  Origin origin() const noexcept { return origin_; }
  /// The CUBIN image.
  std::span<const char> image() const noexcept {
    return lasting_image_.empty() ? std::span<const char>(owned_image_) : lasting_image_;
  }
  std::size_t size() const noexcept { return image().size(); }
  /// Compiler warnings, if any (empty for binaries not compiled in this process).
  const std::string& log() const noexcept { return log_; }
  /// Time it took to produce this binary (compile or read), in milliseconds.
  double milliseconds() const noexcept { return ms_; }
  const std::vector<Symbol>& symbols() const noexcept { return symbols_; }
  /// The exported symbol for an entry name; empty if the binary has no such entry.
  std::string_view symbol(std::string_view name) const noexcept;

 private:
  std::string source_name_;
  std::string key_;
  std::string arch_;
  Origin origin_;
  std::vector<char> owned_image_;
  std::span<const char> lasting_image_;  // instead: an image embedded in the library
  std::vector<Symbol> symbols_;
  std::string log_;
  double ms_;
};

}  // namespace kreg
