#pragma once
// Fault injection, for tests only. The disk cache's system calls, NVRTC's compile and the
// driver's library load each ask this switch, just before the real call, whether to fail
// instead; tests arm it to simulate a full disk, a permission change, a failing rename, a
// short read, NVRTC running out of memory or the driver refusing a binary, none of which a
// test machine can produce on demand (a root user is not even refused by permissions).
//
// The switch is the one piece of process-wide mutable state kreg keeps for testing. Nothing
// in kreg arms it. When nothing is armed, a call site pays a call and one relaxed atomic load.

#include <cstddef>
#include <optional>

namespace kreg::core::faults {

// Where a fault can be injected, and what it simulates. `error` is the value armed with it.
enum class Point : unsigned char {
  MakeDir,       // mkdir of a folder that does not exist yet fails with errno `error`
  CreateFile,    // creating a temp file fails with errno `error`
  Write,         // a write stores half of its bytes, then fails with errno `error`
  Sync,          // fsync fails with errno `error`
  Rename,        // publishing a temp file (rename) fails with errno `error`
  Read,          // a read returns half of the bytes asked for (a short count; `error` unused)
  ReadEof,       // a read finds the end of file, as if the file shrank after it was opened
  NvrtcCompile,  // nvrtcCompileProgram returns `error` (an nvrtcResult) without compiling
  LibraryLoad,   // cuLibraryLoadData returns `error` (a CUresult) without loading
};
inline constexpr std::size_t kPoints = 9;

// Makes the next `times` calls at `point` fail with `error`; `times` < 0 means every call
// until disarmed. Arming a point again replaces what it had.
void arm(Point point, int error, int times = 1) noexcept;
void disarm(Point point) noexcept;
void disarm_all() noexcept;
// How many calls at `point` have failed since the process started.
std::size_t fired(Point point) noexcept;

// For call sites: the error to simulate instead of making the call, or std::nullopt to make
// it. Thread-safe; every armed failure is handed to exactly one call.
std::optional<int> hit(Point point) noexcept;

// Arms a fault for a scope; every fault is disarmed when it ends, so a failing test does not
// leave the switch armed for the next one.
class Armed {
 public:
  Armed(Point point, int error, int times = 1) noexcept { arm(point, error, times); }
  ~Armed() { disarm_all(); }
  Armed(const Armed&) = delete;
  Armed& operator=(const Armed&) = delete;
};

}  // namespace kreg::core::faults
