#include "registry/source_set.hpp"

#include <kreg/error.hpp>
#include <kreg/registry.hpp>

#include <algorithm>

namespace kreg::registry {
namespace {

template <class Map>
SourceSet::Ptr find_in(const Map& map, std::string_view name) {
  auto it = map.find(std::string(name));
  return it == map.end() ? nullptr : it->second;
}

bool reserved(std::string_view name) {
  return name.starts_with(kBuiltinPrefix);
}

}  // namespace

void SourceSet::add_builtin(Ptr source) {
  for (const Entry& entry : source->entries) builtin_entries_[entry.name] = source;
  builtins_[source->name] = std::move(source);
}

SourceSet::Ptr SourceSet::check_user(const Source& source) const {
  if (reserved(source.name)) {
    throw Error(ErrorCode::InvalidArgument, "source name '" + source.name + "' starts with '" +
                                                std::string(kBuiltinPrefix) +
                                                "', which names kreg's built-in sources");
  }
  for (const Entry& entry : source.entries) {
    auto owner = user_entries_.find(entry.name);
    if (owner != user_entries_.end() && owner->second->name != source.name) {
      throw Error(ErrorCode::InvalidArgument, "source '" + source.name + "' declares entry '" +
                                                  entry.name + "', which source '" +
                                                  owner->second->name + "' already declares");
    }
  }
  return find_in(users_, source.name);
}

void SourceSet::put_user(Ptr source) {
  if (auto old = users_.find(source->name); old != users_.end()) {
    for (const Entry& entry : old->second->entries) user_entries_.erase(entry.name);
  }
  for (const Entry& entry : source->entries) user_entries_[entry.name] = source;
  users_[source->name] = std::move(source);
}

bool SourceSet::shadows_builtin(const Source& source) const {
  return std::any_of(source.entries.begin(), source.entries.end(),
                     [&](const Entry& e) { return builtin_entries_.contains(e.name); });
}

SourceSet::Ptr SourceSet::find_entry(std::string_view name, std::string_view* entry) const {
  Ptr source;
  if (reserved(name)) {
    name.remove_prefix(kBuiltinPrefix.size());
    source = find_in(builtin_entries_, name);
  } else {
    source = find_in(user_entries_, name);
    if (!source) source = find_in(builtin_entries_, name);
  }
  if (entry != nullptr) *entry = name;
  return source;
}

SourceSet::Ptr SourceSet::find_source(std::string_view name) const {
  if (reserved(name)) return find_in(builtins_, name.substr(kBuiltinPrefix.size()));
  Ptr source = find_in(users_, name);
  return source ? source : find_in(builtins_, name);
}

std::string SourceSet::listed_name(const Source& source) const {
  if (source.builtin && users_.contains(source.name)) {
    return std::string(kBuiltinPrefix) + source.name;
  }
  return source.name;
}

std::string SourceSet::entry_name(const Source& source, const Entry& entry) const {
  if (source.builtin && user_entries_.contains(entry.name)) {
    return std::string(kBuiltinPrefix) + entry.name;
  }
  return entry.name;
}

std::vector<std::pair<std::string, SourceSet::Ptr>> SourceSet::listing() const {
  std::vector<std::pair<std::string, Ptr>> all;
  all.reserve(size());
  for (const auto& [name, source] : users_) all.emplace_back(name, source);
  for (const auto& [name, source] : builtins_) all.emplace_back(listed_name(*source), source);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return all;
}

}  // namespace kreg::registry
