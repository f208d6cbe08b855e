// The build chain applies the key-coverage rules and counts hits and times for every tier,
// so that a tier cannot forget them (registry/build_chain.hpp).
#include "registry/build_chain.hpp"

#include "compiler/nvrtc_compiler.hpp"
#include "registry/source.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kreg::registry {
namespace {

// A tier that records what it was asked and offered, and answers from `answer`.
class FakeTier final : public Tier {
 public:
  FakeTier(bool keyed, std::optional<Timing> timing, std::vector<std::string>& log,
           std::string name, std::optional<compiler::Result> answer = std::nullopt)
      : keyed_(keyed), timing_(timing), log_(log), name_(std::move(name)), answer_(answer) {}
  std::string_view name() const noexcept override { return name_; }
  bool keyed() const noexcept override { return keyed_; }
  std::optional<Timing> timing() const noexcept override { return timing_; }
  std::optional<Found> find(const BuildRequest&) override {
    log_.push_back(name_ + " asked");
    if (!answer_) return std::nullopt;
    return Found{*answer_, Origin::Compiled, 0, {}};
  }
  void store(const BuildRequest&, const Found&) noexcept override {
    log_.push_back(name_ + " offered");
  }

 private:
  bool keyed_;
  std::optional<Timing> timing_;
  std::vector<std::string>& log_;
  std::string name_;
  std::optional<compiler::Result> answer_;
};

compiler::Result compiled(std::vector<std::string> files_read) {
  compiler::Result r;
  r.ok = true;
  r.image = {'\x7f', 'E', 'L', 'F'};
  r.files_read = std::move(files_read);
  r.files_known = true;
  return r;
}

struct Chain {
  std::vector<std::string> log;
  Counters counters;
  std::unique_ptr<BuildChain> chain;
  Chain(const compiler::Result& compile_answer) {
    std::vector<std::unique_ptr<Tier>> tiers;
    tiers.push_back(std::make_unique<FakeTier>(
        true, Tier::Timing{Counter::DiskHits, Counter::DiskNs, false}, log, "keyed"));
    tiers.push_back(std::make_unique<FakeTier>(false, std::nullopt, log, "plain"));
    tiers.push_back(
        std::make_unique<FakeTier>(false, std::nullopt, log, "compile", compile_answer));
    chain = std::make_unique<BuildChain>(counters, std::move(tiers));
  }
};

const char* kText = "extern \"C\" __global__ void k() {}\n";

TEST(BuildChain, AKeyedTierIsAskedAndOfferedWhatItsKeyCovers) {
  const Source source = parse_source("s", kText, {});
  Chain c(compiled({"kreg/kernel.cuh"}));
  const BuildRequest request(source, {}, "k", "s@sm_90", "sm_90", {}, false);
  c.chain->build(request);
  EXPECT_EQ(c.log, (std::vector<std::string>{"keyed asked", "plain asked", "compile asked",
                                             "keyed offered", "plain offered"}));
}

TEST(BuildChain, AKeyedTierIsNeverAskedAboutARequestItsKeyCannotCover) {
  // An include path of the caller's choice: what NVRTC reads there is not in the key.
  SourceOptions options;
  options.compile_options = {"-I/tmp/elsewhere"};
  const Source source = parse_source("s", kText, options);
  Chain c(compiled({}));
  const BuildRequest request(source, {}, "k", "s@sm_90", "sm_90", {}, false);
  c.chain->build(request);
  EXPECT_EQ(c.log, (std::vector<std::string>{"plain asked", "compile asked", "plain offered"}));
}

TEST(BuildChain, ACompileThatReadAFileOutsideTheKeyIsNotOfferedToAKeyedTier) {
  const Source source = parse_source("s", kText, {});
  Chain c(compiled({"/home/someone/header.cuh"}));
  const BuildRequest request(source, {}, "k", "s@sm_90", "sm_90", {}, false);
  c.chain->build(request);
  EXPECT_EQ(c.log, (std::vector<std::string>{"keyed asked", "plain asked", "compile asked",
                                             "plain offered"}));
}

TEST(BuildChain, TheChainCountsATimedTiersHits) {
  const Source source = parse_source("s", kText, {});
  std::vector<std::string> log;
  Counters counters;
  std::vector<std::unique_ptr<Tier>> tiers;
  tiers.push_back(std::make_unique<FakeTier>(
      true, Tier::Timing{Counter::DiskHits, Counter::DiskNs, false}, log, "keyed", compiled({})));
  BuildChain chain(counters, std::move(tiers));
  const BuildRequest request(source, {}, "k", "s@sm_90", "sm_90", {}, false);
  chain.build(request);
  chain.build(request);
  EXPECT_EQ(counters.stats().disk_hits, 2U);
  EXPECT_GT(counters.total(Counter::DiskNs), 0U);
}

}  // namespace
}  // namespace kreg::registry
