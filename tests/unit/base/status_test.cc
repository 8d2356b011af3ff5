#include <set>
#include <string>
#include <utility>

#include "base/status.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

TEST_GROUP(Status) {};

TEST(Status, DefaultAndOkAreOk) {
  Status a;
  Status b = Status::ok();
  CHECK_TRUE(a.is_ok());
  CHECK_TRUE(static_cast<bool>(b));
  CHECK(b.code() == Code::kOk);
  CHECK_TRUE(b.message().empty());
  STRCMP_EQUAL("ok", b.to_string().c_str());
}

TEST(Status, ErrorFormatsPrintfStyle) {
  Status s = error(Code::kInvalid, "dims %s: %d is not a size", "4x4x0", 0);
  CHECK_FALSE(s.is_ok());
  CHECK_FALSE(static_cast<bool>(s));
  CHECK(s.code() == Code::kInvalid);
  STRCMP_EQUAL("dims 4x4x0: 0 is not a size", s.message().c_str());
  STRCMP_EQUAL("invalid: dims 4x4x0: 0 is not a size", s.to_string().c_str());
}

TEST(Status, ErrorTruncatesVeryLongMessagesSafely) {
  const std::string big(2000, 'z');
  Status s = error(Code::kIo, "read %s", big.c_str());
  CHECK(s.code() == Code::kIo);
  CHECK_TRUE(s.message().size() < 600);
  CHECK_TRUE(s.message().rfind("read zzz", 0) == 0);
}

TEST(Status, EveryCodeHasADistinctName) {
  std::set<std::string> names;
  for (int c = static_cast<int>(Code::kOk); c <= static_cast<int>(Code::kInternal); ++c) {
    const std::string n = code_name(static_cast<Code>(c));
    CHECK_TRUE(n != "unknown");
    CHECK_TRUE(names.insert(n).second);
  }
  STRCMP_EQUAL("timeout", code_name(Code::kTimeout));
}

TEST(Status, ResultHoldsValue) {
  Result<int> r = 42;
  CHECK_TRUE(r.is_ok());
  CHECK_TRUE(static_cast<bool>(r));
  LONGS_EQUAL(42, r.value());
  LONGS_EQUAL(42, *r);
  CHECK_TRUE(r.status().is_ok());
  r.value() = 7;
  LONGS_EQUAL(7, *r);
}

TEST(Status, ResultArrowAndMoveOut) {
  Result<std::string> r = std::string("hello");
  LONGS_EQUAL(5, r->size());
  std::string moved = std::move(r).value();
  STRCMP_EQUAL("hello", moved.c_str());
}

TEST(Status, ResultHoldsError) {
  Result<int> r = error(Code::kNotFound, "rank %u", 9u);
  CHECK_FALSE(r.is_ok());
  CHECK_FALSE(static_cast<bool>(r));
  CHECK(r.status().code() == Code::kNotFound);
  STRCMP_EQUAL("not found: rank 9", r.status().to_string().c_str());
}
