#include "compiler/worker_pool.hpp"

#include "compiler/wire.hpp"
#include "core/env.hpp"
#include "core/log.hpp"

#include <dlfcn.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <chrono>
#include <filesystem>
#include <thread>
#include <utility>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace kreg::compiler {
namespace {

constexpr std::size_t kMaxFailures = 3;

// Owned by this user or by root, and not writable by others.
bool trusted(const struct stat& st) {
  return (st.st_uid == ::geteuid() || st.st_uid == 0) && (st.st_mode & S_IWOTH) == 0;
}

// A worker compiles the binaries kreg then loads and caches, so it runs only if no other
// user could have written it or put it in place: the file (after links) and its folder are
// trusted, or the folder is sticky (as /tmp is: no one can replace another's file there).
// Group-writable is allowed: a umask of 002 makes every build output so.
bool executable(const std::string& path) {
  if (path.empty() || ::access(path.c_str(), X_OK) != 0) return false;
  std::error_code error;
  const std::filesystem::path real = std::filesystem::canonical(path, error);
  struct stat file {};
  struct stat folder {};
  if (error || ::stat(real.c_str(), &file) != 0 || !S_ISREG(file.st_mode) ||
      ::stat(real.parent_path().c_str(), &folder) != 0) {
    return false;
  }
  if (trusted(file) && (trusted(folder) || (folder.st_mode & S_ISVTX) != 0)) return true;
  core::log_write(core::LogLevel::Warn, "not running compile worker '" + path +
                                            "': it or its folder could be written by another "
                                            "user; compiling in-process");
  return false;
}

}  // namespace

WorkerPool::WorkerPool(std::string executable, std::size_t size, int timeout_ms,
                       std::string identity, int ready_timeout_ms)
    : executable_(std::move(executable)),
      size_(size == 0 ? 1 : size),
      timeout_ms_(timeout_ms),
      identity_(identity.empty() ? compiler::identity() : std::move(identity)),
      ready_timeout_ms_(ready_timeout_ms) {}

WorkerPool::~WorkerPool() {
  std::lock_guard lock(mutex_);
  // Close every socket first so that all workers exit together, then reap them.
  for (const Worker& worker : idle_) ::close(worker.fd);
  for (Worker& worker : idle_) {
    worker.fd = -1;
    stop(worker);
  }
  idle_.clear();
}

std::size_t WorkerPool::started() const {
  std::lock_guard lock(mutex_);
  return started_;
}

std::string WorkerPool::find_executable() {
  if (auto path = core::env_string("KREG_COMPILE_WORKER")) {
    if (executable(*path)) return *path;
    core::log_write(core::LogLevel::Warn, "KREG_COMPILE_WORKER='" + *path +
                                              "' is not an executable kreg may run; compiling "
                                              "in-process");
    return {};
  }
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  // Beside the program, then where an install puts it relative to the program (bin/) and to
  // the library (lib/, for a shared libkreg), then beside the library (a Python package
  // ships it next to its extension module): an install at any prefix finds its own worker
  // before the configured prefix's or the build tree's.
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back((self.parent_path() / "kreg-nvrtc-worker").string());
    candidates.push_back((self.parent_path() / KREG_WORKER_FROM_BIN).lexically_normal().string());
  }
  Dl_info library{};
  if (::dladdr(reinterpret_cast<void*>(&WorkerPool::find_executable), &library) != 0 &&
      library.dli_fname != nullptr && fs::path(library.dli_fname) != self) {
    const fs::path folder = fs::weakly_canonical(library.dli_fname, error).parent_path();
    if (!error) {
      candidates.push_back((folder / KREG_WORKER_FROM_LIB).lexically_normal().string());
      candidates.push_back((folder / "kreg-nvrtc-worker").string());
    }
  }
  candidates.emplace_back(KREG_WORKER_INSTALL_PATH);
  candidates.emplace_back(KREG_WORKER_BUILD_PATH);
  for (const std::string& path : candidates) {
    if (executable(path)) return path;
  }
  return {};
}

