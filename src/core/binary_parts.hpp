#pragma once
// What a Binary is made of. Only kreg makes binaries: the type is declared, not defined, in
// <kreg/binary.hpp>, so its constructor is out of users' reach.

#include <kreg/binary.hpp>

#include <span>
#include <string>
#include <vector>

namespace kreg::core {

struct BinaryParts {
  std::string source_name;
  std::string key;
  std::string arch;
  Origin origin = Origin::Compiled;
  std::vector<char> image;
  // Instead of `image`: one that lives as long as the process (the precompiled set), viewed.
  std::span<const char> lasting_image;
  std::vector<Binary::Symbol> symbols;
  std::string log;
  double ms = 0;
};

}  // namespace kreg::core
