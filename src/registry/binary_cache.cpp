#include "registry/binary_cache.hpp"

#include "cuda/library.hpp"

namespace kreg::registry {

std::shared_ptr<BinarySlot> BinaryCache::get_or_build(const std::string& key, std::uint64_t owner,
                                                      const Builder& build) {
  std::promise<std::shared_ptr<BinarySlot>> promise;
  {
    std::unique_lock lock(mutex_);
    if (auto it = ready_.find(key); it != ready_.end()) return it->second.slot;
    if (auto it = pending_.find(key); it != pending_.end()) {
      auto future = it->second;
      lock.unlock();
      return future.get();  // rethrows the builder's error
    }
    pending_.emplace(key, promise.get_future().share());
  }
  std::shared_ptr<BinarySlot> slot;
  try {
    slot = std::make_shared<BinarySlot>(build());
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      pending_.erase(key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
  {
    std::lock_guard lock(mutex_);
    pending_.erase(key);
    if (!dropped_.contains(owner)) ready_.emplace(key, Ready{slot, owner});
  }
  promise.set_value(slot);
  return slot;
}

std::shared_ptr<BinarySlot> BinaryCache::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = ready_.find(key);
  return it == ready_.end() ? nullptr : it->second.slot;
}

void BinaryCache::drop_owner(std::uint64_t owner) {
  std::lock_guard lock(mutex_);
  dropped_.insert(owner);
  std::erase_if(ready_, [&](const auto& item) { return item.second.owner == owner; });
}

std::size_t BinaryCache::size() const {
  std::lock_guard lock(mutex_);
  return ready_.size();
}

}  // namespace kreg::registry
