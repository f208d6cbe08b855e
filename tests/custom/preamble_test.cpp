// The table of preamble parts (src/custom/preamble.hpp) against the device headers it names.
#include "custom/preamble.hpp"

#include "core/embedded.hpp"
#include "lex/lexer.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kreg::custom {
namespace {

std::string_view text_of(std::string_view header) {
  for (const core::EmbeddedFile& file : core::embedded_headers()) {
    if (file.name == header) return file.text;
  }
  return {};
}

std::set<std::string> identifiers(std::string_view text) {
  const lex::Tokens t(text);
  std::set<std::string> out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == lex::Kind::Identifier) out.insert(t.spelling(i));
  }
  return out;
}

// The custom parts a header includes, as the table names them.
std::set<Part> includes_of(std::string_view text) {
  const lex::Tokens t(text);
  std::set<Part> out;
  for (std::size_t i = 0; i + 2 < t.size(); ++i) {
    if (t[i].kind != lex::Kind::Hash || !t.is(i + 1, "include") || !t.is(i + 2, "<")) continue;
    std::size_t close = i + 3;
    while (close < t.size() && !t.is(close, ">")) ++close;
    if (close >= t.size()) continue;
    const std::string_view name = t.text().substr(t[i + 2].end, t[close].begin - t[i + 2].end);
    for (const PartInfo& p : parts()) {
      if (p.header == name) out.insert(p.part);
    }
  }
  return out;
}

TEST(Preamble, EveryPartIsAnEmbeddedHeaderThatIncludesWhatItNeeds) {
  for (const PartInfo& p : parts()) {
    EXPECT_EQ(p.part, parts()[static_cast<std::size_t>(p.part)].part) << p.header;
    const std::string_view text = text_of(p.header);
    ASSERT_FALSE(text.empty()) << p.header << " is not embedded";
    const std::set<Part> needs(p.needs.begin(), p.needs.end());
    EXPECT_EQ(includes_of(text), needs) << p.header;
    // Generated sources include parts in the table's order: what a part needs comes first.
    for (const Part need : p.needs) EXPECT_LT(need, p.part) << p.header;
  }
}

// Every word names something a part's header spells: a typo would silently never bring its
// part in. Metal's vector names are made by KREG_METAL_VECTOR_NAMES(element, ...) from their
// element's name.
TEST(Preamble, EveryWordIsOneTheHeadersSpell) {
  std::set<std::string> spelled;
  for (const PartInfo& p : parts()) {
    const std::set<std::string> words = identifiers(text_of(p.header));
    spelled.insert(words.begin(), words.end());
  }
  for (const PartInfo& p : parts()) {
    for (const Word& w : words_of(p)) {
      std::string word(w.text);
      if (word.starts_with("packed_")) word = word.substr(7);
      const bool vector = word.size() > 1 && word.back() >= '2' && word.back() <= '4' &&
                          spelled.contains(word.substr(0, word.size() - 1));
      EXPECT_TRUE(spelled.contains(std::string(w.text)) || vector) << w.text << " in " << p.header;
    }
  }
}

// What the table reserves is declared by the part's own header, at global scope or in
// namespace metal, where a parameter of that name would hide it.
TEST(Preamble, ReservedWordsAreDeclaredByTheirPart) {
  for (const PartInfo& p : parts()) {
    const std::set<std::string> words = identifiers(text_of(p.header));
    for (const Word& w : words_of(p)) {
      if (!w.reserved) continue;
      EXPECT_TRUE(words.contains(std::string(w.text))) << w.text << " in " << p.header;
      EXPECT_TRUE(reserved_by_preamble(w.text));
    }
  }
  EXPECT_FALSE(reserved_by_preamble("step"));
  EXPECT_FALSE(reserved_by_preamble("half"));
  EXPECT_FALSE(reserved_by_preamble("out"));
}

}  // namespace
}  // namespace kreg::custom
