// The toroid-sim command line: exit statuses and messages, as scripts see them.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <CppUTest/TestHarness.h>

namespace {

struct Out {
  int status;
  std::string text;  // stdout and stderr together
};

// Runs toroid-sim with args under a wall-clock bound (no hang can pass).
Out sim(const std::string& args) {
  const char* bin = std::getenv("TOROID_SIM");
  CHECK_TEXT(bin != nullptr, "TOROID_SIM is not set (meson sets it)");
  const std::string cmd = std::string("timeout 120 ") + bin + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CHECK(p != nullptr);
  Out o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.text.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return o;
}

bool has(const Out& o, const char* s) { return o.text.find(s) != std::string::npos; }

std::string read_file(const std::string& path) {
  std::string s;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

}  // namespace

TEST_GROUP(SimCli){};

TEST(SimCli, SelftestPassesWithTableAndBootLines) {
  Out o = sim("--dims 2x2x2 --job selftest");
  LONGS_EQUAL_TEXT(0, o.status, o.text.c_str());
  CHECK(has(o, "[node 1,0,1] personality: dims 2x2x2 coord 1,0,1"));
  CHECK(has(o, "[node 1,0,1] trained 6 links"));
  char row[160];
  snprintf(row, sizeof row, "%-14s %-18s %-34s %-6s %-11s", "allreduce", "ring", "int64 sum n=1001 in-place", "PASS",
           "8/8");
  CHECK_TEXT(has(o, row), o.text.c_str());
  CHECK(has(o, "not applicable: "));  // some algorithm does not fit 2x2x2, and says why
  CHECK(has(o, "verdict: PASS (8/8 nodes passed)"));
}

TEST(SimCli, SwappedCableFailsBootNamingThePort) {
  Out o = sim("--dims 2x2x2 --job selftest --swap-ports 0.1.1:z+,z- --quiet");
  LONGS_EQUAL_TEXT(1, o.status, o.text.c_str());
  CHECK_TEXT(has(o, "node 0,1,1 port port4 (z-) is miswired"), o.text.c_str());
  CHECK(has(o, "verdict: FAIL"));
}

TEST(SimCli, DeadLinkFailsBootNamingThePort) {
  Out o = sim("--dims 2x2x1 --job selftest --faults linkdown=0.0.0:y+ --quiet");
  LONGS_EQUAL_TEXT(1, o.status, o.text.c_str());
  CHECK_TEXT(has(o, "node 0,0,0 port port2 (y+) is a dead link"), o.text.c_str());
}

TEST(SimCli, UsageErrorsNameTheProblem) {
  Out o = sim("--dims 2x2x2 --job selftest --faults dorp=0.1");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "unknown key 'dorp'"), o.text.c_str());
  o = sim("--dims 2x2x2 --job selftest --faults drop=1.5");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "drop"), o.text.c_str());
  o = sim("--dims 0x2x2 --job selftest");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "size 0"), o.text.c_str());
  o = sim("--dims 2x2x2 --job nope");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "unknown job 'nope'"), o.text.c_str());
  o = sim("--dims 2x2x2 --job selftest --frobnicate");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "unknown option '--frobnicate'"), o.text.c_str());
  o = sim("--job selftest");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "missing --dims"), o.text.c_str());
}

// Job arguments as toroid-rig takes them: --arg KEY=VALUE (a value left
// out or given apart is refused, never taken as something else), and
// --in-place bare or with the yes|no that --help shows.
TEST(SimCli, JobArgumentsAndInPlaceTakeTheFormsTheHelpGives) {
  Out o = sim("--dims 2x1x1 --job selftest --arg level=quick --quiet");
  LONGS_EQUAL_TEXT(0, o.status, o.text.c_str());
  CHECK_TEXT(has(o, "verdict: PASS"), o.text.c_str());
  o = sim("--dims 2x1x1 --job selftest --arg level quick --quiet");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "--arg 'level': expected KEY=VALUE"), o.text.c_str());
  struct Form {
    const char* text;
    bool in_place;
  };
  for (const Form f : {Form{"--in-place", true}, Form{"--in-place yes", true}, Form{"--in-place no", false},
                       Form{"--in-place=no", false}}) {
    o = sim(std::string("--dims 2x1x1 --job coll --coll allreduce --count 4 ") + f.text);
    LONGS_EQUAL_TEXT(0, o.status, (std::string(f.text) + ": " + o.text).c_str());
    CHECK_TEXT(has(o, "verdict: PASS"), o.text.c_str());
    CHECK_EQUAL_TEXT(f.in_place, has(o, "n=4 in-place"), (std::string(f.text) + ": " + o.text).c_str());
  }
  o = sim("--dims 2x1x1 --job coll --coll allreduce --count 4 --quiet --in-place maybe");
  LONGS_EQUAL(2, o.status);
}

