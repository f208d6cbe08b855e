#pragma once
// Which files a compile read. NVRTC's front end can list every file it opens
// (`--trace_includes`) into a file named by `--error_output`; this owns such a file, private
// to the process, and reads the list back. The disk cache stores a binary only if every file
// read is one whose content its key holds, so the list must come from NVRTC itself: a scan of
// the source text cannot follow macros, digraphs, line splices or the search path.

#include <optional>
#include <string>
#include <vector>

namespace kreg::compiler {

class IncludeTrace {
 public:
  // An anonymous in-memory file (memfd) reached through /proc/self/fd, else a temp file
  // (mode 0600, removed again). When neither can be made the trace is off: options() is
  // empty and files() is std::nullopt.
  IncludeTrace();
  ~IncludeTrace();
  IncludeTrace(const IncludeTrace&) = delete;
  IncludeTrace& operator=(const IncludeTrace&) = delete;

  // The NVRTC options that write the trace; they come last, so a user's own
  // --error_output cannot divert it.
  std::vector<std::string> options() const;

  // Every file the compile read, in the order read, as NVRTC names it: an in-memory header
  // by its name, a file by the path it was found at. std::nullopt when nothing was traced
  // (no trace file, or NVRTC stopped before reading its input, as for a bad option).
  std::optional<std::vector<std::string>> files() const;

 private:
  int fd_ = -1;
  std::string path_;
  bool remove_ = false;  // a temp file on disk rather than a memfd
};

}  // namespace kreg::compiler
