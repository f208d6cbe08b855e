#pragma once
// How an entry travels off this machine (to Redis, into a bundle): the disk entry format
// (entry.hpp: full key, checksum), signed when the fleet shares a secret.
//
//   value  := signed | entry
//   signed := magic tag entry
//   magic  := "KREGSIG\0"                                   8 bytes
//   tag    := HMAC-SHA-256(secret, context entry)          32 bytes
//   context:= "kreg signed entry 1\0", so that a tag made for another purpose with the same
//             secret never passes as one of these
//
// The checksum inside an entry finds damage; only the tag proves the writer held the secret.

#include <optional>
#include <string>
#include <string_view>

namespace kreg::cache {

// `entry` (encode_entry's output) ready to send: signed with `secret`, or as it is when the
// secret is empty.
std::string seal_value(std::string_view entry, std::string_view secret);

// The entry inside `value`, or std::nullopt with `why` set. With a secret, a value must be
// signed with it. Without one, an unsigned value is taken, and so is a signed one (its tag
// cannot be checked, but its entry's checksum still is, by the caller's decode_entry).
std::optional<std::string_view> open_value(std::string_view value, std::string_view secret,
                                           std::string* why = nullptr);

}  // namespace kreg::cache