// The self-test's --only: just the collectives, or algorithms, it names,
// each with all its cases; a name the library does not have is refused.
TEST(SimCli, SelftestOnlyRunsTheNamedCollectivesAndAlgorithms) {
  Out o = sim("--dims 2x2x1 --job selftest --only alltoall:pairwise,barrier --quiet");
  LONGS_EQUAL_TEXT(0, o.status, o.text.c_str());
  CHECK_TEXT(has(o, "cases: 25/25 passed on every node"), o.text.c_str());  // 6 barrier + 19 pairwise
  CHECK_TEXT(has(o, "alltoall       pairwise           int64 n=33 in-place m=3"), o.text.c_str());
  CHECK_TEXT(has(o, "barrier        dissemination      16 rounds"), o.text.c_str());
  CHECK_FALSE_TEXT(has(o, "bruck") || has(o, "allreduce ") || has(o, "xor-inplace"), o.text.c_str());
  o = sim("--dims 2x2x1 --job selftest --only allreduse --quiet");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "--only 'allreduse': unknown collective 'allreduse'"), o.text.c_str());
  o = sim("--dims 2x2x1 --job selftest --only alltoall:nope --quiet");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "alltoall has no algorithm 'nope' (xor-inplace, random-order, pairwise, bruck)"), o.text.c_str());
}

TEST(SimCli, HelpDescribesTheContractForms) {
  Out o = sim("--help");
  LONGS_EQUAL(0, o.status);
  CHECK(has(o, "--dims XxYxZ"));
  CHECK(has(o, "--faults SPEC"));
  CHECK(has(o, "linkdown=X.Y.Z:DIR@T"));
  CHECK(has(o, "--seed N"));
}

namespace {

// The sha256 values of the "result node=... sha256=HEX" lines.
std::vector<std::string> shas(const Out& o) {
  std::vector<std::string> v;
  size_t pos = 0;
  while ((pos = o.text.find("sha256=", pos)) != std::string::npos) {
    v.push_back(o.text.substr(pos + 7, 64));
    pos += 7;
  }
  return v;
}

}  // namespace

// --job coll with the user's own data: a raw little-endian file of 8 rows
// (one per linear rank) in, rank 0's result out; the same rows summed on
// three shapes give the same fingerprint on every node.
TEST(SimCli, CollJobTakesInputAndWritesOutput) {
  const std::string in = "/tmp/toroid-cli-coll-in.bin", out = "/tmp/toroid-cli-coll-out.bin";
  std::vector<int32_t> rows(8 * 5);
  for (int r = 0; r < 8; ++r)
    for (int i = 0; i < 5; ++i) rows[r * 5 + i] = (r + 1) * (i == 3 ? -1000 : 1) + i;
  FILE* f = std::fopen(in.c_str(), "wb");
  CHECK(f != nullptr);
  std::fwrite(rows.data(), sizeof(int32_t), rows.size(), f);
  std::fclose(f);
  std::string first;
  for (const char* dims : {"2x2x2", "8x1x1", "4x2x1"}) {
    std::remove(out.c_str());
    Out o = sim(std::string("--dims ") + dims + " --job coll --coll allreduce --dtype int32 --op sum --count 5 " +
                "--input " + in + " --output " + out + " --quiet");
    LONGS_EQUAL_TEXT(0, o.status, o.text.c_str());
    const auto h = shas(o);
    UNSIGNED_LONGS_EQUAL(8, h.size());
    for (const auto& x : h) STRCMP_EQUAL(h[0].c_str(), x.c_str());
    if (first.empty()) first = h[0];
    STRCMP_EQUAL(first.c_str(), h[0].c_str());
    const std::string got = read_file(out);
    UNSIGNED_LONGS_EQUAL(5 * sizeof(int32_t), got.size());
    for (int i = 0; i < 5; ++i) {
      int32_t v;
      std::memcpy(&v, got.data() + 4 * i, 4);
      LONGS_EQUAL(36 * (i == 3 ? -1000 : 1) + 8 * i, v);
    }
  }
  // A file of the wrong size is refused with the sizes named.
  Out o = sim("--dims 2x2x1 --job coll --coll allreduce --dtype int32 --count 5 --input " + in + " --quiet");
  LONGS_EQUAL(1, o.status);
  CHECK_TEXT(has(o, "160 bytes, expected 80 (4 nodes x 5 elements x 4 bytes of int32)"), o.text.c_str());
  std::remove(in.c_str());
  std::remove(out.c_str());
}

