// Registry::tune and Registry::tuned without a GPU: candidates are compiled for sm_90 and timed
// by a fake timer (a function of their constants), so that the winner, what is timed and what
// is read back from the caches are known exactly. A second registry on the same cache folder
// stands for a second process.
#include "cache/entry.hpp"
#include "cache/tuning_record.hpp"
#include "registry/manifest.hpp"
#include "test_support.hpp"

#include <kreg/cache.hpp>

#include <fstream>
#include <iterator>
#include <map>

namespace kreg {
namespace {

using test::contains;
using test::expect_error;

constexpr const char* kSource = R"(
#include <kreg/kernel.cuh>
KREG_CONSTANT_DEFAULT(int, tile, 300, 32);
KREG_CONSTANT_DEFAULT(bool, unrolled, 200, false);
static_assert(tile != 48, "a tile of 48 does not fit");
extern "C" __global__ void tiled(int* out) { out[0] = tile + (unrolled ? 1 : 0); }
)";

// A made-up cost: fastest at tile 64 unrolled.
double cost(const Constants& c) {
  double ms = 1.0;
  for (const auto& [index, value] : c.ints)
    ms += index == 300 ? (value > 64 ? value - 64 : 64 - value) : 0;
  for (const auto& [index, value] : c.bools) ms += index == 200 && !value ? 0.5 : 0;
  return ms;
}

TuneSpace space(std::vector<std::int32_t> tiles = {16, 32, 64, 128}) {
  TuneSpace s;
  s.ints = {{300, std::move(tiles)}};
  s.bools = {200};
  return s;
}

// A fake timer that counts its calls and never launches.
struct FakeTimer {
  std::map<std::string, int> calls;
  TuneOptions options() {
    TuneOptions o;
    o.timer = [this](const Constants& c, const std::function<void()>&) {
      ++calls[constants_key(c)];
      return cost(c);
    };
    return o;
  }
  int total() const {
    int n = 0;
    for (const auto& [key, count] : calls) n += count;
    return n;
  }
};

TEST(TuneSpace, CandidatesInOrderWithFixedValuesAndARule) {
  TuneSpace s;
  s.ints = {{301, {8, 4}}, {300, {1, 2, 3}}};
  s.bools = {200};
  s.fixed.ints = {{302, 7}};
  const std::vector<Constants> all = s.candidates();
  ASSERT_EQ(all.size(), 12U);
  EXPECT_EQ(constants_key(all.front()), "200:b0|300:i1|301:i8|302:i7");  // the default
  EXPECT_EQ(constants_key(all[1]), "200:b1|300:i1|301:i8|302:i7");       // bools vary fastest
  EXPECT_EQ(constants_key(all.back()), "200:b1|300:i3|301:i4|302:i7");
  s.accept = [](const Constants& c) {
    for (const auto& [index, value] : c.ints) {
      if (index == 301) return value == 4;
    }
    return false;
  };
  EXPECT_EQ(s.candidates().size(), 6U);
  EXPECT_EQ(constants_key(s.candidates().front()), "200:b0|300:i1|301:i4|302:i7");

  s.accept = [](const Constants&) { return false; };
  std::string m = expect_error(ErrorCode::InvalidArgument, [&] { s.candidates(); });
  EXPECT_TRUE(contains(m, "refuses every combination")) << m;
  TuneSpace twice;
  twice.ints = {{300, {1}}};
  twice.fixed.ints = {{300, 2}};
  m = expect_error(ErrorCode::InvalidArgument, [&] { twice.candidates(); });
  EXPECT_TRUE(contains(m, "constant 300 is listed twice")) << m;
  TuneSpace empty;
  empty.ints = {{300, {}}};
  m = expect_error(ErrorCode::InvalidArgument, [&] { empty.candidates(); });
  EXPECT_TRUE(contains(m, "no values")) << m;
  EXPECT_EQ(TuneSpace{}.candidates().size(), 1U);  // nothing to tune: the fixed set alone
}

TEST(Tune, AFakeTimerPicksTheFastestAndASecondCallTimesNothing) {
  test::ScratchDir dir("kreg_tune_");
  Registry reg(test::sm90_disk_options(dir.path()));
  reg.register_source("tiled", kSource);
  FakeTimer timer;
  const TuneResult first = reg.tune("tiled", space(), "n4096", {}, timer.options());
  EXPECT_EQ(constants_key(first.winner), "200:b1|300:i64");
  EXPECT_DOUBLE_EQ(first.ms, 1.0);
  EXPECT_EQ(first.timed, 8U);
  EXPECT_EQ(timer.total(), 8);
  ASSERT_EQ(first.candidates.size(), 8U);
  EXPECT_EQ(first.candidates[0].label, "tiled|200:b0|300:i16");
  for (const TuneResult::Candidate& c : first.candidates) {
    EXPECT_TRUE(c.ok && c.timed) << c.label << ": " << c.why;
    EXPECT_DOUBLE_EQ(c.ms, cost(c.constants)) << c.label;
  }
  const TuneResult again = reg.tune("tiled", space(), "n4096", {}, timer.options());
  EXPECT_EQ(again.timed, 0U);
  EXPECT_EQ(timer.total(), 8);
  EXPECT_EQ(constants_key(again.winner), "200:b1|300:i64");
  EXPECT_EQ(constants_key(*reg.tuned("tiled", space(), "n4096")), "200:b1|300:i64");
  // Another bucket is another tuning.
  EXPECT_FALSE(reg.tuned("tiled", space(), "n128").has_value());
  EXPECT_EQ(reg.tune("tiled", space(), "n128", {}, timer.options()).timed, 8U);
}

// Tunes "tiled" with the fake timer into the cache folder `dir`, as another process would.
void tune_into(const std::filesystem::path& dir, const std::string& bucket = "b") {
  Registry reg(test::sm90_disk_options(dir));
  reg.register_source("tiled", kSource);
  FakeTimer timer;
  reg.tune("tiled", space(), bucket, {}, timer.options());
  reg.flush_disk_cache();
}

TEST(Tune, ASecondRegistryOnTheSameCacheUsesTheStoredTimes) {
  test::ScratchDir dir("kreg_tune_");
  tune_into(dir.path(), "n4096");
  Registry second(test::sm90_disk_options(dir.path()));
  second.register_source("tiled", kSource);
  EXPECT_EQ(constants_key(*second.tuned("tiled", space(), "n4096")), "200:b1|300:i64");
  TuneOptions never;
  never.timer = [](const Constants& c, const std::function<void()>&) -> double {
    ADD_FAILURE() << "timed " << constants_key(c);
    return 1;
  };
  const TuneResult r = second.tune("tiled", space(), "n4096", {}, never);
  EXPECT_EQ(r.timed, 0U);
  EXPECT_EQ(constants_key(r.winner), "200:b1|300:i64");
  EXPECT_EQ(second.stats().compiles, 0U);  // the winner is known without building anything
}

TEST(Tune, ANewCandidateIsTheOnlyOneTimedAndAChangedSourceRetimesAll) {
  test::ScratchDir dir("kreg_tune_");
  Registry reg(test::sm90_disk_options(dir.path()));
  reg.register_source("tiled", kSource);
  FakeTimer timer;
  reg.tune("tiled", space(), "b", {}, timer.options());
  timer.calls.clear();
  const TuneResult wider =
      reg.tune("tiled", space({16, 32, 64, 128, 60}), "b", {}, timer.options());
  EXPECT_EQ(wider.timed, 2U);  // tile 60, both ways
  EXPECT_EQ(timer.calls.size(), 2U);
  EXPECT_EQ(timer.calls.count("200:b0|300:i60"), 1U);
  EXPECT_EQ(constants_key(wider.winner), "200:b1|300:i64");
  reg.flush_disk_cache();

  Registry changed(test::sm90_disk_options(dir.path()));
  changed.register_source("tiled", std::string(kSource) + "// a new line: another source\n");
  timer.calls.clear();
  EXPECT_FALSE(changed.tuned("tiled", space(), "b").has_value());
  EXPECT_EQ(changed.tune("tiled", space(), "b", {}, timer.options()).timed, 8U);
}

// The record files of a cache folder, found by their keys.
std::vector<std::filesystem::path> record_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> records;
  for (const auto& file : std::filesystem::recursive_directory_iterator(dir)) {
    if (file.path().extension() != ".kbin") continue;
    std::ifstream in(file.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::optional<cache::DecodedEntry> entry = cache::decode_entry(bytes);
    if (entry && entry->key.rfind(cache::kTuningPrefix, 0) == 0) records.push_back(file.path());
  }
  return records;
}

TEST(Tune, CorruptAndForeignRecordsAreIgnored) {
  test::ScratchDir dir("kreg_tune_");
  tune_into(dir.path());
  const std::vector<std::filesystem::path> records = record_files(dir.path());
  ASSERT_EQ(records.size(), 8U);
  {
    std::fstream f(records[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.write("garbage", 7);  // a corrupt record: its checksum fails
  }
  std::filesystem::copy_file(records[1], records[2],
                             std::filesystem::copy_options::overwrite_existing);  // foreign
  // A well-formed entry under candidate 3's key whose record names candidate 4.
  {
    std::ifstream in(records[4], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string other_label =
        cache::decode_tuning(cache::decode_entry(bytes)->payload)->label;
    std::ifstream in3(records[3], std::ios::binary);
    const std::string bytes3((std::istreambuf_iterator<char>(in3)),
                             std::istreambuf_iterator<char>());
    const cache::DecodedEntry entry = *cache::decode_entry(bytes3);
    cache::TuningRecord record = *cache::decode_tuning(entry.payload);
    ASSERT_NE(record.label, other_label);
    record.label = other_label;
    record.ms = 1e-6;  // would win
    std::ofstream(records[3], std::ios::binary | std::ios::trunc)
        << cache::encode_entry(entry.key, cache::encode_tuning(record));
  }
  Registry reg(test::sm90_disk_options(dir.path()));
  reg.register_source("tiled", kSource);
  FakeTimer timer;
  const TuneResult r = reg.tune("tiled", space(), "b", {}, timer.options());
  EXPECT_EQ(r.timed, 3U);
  EXPECT_EQ(constants_key(r.winner), "200:b1|300:i64");
}

TEST(Tune, TheCacheListsItsRecords) {
  test::ScratchDir dir("kreg_tune_");
  EXPECT_TRUE(cache_tuning(dir.path()).empty());
  tune_into(dir.path(), "n4096");
  const std::vector<TuningEntry> listed = cache_tuning(dir.path());
  ASSERT_EQ(listed.size(), 8U);
  for (const TuningEntry& e : listed) {
    EXPECT_EQ(e.gpu, "no-gpu");
    EXPECT_EQ(e.bucket, "n4096");
    EXPECT_TRUE(e.ok) << e.label;
    EXPECT_EQ(e.repeats, 1);
    const std::size_t bar = e.label.find('|');
    ASSERT_NE(bar, std::string::npos) << e.label;
    EXPECT_EQ(e.label.substr(0, bar), "tiled");
    EXPECT_DOUBLE_EQ(e.ms, cost(parse_constants(e.label.substr(bar + 1)))) << e.label;
  }
  EXPECT_EQ(listed.front().label, "tiled|200:b0|300:i128");  // ordered by label
}

TEST(Tune, TunedRemembersItsAnswerUntilATuneOrANewSource) {
  test::ScratchDir dir("kreg_tune_");
  tune_into(dir.path());
  Registry reg(test::sm90_disk_options(dir.path()));
  reg.register_source("tiled", kSource);
  EXPECT_EQ(constants_key(*reg.tuned("tiled", space(), "b")), "200:b1|300:i64");
  EXPECT_FALSE(reg.tuned("tiled", space(), "c").has_value());
  cache_clear(dir.path());
  // Read once: the records are gone from the disk, the answers stay.
  EXPECT_EQ(constants_key(*reg.tuned("tiled", space(), "b")), "200:b1|300:i64");
  Registry other(test::sm90_disk_options(dir.path()));
  other.register_source("tiled", kSource);
  EXPECT_FALSE(other.tuned("tiled", space(), "b").has_value());
  // Another space is looked up again, here in the records this registry has read.
  EXPECT_EQ(constants_key(*reg.tuned("tiled", space({32, 64}), "b")), "200:b1|300:i64");
  EXPECT_FALSE(other.tuned("tiled", space({32, 64}), "b").has_value());
  // A tuning run replaces a remembered "none".
  FakeTimer timer;
  reg.tune("tiled", space(), "c", {}, timer.options());
  EXPECT_EQ(constants_key(*reg.tuned("tiled", space(), "c")), "200:b1|300:i64");
  // A replaced source has other keys, and no records.
  reg.register_source("tiled", std::string(kSource) + "// changed\n");
  EXPECT_FALSE(reg.tuned("tiled", space(), "c").has_value());
}

TEST(Tune, AManifestCarriesTheLookupsSoThatPrewarmingAnswersThem) {
  test::ScratchDir dir("kreg_tune_");
  tune_into(dir.path());
  const std::filesystem::path manifest = dir.path() / "manifest.json";
  {
    Registry reg(test::sm90_disk_options(dir.path()));
    reg.register_source("tiled", kSource);
    EXPECT_EQ(constants_key(*reg.tuned("tiled", space(), "b")), "200:b1|300:i64");
    EXPECT_FALSE(reg.tuned("tiled", space({32}), "never tuned").has_value());
    TuneSpace ruled = space();
    ruled.accept = [](const Constants&) { return true; };
    reg.tuned("tiled", ruled, "with a rule");  // a rule cannot be written down: not listed
    // Asked, tuned (which forgets the answers), asked again: listed once.
    EXPECT_FALSE(reg.tuned("tiled", space(), "c").has_value());
    FakeTimer timer;
    reg.tune("tiled", space(), "c", {}, timer.options());
    EXPECT_TRUE(reg.tuned("tiled", space(), "c").has_value());
    reg.write_manifest(manifest);
  }
  const auto [kernels, lookups] = registry::read_manifest_and_lookups(manifest);
  ASSERT_EQ(lookups.size(), 3U);
  EXPECT_EQ(lookups[0].name, "tiled");
  EXPECT_EQ(lookups[0].bucket, "b");
  EXPECT_EQ(lookups[0].space.ints, space().ints);
  EXPECT_EQ(lookups[0].space.bools, space().bools);
  EXPECT_EQ(lookups[1].bucket, "c");
  EXPECT_EQ(lookups[2].bucket, "never tuned");

  Registry next(test::sm90_disk_options(dir.path()));
  next.register_source("tiled", kSource);
  next.prewarm_manifest(manifest);
  cache_clear(dir.path());  // answered at prewarm: the records are not read again
  EXPECT_EQ(constants_key(*next.tuned("tiled", space(), "b")), "200:b1|300:i64");

  // Malformed lookups are refused, naming the manifest.
  const std::string head = R"({"format": "kreg-manifest", "version": 1, "kernels": [], "tuned": )";
  for (const auto& [tail, why] : std::vector<std::pair<std::string, std::string>>{
           {"5}", "tuned must be a list"},
           {R"([{"name": "tiled"}]})", "a tuned lookup without a name and a bucket"},
           {R"([{"name": "t", "bucket": "b", "ints": [[300]]}]})",
            "each of ints is [index, [values]]"},
           {R"([{"name": "t", "bucket": "b", "ints": [[300, [4294967296]]]}]})",
            "not a 32-bit integer"},
           {R"([{"name": "t", "bucket": "b", "bools": [true]}]})", "bools lists constant indices"},
           {R"([{"name": "t", "bucket": "b", "fixed": "300:x"}]})", "tuned lookup 't' for 'b'"}}) {
    const std::string m = expect_error(ErrorCode::InvalidArgument, [&] {
      registry::parse_manifest_lookups(head + tail, "m.json");
    });
    EXPECT_TRUE(contains(m, "manifest 'm.json': ") && contains(m, why)) << m;
  }
}

TEST(TuningRecord, EncodesDecodesAndRefusesWhatIsNotOne) {
  cache::TuningRecord ok{"tiled|300:i64", true, 0.125, 20, ""};
  const std::optional<cache::TuningRecord> back = cache::decode_tuning(cache::encode_tuning(ok));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->label, ok.label);
  EXPECT_TRUE(back->ok);
  EXPECT_DOUBLE_EQ(back->ms, 0.125);
  EXPECT_EQ(back->repeats, 20);
  const cache::TuningRecord failed{"tiled|300:i48", false, 0, 0, "error: a\nsecond line"};
  const std::optional<cache::TuningRecord> f = cache::decode_tuning(cache::encode_tuning(failed));
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->ok);
  EXPECT_EQ(f->why, failed.why);
  for (const char* bad : {"", "ok 1 2", "\nok 1 2", "l\nok", "l\nok 1", "l\nok x 2", "l\nok 0 2",
                          "l\nok -1 2", "l\nok 1 0", "l\nok 1 2 3", "l\nok 1 2x", "l\nmaybe"}) {
    EXPECT_FALSE(cache::decode_tuning(bad).has_value()) << bad;
  }
  const std::string key = cache::tuning_key("abc", "NVIDIA H200/132sm", "m16|n4096");
  const std::optional<cache::TuningKey> parts = cache::parse_tuning_key(key);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->gpu, "NVIDIA H200/132sm");
  EXPECT_EQ(parts->bucket, "m16|n4096");
  EXPECT_FALSE(cache::parse_tuning_key("kreg-tune 1|abc|gpu|b").has_value());
  EXPECT_FALSE(cache::parse_tuning_key("kreg-tune 2|abc").has_value());
}

TEST(Tune, CandidatesThatDoNotCompileOrFailTheCheckCannotWinAndStaySo) {
  test::ScratchDir dir("kreg_tune_");
  TuneSpace s = space({48, 64, 128});
  FakeTimer timer;
  TuneOptions options = timer.options();
  options.check = [](const Constants& c) { return constants_key(c) != "200:b1|300:i64"; };
  {
    Registry reg(test::sm90_disk_options(dir.path()));
    reg.register_source("tiled", kSource);
    const TuneResult r = reg.tune("tiled", s, "b", {}, options);
    EXPECT_EQ(constants_key(r.winner), "200:b0|300:i64");
    ASSERT_EQ(r.candidates.size(), 6U);
    EXPECT_FALSE(r.candidates[0].ok);
    EXPECT_TRUE(contains(r.candidates[0].why, "a tile of 48 does not fit")) << r.candidates[0].why;
    EXPECT_FALSE(r.candidates[3].ok);
    EXPECT_TRUE(contains(r.candidates[3].why, "check")) << r.candidates[3].why;
    reg.flush_disk_cache();
  }
  Registry second(test::sm90_disk_options(dir.path()));
  second.register_source("tiled", kSource);
  const TuneResult r = second.tune("tiled", s, "b", {}, options);
  EXPECT_EQ(r.timed, 0U);  // the failures were recorded too
  EXPECT_EQ(constants_key(r.winner), "200:b0|300:i64");
  EXPECT_FALSE(r.candidates[0].ok);
}

TEST(Tune, BadCallsAndNoCandidateOk) {
  Registry reg(test::sm90_options());
  reg.register_source("tiled", kSource);
  FakeTimer timer;
  std::string m = expect_error(ErrorCode::InvalidArgument,
                               [&] { reg.tune("tiled", space(), "", {}, timer.options()); });
  EXPECT_TRUE(contains(m, "bucket")) << m;
  m = expect_error(ErrorCode::InvalidArgument, [&] { reg.tune("tiled", space(), "b", {}); });
  EXPECT_TRUE(contains(m, "run function")) << m;
  TuneSpace undeclared;
  undeclared.ints = {{305, {1, 2}}};
  expect_error(ErrorCode::InvalidArgument,
               [&] { reg.tune("tiled", undeclared, "b", {}, timer.options()); });
  expect_error(ErrorCode::KernelNotFound,
               [&] { reg.tune("nope", space(), "b", {}, timer.options()); });
  TuneSpace only_48;
  only_48.ints = {{300, {48}}};
  m = expect_error(ErrorCode::CompileError,
                   [&] { reg.tune("tiled", only_48, "b", {}, timer.options()); });
  EXPECT_TRUE(contains(m, "no candidate of 'tiled' for 'b'")) << m;
  EXPECT_TRUE(contains(m, "tiled|300:i48")) << m;
}

}  // namespace
}  // namespace kreg
