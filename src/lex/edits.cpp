#include "lex/edits.hpp"

#include <kreg/error.hpp>

#include <algorithm>

namespace kreg::lex {
namespace {

// Copies inside copies nest no deeper than the constructs that make them, which passes
// bound; this only guards the stack.
constexpr int kMaxRecursion = 256;

}  // namespace

void Edits::replace(std::size_t begin, std::size_t end, std::string text) {
  edits_.push_back(
      {begin, end, false, Side::Open, 0, edits_.size(), {Edits::text(std::move(text))}});
  sorted_ = false;
}

void Edits::insert(std::size_t at, std::vector<Piece> pieces, Side side, int level) {
  edits_.push_back({at, at, true, side, level, edits_.size(), std::move(pieces)});
  sorted_ = false;
}

void Edits::sort() const {
  if (sorted_) return;
  // At one offset: closers (innermost first), then openers (outermost first), then the
  // replacement that starts there.
  const auto rank = [](const Edit& e) {
    if (!e.insertion) return 2;
    return e.side == Side::Close ? 0 : 1;
  };
  std::stable_sort(edits_.begin(), edits_.end(), [&](const Edit& a, const Edit& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a.insertion && a.level != b.level) {
      return a.side == Side::Close ? a.level > b.level : a.level < b.level;
    }
    return a.order < b.order;
  });
  for (std::size_t i = 1; i < edits_.size(); ++i) {
    const Edit& before = edits_[i - 1];
    if (!before.insertion && before.end > edits_[i].begin) {
      throw Error(ErrorCode::InvalidArgument,
                  "two rewrites of one piece of text (offsets " + std::to_string(before.begin) +
                      " and " + std::to_string(edits_[i].begin) + "): this is a bug in kreg");
    }
  }
  sorted_ = true;
}

std::string Edits::apply() const {
  std::string out;
  out.reserve(tokens_.text().size() + 64 * edits_.size());
  render(0, tokens_.text().size(), -1, false, out, 0);
  return out;
}

void Edits::render(std::size_t begin, std::size_t end, int level, bool flat, std::string& out,
                   int recursion) const {
  if (recursion > kMaxRecursion) {
    throw Error(ErrorCode::InvalidArgument, "rewrites of the text nest too deeply");
  }
  sort();
  auto it = std::lower_bound(edits_.begin(), edits_.end(), begin,
                             [](const Edit& e, std::size_t at) { return e.begin < at; });
  std::size_t at = begin;
  for (; it != edits_.end() && it->begin <= end; ++it) {
    const Edit& e = *it;
    if (e.insertion) {
      const bool boundary = e.begin == begin || e.begin == end;
      if (level >= 0 && boundary && e.level <= level) continue;
    } else if (e.end > end || e.begin == end) {
      continue;
    }
    append_text(at, e.begin, flat, out);
    append_pieces(e, flat, out, recursion);
    at = e.insertion ? e.begin : e.end;
  }
  append_text(at, end, flat, out);
}

void Edits::append_pieces(const Edit& edit, bool flat, std::string& out, int recursion) const {
  for (const Piece& piece : edit.pieces) {
    if (!piece.copy) {
      out += piece.text;
    } else {
      render(piece.begin, piece.end, edit.level, flat || piece.flat, out, recursion + 1);
    }
  }
}

void Edits::append_text(std::size_t begin, std::size_t end, bool flat, std::string& out) const {
  if (begin >= end) return;
  const std::string_view text = tokens_.text();
  if (!flat) {
    out.append(text.substr(begin, end - begin));
    return;
  }
  // One line: a comment is a space, and so is each line break.
  auto token = std::lower_bound(tokens_.begin(), tokens_.end(), begin,
                                [](const Token& t, std::size_t at) { return t.end <= at; });
  for (std::size_t i = begin; i < end;) {
    while (token != tokens_.end() && token->end <= i) ++token;
    if (token != tokens_.end() && token->kind == Kind::Comment && token->begin <= i) {
      out += ' ';
      i = std::min(token->end, end);
      continue;
    }
    const char c = text[i++];
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
}

}  // namespace kreg::lex
