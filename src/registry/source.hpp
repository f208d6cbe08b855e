#pragma once
// A registered kernel source and what kreg reads from its text: entry names, constant
// declarations, includes and `// kreg:` annotations.

#include <kreg/registry.hpp>

#include "core/label.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::registry {

enum class ConstantType { Bool, Int };

struct ConstantDecl {
  int index = 0;
  ConstantType type = ConstantType::Bool;
  std::string name;
  bool has_default = false;
};

struct Entry {
  std::string name;
  std::string expression;  // template instantiation to lower; empty for extern "C"
};

struct Source {
  std::string name;
  std::string text;
  std::vector<Entry> entries;
  std::vector<ConstantDecl> constants;     // sorted by index
  std::vector<std::string> options;        // from `// kreg:options` and SourceOptions
  std::vector<Constants> specializations;  // `// kreg:specialization 200:b1|300:i4`
  bool arch_specific = false;              // `// kreg:arch-specific`: compile for sm_XXa
  bool kreg_headers_only = true;  // includes nothing but <kreg/...>: -minimal is worth a try
  // Asks whether a file exists (`__has_include`) by a path that could lead outside the
  // toolkit (absolute, climbing with "..", or a macro), which no include trace shows.
  bool probes_files = false;
  std::uint64_t id = 0;  // unique per registration
  bool builtin = false;  // one of kreg's own (kernels/*.cu), not a user's

  const ConstantDecl* find_constant(int index) const noexcept;
  bool needs_constants() const noexcept;  // declares a constant without a default
  // The constant sets worth building ahead: none (if no constant is required) and each
  // listed specialization. Used by prewarm_all and by the build-time precompiler alike.
  std::vector<Constants> prewarm_sets() const;
};

// Reads a source's text. Throws InvalidArgument, naming the source, for anything malformed.
Source parse_source(std::string name, std::string text, const SourceOptions& options);

// The first line of `text` that is a kreg directive ("// kreg:options ..."), or "".
std::string first_directive(std::string_view text);

// Checks a request's constants (sorted) against the source's declarations: InvalidArgument
// for an index given twice or not declared, CompileError for a required constant that is
// missing or a value of the wrong type. `label` names the request in the message.
void check_constants(const Source& source, const std::vector<core::ConstantValue>& values,
                     std::string_view label);

}  // namespace kreg::registry
