// The toroid-sim command line: exit statuses and messages, as scripts see them.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

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

}  // namespace

TEST_GROUP(SimCli){};

TEST(SimCli, SelftestPassesWithTableAndBootLines) {
  Out o = sim("--dims 2x2x2 --job selftest");
  LONGS_EQUAL_TEXT(0, o.status, o.text.c_str());
  CHECK(has(o, "[node 1,0,1] personality: dims 2x2x2 coord 1,0,1"));
  CHECK(has(o, "[node 1,0,1] trained 6 links"));
  CHECK(has(o, "allreduce   torus-ring   int64 sum n=8192     PASS   8/8"));
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

TEST(SimCli, HelpDescribesTheContractForms) {
  Out o = sim("--help");
  LONGS_EQUAL(0, o.status);
  CHECK(has(o, "--dims XxYxZ"));
  CHECK(has(o, "--faults SPEC"));
  CHECK(has(o, "linkdown=X.Y.Z:DIR@T"));
  CHECK(has(o, "--seed N"));
}
