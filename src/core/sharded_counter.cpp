#include "core/sharded_counter.hpp"

#include <mutex>
#include <vector>

namespace kreg::core {
namespace {

// The owned shards no living thread holds. Never destroyed: threads (the main thread among
// them) hand their shard back from thread-exit destructors, which may run after static
// destructors would have.
class ShardPool {
 public:
  ShardPool() {
    for (int i = kOwnedShards - 1; i >= 0; --i) free_.push_back(i);
  }
  int take() {
    const std::lock_guard lock(mutex_);
    if (free_.empty()) return kOwnedShards + static_cast<int>(next_shared_++ % kSharedShards);
    const int shard = free_.back();
    free_.pop_back();
    return shard;
  }
  void give_back(int shard) {
    const std::lock_guard lock(mutex_);
    free_.push_back(shard);
  }

 private:
  std::mutex mutex_;
  std::vector<int> free_;
  unsigned next_shared_ = 0;
};

ShardPool& pool() {
  static auto* instance = new ShardPool;
  return *instance;
}

// Hands an owned shard back when its thread exits. The lock that give_back and take share
// orders the exiting thread's last plain store before the next owner's first load.
struct ShardReturn {
  int shard = -1;
  ShardReturn() = default;
  ShardReturn(const ShardReturn&) = delete;
  ShardReturn& operator=(const ShardReturn&) = delete;
  ~ShardReturn() {
    if (shard < 0 || shard >= kOwnedShards) return;
    // Counts made later on this thread (by other thread-exit destructors) go to a shared
    // shard, since the owned one may already be another thread's.
    thread_shard = kOwnedShards + shard % kSharedShards;
    try {
      pool().give_back(shard);
    } catch (...) {
      // The shard is lost to reuse; counting stays correct.
    }
  }
};

}  // namespace

thread_local constinit int thread_shard = -1;

int claim_thread_shard() noexcept {
  int shard = kOwnedShards;  // shared, if the pool cannot answer
  try {
    shard = pool().take();
    thread_local ShardReturn on_exit;
    on_exit.shard = shard;
  } catch (...) {
    // A mutex or an allocation failed: count in a shared shard.
  }
  thread_shard = shard;
  return shard;
}

}  // namespace kreg::core
