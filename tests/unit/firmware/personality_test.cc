// Personality parsing and validation: every bad personality is rejected with
// one line that names the problem.

#include <cstdio>
#include <string>
#include <vector>

#include "firmware/personality.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

const char kGood[] =
    "# a 2x2x1 node\n"
    "dims = 2x2x1\n"
    "coord = 1,0,0\n"
    "job = selftest\n"
    "seed = 42\n"
    "port = port0 x+ sim\n"
    "port = port1 x- sim\n"
    "port = port2 y+ sim\n"
    "port = port3 y- sim\n";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// Parses text and returns the error message ("" if it parsed).
std::string err(const std::string& text) {
  auto r = parse_personality_text(text, "p.txt");
  return r ? "" : r.status().message();
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_GROUP(Personality){};

TEST(Personality, ParsesEveryField) {
  auto r = parse_personality_text(kGood, "p.txt");
  CHECK_TRUE_TEXT(r.is_ok(), r.status().message().c_str());
  CHECK(r->dims == (Dims{{2, 2, 1}}));
  CHECK(r->coord == (Coord{{1, 0, 0}}));
  STRCMP_EQUAL("selftest", r->job.c_str());
  UNSIGNED_LONGS_EQUAL(42, r->seed);
  LONGS_EQUAL(4, r->ports.size());
  CHECK(r->ports[3].dir == Dir::kYm);
  STRCMP_EQUAL("sim", r->ports[3].driver.c_str());
  STRCMP_EQUAL("dims 2x2x1 coord 1,0,0 job selftest seed 42 ports port0=x+ port1=x- port2=y+ port3=y-",
               r->describe().c_str());
}

TEST(Personality, MissingFieldIsNamed) {
  CHECK(contains(err(replace(kGood, "dims = 2x2x1\n", "")), "missing field 'dims'"));
  CHECK(contains(err(replace(kGood, "coord = 1,0,0\n", "")), "missing field 'coord'"));
  CHECK(contains(err(replace(kGood, "job = selftest\n", "")), "missing field 'job'"));
}

TEST(Personality, CoordinateOutsideDims) {
  const std::string e = err(replace(kGood, "coord = 1,0,0", "coord = 1,2,0"));
  CHECK_TEXT(contains(e, "outside dims 2x2x1"), e.c_str());
  CHECK_TEXT(contains(e, "line 3"), e.c_str());
}

TEST(Personality, DimsZero) {
  const std::string e = err(replace(kGood, "dims = 2x2x1", "dims = 2x0x1"));
  CHECK_TEXT(contains(e, "size 0"), e.c_str());
}

TEST(Personality, DuplicatePortDirection) {
  const std::string e = err(replace(kGood, "port1 x- sim", "port1 x+ sim"));
  CHECK_TEXT(contains(e, "duplicate port: port0 and port1 both map to x+"), e.c_str());
}

TEST(Personality, DuplicatePortName) {
  const std::string e = err(replace(kGood, "port = port3 y- sim", "port = port2 y- sim"));
  CHECK_TEXT(contains(e, "duplicate port name 'port2'"), e.c_str());
}

TEST(Personality, PortOnADimensionWithoutLinks) {
  const std::string e = err(std::string(kGood) + "port = port4 z+ sim\n");
  CHECK_TEXT(contains(e, "port4 maps to z+") && contains(e, "size 1"), e.c_str());
}

TEST(Personality, DirectionWithoutPort) {
  const std::string e = err(replace(kGood, "port = port3 y- sim\n", ""));
  CHECK_TEXT(contains(e, "no port for direction y-"), e.c_str());
}

TEST(Personality, UnknownKeyAndBadLines) {
  CHECK(contains(err(std::string(kGood) + "dimz = 4\n"), "unknown key 'dimz'"));
  CHECK(contains(err(std::string(kGood) + "just words\n"), "expected 'key = value'"));
  CHECK(contains(err(replace(kGood, "port0 x+ sim", "port0 q+ sim")), "unknown direction 'q+'"));
  CHECK(contains(err(replace(kGood, "seed = 42", "seed = -4")), "seed '-4'"));
}

TEST(Personality, EveryErrorIsOneLine) {
  const std::vector<std::string> bad = {
      replace(kGood, "dims = 2x2x1\n", ""), replace(kGood, "coord = 1,0,0", "coord = 9,9,9"),
      replace(kGood, "dims = 2x2x1", "dims = 0x2x1"), replace(kGood, "port1 x- sim", "port1 x+ sim"),
  };
  for (const auto& text : bad) {
    const std::string e = err(text);
    CHECK_FALSE(e.empty());
    CHECK_TEXT(e.find('\n') == std::string::npos, e.c_str());
  }
}

TEST(Personality, FromFlags) {
  auto r = parse_personality_args({"--dims", "2x1x1", "--coord", "1.0.0", "--job", "train", "--port",
                                   "a:x+:memif:/run/a.sock", "--port", "b:x-:pci:0000:00:04.0", "--arg",
                                   "count=10"});
  CHECK_TRUE_TEXT(r.is_ok(), r.status().message().c_str());
  STRCMP_EQUAL("/run/a.sock", r->ports[0].address.c_str());
  STRCMP_EQUAL("0000:00:04.0", r->ports[1].address.c_str());  // colons kept in the address
  STRCMP_EQUAL("pci", r->ports[1].driver.c_str());
  STRCMP_EQUAL("10", r->job_args.at("count").c_str());
  auto bad = parse_personality_args({"--dims", "2x1x1", "--coord", "1,0,0", "--jobb", "x"});
  CHECK_FALSE(bad.is_ok());
  CHECK(contains(bad.status().message(), "unknown option '--jobb'"));
  auto missing = parse_personality_args({"--dims", "2x1x1", "--coord", "1,0,0"});
  CHECK(contains(missing.status().message(), "missing field 'job'"));
}

// Found by fuzzing (tests/fuzz/personality_fuzz.cc): a flag's value went
// into the file form as is, so a line break in it added a line of its own
// (here an extra job argument), a '#' cut it short and a vertical tab split
// it, unseen.
TEST(Personality, FlagValuesCannotAddLinesOrComments) {
  const std::vector<std::string> base = {"--dims", "1x1x1", "--coord", "0,0,0"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = base;
    a.insert(a.end(), more.begin(), more.end());
    return parse_personality_args(a);
  };
  auto injected = with({"--job", "selftest\narg = level full"});
  CHECK_FALSE(injected.is_ok());
  STRCMP_CONTAINS("personality: --job: a value cannot hold '#' or a control character (0x0a)",
                  injected.status().message().c_str());
  auto cut = with({"--job", "train", "--arg", "level=quick#full"});
  CHECK_FALSE(cut.is_ok());
  STRCMP_CONTAINS("--arg: a value cannot hold '#' or a control character (0x23)", cut.status().message().c_str());
  CHECK_FALSE(with({"--job", "train", "--partition", "p\rq"}).is_ok());
  CHECK_FALSE(with({"--job", "train", "--arg", "level=\vfull"}).is_ok());
  auto ok = with({"--job", "train", "--arg", "level=quick"});
  CHECK_TRUE_TEXT(ok.is_ok(), ok.status().message().c_str());
  LONGS_EQUAL(1, ok->job_args.size());
}

// Found by the personality fuzz target: "--arg '6vvv- uul='" was read as
// the key "6vvv-" with the value "uul" (the file form splits at blanks).
TEST(Personality, ArgFlagWithABlankInsideTheKeyOrValueIsRefused) {
  const std::vector<std::string> base = {"--dims", "1x1x1", "--coord", "0,0,0", "--job", "train", "--arg"};
  auto with = [&](const std::string& arg) {
    std::vector<std::string> a = base;
    a.push_back(arg);
    return parse_personality_args(a);
  };
  auto key = with("6vvv- uul=");
  CHECK_FALSE(key.is_ok());
  STRCMP_CONTAINS("personality: --arg '6vvv- uul=': KEY=VALUE takes no blank inside the key or the value",
                  key.status().message().c_str());
  CHECK_FALSE(with("level=quick full").is_ok());
  auto trimmed = with(" level = quick ");
  CHECK_TRUE_TEXT(trimmed.is_ok(), trimmed.status().message().c_str());
  STRCMP_EQUAL("quick", trimmed->job_args.at("level").c_str());
  auto blank_form = with("level quick");  // KEY VALUE, the file's form
  CHECK_TRUE_TEXT(blank_form.is_ok(), blank_form.status().message().c_str());
  STRCMP_EQUAL("quick", blank_form->job_args.at("level").c_str());
}

TEST(Personality, FromFileWithFlagOverride) {
  char path[] = "/tmp/toroid-personality-XXXXXX";
  const int fd = mkstemp(path);
  CHECK(fd >= 0);
  FILE* f = fdopen(fd, "w");
  fputs(kGood, f);
  fclose(f);
  auto r = parse_personality_args({"--personality", path, "--coord", "0,1,0"});
  CHECK_TRUE_TEXT(r.is_ok(), r.status().message().c_str());
  CHECK(r->coord == (Coord{{0, 1, 0}}));
  auto file = parse_personality_file(path);
  CHECK(file.is_ok());
  remove(path);
  auto gone = parse_personality_file(path);
  CHECK(contains(gone.status().message(), "cannot open"));
}

TEST(Personality, DefaultPortsCoverEveryLink) {
  LONGS_EQUAL(6, default_ports(Dims{{2, 2, 2}}, "sim").size());
  LONGS_EQUAL(2, default_ports(Dims{{8, 1, 1}}, "sim").size());
  LONGS_EQUAL(0, default_ports(Dims{{1, 1, 1}}, "sim").size());
  Personality p;
  p.dims = Dims{{3, 1, 5}};
  p.coord = Coord{{2, 0, 4}};
  p.has_dims = p.has_coord = true;
  p.job = "selftest";
  p.ports = default_ports(p.dims, "sim");
  CHECK(validate(p).is_ok());
}

TEST(Personality, PartitionIdIsOptionalCheckedAndRoundTrips) {
  auto r = parse_personality_text(std::string(kGood) + "partition = lab-a.2\n", "p.txt");
  CHECK_TRUE_TEXT(r.is_ok(), r.status().message().c_str());
  STRCMP_EQUAL("lab-a.2", r->partition.c_str());
  STRCMP_EQUAL("partition lab-a.2 dims 2x2x1 coord 1,0,0 job selftest seed 42 ports port0=x+ port1=x- port2=y+ port3=y-",
               r->describe().c_str());
  auto back = parse_personality_text(personality_text(r.value(), "round trip"), "back.txt");
  CHECK_TRUE_TEXT(back.is_ok(), back.status().message().c_str());
  STRCMP_EQUAL(r->describe().c_str(), back->describe().c_str());
  CHECK(contains(err(std::string(kGood) + "partition = lab/a\n"), "partition id 'lab/a' holds '/'"));
  CHECK(contains(err(std::string(kGood) + "partition = " + std::string(33, 'p') + "\n"), "longer than 32"));
  CHECK(contains(err(std::string(kGood) + "partition =\n"), "p.txt line 10: empty partition id"));
  auto a = parse_personality_args({"--dims", "2x1x1", "--coord", "0,0,0", "--job", "train", "--partition", "p7",
                                   "--port", "p0:x+:sim", "--port", "p1:x-:sim"});
  CHECK_TRUE_TEXT(a.is_ok(), a.status().message().c_str());
  STRCMP_EQUAL("p7", a->partition.c_str());
}

TEST(Personality, PortAttributesAreReadInAnyOrderAfterTheAddress) {
  auto r = parse_personality_text(
      "dims = 2x1x1\ncoord = 0,0,0\njob = train\n"
      "port = port0 x+ af_xdp iface=ens1f0,queue=1 numa=1 mtu=1500 cable=A7\n"
      "port = port1 x- pci cable=A8 0000:3b:00.1\n",
      "p.txt");
  CHECK_TRUE_TEXT(r.is_ok(), r.status().message().c_str());
  STRCMP_EQUAL("iface=ens1f0,queue=1", r->ports[0].address.c_str());
  UNSIGNED_LONGS_EQUAL(1500, r->ports[0].mtu);
  LONGS_EQUAL(1, r->ports[0].numa);
  STRCMP_EQUAL("A7", r->ports[0].cable.c_str());
  STRCMP_EQUAL("0000:3b:00.1", r->ports[1].address.c_str());
  LONGS_EQUAL(-1, r->ports[1].numa);
  UNSIGNED_LONGS_EQUAL(0, r->ports[1].mtu);
  CHECK(contains(err("dims = 2x1x1\ncoord = 0,0,0\njob = t\nport = p0 x+ sim mtu=20000\nport = p1 x- sim\n"),
                 "p.txt line 4: port p0: mtu '20000' must be 68..9000"));
  CHECK(contains(err("dims = 2x1x1\ncoord = 0,0,0\njob = t\nport = p0 x+ pci a b\nport = p1 x- sim\n"),
                 "port needs 'NAME DIR DRIVER [ADDRESS] [mtu=N] [numa=N] [cable=LABEL]'"));
}
