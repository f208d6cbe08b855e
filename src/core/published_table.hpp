#pragma once
// A string-keyed hash table whose lookups are lock-free and never allocate, for the
// registry's hit path. Writers serialize on a mutex the caller holds.
//
// Values are pointers to objects the caller keeps alive for the table's whole life (the
// registry never frees a kernel while it lives), so a reader may still be looking at an
// entry that a writer has just removed. Removal leaves a tombstone; growing copies the live
// entries into a new array and retires the old one, which is freed with the table, because
// a reader may still be probing it. The retired arrays add up to less than the final one.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace kreg::core {

// T must provide `std::string_view key() const`.
template <class T>
class PublishedTable {
 public:
  PublishedTable() : current_(make_array(16)) { array_.store(current_.get()); }
  PublishedTable(const PublishedTable&) = delete;
  PublishedTable& operator=(const PublishedTable&) = delete;

  const T* find(std::string_view key, std::uint64_t hash) const noexcept {
    const Array* array = array_.load(std::memory_order_acquire);
    for (std::size_t i = hash & array->mask;; i = (i + 1) & array->mask) {
      const Slot& slot = array->slots[i];
      const T* value = slot.value.load(std::memory_order_acquire);
      if (value == nullptr) return nullptr;
      if (value != tombstone() && slot.hash.load(std::memory_order_relaxed) == hash &&
          value->key() == key) {
        return value;
      }
    }
  }

  // Writer side: the caller holds the writer lock. Inserts or replaces the entry for
  // value->key().
  void insert(const T* value, std::uint64_t hash) {
    if ((used_ + 1) * 2 > current_->mask + 1) grow();
    Array* array = current_.get();
    std::size_t reuse = array->mask + 1;
    for (std::size_t i = hash & array->mask;; i = (i + 1) & array->mask) {
      Slot& slot = array->slots[i];
      const T* existing = slot.value.load(std::memory_order_relaxed);
      if (existing == nullptr) {
        if (reuse <= array->mask) {
          publish(array->slots[reuse], value, hash);
        } else {
          publish(slot, value, hash);
          ++used_;
        }
        ++live_;
        return;
      }
      if (existing == tombstone()) {
        if (reuse > array->mask) reuse = i;
      } else if (slot.hash.load(std::memory_order_relaxed) == hash &&
                 existing->key() == value->key()) {
        slot.value.store(value, std::memory_order_release);
        return;
      }
    }
  }

  // Writer side: removes every entry for which `pred(value)` holds.
  template <class Pred>
  void erase_if(Pred&& pred) {
    Array* array = current_.get();
    for (std::size_t i = 0; i <= array->mask; ++i) {
      Slot& slot = array->slots[i];
      const T* value = slot.value.load(std::memory_order_relaxed);
      if (value != nullptr && value != tombstone() && pred(value)) {
        slot.value.store(tombstone(), std::memory_order_release);
        --live_;
      }
    }
  }

  // Writer side (or under the writer lock): visits every live entry.
  template <class Fn>
  void for_each(Fn&& fn) const {
    const Array* array = current_.get();
    for (std::size_t i = 0; i <= array->mask; ++i) {
      const T* value = array->slots[i].value.load(std::memory_order_relaxed);
      if (value != nullptr && value != tombstone()) fn(value);
    }
  }

  std::size_t size() const noexcept { return live_; }

 private:
  struct Slot {
    std::atomic<std::uint64_t> hash{0};
    std::atomic<const T*> value{nullptr};
  };
  struct Array {
    std::size_t mask = 0;
    std::unique_ptr<Slot[]> slots;
  };

  static const T* tombstone() noexcept {
    static const char marker = 0;
    return reinterpret_cast<const T*>(&marker);
  }

  static std::unique_ptr<Array> make_array(std::size_t capacity) {
    auto array = std::make_unique<Array>();
    array->mask = capacity - 1;
    array->slots = std::make_unique<Slot[]>(capacity);
    return array;
  }

  static void publish(Slot& slot, const T* value, std::uint64_t hash) {
    // The hash is written first; a reader that sees the pointer (acquire) sees the hash.
    slot.hash.store(hash, std::memory_order_relaxed);
    slot.value.store(value, std::memory_order_release);
  }

  void grow() {
    std::size_t capacity = current_->mask + 1;
    while (live_ * 4 + 4 > capacity) capacity *= 2;
    auto next = make_array(capacity);
    for (std::size_t i = 0; i <= current_->mask; ++i) {
      const Slot& slot = current_->slots[i];
      const T* value = slot.value.load(std::memory_order_relaxed);
      if (value == nullptr || value == tombstone()) continue;
      std::uint64_t hash = slot.hash.load(std::memory_order_relaxed);
      for (std::size_t j = hash & next->mask;; j = (j + 1) & next->mask) {
        if (next->slots[j].value.load(std::memory_order_relaxed) == nullptr) {
          publish(next->slots[j], value, hash);
          break;
        }
      }
    }
    used_ = live_;
    array_.store(next.get(), std::memory_order_release);
    retired_.push_back(std::move(current_));
    current_ = std::move(next);
  }

  std::atomic<const Array*> array_{nullptr};
  std::unique_ptr<Array> current_;
  std::vector<std::unique_ptr<Array>> retired_;
  std::size_t used_ = 0;  // non-null slots, tombstones included
  std::size_t live_ = 0;
};

}  // namespace kreg::core
