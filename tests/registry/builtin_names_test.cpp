// A user's source may take a built-in's entry or source name: the user's wins under the
// name, the built-in stays reachable as "kreg::name", and nothing a built-in is built from
// changes. All compile-only, so no GPU is needed.
#include "test_support.hpp"

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

constexpr const char* kUsersAdd = "extern \"C\" __global__ void add_f32(float* p) { p[0] = 42; }";

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::size_t count(const std::vector<KernelRequest>& requests, const std::string& name) {
  return static_cast<std::size_t>(std::count_if(
      requests.begin(), requests.end(), [&](const KernelRequest& r) { return r.name == name; }));
}

TEST(BuiltinNames, AUsersEntryTakesTheNameAndTheBuiltinStaysReachable) {
  Registry reg(test::sm90_options());
  reg.register_source("mine", kUsersAdd);
  const Binary& users = reg.compile("add_f32");
  EXPECT_EQ(users.source_name(), "mine");
  EXPECT_EQ(users.symbol("add_f32"), "add_f32");
  const Binary& builtin = reg.compile("kreg::add_f32");
  EXPECT_EQ(builtin.source_name(), "binary");
  EXPECT_EQ(builtin.key(), "binary@sm_90");
  EXPECT_EQ(builtin.symbol("add_f32").substr(0, 2), "_Z");  // the template instantiation
  EXPECT_EQ(reg.stats().compiles, 2u);
}

TEST(BuiltinNames, AnUnshadowedBuiltinIsOneBinaryUnderBothNames) {
  Registry reg(test::sm90_options());
  const Binary& plain = reg.compile("add_f32");
  EXPECT_EQ(&reg.compile("kreg::add_f32"), &plain);
  EXPECT_EQ(plain.key(), "binary@sm_90");
  EXPECT_EQ(reg.stats().compiles, 1u);
  expect_error(ErrorCode::KernelNotFound, [&] { reg.compile("kreg::no_such_kernel"); });
}

TEST(BuiltinNames, ShadowingDropsWhatTheBuiltinServedUnderTheName) {
  Registry reg(test::sm90_options());
  EXPECT_EQ(reg.prewarm({"add_f32"}), 1u);
  EXPECT_TRUE(reg.is_cached("add_f32"));
  reg.register_source("mine", kUsersAdd);
  EXPECT_FALSE(reg.is_cached("add_f32"));
  EXPECT_EQ(reg.prewarm({"add_f32", "kreg::add_f32"}), 2u);
  EXPECT_EQ(reg.stats().compiles, 2u);  // the built-in's binary was kept
  EXPECT_TRUE(reg.is_cached("add_f32"));
  EXPECT_TRUE(reg.is_cached("kreg::add_f32"));
}

TEST(BuiltinNames, ReplacingTheShadowingSourceBringsTheBuiltinBack) {
  Registry reg(test::sm90_options());
  reg.register_source("mine", kUsersAdd);
  EXPECT_EQ(reg.compile("add_f32").source_name(), "mine");
  reg.register_source("mine", "extern \"C\" __global__ void my_other() {}");
  EXPECT_EQ(reg.compile("add_f32").source_name(), "binary");
  EXPECT_EQ(reg.prewarm({"add_f32"}), 1u);
  reg.register_source("mine", kUsersAdd);
  EXPECT_FALSE(reg.is_cached("add_f32"));
  EXPECT_EQ(reg.compile("add_f32").source_name(), "mine");
  EXPECT_EQ(reg.compile("kreg::add_f32").source_name(), "binary");
}

