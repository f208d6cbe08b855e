#pragma once
// Writes cache entries on a background thread, so that a compile returns its binary without
// waiting for the write: a disk entry's fsync (a few milliseconds on common disks, a fifth of
// a trivial kernel's first call), or a round trip to the remote cache. Entries become
// visible to other processes when written.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace kreg::cache {

class BackgroundWriter {
 public:
  // Writes one entry; must not throw.
  using Store = std::function<void(const std::string& key, const std::string& payload)>;

  // Queued entries beyond this many bytes are written by the submitting thread instead, so
  // a burst of compiles cannot queue unbounded memory.
  static constexpr std::size_t kMaxQueuedBytes = std::size_t{256} << 20;

  explicit BackgroundWriter(Store store) : store_(std::move(store)) {}
  // Writes whatever is queued, then stops the thread.
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Never throws: a store that cannot be queued is written at once.
  void submit(std::string key, std::string payload) noexcept;
  // Returns once everything submitted before the call is written (or failed to be).
  void flush();

 private:
  void run(const std::stop_token& stop);

  Store store_;
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::condition_variable idle_;
  std::deque<std::pair<std::string, std::string>> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  std::jthread thread_;  // started on the first submit; last, so it stops first
};

}  // namespace kreg::cache
