"""./toroid test [--debug|--asan] [SUITE...]: meson test, counted per test case."""
import json
import os
import subprocess

from . import build, packages, testlog
from .common import Failure, parse_strict, run_child, say, usage

NAME = "test"
SYNOPSIS = ["[--debug|--asan] [SUITE...]"]
SUMMARY = ("setup + build, run the test suites (default: all), print a per-suite summary; the last "
           "line of output is \"N passed, N failed[, N skipped]\"")
NEEDS_TREE = True


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Runs setup + build (same build dirs as `%s build`), then
  meson test -C DIR --print-errorlogs --no-rebuild [--suite SUITE ...]
for the named suites (default: every suite), e.g. unit, sim. An unknown suite
name is an error that lists the suites meson knows.

Afterwards prints a per-suite table (executables, passed, failed, skipped,
seconds) counted per test case, the failing executables, and as the very
last line:  N passed, N failed[, N skipped]

Counting, per test executable (from DIR/meson-logs/testlog.json):
  CppUTest summary line "OK (...)" / "Errors (...)" found, or Python
  unittest's "Ran N tests" and "OK" / "FAILED (...)":
      passed += ran - failures - S, failed += failures, skipped += ignored + S
      where S counts the "SKIP Group.Name: reason" lines of tests that
      found they cannot run here (tests/skip.h); they never count as passed
  no summary line: 1 passed or 1 failed, by meson's result
  meson result FAIL/TIMEOUT/ERROR/...: at least 1 failed
  meson result SKIP (exit 77): 1 skipped

--asan runs with UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 unless set.""" % prog,
                       epilog="""\
exit status: 0 all passed, 1 a failure, meson test failed, or no test ran,
             2 usage error or unknown suite""")
    build.add_variant_options(p)
    p.add_argument("suites", nargs="*", metavar="SUITE",
                   help="a meson test suite: unit, sim, host, qemu, install, deploy, ... (default: all)")
    return p


def introspect(build_path):
    """test name -> its suites without the project prefix, from meson introspect."""
    try:
        r = subprocess.run(["meson", "introspect", "--tests", build_path], stdout=subprocess.PIPE, text=True)
        tests = json.loads(r.stdout) if r.returncode == 0 else None
    except (OSError, ValueError):
        tests = None
    if tests is None:
        raise Failure("test: meson introspect --tests %s failed" % os.path.basename(build_path))
    return {t["name"]: [s.split(":", 1)[-1] for s in t.get("suite", [])] for t in tests}


def run(ctx, argv):
    args = parse_strict(ctx.parser(NAME), argv, intermixed=True)
    variant = args.variant or "release"
    suites = [s.split(":", 1)[-1] if s.startswith("toroid:") else s for s in args.suites]
    out = ctx.out
    build.setup(ctx.paths, out)
    if not suites or "host" in suites:
        # The host suite draws a bench plot (tests/host/bench_rig_test.cc).
        packages.install_packages("test (host suite: the bench plot)", packages.PLOT_PACKAGES, out)
    if not suites or "deploy" in suites:
        packages.install_slurm("the deploy suite", out)
    try:
        build.build(ctx.paths, variant, out)
    except Failure:
        say(out, "test: build failed in %s/; no tests ran" % build.build_dir(variant))
        say(out, testlog.final_line(0, 0))
        return 1

    dir_name = build.build_dir(variant)
    path = os.path.join(ctx.paths.root, dir_name)
    suites_of = introspect(path)
    known = sorted({s for ss in suites_of.values() for s in ss})
    for s in suites:
        if s not in known:
            raise Failure("test: unknown suite '%s' (known suites: %s)" % (s, " ".join(known) or "none defined"),
                          status=2)

    cmd = ["meson", "test", "-C", dir_name, "--print-errorlogs", "--no-rebuild"]
    for s in args.suites:
        cmd += ["--suite", s]
    env = dict(os.environ)
    if variant == "asan":
        env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    log = os.path.join(path, "meson-logs", "testlog.json")
    if os.path.exists(log):
        os.remove(log)
    meson_status = run_child(cmd, cwd=ctx.paths.root, env=env)

    lines, status = testlog.summarize_file(log, suites_of, meson_status, suites)
    for line in lines:
        say(out, line)
    return status
