"""Counts test cases from meson's testlog.json and prints `./toroid test`'s summary.

Per test executable (one JSON record per line in DIR/meson-logs/testlog.json):
  a CppUTest summary line "OK (...)" / "Errors (...)", or Python unittest's
  "Ran N tests" with "OK" / "FAILED (...)", found in its output:
      passed += ran - failures - S, failed += failures, skipped += ignored + S
      where S counts the "SKIP Group.Name: reason" lines of CppUTest tests that
      found they cannot run here (tests/skip.h); they never count as passed
  no summary line: 1 passed or 1 failed, by meson's result
  meson result FAIL/TIMEOUT/ERROR/...: at least 1 failed
  meson result SKIP (exit 77): 1 skipped
The summary ends with the line "N passed, N failed[, N skipped]".
"""
import json
import os
import re

# "OK (12 tests, 12 ran, 30 checks, 0 ignored, 0 filtered out, 5 ms)"
# "Errors (2 failures, 12 tests, 12 ran, 28 checks, 0 ignored, 0 filtered out, 7 ms)"
CPPUTEST = re.compile(
    r"(OK|Errors) \((?:(\d+) failures?, |ran nothing, )?(\d+) tests?, (\d+) ran, "
    r"(\d+) checks?, (\d+) ignored, (\d+) filtered out, (\d+) ms\)")
