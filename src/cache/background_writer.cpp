#include "cache/background_writer.hpp"

namespace kreg::cache {

BackgroundWriter::~BackgroundWriter() {
  try {
    flush();
  } catch (...) {
    // flush only waits; there is nothing left to report.
  }
  if (thread_.joinable()) {
    thread_.request_stop();
    wake_.notify_all();
    thread_.join();
  }
}

void BackgroundWriter::submit(std::string key, std::string payload) noexcept {
  try {
    std::unique_lock lock(mutex_);
    if (queued_bytes_ + payload.size() <= kMaxQueuedBytes) {
      if (!thread_.joinable()) {
        thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
      }
      queued_bytes_ += payload.size();
      queue_.emplace_back(std::move(key), std::move(payload));
      lock.unlock();
      wake_.notify_one();
      return;
    }
  } catch (...) {
    // No thread or no memory for the queue: write here instead.
  }
  store_(key, payload);
}

void BackgroundWriter::flush() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

void BackgroundWriter::run(const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, stop, [&] { return !queue_.empty(); });
    if (queue_.empty()) return;  // stop requested with nothing left
    auto [key, payload] = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= payload.size();
    writing_ = true;
    lock.unlock();
    store_(key, payload);  // never throws
    lock.lock();
    writing_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace kreg::cache