std::optional<WorkerPool::Worker> WorkerPool::spawn(Health& health) {
  health = Health::Died;
  int fds[2] = {-1, -1};
  // CLOEXEC on both ends, so no worker inherits another worker's socket (which would keep
  // that worker from ever seeing EOF); dup2 below clears it on the child's stdin and stdout.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Nothing else of the host (its files, sockets, pipes) leaks into a worker.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
  pid_t pid = -1;
  char* argv[] = {const_cast<char*>(executable_.c_str()), nullptr};
  const int result = ::posix_spawn(&pid, executable_.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (result != 0) {
    ::close(fds[0]);
    return std::nullopt;
  }
  const Worker worker{pid, fds[0]};
  // The handshake: a worker with another NVRTC exits on reading it; a good one answers at
  // once. One that says nothing in time is not worth waiting for (nor are the others).
  std::string ready;
  FrameError error = FrameError::Failed;
  if (!write_frame(worker.fd, identity_) ||
      !read_frame(worker.fd, ready, ready_timeout_ms_, kMaxIdentityBytes, &error) ||
      ready != kWorkerReady) {
    if (error == FrameError::TimedOut) health = Health::Unresponsive;
    stop(worker, health == Health::Unresponsive);
    return std::nullopt;
  }
  health = Health::Healthy;
  return worker;
}

void WorkerPool::stop(Worker worker, bool kill) noexcept {
  if (worker.fd >= 0) ::close(worker.fd);  // the worker reads EOF and exits
  for (int i = 0; i < 100 && !kill; ++i) {
    if (::waitpid(worker.pid, nullptr, WNOHANG) != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(worker.pid, SIGKILL);  // stuck: a worker is never worth a hung host
  ::waitpid(worker.pid, nullptr, 0);
}

void WorkerPool::warn_giving_up(const char* why) const noexcept {
  try {
    core::log_write(core::LogLevel::Warn, "compile worker '" + executable_ + "' " + why +
                                              "; starting no more, compiling in-process");
  } catch (...) {
    // The pool has given up either way; the warning is all that is lost.
  }
}

std::optional<Result> WorkerPool::compile(const Request& request) {
  Worker worker;
  {
    std::unique_lock lock(mutex_);
    auto done = [&] { return given_up_ || failures_ >= kMaxFailures; };
    idle_ready_.wait(lock, [&] { return done() || !idle_.empty() || live_ < size_; });
    if (done()) return std::nullopt;
    if (!idle_.empty()) {
      worker = idle_.back();
      idle_.pop_back();
    } else {
      ++live_;
      ++started_;
      lock.unlock();
      Health health = Health::Died;
      auto spawned = spawn(health);
      lock.lock();
      if (!spawned) {
        --live_;
        ++failures_;
        const bool unresponsive = health == Health::Unresponsive;
        const bool giving_up = unresponsive && !std::exchange(given_up_, true);
        // Every waiter must re-check: past the limit they all give up, not just one.
        idle_ready_.notify_all();
        lock.unlock();
        if (giving_up) {
          warn_giving_up("did not say it was ready in time");
        } else if (!unresponsive) {
          core::log_write(core::LogLevel::Warn, "cannot start compile worker '" + executable_ +
                                                    "'; compiling in-process");
        }
        return std::nullopt;
      }
      worker = *spawned;
    }
  }

  // However this request ends (a reply, a broken worker, an exception such as bad_alloc),
  // the worker goes back to the pool or is retired, and waiters are woken.
  struct Release {
    WorkerPool& pool;
    Worker worker;
    Health health = Health::Died;
    ~Release() { pool.release(worker, health); }
  } release{*this, worker};

  std::string payload;
  std::optional<Result> result;
  FrameError error = FrameError::Failed;
  if (write_frame(worker.fd, encode(request)) &&
      read_frame(worker.fd, payload, timeout_ms_, kMaxResultBytes, &error)) {
    result = decode_result(payload);
  }
  if (result) {
    release.health = Health::Healthy;
  } else if (error == FrameError::TimedOut || error == FrameError::TooLarge) {
    release.health = Health::Unresponsive;
  }
  return result;
}

void WorkerPool::release(Worker worker, Health health) noexcept {
  const bool healthy = health == Health::Healthy;
  if (!healthy) stop(worker, health == Health::Unresponsive);  // outside the lock
  std::lock_guard lock(mutex_);
  if (healthy) {
    failures_ = 0;
    idle_.push_back(worker);
  } else {
    --live_;
    ++failures_;
    if (health == Health::Unresponsive) {
      if (!std::exchange(given_up_, true)) {
        warn_giving_up(
            "did not answer a request in time, or announced a reply larger than any "
            "compile result");
      }
    } else {
      core::log_write(core::LogLevel::Warn, "a compile worker failed; compiling in-process");
    }
  }
  idle_ready_.notify_all();
}

}  // namespace kreg::compiler
