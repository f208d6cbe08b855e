#pragma once
// A rewrite of a text as a list of edits at token offsets, applied once at the end. Each
// rewrite (a pass) reads the original tokens and adds edits, so no pass sees another's
// output and the order in which passes run does not change the result. Whatever no edit
// touches, line breaks included, comes out as written.
//
// An edit replaces a range of the text, or inserts at an offset. An insertion may hold a
// copy of a range of the text as the whole list renders it, edits inside the range applied:
// a conditional's operand written again inside a `decltype`, say. Insertions made by nested
// constructs carry their nesting level: at one offset, openers go outermost first and
// closers innermost first, and a copy made at level L takes, of the insertions at its
// range's two ends, only those of deeper levels (the nested constructs inside it, not its
// own construct's wrapper).

#include "lex/lexer.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::lex {

class Edits {
 public:
  // What an insertion holds: text, or a copy of [begin, end) rendered, optionally flat
  // (comments and line breaks as spaces, as one line inside a `decltype`).
  struct Piece {
    std::string text;
    std::size_t begin = 0;
    std::size_t end = 0;
    bool copy = false;
    bool flat = false;
  };
  static Piece text(std::string s) { return Piece{std::move(s), 0, 0, false, false}; }
  static Piece copy(std::size_t begin, std::size_t end, bool flat) {
    return Piece{{}, begin, end, true, flat};
  }

  enum class Side : unsigned char { Open, Close };

  explicit Edits(const Tokens& tokens) : tokens_(tokens) {}

  const Tokens& tokens() const noexcept { return tokens_; }
  bool empty() const noexcept { return edits_.empty(); }

  // [begin, end) becomes `text`. Ranges replaced must not overlap.
  void replace(std::size_t begin, std::size_t end, std::string text);
  void erase(std::size_t begin, std::size_t end) { replace(begin, end, {}); }
  // Inserts at `at`, before a replacement that starts there.
  void insert(std::size_t at, std::vector<Piece> pieces, Side side = Side::Open, int level = 0);
  void insert(std::size_t at, std::string text, Side side = Side::Open, int level = 0) {
    insert(at, std::vector<Piece>{Edits::text(std::move(text))}, side, level);
  }

  // The whole text with every edit applied.
  std::string apply() const;

 private:
  struct Edit {
    std::size_t begin = 0;
    std::size_t end = 0;  // == begin for an insertion
    bool insertion = false;
    Side side = Side::Open;
    int level = 0;
    std::size_t order = 0;  // when added
    std::vector<Piece> pieces;
  };

  // Appends [begin, end) rendered. `level` >= 0: a copy made at that level, which takes the
  // insertions at its two ends only from deeper levels.
  void render(std::size_t begin, std::size_t end, int level, bool flat, std::string& out,
              int recursion) const;
  void append_text(std::size_t begin, std::size_t end, bool flat, std::string& out) const;
  void append_pieces(const Edit& edit, bool flat, std::string& out, int recursion) const;
  void sort() const;

  const Tokens& tokens_;
  mutable std::vector<Edit> edits_;
  mutable bool sorted_ = true;
};

}  // namespace kreg::lex
