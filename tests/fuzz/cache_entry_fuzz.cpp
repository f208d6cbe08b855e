// The disk-cache entry format on arbitrary bytes, as a truncated, damaged, foreign or
// hostile file in the cache folder would present them (src/cache/entry.hpp).
//
// Reader: never crashes or throws; a rejection says why; an accepted file is byte for byte
// what the writer makes of its key and payload, so no byte of it went unchecked. The same
// holds for the compile result a payload carries (src/compiler/wire.hpp), read from an
// entry's payload and from the raw input alike (a checksum keeps most mutations from
// reaching it through an entry), and for the ELF symbol table of the image a result holds.
// Writer: the input, cut into a key and a payload, decodes back to both; cut short, or
// with one bit changed, it no longer decodes.
#include "cache/entry.hpp"
#include "compiler/cubin.hpp"
#include "compiler/wire.hpp"

#include "fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

using kreg::cache::decode_entry;
using kreg::cache::encode_entry;

// The registry reads the symbol table of every image it serves, from disk too.
void check_symbols(std::span<const char> image) {
  const std::vector<std::string> names = kreg::compiler::defined_functions(image);
  KREG_FUZZ_CHECK(std::is_sorted(names.begin(), names.end()) &&
                      std::adjacent_find(names.begin(), names.end()) == names.end(),
                  "defined functions are not sorted and unique");
  for (const std::string& name : names) {
    KREG_FUZZ_CHECK(!name.empty() && name.find('\0') == std::string::npos,
                    "a defined function has an empty or NUL-holding name");
  }
}

void check_result(const std::string& payload) {
  const auto result = kreg::compiler::decode_result(payload);
  if (!result) return;
  KREG_FUZZ_CHECK(kreg::compiler::encode(*result) == payload,
                  "an accepted compile result re-encodes to other bytes");
  check_symbols(result->image);
}

void check_reader(std::string_view bytes) {
  check_symbols(std::span<const char>(bytes.data(), bytes.size()));
  std::string why;
  const auto entry = decode_entry(bytes, &why);
  check_result(std::string(bytes));
  if (!entry) {
    KREG_FUZZ_CHECK(!why.empty(), "a rejected entry must say why");
    return;
  }
  KREG_FUZZ_CHECK(encode_entry(entry->key, entry->payload) == bytes,
                  "an accepted entry re-encodes to other bytes: key '" + entry->key + "'");
  check_result(entry->payload);
}

bool is_lower_hex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

void check_writer(std::string_view bytes) {
  // The first byte picks where the key ends, so keys stay as short as real ones.
  const std::size_t split = bytes.empty() ? 0 : static_cast<unsigned char>(bytes[0]);
  const std::string_view key = bytes.substr(0, split < bytes.size() ? split : bytes.size());
  const std::string_view payload = bytes.substr(key.size());
  const std::string encoded = encode_entry(key, payload);

  const auto decoded = decode_entry(encoded);
  KREG_FUZZ_CHECK(decoded.has_value(), "a freshly encoded entry does not decode");
  KREG_FUZZ_CHECK(decoded->key == key && decoded->payload == payload,
                  "a freshly encoded entry decodes to another key or payload");

  // Any proper prefix, and any single flipped bit, must be refused: a reader that accepted
  // one would serve a binary other than the one written.
  const std::size_t cut = bytes.size() % encoded.size();
  KREG_FUZZ_CHECK(!decode_entry(std::string_view(encoded).substr(0, cut)).has_value(),
                  "an entry cut to " + std::to_string(cut) + " bytes still decodes");
  std::string flipped = encoded;
  const std::size_t bit = (bytes.size() * 7919 + split) % (encoded.size() * 8);
  flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
  KREG_FUZZ_CHECK(!decode_entry(flipped).has_value(),
                  "an entry with bit " + std::to_string(bit) + " flipped still decodes");

  // The digest names the entry's file: fixed length, lower-case hex, the same every time.
  const std::string digest = kreg::cache::key_digest(key);
  KREG_FUZZ_CHECK(digest.size() == 32 && is_lower_hex(digest), "a malformed digest: " + digest);
  KREG_FUZZ_CHECK(kreg::cache::key_digest(key) == digest, "the digest of one key changed");
}

}  // namespace

void kreg::fuzz::test_one_input(std::string_view input) {
  check_reader(input);
  check_writer(input);
}
