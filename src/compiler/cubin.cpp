#include "compiler/cubin.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

namespace kreg::compiler {
namespace {

// A struct of type T at `offset`, if all of it lies inside the image.
template <class T>
std::optional<T> read_at(std::span<const char> image, std::uint64_t offset) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return std::nullopt;
  T out{};
  std::memcpy(&out, image.data() + offset, sizeof(T));
  return out;
}

}  // namespace

std::vector<std::string> defined_functions(std::span<const char> image) {
  std::vector<std::string> names;
  const auto header = read_at<Elf64_Ehdr>(image, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != ELFDATA2LSB ||
      header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shoff > image.size()) {
    return names;
  }
  auto section = [&](std::uint64_t index) -> std::optional<Elf64_Shdr> {
    if (index >= header->e_shnum) return std::nullopt;
    return read_at<Elf64_Shdr>(image, header->e_shoff + index * sizeof(Elf64_Shdr));
  };
  for (std::uint64_t i = 0; i < header->e_shnum; ++i) {
    const auto symbols = section(i);
    if (!symbols || symbols->sh_type != SHT_SYMTAB || symbols->sh_offset > image.size() ||
        image.size() - symbols->sh_offset < symbols->sh_size) {
      continue;
    }
    const auto strings = section(symbols->sh_link);
    if (!strings || strings->sh_offset > image.size() ||
        image.size() - strings->sh_offset < strings->sh_size) {
      continue;
    }
    const std::string_view table(image.data() + strings->sh_offset, strings->sh_size);
    for (std::uint64_t at = 0; at + sizeof(Elf64_Sym) <= symbols->sh_size;
         at += sizeof(Elf64_Sym)) {
      const auto symbol = read_at<Elf64_Sym>(image, symbols->sh_offset + at);
      if (!symbol) break;
      if (ELF64_ST_TYPE(symbol->st_info) != STT_FUNC || symbol->st_shndx == SHN_UNDEF ||
          symbol->st_name >= table.size()) {
        continue;
      }
      const std::string_view rest = table.substr(symbol->st_name);
      const std::string_view name = rest.substr(0, rest.find('\0'));
      if (!name.empty()) names.emplace_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace kreg::compiler
