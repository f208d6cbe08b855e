#pragma once
// Pays NVRTC's one-time start-up (about 190 ms on an H200 host) on a background thread just
// after a registry is made, unless a real compile comes first.

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace kreg::registry {

class CompilerWarmUp {
 public:
  CompilerWarmUp() = default;
  // Stops the thread: one still inside NVRTC is waited for.
  ~CompilerWarmUp() = default;
  CompilerWarmUp(const CompilerWarmUp&) = delete;
  CompilerWarmUp& operator=(const CompilerWarmUp&) = delete;

  // Starts the thread (once). `arch` empty: the first arch NVRTC supports.
  void start(std::string arch);
  // A compile is about to start: a warm-up that has not begun is not needed any more.
  void compile_requested();

 private:
  std::mutex mutex_;
  std::condition_variable_any wake_;
  bool requested_ = false;  // guarded by mutex_
  std::jthread thread_;     // last: stopped and joined first
};

}  // namespace kreg::registry
