// The combine ALU (netstack/tree/alu.h) against two independent references:
// native C++ integers for 4/8/16-byte words (__int128 for 16), and a
// byte-at-a-time schoolbook model (16-bit carries, top-down compares) for
// every width. Random operands plus the edge values that break carry chains
// and signed compares, on unaligned buffers, and alu_check's errors.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/rng.h"
#include "netstack/tree/alu.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

constexpr AluOp kOps[] = {AluOp::kAdd, AluOp::kMax, AluOp::kMin, AluOp::kAnd, AluOp::kOr, AluOp::kXor};
constexpr AluType kTypes[] = {AluType::kUnsigned, AluType::kSigned};

std::vector<uint32_t> all_widths() {
  std::vector<uint32_t> w = {4, 8, 16};
  for (uint32_t b = 24; b <= kAluMaxWidth; b += 8) w.push_back(b);
  return w;
}

// --- byte-wise schoolbook reference ---------------------------------------------

// -1/0/1: a against b as width-byte integers, the top byte signed if asked.
int ref_compare(const uint8_t* a, const uint8_t* b, uint32_t width, bool sgn) {
  for (uint32_t i = width; i-- > 0;) {
    int x = a[i], y = b[i];
    if (sgn && i == width - 1) {
      x = static_cast<int8_t>(a[i]);
      y = static_cast<int8_t>(b[i]);
    }
    if (x != y) return x > y ? 1 : -1;
  }
  return 0;
}

void ref_one(AluOp op, AluType type, uint32_t width, uint8_t* a, const uint8_t* b) {
  const bool sgn = type == AluType::kSigned;
  switch (op) {
    case AluOp::kAdd: {
      uint16_t carry = 0;
      for (uint32_t i = 0; i < width; ++i) {
        const uint16_t s = static_cast<uint16_t>(a[i] + b[i] + carry);
        a[i] = static_cast<uint8_t>(s);
        carry = static_cast<uint16_t>(s >> 8);
      }
      return;
    }
    case AluOp::kMax:
      if (ref_compare(b, a, width, sgn) > 0) std::memcpy(a, b, width);
      return;
    case AluOp::kMin:
      if (ref_compare(b, a, width, sgn) < 0) std::memcpy(a, b, width);
      return;
    case AluOp::kAnd:
      for (uint32_t i = 0; i < width; ++i) a[i] &= b[i];
      return;
    case AluOp::kOr:
      for (uint32_t i = 0; i < width; ++i) a[i] |= b[i];
      return;
    case AluOp::kXor:
      for (uint32_t i = 0; i < width; ++i) a[i] ^= b[i];
      return;
  }
}

// --- native reference for 4/8/16 bytes -------------------------------------------------

template <typename T>
T native_op(AluOp op, T a, T b) {
  switch (op) {
    case AluOp::kAdd: return static_cast<T>(a + b);
    case AluOp::kMax: return a > b ? a : b;
    case AluOp::kMin: return a < b ? a : b;
    case AluOp::kAnd: return a & b;
    case AluOp::kOr: return a | b;
    case AluOp::kXor: return a ^ b;
  }
  return 0;
}

template <typename U, typename S>
void native_one(AluOp op, AluType type, uint8_t* a, const uint8_t* b) {
  if (type == AluType::kSigned && (op == AluOp::kMax || op == AluOp::kMin)) {
    S x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    const S r = native_op<S>(op, x, y);
    std::memcpy(a, &r, sizeof r);
  } else {
    U x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    const U r = native_op<U>(op, x, y);  // unsigned ADD wraps like two's complement
    std::memcpy(a, &r, sizeof r);
  }
}

void native_ref(AluOp op, AluType type, uint32_t width, uint8_t* a, const uint8_t* b) {
  if (width == 4) native_one<uint32_t, int32_t>(op, type, a, b);
  if (width == 8) native_one<uint64_t, int64_t>(op, type, a, b);
  if (width == 16) native_one<unsigned __int128, __int128>(op, type, a, b);
}

// --- operands --------------------------------------------------------------------------------

