#include "registry/counters.hpp"

namespace kreg::registry {

Stats Counters::stats() const noexcept {
  Stats s;
  const std::span<const StatsField> fields = stats_fields();
  for (std::size_t i = 0; i < fields.size() && i < counters_.size(); ++i) {
    const std::uint64_t total = counters_[i].total();
    if (fields[i].count != nullptr) {
      s.*fields[i].count = total;
    } else {
      s.*fields[i].ms = static_cast<double>(total) / 1e6;
    }
  }
  return s;
}

}  // namespace kreg::registry
