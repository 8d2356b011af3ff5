#include <string>

#include "base/clock.h"
#include "drivers/sim/fault_plan.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

Dims dims(uint32_t x, uint32_t y, uint32_t z) {
  Dims d;
  d.n = {x, y, z};
  return d;
}

const Dims k442 = dims(4, 4, 2);

// The error message of a spec that must fail (fails the test if it parses).
std::string error_of(const std::string& spec, const Dims& d = k442) {
  auto r = parse_fault_plan(spec, d);
  CHECK_FALSE_TEXT(r.is_ok(), ("expected an error for '" + spec + "'").c_str());
  return r.is_ok() ? std::string() : r.status().message();
}

void check_mentions(const std::string& msg, const std::string& what) {
  CHECK_TEXT(msg.find(what) != std::string::npos, ("'" + msg + "' should mention '" + what + "'").c_str());
  CHECK_TEXT(msg.find('\n') == std::string::npos, ("'" + msg + "' should be one line").c_str());
}

bool same_plan(const FaultPlan& a, const FaultPlan& b) {
  if (a.drop != b.drop || a.corrupt != b.corrupt || a.dup != b.dup || a.reorder != b.reorder ||
      a.delay_ns != b.delay_ns || a.jitter_ns != b.jitter_ns || a.linkdown.size() != b.linkdown.size())
    return false;
  for (size_t i = 0; i < a.linkdown.size(); ++i) {
    if (!(a.linkdown[i].node == b.linkdown[i].node) || a.linkdown[i].dir != b.linkdown[i].dir ||
        a.linkdown[i].at_ns != b.linkdown[i].at_ns)
      return false;
  }
  return true;
}

}  // namespace

TEST_GROUP(FaultPlan){};

TEST(FaultPlan, EmptyAndNoneAreEmptyPlans) {
  for (const char* spec : {"", "none", "  none "}) {
    auto r = parse_fault_plan(spec, k442);
    CHECK_TEXT(r.is_ok(), spec);
    CHECK(same_plan(FaultPlan{}, *r));
    CHECK_FALSE(r->any_random());
    STRCMP_EQUAL("none", r->to_string().c_str());
  }
}

TEST(FaultPlan, EachKeyParses) {
  auto r = parse_fault_plan("drop=0.05,corrupt=0.01,dup=0.002,reorder=1,delay=2us,jitter=250ns", k442);
  CHECK_TEXT(r.is_ok(), r.status().to_string().c_str());
  DOUBLES_EQUAL(0.05, r->drop, 0);
  DOUBLES_EQUAL(0.01, r->corrupt, 0);
  DOUBLES_EQUAL(0.002, r->dup, 0);
  DOUBLES_EQUAL(1.0, r->reorder, 0);
  UNSIGNED_LONGLONGS_EQUAL(2000, r->delay_ns);
  UNSIGNED_LONGLONGS_EQUAL(250, r->jitter_ns);
  CHECK(r->linkdown.empty());
  CHECK(r->any_random());

  auto zero = parse_fault_plan("drop=0", k442);
  CHECK(zero.is_ok());
  DOUBLES_EQUAL(0, zero->drop, 0);

  auto delay_only = parse_fault_plan("delay=1ms", k442);
  CHECK(delay_only.is_ok());
  UNSIGNED_LONGLONGS_EQUAL(kMs, delay_only->delay_ns);
  CHECK_FALSE(delay_only->any_random());  // a fixed delay draws nothing

  auto max_delay = parse_fault_plan("delay=1s,jitter=1s", k442);
  CHECK(max_delay.is_ok());
  UNSIGNED_LONGLONGS_EQUAL(kSec, max_delay->delay_ns);
}

TEST(FaultPlan, LinkdownParsesAndRepeats) {
  auto r = parse_fault_plan("linkdown=1.0.1:x+@300us,linkdown=3.3.0:z-,linkdown=0.2.1:y-@0", k442);
  CHECK_TEXT(r.is_ok(), r.status().to_string().c_str());
  LONGS_EQUAL(3, r->linkdown.size());
  const auto& a = r->linkdown[0];
  UNSIGNED_LONGS_EQUAL(1, a.node.c[0]);
  UNSIGNED_LONGS_EQUAL(0, a.node.c[1]);
  UNSIGNED_LONGS_EQUAL(1, a.node.c[2]);
  CHECK(a.dir == Dir::kXp);
  UNSIGNED_LONGLONGS_EQUAL(300 * kUs, a.at_ns);
  CHECK(r->linkdown[1].dir == Dir::kZm);
  UNSIGNED_LONGLONGS_EQUAL(3, r->linkdown[1].node.c[0]);
  UNSIGNED_LONGLONGS_EQUAL(0, r->linkdown[1].at_ns);  // no '@': dead from boot
  CHECK(r->linkdown[2].dir == Dir::kYm);
  UNSIGNED_LONGLONGS_EQUAL(0, r->linkdown[2].at_ns);
  CHECK_FALSE(r->any_random());
}

TEST(FaultPlan, UnknownKeyNamesItAndTheKnownOnes) {
  const std::string msg = error_of("drop=0.1,dorp=0.2");
  STRCMP_EQUAL("faults: unknown key 'dorp' (known: drop, corrupt, dup, reorder, delay, jitter, linkdown, reboot, stop)",
               msg.c_str());
}

TEST(FaultPlan, ProbabilityOutOfRange) {
  STRCMP_EQUAL("faults: drop=1.5 is out of range [0, 1]", error_of("drop=1.5").c_str());
  check_mentions(error_of("corrupt=-0.1"), "corrupt=-0.1");
  check_mentions(error_of("dup=2"), "dup=2");
  check_mentions(error_of("reorder=1.0001"), "reorder=1.0001");
  check_mentions(error_of("drop=inf"), "drop=inf");
}

