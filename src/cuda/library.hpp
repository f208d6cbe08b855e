#pragma once
// A binary loaded into the driver as a context-independent library (CUlibrary): one load
// serves every context of the process.

#include <memory>
#include <span>
#include <string_view>

namespace kreg::cuda {

class Library {
 public:
  // Throws LoadError (with `key` in the message) if the driver rejects the image.
  Library(std::span<const char> image, std::string_view key);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The CUkernel for an exported symbol; throws LoadError if there is none.
  void* kernel(std::string_view symbol, std::string_view label) const;

 private:
  void* handle_ = nullptr;  // CUlibrary
};

}  // namespace kreg::cuda
