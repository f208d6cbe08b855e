// compiler::identity(): which NVRTC this process compiles with, as the disk cache and the
// compile workers must know it. Its output is decided by its code, so it is named by what
// names the code (the library's build id), never by where it was found or when it was
// copied: a path or an mtime would split one compiler into many keys across links,
// installs and machines.
#include "compiler/nvrtc_compiler.hpp"

#include "core/hash.hpp"

#include <dlfcn.h>
#include <link.h>
#include <nvrtc.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

namespace kreg::compiler {
namespace {

// The loaded NVRTC library, and its GNU build id if it has one. It is found by name first:
// in a program built without -fPIE, &nvrtcVersion is a stub in the program itself. A
// statically linked NVRTC has no library of its own, and is found by that address.
struct Search {
  std::uintptr_t address = 0;
  bool by_name = true;
  bool found = false;
  std::optional<std::string> build_id;
};

bool is_nvrtc_library(const char* path) {
  if (path == nullptr) return false;
  const char* slash = std::strrchr(path, '/');
  const std::string_view name = slash != nullptr ? slash + 1 : path;
  return name.starts_with("libnvrtc.") && name.find(".so") != std::string_view::npos;
}

std::string hex(const unsigned char* bytes, std::size_t size) {
  std::string out;
  char two[3];
  for (std::size_t i = 0; i < size; ++i) {
    std::snprintf(two, sizeof(two), "%02x", bytes[i]);
    out += two;
  }
  return out;
}

constexpr std::size_t align4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

// The build id among the notes of one PT_NOTE segment, read from memory as loaded.
std::optional<std::string> build_id_in(const unsigned char* at, std::size_t size) {
  std::size_t offset = 0;
  while (size - offset >= sizeof(ElfW(Nhdr))) {
    ElfW(Nhdr) note;
    std::memcpy(&note, at + offset, sizeof(note));
    const std::size_t name_at = offset + sizeof(note);
    const std::size_t desc_at = name_at + align4(note.n_namesz);
    if (desc_at > size || size - desc_at < note.n_descsz) break;
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
        std::memcmp(at + name_at, "GNU", 4) == 0 && note.n_descsz > 0) {
      return hex(at + desc_at, note.n_descsz);
    }
    offset = desc_at + align4(note.n_descsz);
  }
  return std::nullopt;
}

int visit(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  Search& search = *static_cast<Search*>(data);
  bool holds = search.by_name && is_nvrtc_library(info->dlpi_name);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && !holds && !search.by_name; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    holds = segment.p_type == PT_LOAD && search.address >= start &&
            search.address - start < segment.p_memsz;
  }
  if (!holds) return 0;
  search.found = true;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && !search.build_id; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    // The loader maps the segment at this address: the integer is what dl_phdr_info gives.
    search.build_id =
        build_id_in(reinterpret_cast<const unsigned char*>(  // NOLINT(performance-no-int-to-ptr)
                        info->dlpi_addr + segment.p_vaddr),
                    segment.p_memsz);
  }
  return 1;  // found: stop
}

std::string compute_identity() {
  std::string id = "nvrtc " + version();
  Search search;
  search.address = reinterpret_cast<std::uintptr_t>(&nvrtcVersion);
  ::dl_iterate_phdr(visit, &search);
  if (!search.found) {
    search.by_name = false;
    ::dl_iterate_phdr(visit, &search);
  }
  if (search.build_id) return id + " build-id " + *search.build_id;
  // A library without a build id: its content says the same, at the cost of reading it.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) != 0 && info.dli_fname != nullptr) {
    if (auto digest = core::file_digest(info.dli_fname)) return id + " xxh3-128 " + *digest;
    return id + " file " + info.dli_fname;  // unreadable: at least no other file's key
  }
  return id;
}

}  // namespace

std::string identity() {
  static const std::string id = compute_identity();
  return id;
}

}  // namespace kreg::compiler
