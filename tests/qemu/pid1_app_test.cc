// The application of a guest node (firmware/pid1_app.h): its description
// file, the personality and environment PID 1 hands it, and running it
// (real child processes: output relayed as app.out/app.err lines, exit
// status, signal, timeout). The qemu-mpi-* tests of this suite run it in VMs.

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "firmware/personality.h"
#include "firmware/pid1.h"
#include "firmware/pid1_app.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

std::string app_error(const std::string& text) {
  auto r = parse_guest_app(text, "/etc/toroid-app");
  return r ? std::string("(parsed)") : r.status().message();
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& e : v)
    if (e == s) return true;
  return false;
}

// Runs the app with fd 1 captured: what PID 1 would put on the console.
AppExit run_captured(const GuestApp& app, std::string* console) {
  char path[] = "/tmp/toroid-pid1-app-XXXXXX";
  const int fd = mkstemp(path);
  unlink(path);
  fflush(stdout);
  const int saved = dup(1);
  dup2(fd, 1);
  AppExit r = run_guest_app(app, {"PATH=/usr/bin:/bin", "GREETING=hello there"});
  dup2(saved, 1);
  close(saved);
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  console->clear();
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) console->append(buf, static_cast<size_t>(n));
  close(fd);
  return r;
}

GuestApp shell(const std::string& script, uint64_t timeout_ns = 20ull * 1000 * 1000 * 1000) {
  GuestApp a;
  a.exec = "/bin/sh";
  a.args = {"-c", script};
  a.timeout_ns = timeout_ns;
  return a;
}

}  // namespace

TEST_GROUP(GuestApp){};

TEST(GuestApp, ParsesEveryKeyValuesToTheEndOfTheLine) {
  auto r = parse_guest_app(
      "# written by the launcher\nexec /app/bin/heat3d\narg 20\narg two words\narg \nenv TOROID_REPRO=exact\n"
      "env X=a=b\ntimeout 90s\n",
      "f");
  CHECK_TRUE(static_cast<bool>(r));
  STRCMP_EQUAL("/app/bin/heat3d", r->exec.c_str());
  LONGS_EQUAL(3, r->args.size());
  STRCMP_EQUAL("two words", r->args[1].c_str());
  STRCMP_EQUAL("", r->args[2].c_str());
  LONGS_EQUAL(2, r->env.size());
  STRCMP_EQUAL("X=a=b", r->env[1].c_str());
  CHECK_EQUAL(90ull * 1000 * 1000 * 1000, r->timeout_ns);
  CHECK_EQUAL(600ull * 1000 * 1000 * 1000, parse_guest_app("exec /p\n", "f")->timeout_ns);
}

TEST(GuestApp, BadDescriptionsAreRefusedNamingTheLine) {
  STRCMP_EQUAL("/etc/toroid-app: no exec line (the program to run)", app_error("arg 1\n").c_str());
  STRCMP_CONTAINS("line 2: exec given twice", app_error("exec /a\nexec /b\n").c_str());
  STRCMP_CONTAINS("line 1: exec needs the program's absolute path", app_error("exec app\n").c_str());
  STRCMP_CONTAINS("line 2: env needs KEY=VALUE, got 'NOVALUE'", app_error("exec /a\nenv NOVALUE\n").c_str());
  STRCMP_CONTAINS("line 2: timeout '10' is not a duration", app_error("exec /a\ntimeout 10\n").c_str());
  STRCMP_CONTAINS("line 2: unknown key 'cwd'", app_error("exec /a\ncwd /tmp\n").c_str());
  STRCMP_CONTAINS("line 2: arg needs a value", app_error("exec /a\narg\n").c_str());
}