// Edge patterns of one width: 0, 1, all ones, min/max signed, and values
// whose carries or compares must cross every word.
std::vector<std::vector<uint8_t>> edge_values(uint32_t width, Rng& rng) {
  std::vector<std::vector<uint8_t>> v;
  auto add = [&](auto fill) {
    std::vector<uint8_t> x(width);
    for (uint32_t i = 0; i < width; ++i) x[i] = fill(i);
    v.push_back(x);
  };
  const uint32_t top = width - 1;
  add([](uint32_t) { return uint8_t{0}; });
  add([](uint32_t i) { return uint8_t(i == 0 ? 1 : 0); });
  add([](uint32_t) { return uint8_t{0xff}; });                                 // -1 / max unsigned
  add([&](uint32_t i) { return uint8_t(i == top ? 0x80 : 0); });               // min signed
  add([&](uint32_t i) { return uint8_t(i == top ? 0x7f : 0xff); });            // max signed
  add([&](uint32_t i) { return uint8_t(i == top ? 0x00 : 0xff); });            // +1 ripples to the top byte
  add([&](uint32_t i) { return uint8_t(i == top ? 0x80 : 0xff); });            // min signed + all low ones
  add([&](uint32_t i) { return uint8_t(i == top ? 0x7f : 0); });               // top set, low words zero
  add([&](uint32_t i) { return uint8_t(i % 8 == 7 ? 0x80 : 0); });             // every word's high bit
  add([&](uint32_t i) { return uint8_t(i % 8 == 7 ? 0x7f : 0xff); });          // every word's max signed
  add([&](uint32_t i) { return uint8_t(i == top ? rng.next() : 0xff); });      // random top, ripple below
  add([&](uint32_t i) { return uint8_t(i >= width / 2 ? 0 : 0xff); });         // lower half ones
  return v;
}

std::vector<uint8_t> random_operands(uint32_t width, uint32_t n, Rng& rng) {
  std::vector<uint8_t> v(static_cast<size_t>(width) * n);
  for (auto& b : v) b = static_cast<uint8_t>(rng.next());
  // Some operands differ from their partner only low down, some equal it:
  // done by the callers on their pairs; here sprinkle all-ones/zero words.
  for (uint32_t i = 0; i < n; i += 5) {
    const uint32_t w = static_cast<uint32_t>(rng.below(width / 4));
    std::memset(v.data() + static_cast<size_t>(i) * width + 4 * w, (i / 5) % 2 ? 0xff : 0, 4);
  }
  return v;
}

// Runs alu_combine on copies at byte offsets acc_off / in_off (unaligned)
// and checks it against the references, operand by operand.
void check_against_refs(AluOp op, AluType type, uint32_t width, const std::vector<uint8_t>& a,
                        const std::vector<uint8_t>& b, uint32_t acc_off, uint32_t in_off) {
  const auto n = static_cast<uint32_t>(a.size() / width);
  std::vector<uint8_t> acc_buf(a.size() + 16), in_buf(b.size() + 16);
  uint8_t* acc = acc_buf.data() + acc_off;
  uint8_t* in = in_buf.data() + in_off;
  std::memcpy(acc, a.data(), a.size());
  std::memcpy(in, b.data(), b.size());
  alu_combine(op, type, width, acc, in, n);

  std::vector<uint8_t> ref = a, nat = a;
  for (uint32_t i = 0; i < n; ++i) {
    ref_one(op, type, width, ref.data() + static_cast<size_t>(i) * width, b.data() + static_cast<size_t>(i) * width);
    native_ref(op, type, width, nat.data() + static_cast<size_t>(i) * width, b.data() + static_cast<size_t>(i) * width);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const size_t o = static_cast<size_t>(i) * width;
    if (std::memcmp(acc + o, ref.data() + o, width) != 0) {
      const std::string what = std::string(alu_op_name(op)) + (type == AluType::kSigned ? " signed" : " unsigned") +
                               " width " + std::to_string(width) + " operand " + std::to_string(i);
      FAIL(("differs from the byte-wise reference: " + what).c_str());
    }
    if (width <= 16) CHECK(std::memcmp(ref.data() + o, nat.data() + o, width) == 0);  // the references agree
  }
  // Nothing outside the operands was touched.
  for (uint32_t i = 0; i < acc_off; ++i) LONGS_EQUAL(0, acc_buf[i]);
  for (size_t i = acc_off + a.size(); i < acc_buf.size(); ++i) LONGS_EQUAL(0, acc_buf[i]);
}

}  // namespace

