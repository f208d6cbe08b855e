#include "core/published_table.hpp"

#include "core/hash.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kreg::core {
namespace {

struct Item {
  std::string name;
  int value = 0;
  std::string_view key() const { return name; }
};

TEST(PublishedTable, InsertFindAndReplace) {
  PublishedTable<Item> table;
  Item a{"a", 1};
  Item a2{"a", 2};
  Item b{"b", 3};
  EXPECT_EQ(table.find("a", hash64("a")), nullptr);
  table.insert(&a, hash64("a"));
  table.insert(&b, hash64("b"));
  EXPECT_EQ(table.find("a", hash64("a")), &a);
  EXPECT_EQ(table.find("b", hash64("b")), &b);
  table.insert(&a2, hash64("a"));
  EXPECT_EQ(table.find("a", hash64("a")), &a2);
  EXPECT_EQ(table.size(), 2u);
}

TEST(PublishedTable, CollidingHashesStayDistinct) {
  PublishedTable<Item> table;
  Item a{"a", 1};
  Item b{"b", 2};
  table.insert(&a, 42);
  table.insert(&b, 42);
  EXPECT_EQ(table.find("a", 42), &a);
  EXPECT_EQ(table.find("b", 42), &b);
  EXPECT_EQ(table.find("c", 42), nullptr);
}

TEST(PublishedTable, EraseThenReinsertAndGrow) {
  PublishedTable<Item> table;
  std::vector<std::unique_ptr<Item>> items;
  for (int i = 0; i < 1000; ++i) {
    items.push_back(std::make_unique<Item>(Item{"k" + std::to_string(i), i}));
    table.insert(items.back().get(), hash64(items.back()->name));
  }
  EXPECT_EQ(table.size(), 1000u);
  table.erase_if([](const Item* item) { return item->value % 2 == 0; });
  EXPECT_EQ(table.size(), 500u);
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "k" + std::to_string(i);
    const Item* found = table.find(key, hash64(key));
    if (i % 2 == 0) {
      EXPECT_EQ(found, nullptr) << key;
    } else {
      ASSERT_NE(found, nullptr) << key;
      EXPECT_EQ(found->value, i);
    }
  }
  // Many erase/insert rounds must keep lookups terminating and correct.
  for (int round = 0; round < 20; ++round) {
    table.erase_if([](const Item*) { return true; });
    for (int i = 0; i < 100; ++i) table.insert(items[i].get(), hash64(items[i]->name));
    EXPECT_EQ(table.size(), 100u);
  }
  EXPECT_EQ(table.find("k999", hash64("k999")), nullptr);
  EXPECT_EQ(table.find("k99", hash64("k99")), items[99].get());
}

TEST(PublishedTable, ReadersSeeConsistentEntriesWhileWriterGrows) {
  PublishedTable<Item> table;
  std::vector<std::unique_ptr<Item>> items;
  for (int i = 0; i < 4000; ++i)
    items.push_back(std::make_unique<Item>(Item{"x" + std::to_string(i), i}));
  std::atomic<int> published{0};
  std::atomic<bool> bad{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (published.load() < 4000) {
        const int upto = published.load();
        for (int i = 0; i < upto; i += 7) {
          const Item* found = table.find(items[i]->name, hash64(items[i]->name));
          if (found != items[i].get()) bad = true;
        }
      }
    });
  }
  for (int i = 0; i < 4000; ++i) {
    table.insert(items[i].get(), hash64(items[i]->name));
    published.store(i + 1);
  }
  for (auto& r : readers) r.join();
  EXPECT_FALSE(bad.load());
}

}  // namespace
}  // namespace kreg::core
