#include "cuda/launch_journal.hpp"

#include "cuda/driver_api.hpp"

#include <kreg/error.hpp>

#include <array>

namespace kreg::cuda {
namespace {

// Streams in use at once are few; past this many, the oldest entry gives way.
constexpr std::size_t kSlots = 64;

struct Journal {
  std::array<void*, kSlots> streams{};
  std::array<std::string, kSlots> labels;
  std::size_t used = 0;
  std::size_t next = 0;  // the slot a new stream takes once all are used
};

Journal& journal() {
  thread_local Journal instance;
  return instance;
}

}  // namespace

void note_launch(void* stream, const std::string& label) noexcept {
  Journal& j = journal();
  std::size_t slot = 0;
  while (slot < j.used && j.streams[slot] != stream) ++slot;
  if (slot == j.used) {
    if (j.used < kSlots) {
      ++j.used;
    } else {
      slot = j.next;
      j.next = (j.next + 1) % kSlots;
    }
    j.streams[slot] = stream;
  }
  try {
    j.labels[slot] = label;  // reuses the slot's capacity: no allocation once warm
  } catch (...) {
    j.labels[slot].clear();  // out of memory: forget the label rather than fail the launch
  }
}

std::string last_launch(void* stream) {
  Journal& j = journal();
  for (std::size_t slot = 0; slot < j.used; ++slot) {
    if (j.streams[slot] == stream) return j.labels[slot];
  }
  return {};
}

bool is_kernel_fault(CUresult result) noexcept {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT: return true;
    default: return false;
  }
}

void check_stream(CUresult result, void* stream, std::string_view what) {
  if (result == CUDA_SUCCESS) return;
  std::string message = std::string(what) + ": ";
  if (is_kernel_fault(result)) {
    const std::string label = last_launch(stream);
    message += "a kernel on this stream faulted";
    message += label.empty()
                   ? " (this thread launched no kernel there through kreg)"
                   : " (the last this thread launched there through kreg was '" + label + "')";
    message += ": " + describe(result) +
               ". The GPU's context is now unusable: every later CUDA call in this process on "
               "this GPU fails, and only a new process can use the GPU again.";
  } else {
    message += describe(result);
  }
  throw Error(ErrorCode::LaunchError, message);
}

}  // namespace kreg::cuda