TEST(GuestApp, PersonalityAndEnvironmentComeFromTheKernelCommandLine) {
  auto c = parse_guest_cmdline(
      "toroid.dims=2x2x1 toroid.coord=1,1,0 toroid.job=train toroid.seed=9 "
      "toroid.ports=x+@00:04.0,x-@00:05.0,y+@00:06.0,y-@00:07.0 toroid.train_timeout=80s toroid.linger=3s "
      "toroid.link_timeout=5000ms toroid.eal_log=info toroid.app=/etc/toroid-app");
  CHECK_TRUE(static_cast<bool>(c));
  STRCMP_EQUAL("/etc/toroid-app", c->app.c_str());
  const std::vector<std::string> addrs = {"0000:00:04.0", "0000:00:05.0", "0000:00:06.0", "0000:00:07.0"};
  auto text = guest_app_personality(*c, addrs);
  CHECK_TRUE(static_cast<bool>(text));
  // What the MPI library reads back (parse_personality_file in MPI_Init).
  auto p = parse_personality_text(*text, "personality");
  CHECK_TRUE(static_cast<bool>(p));
  STRCMP_EQUAL("1,1,0", p->coord.to_string().c_str());
  LONGS_EQUAL(4, p->dims.nodes());
  STRCMP_EQUAL("train", p->job.c_str());
  LONGS_EQUAL(9, p->seed);
  LONGS_EQUAL(4, p->ports.size());
  STRCMP_EQUAL("pci", p->ports[2].driver.c_str());
  STRCMP_EQUAL("0000:00:06.0", p->ports[2].address.c_str());
  STRCMP_EQUAL("y+", dir_name(p->ports[2].dir));

  GuestApp app;
  app.exec = "/app/bin/cg";
  app.env = {"TOROID_MPI_EAL_LOG=error", "TOROID_REPRO=exact"};
  const auto env = guest_app_env(*c, app, "/run/toroid/personality");
  CHECK_TRUE(has(env, "TOROID_MPI_PERSONALITY=/run/toroid/personality"));
  CHECK_TRUE(has(env, "TOROID_MPI_TRAIN_TIMEOUT=80s"));
  CHECK_TRUE(has(env, "TOROID_MPI_LINK_TIMEOUT=5000ms"));
  CHECK_TRUE(has(env, "TOROID_MPI_LINGER=3s"));
  CHECK_TRUE(has(env, "TOROID_REPRO=exact"));
  // The app's own setting wins over the command line's.
  CHECK_TRUE(has(env, "TOROID_MPI_EAL_LOG=error"));
  CHECK_FALSE(has(env, "TOROID_MPI_EAL_LOG=info"));

  auto k = parse_guest_cmdline(
      "toroid.dims=2x1x1 toroid.coord=0,0,0 toroid.job=train toroid.net=kernel toroid.ports=x+@00:04.0,x-@00:05.0");
  auto kt = guest_app_personality(*k, {"eth1", "eth0"});
  CHECK_TRUE(static_cast<bool>(kt));
  auto kp = parse_personality_text(*kt, "personality");
  STRCMP_EQUAL("uring", kp->ports[0].driver.c_str());
  STRCMP_EQUAL("iface=eth1", kp->ports[0].address.c_str());
  STRCMP_CONTAINS("toroid.app=app", parse_guest_cmdline("toroid.app=app").status().message().c_str());
}

TEST(GuestApp, RunsTheProgramRelayingEachStreamAndItsStatus) {
  std::string console;
  AppExit r = run_captured(shell("echo \"$GREETING\"; echo oops >&2; printf 'no newline'; exit 3"), &console);
  LONGS_EQUAL(3, r.status);
  STRCMP_EQUAL("exited with status 3", r.why.c_str());
  STRCMP_CONTAINS("app.out: hello there\n", console.c_str());
  STRCMP_CONTAINS("app.err: oops\n", console.c_str());
  STRCMP_CONTAINS("app.out: no newline\n", console.c_str());

  r = run_captured(shell("exit 0"), &console);
  LONGS_EQUAL(0, r.status);
  STRCMP_EQUAL("", r.why.c_str());

  r = run_captured(shell("kill -SEGV $$"), &console);
  LONGS_EQUAL(128 + 11, r.status);
  STRCMP_EQUAL("was killed by SIGSEGV (status 139)", r.why.c_str());

  GuestApp missing;
  missing.exec = "/nonexistent/program";
  r = run_captured(missing, &console);
  LONGS_EQUAL(127, r.status);
  STRCMP_CONTAINS("app.err: exec /nonexistent/program: No such file or directory", console.c_str());
}

TEST(GuestApp, AProgramPastItsTimeoutIsKilledWithItsChildren) {
  std::string console;
  // A child that keeps the pipes open must not hold PID 1 either.
  AppExit r = run_captured(shell("echo started; sleep 30 & sleep 30", 300ull * 1000 * 1000), &console);
  LONGS_EQUAL(137, r.status);
  STRCMP_CONTAINS("did not exit within 0.3 s (mpirun --timeout): killed", r.why.c_str());
  STRCMP_CONTAINS("app.out: started\n", console.c_str());
}
