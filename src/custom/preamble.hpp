#pragma once
// The parts of the preamble a custom kernel may get (include/kreg/device/custom_*.cuh), as
// one table: which words bring each part in, which parts it needs, and whether its names
// are reserved for kernel parameters. Code generation includes what the table says a
// kernel uses, the parameter check refuses the reserved names, and the fuzzer's oracle
// checks generated sources against it; a test checks it against the headers themselves.
//
// A Metal construct is added in one place: its device header (include/kreg/device/) and
// its row here. A part is included when the kernel uses one of its words, a part that
// includes it is included, or one of the conditions codegen.cpp names for it holds (a
// kernel's dtypes, its atomic outputs, Metal's vector types).

#include "lex/text.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace kreg::custom {

// How a word has to appear to bring its part in.
enum class Use : unsigned char {
  Named,      // anywhere as an identifier
  Called,     // before "(": a body's own variable named `step` does not count
  Scoped,     // before "::": metal::, fast::
  Templated,  // before "<": as_type<float>(x)
};

struct Word {
  std::string_view text;
  Use use = Use::Named;
  // It names something at global scope that a parameter of that name would hide, so no
  // input, output or template parameter may take it.
  bool reserved = false;
};

// Words of one use, as the table writes them: separated by spaces.
struct WordList {
  Use use = Use::Named;
  bool reserved = false;
  std::string_view words;
};

enum class Part : unsigned char {
  Types,
  Complex,
  Float16,
  Barrier,
  Simd,
  SimdgroupMatrix,
  Atomic,
  Math,
  MathFloat16,
  Constants,
  Utils,
  Limits,
  NumericLimits,
  Bits,
  Ternary,
  Threadgroup,
  Vector,
  VectorFloat16,
  VectorMath,
  Count
};

struct PartInfo {
  Part part;
  std::string_view header;  // "kreg/device/custom_simd.cuh"
  std::span<const WordList> words;
  std::span<const Part> needs;  // parts its header includes
};

// Every part, in the order generated sources include them.
std::span<const PartInfo> parts() noexcept;
const PartInfo& part(Part p) noexcept;

// A part's words, one by one.
std::vector<Word> words_of(const PartInfo& part);

// Whether `text` uses one of the part's words, each as its Use says.
bool uses_any(const lex::Text& text, const PartInfo& part);

// Whether `name` is a reserved word of a part (`uint`, `simd_sum`, `atomic_int`, ...).
bool reserved_by_preamble(std::string_view name);

}  // namespace kreg::custom
