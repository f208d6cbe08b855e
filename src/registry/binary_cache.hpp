#pragma once
// Compiled binaries in memory, with single flight: concurrent requests for one key wait
// for one build; builds of different keys run in parallel, outside any lock. A build that
// throws is not cached: its waiters get its exception and the next request builds again.

#include <kreg/binary.hpp>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kreg::cuda {
class Library;
}

namespace kreg::registry {

// A binary and, once a kernel of it is first loaded, its driver library.
struct BinarySlot {
  explicit BinarySlot(std::shared_ptr<const Binary> b) : binary(std::move(b)) {}
  std::shared_ptr<const Binary> binary;
  std::mutex load_mutex;
  std::shared_ptr<const cuda::Library> library;  // guarded by load_mutex
};

class BinaryCache {
 public:
  using Builder = std::function<std::shared_ptr<const Binary>()>;

  // The slot for `key`, built by `build` if no one has it. `owner` is the source
  // registration the key belongs to (see drop_owner).
  std::shared_ptr<BinarySlot> get_or_build(const std::string& key, std::uint64_t owner,
                                           const Builder& build);
  std::shared_ptr<BinarySlot> find(const std::string& key) const;
  // Forgets every binary of a replaced source, and makes builds of it still in flight
  // hand their result to their callers without caching it.
  void drop_owner(std::uint64_t owner);
  std::size_t size() const;

 private:
  struct Ready {
    std::shared_ptr<BinarySlot> slot;
    std::uint64_t owner;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Ready> ready_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<BinarySlot>>> pending_;
  std::unordered_set<std::uint64_t> dropped_;
};

}  // namespace kreg::registry
