#pragma once
// A real redis-server for one test: started in a folder of its own on a Unix socket (no
// port to collide with other tests or users), nothing saved to disk, killed by the
// destructor. Tests that need one skip, with the reason, where redis-server is not
// installed.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cache/redis_connection.hpp"

extern char** environ;

namespace kreg::test {

// The redis-server to run: KREG_TEST_REDIS_SERVER, else the first on PATH or in the usual
// folders; "" if there is none.
inline std::string find_redis_server() {
  if (const char* given = std::getenv("KREG_TEST_REDIS_SERVER")) return given;
  std::vector<std::string> folders;
  if (const char* path = std::getenv("PATH")) {
    std::string rest = path;
    for (std::size_t at; (at = rest.find(':')) != std::string::npos; rest.erase(0, at + 1)) {
      folders.push_back(rest.substr(0, at));
    }
    folders.push_back(rest);
  }
  for (const char* usual : {"/usr/bin", "/usr/sbin", "/usr/local/bin"}) folders.emplace_back(usual);
  for (const std::string& folder : folders) {
    const std::string candidate = folder + "/redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

class RedisServer {
 public:
  // `extra`: more redis-server arguments, e.g. {"--maxmemory", "1"}.
  RedisServer(const std::filesystem::path& dir, std::vector<std::string> extra = {})
      : dir_(dir), socket_(dir / "redis.sock"), extra_(std::move(extra)) {
    std::filesystem::create_directories(dir_);
    start();
  }
  ~RedisServer() { kill(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool running() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  std::string url() const { return "unix://" + socket_.string(); }

  void start() {
    const std::string program = find_redis_server();
    std::vector<std::string> args = {program,
                                     "--port",
                                     "0",
                                     "--unixsocket",
                                     socket_.string(),
                                     "--unixsocketperm",
                                     "700",
                                     "--dir",
                                     dir_.string(),
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--logfile",
                                     (dir_ / "redis.log").string()};
    args.insert(args.end(), extra_.begin(), extra_.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::filesystem::remove(socket_);
    if (::posix_spawn(&pid_, program.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
      error_ = "cannot start " + program;
      return;
    }
    // Ready once it answers a PING.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (connect() != nullptr) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    error_ = "redis-server did not answer within 10 s (see " + (dir_ / "redis.log").string() + ")";
    kill();
  }

  // A connection of the test's own, to inspect or damage what the server holds.
  std::unique_ptr<cache::RedisConnection> connect() const {
    cache::RemoteEndpoint endpoint;
    endpoint.unix_socket = true;
    endpoint.path = socket_.string();
    std::string why;
    auto connection = cache::RedisConnection::open(endpoint, std::chrono::milliseconds(1000),
                                                   std::chrono::milliseconds(2000), why);
    if (connection == nullptr) return nullptr;
    if (connection->command({"PING"}).status != cache::RedisReply::Status::Ok) return nullptr;
    return connection;
  }

  void stop() { ::kill(pid_, SIGSTOP); }  // hangs: accepts connections, answers nothing
  void resume() { ::kill(pid_, SIGCONT); }
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path socket_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
  std::string error_;
};

}  // namespace kreg::test

// Skips the test where redis-server is not installed.
#define KREG_REQUIRE_REDIS()                                                                 \
  do {                                                                                       \
    if (::kreg::test::find_redis_server().empty()) {                                         \
      GTEST_SKIP() << "redis-server is not installed (apt-get install redis-server, or set " \
                      "KREG_TEST_REDIS_SERVER)";                                             \
    }                                                                                        \
  } while (0)