TEST_GROUP(Alu){};

TEST(Alu, EveryOpTypeWidthMatchesReferencesOnRandomOperands) {
  Rng rng(0xa1u);
  int cases = 0;
  for (uint32_t width : all_widths()) {
    for (AluOp op : kOps) {
      for (AluType type : kTypes) {
        for (uint32_t n : {1u, 2u, 3u, 37u}) {
          auto a = random_operands(width, n, rng);
          auto b = random_operands(width, n, rng);
          // Make some pairs equal, and some equal except in the lowest word,
          // so compares must walk all the way down.
          if (n > 2) std::memcpy(b.data(), a.data(), width);
          if (n > 2) {
            std::memcpy(b.data() + width, a.data() + width, width);
            b[width] ^= 1;
          }
          check_against_refs(op, type, width, a, b, static_cast<uint32_t>(rng.below(8)),
                             static_cast<uint32_t>(rng.below(8)));
          ++cases;
        }
      }
    }
  }
  LONGS_EQUAL(33 * 6 * 2 * 4, cases);
}

TEST(Alu, EveryOpTypeWidthMatchesReferencesOnEdgePairs) {
  Rng rng(0xa2u);
  for (uint32_t width : all_widths()) {
    const auto edges = edge_values(width, rng);
    // All ordered pairs (x, y) as n operands in one call.
    std::vector<uint8_t> a, b;
    for (const auto& x : edges) {
      for (const auto& y : edges) {
        a.insert(a.end(), x.begin(), x.end());
        b.insert(b.end(), y.begin(), y.end());
      }
    }
    for (AluOp op : kOps) {
      for (AluType type : kTypes) check_against_refs(op, type, width, a, b, 1, 3);
    }
  }
}

TEST(Alu, CarryRipplesAcrossEveryWord) {
  for (uint32_t width : all_widths()) {
    std::vector<uint8_t> acc(width, 0xff), one(width, 0);
    one[0] = 1;
    alu_combine(AluOp::kAdd, AluType::kUnsigned, width, acc.data(), one.data(), 1);
    for (uint8_t b : acc) LONGS_EQUAL(0, b);  // 2^w - 1 + 1 wraps to 0

    std::vector<uint8_t> low(width, 0xff);
    low[width - 1] = 0;  // 2^(w-8) - 1
    alu_combine(AluOp::kAdd, AluType::kSigned, width, low.data(), one.data(), 1);
    for (uint32_t i = 0; i + 1 < width; ++i) LONGS_EQUAL(0, low[i]);
    LONGS_EQUAL(1, low[width - 1]);

    std::vector<uint8_t> max_signed(width, 0xff);
    max_signed[width - 1] = 0x7f;
    alu_combine(AluOp::kAdd, AluType::kSigned, width, max_signed.data(), one.data(), 1);  // wraps to min
    LONGS_EQUAL(0x80, max_signed[width - 1]);
  }
}

