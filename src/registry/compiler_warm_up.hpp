#pragma once
// Pays one-time start-up costs on a background thread just after a registry is made:
// NVRTC's (about 190 ms on an H200 host), unless a real compile comes first, and the first
// mapping of kreg's memory pool on the registry's GPU when another library has already made
// its context live (about 8 ms), which a first launch would otherwise wait for after its
// compile.

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

  // Starts the thread (once). `arch` empty: the first arch NVRTC supports. `device`: the
  // GPU whose memory pool to warm.
  void start(std::string arch, int device);
  // A compile is about to start: a warm-up that has not begun is not needed any more.
  void compile_requested();

 private:
  std::mutex mutex_;
  std::condition_variable_any wake_;
  bool requested_ = false;  // guarded by mutex_
  std::jthread thread_;     // last: stopped and joined first
};

}  // namespace kreg::registry