TEST(SimCli, CollJobOptionErrorsNameTheOption) {
  Out o = sim("--dims 2x2x2 --job coll --count 5");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "--job coll needs --coll NAME"), o.text.c_str());
  o = sim("--dims 2x2x2 --job coll --coll allreduce --dtype double --op band");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "band is defined for integer types only, not double"), o.text.c_str());
  o = sim("--dims 2x2x2 --job coll --coll alltoall --op sum");
  LONGS_EQUAL(2, o.status);
  CHECK_TEXT(has(o, "alltoall does not reduce"), o.text.c_str());
  o = sim("--dims 2x2x2 --job coll --coll allreduce --algo nope --quiet");
  LONGS_EQUAL(1, o.status);
  CHECK_TEXT(has(o, "unknown algorithm 'nope' (known: "), o.text.c_str());
  o = sim("--dims 2x1x1 --job coll --coll allreduce --blocking yes --quiet");
  LONGS_EQUAL(1, o.status);
  CHECK_TEXT(has(o, "blocking waits need a real-time rig"), o.text.c_str());
  o = sim("--dims 3x3x1 --job coll --coll allreduce --algo cube300 --quiet");
  LONGS_EQUAL(1, o.status);
  CHECK_TEXT(has(o, "not applicable: needs a 2x2x2 communicator"), o.text.c_str());
}

TEST(SimCli, ThreadsLinkModelAndScalingOptionsAreChecked) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"--dims 2x2x2 --job train --threads 0", "--threads '0' must be 1..64"},
      {"--dims 2x2x2 --job train --link-model cray", "--link-model 'cray': known models are default, bgl"},
      {"--dims 2x2x2,4x4x4 --job train", "a list of --dims is for --job scaling"},
      {"--dims 2x2x2 --job train --json x.json", "--json is an option of --job scaling"},
      {"--dims 2x2x2,4x0x1 --job scaling", "--dims '4x0x1'"},
      {"--dims 2x2x2 --job train --threads 2 --link-latency 0ns", "needs a link latency of at least 1 ns"},
      {"--dims 2x2x2 --job train --threads 2 --pcap cap-refused", "--pcap runs on one scheduler thread"},
      {"--dims 2x2x2 --job train --frame-bytes 255", "--frame-bytes '255' must be 256..9216"},
      {"--dims 2x2x2 --job train --frame-bytes 9217", "--frame-bytes '9217' must be 256..9216"},
      {"--dims 2x2x2 --job train --frame-bytes 1k", "--frame-bytes '1k' must be 256..9216"},
  };
  for (const auto& c : cases) {
    const Out o = sim(c.args);
    LONGS_EQUAL_TEXT(2, o.status, c.args);
    CHECK_TEXT(has(o, c.message), o.text.c_str());
  }
}

