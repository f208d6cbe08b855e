#pragma once
// A tuning record: one candidate's time on one GPU for one shape bucket (Registry::tune),
// kept in the caches as an entry like a binary. Its key is
//   "kreg-tune 2|<digest of the candidate's storage key>|<GPU>|<bucket>"
// and its payload two lines: the candidate's label, then
//   "ok <median ms> <timed launches>"   or   "failed <why>".
// The label lets a listing name the kernel; a reader also checks it against the candidate
// it looked the record up for.

#include <optional>
#include <string>
#include <string_view>

namespace kreg::cache {

inline constexpr std::string_view kTuningPrefix = "kreg-tune 2|";

struct TuningRecord {
  std::string label;  // the candidate, e.g. "matmul_skinny_bf16|302:i16"
  bool ok = false;
  double ms = 0;
  int repeats = 0;
  std::string why;  // when not ok
};

std::string tuning_key(std::string_view storage_digest, std::string_view gpu,
                       std::string_view bucket);
std::string encode_tuning(const TuningRecord& record);
// std::nullopt for anything that is not a record (never throws).
std::optional<TuningRecord> decode_tuning(std::string_view payload);

// A record key's parts; std::nullopt for a key that is not a tuning record's.
struct TuningKey {
  std::string gpu;
  std::string bucket;
};
std::optional<TuningKey> parse_tuning_key(std::string_view key);

}  // namespace kreg::cache
