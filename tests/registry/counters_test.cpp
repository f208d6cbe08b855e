// Stats come from one table (<kreg/stats.hpp>): each counter fills its field, by position.
#include "registry/counters.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kreg::registry {
namespace {

TEST(Counters, EachCounterFillsTheFieldOfItsPosition) {
  const auto fields = stats_fields();
  ASSERT_EQ(fields.size(), static_cast<std::size_t>(Counter::Count));
  Counters counters;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    // Times are counted in nanoseconds and shown in milliseconds.
    const std::uint64_t n = (i + 1) * (fields[i].count != nullptr ? 1 : 1000000);
    counters.add(static_cast<Counter>(i), n);
  }
  const Stats s = counters.stats();
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    EXPECT_EQ(fields[i].value(s), static_cast<double>(i + 1)) << fields[i].name;
    EXPECT_TRUE((fields[i].count == nullptr) != (fields[i].ms == nullptr)) << fields[i].name;
    EXPECT_TRUE(names.insert(fields[i].name).second) << fields[i].name;
  }
}

TEST(Counters, NamesMatchTheCounters) {
  Counters counters;
  counters.add(Counter::MemoryHits, 3);
  counters.add(Counter::DiskNs, 2500000);
  counters.add(Counter::RemoteRejected, 7);
  counters.add(Counter::PchUses, 5);
  const Stats s = counters.stats();
  EXPECT_EQ(s.memory_hits, 3U);
  EXPECT_EQ(s.disk_ms, 2.5);
  EXPECT_EQ(s.remote_rejected, 7U);
  EXPECT_EQ(s.pch_uses, 5U);
  for (const StatsField& field : stats_fields()) {
    const double expected = field.name == "memory_hits"       ? 3
                            : field.name == "disk_ms"         ? 2.5
                            : field.name == "remote_rejected" ? 7
                            : field.name == "pch_uses"        ? 5
                                                              : 0;
    EXPECT_EQ(field.value(s), expected) << field.name;
  }
}

}  // namespace
}  // namespace kreg::registry
