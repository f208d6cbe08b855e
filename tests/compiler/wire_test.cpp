#include "compiler/wire.hpp"

#include <gtest/gtest.h>

namespace kreg::compiler {
namespace {

Request sample_request() {
  Request r;
  r.program_name = "k.cu";
  r.source = "extern \"C\" __global__ void k() {}\n";
  r.arch = "sm_90";
  r.options = {"-minimal", "-std=c++17"};
  r.headers = {{"kreg/kernel.cuh", "#pragma once\n"}, {"a.h", std::string_view("x\0y", 3)}};
  r.name_expressions = {"fill<float>"};
  return r;
}

TEST(Wire, RequestRoundTrips) {
  const Request r = sample_request();
  auto decoded = decode_request(encode(r));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->program_name, "k.cu");
  EXPECT_EQ(decoded->source, r.source);
  EXPECT_EQ(decoded->arch, "sm_90");
  EXPECT_EQ(decoded->options, r.options);
  ASSERT_EQ(decoded->headers.size(), 2u);
  EXPECT_EQ(decoded->headers[1].second, std::string("x\0y", 3));
  EXPECT_EQ(decoded->name_expressions, r.name_expressions);
  const Request view = decoded->view();
  EXPECT_EQ(view.headers[0].name, "kreg/kernel.cuh");
}

TEST(Wire, ResultRoundTrips) {
  Result r;
  r.ok = true;
  r.image = {'\x7f', 'E', 'L', 'F', '\0', '\x01'};
  r.log = "warning: something";
  r.lowered_names = {"_Z4fillIfEvPT_"};
  r.milliseconds = 7.25;
  r.files_read = {"kreg/kernel.cuh", "/usr/local/cuda/include/vector_types.h"};
  r.files_known = true;
  auto decoded = decode_result(encode(r));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(decoded->ok);
  EXPECT_EQ(decoded->image, r.image);
  EXPECT_EQ(decoded->log, r.log);
  EXPECT_EQ(decoded->lowered_names, r.lowered_names);
  EXPECT_EQ(decoded->milliseconds, 7.25);
  EXPECT_EQ(decoded->files_read, r.files_read);
  EXPECT_TRUE(decoded->files_known);
}

TEST(Wire, EveryTruncationAndAnyTrailingByteIsRejected) {
  const std::string request = encode(sample_request());
  for (std::size_t n = 0; n < request.size(); ++n) {
    EXPECT_FALSE(decode_request(request.substr(0, n)).has_value()) << n;
  }
  EXPECT_FALSE(decode_request(request + "x").has_value());
  Result ok;
  ok.ok = true;
  ok.image = {'a', 'b'};
  const std::string result = encode(ok);
  for (std::size_t n = 0; n < result.size(); ++n) {
    EXPECT_FALSE(decode_result(result.substr(0, n)).has_value()) << n;
  }
}

TEST(Wire, WrongKindOrVersionIsRejected) {
  const std::string request = encode(sample_request());
  EXPECT_FALSE(decode_result(request).has_value());
  std::string other_version = request;
  other_version[4] = 9;
  EXPECT_FALSE(decode_request(other_version).has_value());
}

TEST(Wire, HugeCountsDoNotAllocate) {
  // A count field claiming 2^60 items must fail, not try to reserve them.
  std::string request = encode(sample_request());
  const std::size_t options_count_at = 8 + 8 + 4 + 8 + sample_request().source.size() + 8 + 5;
  std::uint64_t huge = std::uint64_t{1} << 60;
  request.replace(options_count_at, 8, reinterpret_cast<const char*>(&huge), 8);
  EXPECT_FALSE(decode_request(request).has_value());
}

}  // namespace
}  // namespace kreg::compiler

namespace kreg::compiler {
namespace {

// The disk, remote and precompiled keys are encode_key: every field must change it, and so
// must every field of what a worker is sent.
TEST(Wire, EveryFieldOfARequestChangesItsEncodingAndItsKey) {
  const Request base = sample_request();
  const core::EmbeddedFile embedded[] = {{"kreg/device/x.cuh", "#pragma once\n", "00"}};
  std::vector<Request> variants(10, base);
  variants[0].source = "extern \"C\" __global__ void k2() {}\n";
  variants[1].arch = "sm_80";
  variants[2].options = {"-minimal"};
  variants[3].headers[0].text = "#pragma once\n// another kreg header version\n";
  variants[4].headers.pop_back();
  variants[5].name_expressions = {"fill<double>"};
  variants[6].program_name = "other.cu";
  variants[7].headers[0].name = "kreg/other.cuh";
  variants[8].embedded = embedded;
  variants[8].embedded_sha256 = "aa00";
  variants[9].embedded = embedded;
  variants[9].embedded_sha256 = "bb00";
  for (std::size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(encode_key(variants[i]), encode_key(base)) << i;
    EXPECT_NE(encode(variants[i]), encode(base)) << i;
  }
  EXPECT_NE(encode_key(variants[8]), encode_key(variants[9]));
}

// The headers embedded at build time are keyed by their set's digest: the key neither holds
// nor reads their text, however long, and another digest is another key.
TEST(Wire, TheEmbeddedHeadersAreKeyedByTheirDigest) {
  const std::string long_text(1 << 20, 'x');
  const core::EmbeddedFile embedded[] = {{"kreg/device/big.cuh", long_text, "ignored"}};
  Request a = sample_request();
  a.embedded = embedded;
  a.embedded_sha256 = "aa00000000000000000000000000000000000000000000000000000000000000";
  const std::string key = encode_key(a);
  EXPECT_LT(key.size(), 1024U);
  EXPECT_EQ(key.find("xxxxxxxx"), std::string::npos);
  // What a worker is sent holds every header's text, the embedded ones first.
  const auto decoded = decode_request(encode(a));
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->headers.size(), 3U);
  EXPECT_EQ(decoded->headers[0].first, "kreg/device/big.cuh");
  EXPECT_EQ(decoded->headers[0].second, long_text);
  EXPECT_EQ(decoded->headers[1].first, "kreg/kernel.cuh");
  // A header of the request's own that spells the digest is not the embedded set.
  Request b = sample_request();
  b.headers.push_back({"kreg/device/big.cuh", a.embedded_sha256});
  EXPECT_NE(encode_key(b), key);
  // A key is never a request a worker would accept.
  EXPECT_FALSE(decode_request(key).has_value());
}

}  // namespace
}  // namespace kreg::compiler
