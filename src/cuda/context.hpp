#pragma once
// Makes a GPU's primary context current for the driver calls that arrays make (allocation,
// copies, events), which need one on the calling thread.

namespace kreg::cuda {

// Throws NoDevice without a driver, InvalidArgument for an ordinal that does not exist.
// The context is retained once per GPU and kept for the life of the process: buffers are
// freed during static destruction, after any owner object could have released it.
void* primary_context(int device);

// Makes `device`'s primary context current until destruction, unless it already is.
class ContextScope {
 public:
  explicit ContextScope(int device);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace kreg::cuda
