#pragma once
// NVRTC's automatic precompiled headers, as kreg uses them. A source that starts with
// #include lines of the toolkit's headers (cuda_fp16.h, cub, cooperative_groups...) pays
// for parsing them at every compile: 40-70 ms for fp16/bf16, over a second for cub. With
// `-pch`, NVRTC saves the parsed headers of one compile and reuses them for later compiles
// whose leading #include lines are the same, in the same process only (a PCH file is tied to
// the process that made it). Creating one makes that compile slower, so kreg asks for it
// only from the second compile of a prefix in a process: a process that compiles one heavy
// kernel compiles it as before.
//
// State is process-wide, as NVRTC's is: how many compiles each prefix has had, the private
// folder the PCH files go to (removed at exit), and the files each PCH was made from, so that
// a compile that uses one still reports every header it depends on (NVRTC's include trace
// does not list what comes from a PCH). KREG_PCH=0 turns it off.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::compiler::pch {

// The leading lines of `source` that a PCH can cover: blank lines, `//` comments, #include
// and #define directives, up to the first other line (or one continued with a backslash, or
// holding `/*` or a raw string, which could run past the line). Empty unless they include at least
// one header that is not kreg's own (`<kreg/...>`, `"kreg/..."`): those are tiny, in-memory
// and not worth a PCH. Always whole lines.
std::string_view leading_includes(std::string_view source);

// Whether this compile of a source with `prefix` should use a PCH, counting it: false for the
// first compile of a prefix in this process, true after (unless KREG_PCH=0).
bool should_use(std::string_view prefix);

// From now on, the first compile of a prefix makes its PCH too: for a process that will
// compile many sources of each prefix (a compile worker, which serves large prewarms).
void make_at_first_compile() noexcept;

// The options that turn automatic PCH on, into the process's private folder. Empty if that
// folder cannot be made (the compile then goes without).
std::vector<std::string> options();

// What a PCH compile's log said of it; those lines are removed from the log.
struct Outcome {
  bool created = false;
  bool used = false;
  // With `used`: every file the PCH was made from, when this process made it and knew them.
  std::optional<std::vector<std::string>> pch_files;
};
// `program` is the name NVRTC was given for the program, as the log quotes it. `files` is
// what the compile read, when known: kept for the PCH it created, if any.
Outcome take_messages(std::string& log, std::string_view program,
                      const std::optional<std::vector<std::string>>& files);

// After a compile that could not create its PCH for want of heap: NVRTC's PCH heap is grown
// to `required` bytes, so that a later compile of the prefix creates it.
void grow_heap(std::size_t required) noexcept;

}  // namespace kreg::compiler::pch