TEST(BuiltinNames, ListsSpellAShadowedBuiltinWithThePrefix) {
  Registry reg(test::sm90_options());
  const std::size_t builtins = reg.source_count();
  reg.register_source("binary", kUsersAdd);  // a built-in source's name too
  EXPECT_EQ(reg.source_count(), builtins + 1);
  const std::vector<std::string> sources = reg.source_names();
  EXPECT_TRUE(has(sources, "binary"));
  EXPECT_TRUE(has(sources, "kreg::binary"));
  EXPECT_EQ(reg.entry_names("binary"), std::vector<std::string>{"add_f32"});
  const SourceInfo builtin = reg.source_info("kreg::binary");
  EXPECT_EQ(builtin.name, "kreg::binary");
  EXPECT_TRUE(has(builtin.entries, "kreg::add_f32"));
  EXPECT_TRUE(has(builtin.entries, "sub_f32"));  // not shadowed: its plain name reaches it
  const std::vector<KernelRequest> all = reg.prewarm_all_requests();
  EXPECT_EQ(count(all, "add_f32"), 1u);
  EXPECT_EQ(count(all, "kreg::add_f32"), 1u);
  EXPECT_EQ(count(all, "sub_f32"), 1u);
  EXPECT_EQ(reg.compile("add_f32").source_name(), "binary");
  EXPECT_EQ(reg.compile("kreg::add_f32").symbol("add_f32").substr(0, 2), "_Z");
}

TEST(BuiltinNames, TheReservedPrefixIsRefusedForUsersSources) {
  Registry reg(test::sm90_options());
  const std::string message = expect_error(ErrorCode::InvalidArgument, [&] {
    reg.register_source("kreg::mine", "extern \"C\" __global__ void mine() {}");
  });
  EXPECT_TRUE(contains(message, "kreg::")) << message;
}

TEST(BuiltinNames, UsersSourcesStillCannotShareAnEntry) {
  Registry reg(test::sm90_options());
  reg.register_source("first", kUsersAdd);
  const std::string message =
      expect_error(ErrorCode::InvalidArgument, [&] { reg.register_source("second", kUsersAdd); });
  EXPECT_TRUE(contains(message, "'first'")) << message;
  EXPECT_EQ(reg.compile("add_f32").source_name(), "first");
}

TEST(BuiltinNames, BuiltinsCanBeLeftOut) {
  RegistryOptions options = test::sm90_options();
  options.builtins = false;
  Registry reg(options);
  EXPECT_EQ(reg.source_count(), 0u);
  expect_error(ErrorCode::KernelNotFound, [&] { reg.compile("add_f32"); });
  expect_error(ErrorCode::KernelNotFound, [&] { reg.compile("kreg::add_f32"); });
  reg.register_source("mine", kUsersAdd);
  EXPECT_EQ(reg.compile("add_f32").source_name(), "mine");
  EXPECT_EQ(reg.source_names(), std::vector<std::string>{"mine"});
}

TEST(BuiltinNames, AManifestKeepsThePrefix) {
  const test::ScratchDir dir("builtin_names_");
  std::filesystem::create_directories(dir.path());
  Registry reg(test::sm90_options());
  reg.register_source("mine", kUsersAdd);
  EXPECT_EQ(reg.prewarm({"add_f32", "kreg::add_f32"}), 2u);
  reg.write_manifest(dir.path() / "served.json");
  const std::vector<KernelRequest> listed = read_manifest(dir.path() / "served.json");
  EXPECT_EQ(count(listed, "add_f32"), 1u);
  EXPECT_EQ(count(listed, "kreg::add_f32"), 1u);
}

TEST(BuiltinNames, TheBuiltinsDiskEntryDoesNotDependOnHowItIsReached) {
  const test::ScratchDir dir("builtin_names_");
  {
    Registry reg(test::sm90_disk_options(dir.path()));
    reg.register_source("mine", kUsersAdd);
    EXPECT_EQ(reg.compile("kreg::add_f32").origin(), Origin::Compiled);
  }
  Registry fresh(test::sm90_disk_options(dir.path()));
  EXPECT_EQ(fresh.compile("add_f32").origin(), Origin::Disk);
  EXPECT_EQ(fresh.stats().compiles, 0u);
}

}  // namespace
}  // namespace kreg
