#pragma once
// Helpers of the remote-cache tests: worker processes, reference binaries, and what the
// server holds.

#include "cache/entry.hpp"
#include "cache/signed_value.hpp"
#include "remote/redis_server.hpp"
#include "remote/remote_sources.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <map>
#include <sstream>

namespace kreg::test {

// A kreg_remote_worker process, its output in a file.
class Worker {
 public:
  Worker(const std::filesystem::path& out, std::vector<std::string> args) : out_(out) {
    const std::string program = KREG_REMOTE_WORKER;
    args.insert(args.begin(), program);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (::posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Worker() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  pid_t pid() const { return pid_; }
  // The exit status as waitpid gives it.
  int wait() {
    int status = 0;
    if (pid_ > 0) ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  // "key=value" pairs of the worker's report line.
  std::map<std::string, std::string> report() const {
    std::ifstream in(out_);
    std::map<std::string, std::string> out;
    std::string pair;
    while (in >> pair) {
      const std::size_t eq = pair.find('=');
      if (eq != std::string::npos) out[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    return out;
  }

 private:
  std::filesystem::path out_;
  pid_t pid_ = -1;
};

// Runs one worker to its end and returns its report; fails the test if it did not succeed.
inline std::map<std::string, std::string> run_worker(const std::filesystem::path& scratch,
                                                     const std::string& name,
                                                     const std::string& url, int count,
                                                     const std::string& secret = {}) {
  std::vector<std::string> args = {(scratch / (name + "_cache")).string(), url,
                                   std::to_string(count)};
  if (!secret.empty()) args.push_back(secret);
  Worker worker(scratch / (name + ".out"), args);
  const int status = worker.wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << name << " failed";
  return worker.report();
}

// The binaries a registry with no cache at all builds: what every tier must give back.
inline std::vector<std::string> reference_images(int count) {
  RegistryOptions options = remote_options({}, {});
  options.disk_cache = false;
  Registry reg(options);
  std::vector<std::string> out;
  for (const std::string& name : register_remote_sources(reg, count)) {
    const Binary& b = reg.compile(name);
    out.emplace_back(b.image().data(), b.image().size());
  }
  return out;
}

inline std::vector<std::string> images_of(Registry& reg, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const Binary& b = reg.compile(name);
    out.emplace_back(b.image().data(), b.image().size());
  }
  return out;
}

// Every key the server holds.
inline std::vector<std::string> server_keys(cache::RedisConnection& redis) {
  return redis.command({"KEYS", "*"}).items;
}

// Whether every value on the server is a whole entry named after its key (and signed with
// `secret` if one is given); counts the good ones in `good`.
inline bool server_values_are_whole(cache::RedisConnection& redis, const std::string& prefix,
                                    const std::string& secret, std::size_t& good) {
  good = 0;
  bool all = true;
  for (const std::string& key : server_keys(redis)) {
    const cache::RedisReply value = redis.command({"GET", key});
    std::string why;
    const auto inner = cache::open_value(value.text, secret, &why);
    const auto entry = inner ? cache::decode_entry(*inner, &why) : std::nullopt;
    if (entry && prefix + cache::key_digest(entry->key) == key) {
      ++good;
    } else {
      ADD_FAILURE() << key << ": " << why;
      all = false;
    }
  }
  return all;
}

}  // namespace kreg::test
