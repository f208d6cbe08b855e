#include <kreg/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace kreg {
namespace {

TEST(Error, WhatHasThePrefixOnceAndMessageNone) {
  const Error e(ErrorCode::InvalidArgument, "NVRTC 13.0 cannot target sm_999");
  EXPECT_STREQ(e.what(), "kreg: NVRTC 13.0 cannot target sm_999");
  EXPECT_EQ(e.message(), "NVRTC 13.0 cannot target sm_999");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
}

TEST(Error, AMessageThatHasThePrefixIsNotGivenASecond) {
  const Error e(ErrorCode::CudaError, "kreg: cuMemAlloc: out of memory");
  EXPECT_STREQ(e.what(), "kreg: cuMemAlloc: out of memory");
  EXPECT_EQ(e.message(), "cuMemAlloc: out of memory");
}

TEST(Error, QuotingAnotherErrorsMessageKeepsOnePrefix) {
  const Error inner(ErrorCode::LoadError, "loading binary 'k@sm_90': CUDA error 200");
  const Error outer(inner.code(), "kernel 'k': " + std::string(inner.message()));
  EXPECT_STREQ(outer.what(), "kreg: kernel 'k': loading binary 'k@sm_90': CUDA error 200");
}

TEST(Error, AnEmptyMessageIsThePrefixAlone) {
  const Error e(ErrorCode::NoDevice, "");
  EXPECT_STREQ(e.what(), "kreg: ");
  EXPECT_EQ(e.message(), "");
}

}  // namespace
}  // namespace kreg
