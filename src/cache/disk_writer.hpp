#pragma once
// Writes disk-cache entries on a background thread, so that a compile returns its binary
// without waiting for the write and its fsync (a few milliseconds on common disks, a fifth of
// a trivial kernel's first call). Entries become visible to other processes when written.

#include "cache/disk_cache.hpp"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace kreg::cache {

class DiskWriter {
 public:
  // Queued entries beyond this many bytes are written by the submitting thread instead, so
  // a burst of compiles cannot queue unbounded memory.
  static constexpr std::size_t kMaxQueuedBytes = std::size_t{256} << 20;

  explicit DiskWriter(DiskCache& cache) : cache_(cache) {}
  // Writes whatever is queued, then stops the thread.
  ~DiskWriter();
  DiskWriter(const DiskWriter&) = delete;
  DiskWriter& operator=(const DiskWriter&) = delete;

  // Never throws: a store that cannot be queued is written at once.
  void submit(std::string key, std::string payload) noexcept;
  // Returns once everything submitted before the call is written (or failed to be).
  void flush();

 private:
  void run(const std::stop_token& stop);

  DiskCache& cache_;
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::condition_variable idle_;
  std::deque<std::pair<std::string, std::string>> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  std::jthread thread_;  // started on the first submit; last, so it stops first
};

}  // namespace kreg::cache