TEST(Alu, SignedAndUnsignedOrdersDiffer) {
  for (uint32_t width : all_widths()) {
    std::vector<uint8_t> min_signed(width, 0), max_signed(width, 0xff);
    min_signed[width - 1] = 0x80;
    max_signed[width - 1] = 0x7f;
    auto acc = min_signed;
    alu_combine(AluOp::kMax, AluType::kSigned, width, acc.data(), max_signed.data(), 1);
    CHECK(acc == max_signed);
    acc = min_signed;
    alu_combine(AluOp::kMax, AluType::kUnsigned, width, acc.data(), max_signed.data(), 1);
    CHECK(acc == min_signed);
    acc = min_signed;
    alu_combine(AluOp::kMin, AluType::kSigned, width, acc.data(), max_signed.data(), 1);
    CHECK(acc == min_signed);
    // Below the top word, words compare unsigned even for kSigned:
    // 0x00..00 80.. > 0x00..00 7f.. in both types.
    if (width >= 16) {
      std::vector<uint8_t> x(width, 0), y(width, 0);
      x[7] = 0x80;
      y[7] = 0x7f;
      y[0] = 0xff;
      for (AluType t : kTypes) {
        acc = y;
        alu_combine(AluOp::kMax, t, width, acc.data(), x.data(), 1);
        CHECK(acc == x);
      }
    }
  }
}

TEST(Alu, FullOverlapIsAllowed) {
  Rng rng(0xa3u);
  for (uint32_t width : {4u, 8u, 16u, 40u, 256u}) {
    const auto v = random_operands(width, 9, rng);
    for (AluOp op : kOps) {
      for (AluType type : kTypes) {
        auto acc = v;
        alu_combine(op, type, width, acc.data(), acc.data(), 9);
        auto ref = v;
        for (uint32_t i = 0; i < 9; ++i) ref_one(op, type, width, ref.data() + i * width, v.data() + i * width);
        CHECK(acc == ref);  // x+x, x, x, x, x, 0
      }
    }
  }
}

TEST(Alu, ZeroOperandsTouchNothing) {
  uint8_t acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint8_t in[8] = {};
  for (AluOp op : kOps) alu_combine(op, AluType::kSigned, 8, acc, in, 0);
  for (int i = 0; i < 8; ++i) LONGS_EQUAL(i + 1, acc[i]);
}

TEST(Alu, CheckAcceptsEveryValidCombination) {
  for (uint32_t width : all_widths()) {
    for (AluOp op : kOps) {
      for (AluType type : kTypes) CHECK_TRUE(alu_check(op, type, width).is_ok());
    }
  }
}

TEST(Alu, CheckNamesTheBadArgument) {
  for (uint32_t width : {0u, 1u, 2u, 3u, 5u, 12u, 20u, 28u, 36u, 257u, 264u, 512u}) {
    const Status s = alu_check(AluOp::kAdd, AluType::kUnsigned, width);
    CHECK_FALSE(s.is_ok());
    CHECK(s.code() == Code::kInvalid);
    const std::string want = "width " + std::to_string(width) + " bytes";
    CHECK_TEXT(s.message().find(want) != std::string::npos, s.message().c_str());
  }
  for (unsigned op : {0u, 7u, 255u}) {
    const Status s = alu_check(static_cast<AluOp>(op), AluType::kUnsigned, 8);
    CHECK(s.code() == Code::kInvalid);
    CHECK_TEXT(s.message().find("op " + std::to_string(op)) != std::string::npos, s.message().c_str());
  }
  for (unsigned t : {0u, 3u}) {
    const Status s = alu_check(AluOp::kMax, static_cast<AluType>(t), 8);
    CHECK(s.code() == Code::kInvalid);
    CHECK_TEXT(s.message().find("type " + std::to_string(t)) != std::string::npos, s.message().c_str());
  }
  // The op is checked first, then the type, then the width.
  CHECK(alu_check(static_cast<AluOp>(9), static_cast<AluType>(9), 3).message().find("op 9") != std::string::npos);
}

TEST(Alu, OpNamesRoundTrip) {
  for (AluOp op : kOps) {
    AluOp back{};
    CHECK_TRUE(parse_alu_op(alu_op_name(op), &back));
    CHECK(back == op);
  }
  STRCMP_EQUAL("xor", alu_op_name(AluOp::kXor));
  AluOp out = AluOp::kAdd;
  CHECK_FALSE(parse_alu_op("sum", &out));
  CHECK_FALSE(parse_alu_op("", &out));
  CHECK_FALSE(parse_alu_op("ADD", &out));
  CHECK_FALSE(parse_alu_op(nullptr, &out));
  CHECK(out == AluOp::kAdd);
}
