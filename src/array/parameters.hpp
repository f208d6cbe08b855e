#pragma once
// The argument block of a kernel launch, built on the host.

#include <cstddef>
#include <cstring>
#include <vector>

namespace kreg::array {

// Parameter values, each at its natural alignment, and the pointer array the driver reads.
// Kept inline for the usual few dozen parameters: this is on every launch. Each pointer is
// taken when its value is stored and stays valid: inline bytes never move, and a spilled
// value keeps its heap block when the spill list grows.
class Parameters {
 public:
  void add(const void* value, std::size_t size, std::size_t align) {
    const std::size_t at = (used_ + align - 1) / align * align;
    void* where = nullptr;
    if (at + size <= kInlineBytes) {
      where = bytes_ + at;
      used_ = at + size;
    } else {
      spill_.emplace_back(size);
      where = spill_.back().data();
    }
    std::memcpy(where, value, size);
    if (count_ < kInlinePointers) {
      pointers_[count_] = where;
    } else {
      if (more_.empty()) more_.assign(pointers_, pointers_ + kInlinePointers);
      more_.push_back(where);
    }
    ++count_;
  }
  template <class T>
  void add(const T& value) {
    add(&value, sizeof(T), alignof(T));
  }
  void** pointers() { return count_ <= kInlinePointers ? pointers_ : more_.data(); }

 private:
  static constexpr std::size_t kInlineBytes = 1024;
  static constexpr std::size_t kInlinePointers = 64;
  alignas(16) unsigned char bytes_[kInlineBytes] = {};
  std::size_t used_ = 0;
  void* pointers_[kInlinePointers] = {};
  std::size_t count_ = 0;
  std::vector<void*> more_;
  std::vector<std::vector<unsigned char>> spill_;
};

}  // namespace kreg::array