# "Ran 12 tests in 0.015s" then, after a blank line, "OK", "OK (skipped=2)" or
# "FAILED (failures=1, errors=1, skipped=2, expected failures=1, unexpected successes=1)"
UNITTEST = re.compile(r"^Ran (\d+) tests? in [0-9.]+s\s*\n\s*\n(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.M)
PASSING = {"OK", "EXPECTEDFAIL"}
# "SKIP Group.Name: reason" on a line of its own, printed by TOROID_SKIP
# (tests/skip.h) in a test that cannot run here; CppUTest counts it as run.
RUNTIME_SKIP = re.compile(r"^SKIP [A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*: ", re.M)
# Lines that say what failed inside an executable: CppUTest's
# "file.cc:12: error: Failure in TEST(Group, Name)", a sanitizer's report,
# a unittest "FAIL: test_x (mod.Class)" / "ERROR: ...".
DETAIL = re.compile(r"^(?:.*error: Failure in TEST\(.*|.*ERROR: \w+Sanitizer.*|.*runtime error: .*"
                    r"|(?:FAIL|ERROR): test\w* \(.*)$", re.M)
MAX_DETAILS = 8


class Counts:
    def __init__(self, passed=0, failed=0, skipped=0):
        self.passed, self.failed, self.skipped = passed, failed, skipped

    def __eq__(self, other):
        return (self.passed, self.failed, self.skipped) == (other.passed, other.failed, other.skipped)

    def __repr__(self):
        return "Counts(%d passed, %d failed, %d skipped)" % (self.passed, self.failed, self.skipped)


def load(path):
    """The records of a testlog.json; lines that are not JSON are passed over."""
    records = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
    return records


def _summary(out):
    """(ran, failures, ignored) from the last summary line of either framework, or None.
    A CppUTest test that said SKIP (tests/skip.h) moves from ran to ignored."""
    last = None
    for m in CPPUTEST.finditer(out):
        ran, failures, ignored = int(m.group(4)), int(m.group(2) or 0), int(m.group(6))
        skips = min(len(RUNTIME_SKIP.findall(out, 0, m.start())), max(ran - failures, 0))
        last = (m.start(), ran - skips, failures, ignored + skips)
    for m in UNITTEST.finditer(out):
        if last is None or m.start() > last[0]:
            fields = dict((k.strip(), int(v)) for k, v in
                          (kv.split("=", 1) for kv in (m.group(3) or "").split(",") if "=" in kv))
            failures = fields.get("failures", 0) + fields.get("errors", 0) + fields.get("unexpected successes", 0)
            skipped = fields.get("skipped", 0)
            last = (m.start(), int(m.group(1)) - skipped, failures, skipped)
    return last[1:] if last else None


def count(record):
    """The test cases one executable's record stands for."""
    result = record.get("result", "ERROR")
    out = record.get("stdout") or ""
    if record.get("stderr"):
        out += "\n" + record["stderr"]
    found = _summary(out)
    if result == "SKIP":
        return Counts(skipped=1 + (found[2] if found else 0))
    if found:
        ran, failures, ignored = found
        failed = failures
        if result not in PASSING and failed == 0:
            failed = 1   # printed OK, then crashed, timed out or leaked
        return Counts(max(ran - failures, 0), failed, ignored)
    if result in PASSING:
        return Counts(passed=1)
    return Counts(failed=1)


def suite_of(record, suites_of, wanted=()):
    """The record's suite, without the project prefix: the first of its suites
    that was asked for, else its first."""
    suites = [s.split(":", 1)[-1] for s in record.get("suite") or []]
    name = record.get("name", "?")
    if " / " in name:   # "toroid:unit+other / name"
        head, name = name.split(" / ", 1)
        head = head.split(":", 1)[-1]
        if head and not suites:
            suites = head.split("+")
    suites = suites or suites_of.get(name) or ["(none)"]
    return next((s for s in suites if s in wanted), suites[0])


def details(record):
    """Up to MAX_DETAILS lines naming what failed in a failing executable's output."""
    out = (record.get("stdout") or "") + "\n" + (record.get("stderr") or "")
    found = [m.group(0).strip() for m in DETAIL.finditer(out)]
    more = len(found) - MAX_DETAILS
    lines = ["    " + line[:300] for line in found[:MAX_DETAILS]]
    if more > 0:
        lines.append("    ... and %d more" % more)
    return lines


def short_name(record):
    return record.get("name", "?").split(" / ", 1)[-1]


def summarize(records, suites_of, meson_status, log_path=None, wanted=()):
    """(LINES, STATUS): the per-suite table, the failing executables and the
    final count line; STATUS 0 when everything ran and passed, else 1.
    records is None when the log was not written; wanted: the suites asked for."""
    rows = {}      # suite -> [executables, passed, failed, skipped, seconds]
    failing = []
    for rec in records or []:
        c = count(rec)
        suite = suite_of(rec, suites_of, wanted)
        row = rows.setdefault(suite, [0, 0, 0, 0, 0.0])
        row[0] += 1
        row[1] += c.passed
        row[2] += c.failed
        row[3] += c.skipped
        row[4] += float(rec.get("duration") or 0.0)
        if c.failed:
            failing.append("  %s/%s: %s, %d failed" % (suite, short_name(rec), rec.get("result", "ERROR"), c.failed))
            failing += details(rec)

    lines = []
    total = [sum(r[i] for r in rows.values()) for i in range(5)]
    if rows:
        hdr = ("suite", "executables", "passed", "failed", "skipped", "seconds")
        width = max([len(hdr[0]), len("total")] + [len(s) for s in rows])
        fmt = "{:<%d}  {:>11}  {:>6}  {:>6}  {:>7}  {:>7}" % width
        lines += ["", fmt.format(*hdr)]
        for suite in sorted(rows):
            r = rows[suite]
            lines.append(fmt.format(suite, r[0], r[1], r[2], r[3], "%.2f" % r[4]))
        if len(rows) > 1:
            lines.append(fmt.format("total", total[0], total[1], total[2], total[3], "%.2f" % total[4]))
    if failing:
        lines += ["failing executables:"] + failing

    passed, failed, skipped = total[1], total[2], total[3]
    status = 1 if failed else 0
    if passed + failed == 0:
        if not suites_of:
            lines.append("test: no tests are defined in this build; treating as a failure")
        elif records is None:
            lines.append("test: no test results (%s not written; meson test exited %d)" % (log_path, meson_status))
        elif skipped:
            lines.append("test: no test ran (all %d skipped); treating as a failure" % skipped)
        else:
            lines.append("test: no test ran; treating as a failure")
        status = 1
    elif meson_status != 0 and not failed:
        lines.append("test: meson test exited with status %d" % meson_status)
        status = 1
    lines.append(final_line(passed, failed, skipped))
    return lines, status


def final_line(passed, failed, skipped=0):
    line = "%d passed, %d failed" % (passed, failed)
    return line + (", %d skipped" % skipped if skipped else "")


def summarize_file(log_path, suites_of, meson_status, wanted=()):
    records = load(log_path) if os.path.exists(log_path) else None
    return summarize(records, suites_of, meson_status, log_path, wanted)
