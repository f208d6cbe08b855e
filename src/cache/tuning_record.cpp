#include "cache/tuning_record.hpp"

#include <charconv>
#include <cstdlib>
#include <sstream>

namespace kreg::cache {

std::string tuning_key(std::string_view storage_digest, std::string_view gpu,
                       std::string_view bucket) {
  std::string key(kTuningPrefix);
  key.append(storage_digest).append("|").append(gpu).append("|").append(bucket);
  return key;
}

std::string encode_tuning(const TuningRecord& record) {
  std::ostringstream out;
  out << record.label << '\n';
  if (record.ok) {
    out.precision(17);
    out << "ok " << record.ms << ' ' << record.repeats;
  } else {
    out << "failed " << record.why;
  }
  return out.str();
}

std::optional<TuningRecord> decode_tuning(std::string_view payload) {
  const std::size_t line = payload.find('\n');
  if (line == std::string_view::npos || line == 0) return std::nullopt;
  TuningRecord r;
  r.label = std::string(payload.substr(0, line));
  const std::string_view rest = payload.substr(line + 1);
  if (rest.rfind("failed ", 0) == 0) {
    r.why = std::string(rest.substr(7));
    return r;
  }
  if (rest.rfind("ok ", 0) != 0) return std::nullopt;
  // strtod needs a terminated string; the number ends at the space before the count.
  const std::size_t space = rest.find(' ', 3);
  if (space == std::string_view::npos) return std::nullopt;
  const std::string number(rest.substr(3, space - 3));
  char* after = nullptr;
  r.ms = std::strtod(number.c_str(), &after);
  if (number.empty() || after != number.c_str() + number.size() || !(r.ms > 0) || r.ms > 1e9) {
    return std::nullopt;
  }
  const char* begin = rest.data() + space + 1;
  const char* end = rest.data() + rest.size();
  const auto [last, error] = std::from_chars(begin, end, r.repeats);
  if (error != std::errc() || last != end || r.repeats < 1) return std::nullopt;
  r.ok = true;
  return r;
}

std::optional<TuningKey> parse_tuning_key(std::string_view key) {
  if (key.rfind(kTuningPrefix, 0) != 0) return std::nullopt;
  key.remove_prefix(kTuningPrefix.size());
  const std::size_t digest_end = key.find('|');
  if (digest_end == std::string_view::npos) return std::nullopt;
  const std::size_t gpu_end = key.find('|', digest_end + 1);
  if (gpu_end == std::string_view::npos) return std::nullopt;
  return TuningKey{std::string(key.substr(digest_end + 1, gpu_end - digest_end - 1)),
                   std::string(key.substr(gpu_end + 1))};
}

}  // namespace kreg::cache
