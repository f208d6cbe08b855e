// kreg-nvrtc-worker: compiles kernel sources for a registry in another process. NVRTC
// serializes most of a compile behind a process-wide lock, so a registry that prewarms many
// sources at once hands them to a few of these.
//
// Reads framed requests (see wire.hpp) on stdin until EOF and answers each on stdout. It
// is started by kreg; it is not meant to be run by hand.
#include "compiler/pch.hpp"
#include "compiler/wire.hpp"
#include "core/error_text.hpp"

#include <kreg/error.hpp>

#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <exception>

int main() {
  // The parent's socket is on stdin and stdout. Keep the protocol on a private copy and
  // point stdout at stderr, so that nothing NVRTC or a library prints can corrupt a frame.
  const int out = ::dup(STDOUT_FILENO);
  if (out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 1;
  // A vanished parent is an error return, not a kill; its closed socket ends the loop.
  std::signal(SIGPIPE, SIG_IGN);
  std::string payload;
  // The first frame is the parent's NVRTC identity. A worker with another NVRTC would build
  // binaries the parent then caches under its own identity: such a worker leaves at once,
  // and the parent compiles in-process.
  if (!kreg::compiler::read_frame(STDIN_FILENO, payload, -1, kreg::compiler::kMaxIdentityBytes))
    return 1;
  if (payload != kreg::compiler::identity()) {
    std::fputs("kreg-nvrtc-worker: the registry uses another NVRTC; exiting\n", stderr);
    return 3;
  }
  // Ready: the parent gives a worker only a short while to say so, and compiles in-process
  // instead if it does not.
  if (!kreg::compiler::write_frame(out, kreg::compiler::kWorkerReady)) return 1;
  // Workers serve large prewarms, whose heavy sources come grouped by their #include lines:
  // a worker's first compile of a prefix already makes its precompiled header.
  kreg::compiler::pch::make_at_first_compile();
  while (kreg::compiler::read_frame(STDIN_FILENO, payload, -1, kreg::compiler::kMaxRequestBytes)) {
    auto request = kreg::compiler::decode_request(payload);
    if (!request) {
      // Another kreg build's protocol: exit, and the registry compiles in-process instead.
      std::fputs("kreg-nvrtc-worker: malformed request or protocol version mismatch\n", stderr);
      return 2;
    }
    kreg::compiler::Result result;
    try {
      result = kreg::compiler::compile(request->view());
    } catch (const std::exception& e) {
      result = kreg::compiler::Result{};
      result.log = kreg::core::message_of(e);
    }
    if (!kreg::compiler::write_frame(out, kreg::compiler::encode(result))) return 1;
  }
  return 0;
}