TEST(FaultPlan, ProbabilityNotANumber) {
  check_mentions(error_of("drop=abc"), "drop=abc");
  check_mentions(error_of("drop=0.1x"), "drop=0.1x");
  check_mentions(error_of("reorder="), "reorder=");
  check_mentions(error_of("dup=nan"), "dup=nan");
}

TEST(FaultPlan, BadDurations) {
  check_mentions(error_of("delay=2parsecs"), "delay=2parsecs");
  check_mentions(error_of("jitter=-5us"), "jitter=-5us");
  check_mentions(error_of("delay="), "delay=");
  const std::string big = error_of("delay=2s");
  check_mentions(big, "delay=2s");
  check_mentions(big, "range");
  check_mentions(error_of("jitter=1001ms"), "jitter=1001ms");
}

TEST(FaultPlan, MissingEquals) {
  STRCMP_EQUAL("faults: missing '=' in 'drop' (expected KEY=VALUE)", error_of("drop").c_str());
  check_mentions(error_of("delay=1us,jitter"), "'jitter'");
}

TEST(FaultPlan, DuplicateKeyIsAnError) {
  check_mentions(error_of("drop=0.1,drop=0.2"), "duplicate key 'drop'");
  check_mentions(error_of("delay=1us,corrupt=0.1,delay=2us"), "duplicate key 'delay'");
}

TEST(FaultPlan, EmptyItemIsAnError) {
  check_mentions(error_of("drop=0.1,,dup=0.1"), "empty item");
  check_mentions(error_of("drop=0.1,"), "empty item");
}

TEST(FaultPlan, LinkdownOutsideDims) {
  const std::string msg = error_of("linkdown=4.0.0:x+");
  check_mentions(msg, "linkdown=4.0.0:x+");
  check_mentions(msg, "outside dims 4x4x2");
  check_mentions(error_of("linkdown=0.0.2:x+"), "linkdown=0.0.2:x+");
  check_mentions(error_of("linkdown=0.0:x+"), "linkdown=0.0:x+");
  check_mentions(error_of("linkdown=a.0.0:x+"), "linkdown=a.0.0:x+");
}

TEST(FaultPlan, LinkdownBadDirection) {
  const std::string msg = error_of("linkdown=1.1.1:w+");
  check_mentions(msg, "linkdown=1.1.1:w+");
  check_mentions(msg, "'w+'");
  check_mentions(error_of("linkdown=1.1.1"), "linkdown=1.1.1");  // no ':DIR'
  check_mentions(error_of("linkdown=1.1.1:"), "linkdown=1.1.1:");
}

TEST(FaultPlan, LinkdownBadTime) {
  check_mentions(error_of("linkdown=1.1.1:x+@soon"), "linkdown=1.1.1:x+@soon");
  check_mentions(error_of("linkdown=1.1.1:x+@"), "linkdown=1.1.1:x+@");
}

TEST(FaultPlan, LinkdownInADimensionOfSizeOne) {
  const Dims line = dims(8, 1, 1);
  auto ok = parse_fault_plan("linkdown=7.0.0:x-", line);
  CHECK(ok.is_ok());
  for (const char* dir : {"y+", "y-", "z+", "z-"}) {
    const std::string spec = std::string("linkdown=3.0.0:") + dir;
    const std::string msg = error_of(spec, line);
    check_mentions(msg, spec);
    check_mentions(msg, "no link");
  }
}

TEST(FaultPlan, ToStringIsCanonicalAndRoundTrips) {
  const char* specs[] = {
      "drop=0.05",
      "drop=0.1,corrupt=0.01,dup=0.002,reorder=0.3,delay=2us,jitter=250ns",
      "jitter=1s,reorder=0.125,delay=1500ns",  // any order in, canonical order out
      "delay=1.5us",
      "drop=0.3333333333333333",
      "drop=1e-7,linkdown=1.0.1:x+@300us,linkdown=3.3.0:z-,linkdown=0.2.1:y-@1.25ms",
      "linkdown=0.0.0:y+@7",
  };
  for (const char* spec : specs) {
    auto a = parse_fault_plan(spec, k442);
    CHECK_TEXT(a.is_ok(), (std::string(spec) + ": " + a.status().to_string()).c_str());
    const std::string canon = a->to_string();
    auto b = parse_fault_plan(canon, k442);
    CHECK_TEXT(b.is_ok(), (canon + ": " + b.status().to_string()).c_str());
    CHECK_TEXT(same_plan(*a, *b), (std::string(spec) + " -> " + canon).c_str());
    STRCMP_EQUAL(canon.c_str(), b->to_string().c_str());  // canonical is a fixed point
  }
  auto r = parse_fault_plan("jitter=1s,reorder=0.125,delay=1500ns,linkdown=1.0.1:x+@300us", k442);
  STRCMP_EQUAL("reorder=0.125,delay=1500ns,jitter=1s,linkdown=1.0.1:x+@300us", r->to_string().c_str());
}

TEST(FaultPlan, SpacesAroundItemsAreAllowed) {
  auto r = parse_fault_plan(" drop = 0.5 , delay=1us ", k442);
  CHECK_TEXT(r.is_ok(), r.status().to_string().c_str());
  DOUBLES_EQUAL(0.5, r->drop, 0);
  UNSIGNED_LONGLONGS_EQUAL(1000, r->delay_ns);
}