// The port's frame size is what the link layer fills: 8000-byte messages go
// as one data frame each with jumbo frames (the default), as nine or more at
// 1024 B (a frame carries at most 1024 B less its headers).
TEST(SimCli, FrameBytesSetsHowManyFramesAMessageTakes) {
  auto counter = [](const Out& o, const char* name) -> long {
    const size_t at = o.text.find(std::string(" ") + name + "=");
    return at == std::string::npos ? -1 : std::atol(o.text.c_str() + at + std::strlen(name) + 2);
  };
  const std::string args = "--dims 2x1x1 --job traffic --pattern neighbor --messages 4 --size 8000 --quiet";
  const Out jumbo = sim(args);
  const Out small = sim(args + " --frame-bytes 1024");
  LONGS_EQUAL_TEXT(0, jumbo.status, jumbo.text.c_str());
  LONGS_EQUAL_TEXT(0, small.status, small.text.c_str());
  CHECK_TEXT(has(jumbo, "delivered=8 "), jumbo.text.c_str());
  CHECK_TEXT(has(small, "delivered=8 "), small.text.c_str());
  const long j = counter(jumbo, "data_sent"), s = counter(small, "data_sent");
  CHECK_TEXT(j > 0 && s > 0, jumbo.text.c_str());
  LONGS_EQUAL_TEXT(8, j, jumbo.text.c_str());
  CHECK_TEXT(s >= 8 * 9, small.text.c_str());
}

// The same run on two threads: the same verdict, counters and trace hash.
TEST(SimCli, TwoThreadsPrintTheSameCountersAndHash) {
  auto tail = [](const Out& o) {
    const size_t at = o.text.find("medium:");
    const size_t end = o.text.find("verdict:");
    return at == std::string::npos || end == std::string::npos ? std::string() : o.text.substr(at, end - at);
  };
  const std::string args = "--dims 4x4x2 --job traffic --pattern uniform --faults drop=0.05,reorder=0.05 --quiet";
  const Out a = sim(args + " --threads 1");
  const Out b = sim(args + " --threads 2");
  LONGS_EQUAL(0, a.status);
  LONGS_EQUAL(0, b.status);
  CHECK(!tail(a).empty());
  STRCMP_EQUAL(tail(a).c_str(), tail(b).c_str());
}

// The scaling job: a row per shape and operation, BG/L's figures only at
// 65,536 nodes, heavy operations skipped with their reason, and JSON rows.
TEST(SimCli, ScalingJobPrintsARowPerShapeAndOperation) {
  const std::string json = "/tmp/toroid-cli-scaling-" + std::to_string(getpid()) + ".json";
  Out o = sim("--job scaling --link-model bgl --dims 2x2x2,4x4x2 --json " + json);
  LONGS_EQUAL_TEXT(0, o.status, o.text.c_str());
  CHECK_TEXT(has(o, "scaling on sim, link model bgl"), o.text.c_str());
  // bgl: 12 ns per barrier hop, 2 x depth hops (depth 3 on 2x2x2, 5 on 4x4x2).
  CHECK_TEXT(has(o, "2x2x2           8  barrier (barrier network)            PASS        0.07 us"), o.text.c_str());
  CHECK_TEXT(has(o, "4x4x2          32  barrier (barrier network)            PASS        0.12 us"), o.text.c_str());
  CHECK_TEXT(has(o, "alltoall int64 8 B"), o.text.c_str());
  CHECK_FALSE(has(o, "result node="));  // the per-node result lines are kept out of the table
  const std::string text = read_file(json);
  std::remove(json.c_str());
  CHECK_TEXT(text.find("\"link_model\": \"bgl\"") != std::string::npos, text.c_str());
  CHECK_TEXT(text.find("{\"dims\": \"2x2x2\", \"nodes\": 8, \"op\": \"barrier (barrier network)\", \"status\": "
                       "\"pass\", \"virtual_ns\": 72") != std::string::npos,
             text.c_str());
  CHECK_TEXT(text.find("{\"dims\": \"4x4x2\", \"nodes\": 32, \"op\": \"barrier (barrier network)\", \"status\": "
                       "\"pass\", \"virtual_ns\": 120") != std::string::npos,
             text.c_str());
  size_t rows = 0;
  for (size_t at = text.find("\"dims\""); at != std::string::npos; at = text.find("\"dims\"", at + 1)) ++rows;
  UNSIGNED_LONGS_EQUAL(10, rows);
}
