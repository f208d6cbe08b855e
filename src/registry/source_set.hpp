#pragma once
// The registered sources, and which one each entry name reaches. Users' sources and kreg's
// built-ins are kept apart, so a user's source or entry may take a built-in's name: it then
// wins under that name, and the built-in stays reachable as kBuiltinPrefix + name
// ("kreg::add_f32"). A built-in keeps its own name inside (its binary key, compile request
// and so its disk and precompiled keys), so being shadowed changes nothing it is built from.
// Not thread-safe: the registry guards it.

#include "registry/source.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kreg::registry {

class SourceSet {
 public:
  using Ptr = std::shared_ptr<const Source>;

  void add_builtin(Ptr source);
  // Throws InvalidArgument if `source` may not be a user's source: its name is reserved, or
  // another user's source declares one of its entries. Returns the user's source it would
  // replace (same name), or null.
  Ptr check_user(const Source& source) const;
  // Adds `source`, or replaces the user's source of its name.
  void put_user(Ptr source);
  // Whether `source` declares an entry a built-in declares.
  bool shadows_builtin(const Source& source) const;

  // What a requested name reaches: an entry name (a user's, else a built-in's) or
  // kBuiltinPrefix + a built-in's entry name. `entry` receives the entry name in the source.
  Ptr find_entry(std::string_view name, std::string_view* entry = nullptr) const;
  // A source by name: a user's, else a built-in; kBuiltinPrefix + name: a built-in.
  Ptr find_source(std::string_view name) const;

  // The name a source is listed under: a built-in whose name a user's source took is
  // kBuiltinPrefix + name.
  std::string listed_name(const Source& source) const;
  // The name an entry of `source` is reached by, likewise.
  std::string entry_name(const Source& source, const Entry& entry) const;
  // Every source under its listed name, sorted by it.
  std::vector<std::pair<std::string, Ptr>> listing() const;
  std::size_t size() const noexcept { return users_.size() + builtins_.size(); }

 private:
  std::map<std::string, Ptr, std::less<>> users_;
  std::map<std::string, Ptr, std::less<>> builtins_;
  std::unordered_map<std::string, Ptr> user_entries_;
  std::unordered_map<std::string, Ptr> builtin_entries_;
};

}  // namespace kreg::registry
