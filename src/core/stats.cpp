#include <kreg/stats.hpp>

#include <array>

namespace kreg {
namespace {

constexpr StatsField count(std::string_view name, std::uint64_t Stats::*member) {
  return {name, member, nullptr};
}
constexpr StatsField time(std::string_view name, double Stats::*member) {
  return {name, nullptr, member};
}

constexpr std::array<StatsField, 18> kFields = {
    count("memory_hits", &Stats::memory_hits),
    count("disk_hits", &Stats::disk_hits),
    count("precompiled_hits", &Stats::precompiled_hits),
    count("compiles", &Stats::compiles),
    count("worker_compiles", &Stats::worker_compiles),
    count("pch_creations", &Stats::pch_creations),
    count("pch_uses", &Stats::pch_uses),
    count("failures", &Stats::failures),
    count("loads", &Stats::loads),
    time("compile_ms", &Stats::compile_ms),
    time("disk_ms", &Stats::disk_ms),
    time("precompiled_ms", &Stats::precompiled_ms),
    time("load_ms", &Stats::load_ms),
    count("remote_hits", &Stats::remote_hits),
    count("remote_misses", &Stats::remote_misses),
    count("remote_rejected", &Stats::remote_rejected),
    count("remote_errors", &Stats::remote_errors),
    time("remote_ms", &Stats::remote_ms),
};

// Every field once: the struct holds 18 eight-byte members and nothing else.
static_assert(sizeof(Stats) == kFields.size() * 8, "a Stats field is missing from the table");

}  // namespace

std::span<const StatsField> stats_fields() noexcept {
  return kFields;
}

}  // namespace kreg
