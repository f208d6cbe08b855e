#include "lex/text.hpp"

#include <algorithm>

namespace kreg::lex {

Text::Text(std::string_view text) : tokens_(text), include_(tokens_.size(), false) {
  bool including = false;
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].kind == Kind::Hash) {
      const std::size_t name = i + 1;
      including = name < tokens_.size() && tokens_[name].directive && tokens_.is_identifier(name) &&
                  tokens_.spelling(name).starts_with("include");
    }
    include_[i] = including && tokens_[i].directive;
  }
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].kind != Kind::Identifier) continue;
    if (tokens_[i].spliced) {
      joined_.push_back(tokens_.spelling(i));
      identifiers_.push_back(joined_.back());
    } else {
      identifiers_.push_back(tokens_.raw(i));
    }
  }
  std::sort(identifiers_.begin(), identifiers_.end());
  identifiers_.erase(std::unique(identifiers_.begin(), identifiers_.end()), identifiers_.end());
}

bool Text::names(std::string_view word) const noexcept {
  return std::binary_search(identifiers_.begin(), identifiers_.end(), word);
}

bool Text::names_before(std::string_view word, std::string_view next) const noexcept {
  if (!names(word)) return false;
  for (std::size_t i = 0; i + 1 < tokens_.size(); ++i) {
    if (tokens_.is_identifier(i) && tokens_.is(i, word) && tokens_.raw(i + 1).starts_with(next)) {
      return true;
    }
  }
  return false;
}

bool Text::has(std::string_view punct) const noexcept {
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].kind == Kind::Punct && tokens_.raw(i) == punct) return true;
  }
  return false;
}

bool Text::stands_alone(std::string_view word) const noexcept {
  if (!names(word)) return false;
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (!tokens_.is_identifier(i) || !tokens_.is(i, word)) continue;
    if (i == 0 || !(tokens_.is(i - 1, ".") || tokens_.is(i - 1, "->"))) return true;
  }
  return false;
}

bool Text::has_pair(std::string_view first, std::string_view second) const noexcept {
  if (!names(first)) return false;
  for (std::size_t i = 0; i + 1 < tokens_.size(); ++i) {
    if (tokens_.is_identifier(i) && tokens_.is(i, first) && tokens_.is(tokens_.next(i), second)) {
      return true;
    }
  }
  return false;
}

bool Text::defines(std::string_view name) const noexcept {
  for (std::size_t i = 0; i + 2 < tokens_.size(); ++i) {
    if (tokens_[i].kind == Kind::Hash && tokens_.is(i + 1, "define") && tokens_.is(i + 2, name)) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> Text::included_headers() const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i + 1 < tokens_.size(); ++i) {
    if (tokens_[i].kind != Kind::Hash || !in_include(i + 1)) continue;
    const std::size_t at = tokens_.next(i + 1);
    std::string name;
    if (at != Tokens::npos && in_include(at) && tokens_[at].kind == Kind::String) {
      const std::string quoted = tokens_.spelling(at);
      if (quoted.size() >= 2 && quoted.front() == '"') name = quoted.substr(1, quoted.size() - 2);
    } else if (at != Tokens::npos && in_include(at) && tokens_.is(at, "<")) {
      for (std::size_t j = tokens_.next(at); j != Tokens::npos && in_include(j);
           j = tokens_.next(j)) {
        if (!tokens_.is(j, ">")) continue;
        name =
            std::string(tokens_.text().substr(tokens_[at].end, tokens_[j].begin - tokens_[at].end));
        break;
      }
    }
    names.push_back(std::move(name));
  }
  return names;
}

std::string numbered(std::string_view source) {
  std::string out;
  std::size_t line = 1;
  std::size_t start = 0;
  while (start <= source.size()) {
    const std::size_t end = source.find('\n', start);
    const std::string_view text =
        source.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (end == std::string_view::npos && text.empty()) break;
    std::string number = std::to_string(line++);
    out.append(number.size() < 4 ? 4 - number.size() : 0, ' ');
    out += number;
    out += " | ";
    out += text;
    out += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace kreg::lex
