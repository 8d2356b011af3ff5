"""The test-log parser: counts per test case, the table, the final line, the status."""
import json
import os
import tempfile
import unittest

from toroid_cli import testlog

CPPUTEST_OK = "...\nOK (12 tests, 12 ran, 30 checks, 0 ignored, 0 filtered out, 5 ms)\n"
CPPUTEST_ERRORS = "Errors (2 failures, 12 tests, 11 ran, 28 checks, 1 ignored, 0 filtered out, 7 ms)\n"
UNITTEST_OK = "test_a (x.T.test_a) ... ok\n\n----------------------------------------------------------------------\n" \
              "Ran 7 tests in 0.015s\n\nOK (skipped=2)\n"
UNITTEST_FAILED = "----------------------------------------------------------------------\n" \
                  "Ran 9 tests in 0.100s\n\nFAILED (failures=1, errors=2, skipped=1, expected failures=1)\n"


def rec(name, result, out="", suite="unit", duration=1.0, stderr=None):
    r = {"name": name, "result": result, "stdout": out, "duration": duration, "suite": ["toroid:" + suite]}
    if stderr is not None:
        r["stderr"] = stderr
    return r


class CountTest(unittest.TestCase):
    def test_cpputest_ok_counts_ran_and_ignored(self):
        self.assertEqual(testlog.count(rec("a", "OK", CPPUTEST_OK)), testlog.Counts(12, 0, 0))

    def test_cpputest_errors_counts_failures(self):
        self.assertEqual(testlog.count(rec("a", "FAIL", CPPUTEST_ERRORS)), testlog.Counts(9, 2, 1))

    def test_last_summary_line_wins(self):
        out = CPPUTEST_ERRORS + "retry\n" + CPPUTEST_OK
        self.assertEqual(testlog.count(rec("a", "OK", out)), testlog.Counts(12, 0, 0))

    def test_ok_line_then_crash_is_one_failure(self):
        # Printed OK, then leaked under ASan or timed out: still a failure.
        self.assertEqual(testlog.count(rec("a", "TIMEOUT", CPPUTEST_OK)), testlog.Counts(12, 1, 0))

    def test_no_summary_counts_one_by_result(self):
        self.assertEqual(testlog.count(rec("a", "OK", "PASS\n")), testlog.Counts(1, 0, 0))
        self.assertEqual(testlog.count(rec("a", "EXPECTEDFAIL", "")), testlog.Counts(1, 0, 0))
        self.assertEqual(testlog.count(rec("a", "ERROR", "boom")), testlog.Counts(0, 1, 0))
        self.assertEqual(testlog.count({"name": "a"}), testlog.Counts(0, 1, 0))

    def test_skip_is_one_skipped_plus_ignored(self):
        self.assertEqual(testlog.count(rec("a", "SKIP", "SKIP: no tshark\n")), testlog.Counts(0, 0, 1))
        skipped_run = "OK (3 tests, 1 ran, 2 checks, 2 ignored, 0 filtered out, 1 ms)\n"
        self.assertEqual(testlog.count(rec("a", "SKIP", skipped_run)), testlog.Counts(0, 0, 3))

    def test_unittest_ok_with_skips(self):
        self.assertEqual(testlog.count(rec("cli", "OK", "", stderr=UNITTEST_OK)), testlog.Counts(5, 0, 2))

    def test_unittest_failed_counts_failures_and_errors(self):
        # 9 run, 1 skipped: 3 failed (1 failure + 2 errors), 5 passed (the expected failure among them).
        self.assertEqual(testlog.count(rec("cli", "FAIL", UNITTEST_FAILED)), testlog.Counts(5, 3, 1))

    def test_runtime_skip_lines_count_as_skipped_not_passed(self):
        # Two tests found they cannot run here (tests/skip.h): CppUTest counts
        # them as run and passed; they are skipped.
        out = ("..\nSKIP DpdkMemif.AfPacketOverAVethPair: creating a veth pair needs root\n."
               "\nSKIP Crc32c.FoldMatchesTheReferenceAtEveryLengthAndAlignment: no AVX-512\n"
               "..\nOK (12 tests, 12 ran, 30 checks, 1 ignored, 0 filtered out, 5 ms)\n")
        self.assertEqual(testlog.count(rec("a", "OK", out)), testlog.Counts(10, 0, 3))
        # A failing run: the skips still come off the passed ones.
        failing = "SKIP A.b: no root\n" + CPPUTEST_ERRORS
        self.assertEqual(testlog.count(rec("a", "FAIL", failing)), testlog.Counts(8, 2, 2))
        # Not a skip: mid-line, or without Group.Name.
        noise = "note: SKIP A.b: x\nSKIP: no tshark\nSKIP nothing here\n" + CPPUTEST_OK
        self.assertEqual(testlog.count(rec("a", "OK", noise)), testlog.Counts(12, 0, 0))
        # Skip lines after the summary line (another run) do not count for it.
        self.assertEqual(testlog.count(rec("a", "OK", CPPUTEST_OK + "SKIP A.b: late\n")), testlog.Counts(12, 0, 0))

    def test_cpputest_line_with_ran_nothing(self):
        out = "OK (ran nothing, 4 tests, 0 ran, 0 checks, 0 ignored, 4 filtered out, 0 ms)\n"
        self.assertEqual(testlog.count(rec("a", "OK", out)), testlog.Counts(0, 0, 0))


class SuiteTest(unittest.TestCase):
    def test_suite_from_record_then_name_then_introspection(self):
        self.assertEqual(testlog.suite_of({"suite": ["toroid:sim", "toroid:x"]}, {}), "sim")
        self.assertEqual(testlog.suite_of({"name": "toroid:host+other / rig"}, {}), "host")
        self.assertEqual(testlog.suite_of({"name": "plain"}, {"plain": ["qemu"]}), "qemu")
        self.assertEqual(testlog.suite_of({"name": "lost"}, {}), "(none)")
        # A test in two suites is counted under the one asked for.
        self.assertEqual(testlog.suite_of({"name": "toroid:unit+cli / cli"}, {}, ["cli"]), "cli")
        self.assertEqual(testlog.suite_of({"suite": ["toroid:unit", "toroid:cli"]}, {}, ["sim", "cli"]), "cli")
        self.assertEqual(testlog.suite_of({"name": "plain"}, {"plain": ["unit", "cli"]}, ["cli"]), "cli")
        self.assertEqual(testlog.short_name({"name": "toroid:unit / base"}), "base")


class SummarizeTest(unittest.TestCase):
    SUITES = {"a": ["unit"], "b": ["unit"], "c": ["sim"]}

    def test_table_failing_list_and_final_line(self):
        records = [rec("a", "OK", CPPUTEST_OK, duration=1.5), rec("b", "FAIL", CPPUTEST_ERRORS, duration=0.25),
                   rec("c", "SKIP", "", suite="sim", duration=0.01)]
        lines, status = testlog.summarize(records, self.SUITES, 1)
        self.assertEqual(status, 1)
        self.assertEqual(lines, [
            "",
            "suite  executables  passed  failed  skipped  seconds",
            "sim              1       0       0        1     0.01",
            "unit             2      21       2        1     1.75",
            "total            3      21       2        2     1.76",
            "failing executables:",
            "  unit/b: FAIL, 2 failed",
            "21 passed, 2 failed, 2 skipped",
        ])

    def test_failing_executable_names_its_failed_cases_bounded(self):
        out = "".join("\n/src/t.cc:%d: error: Failure in TEST(Grp, Case%d)\n\texpected <1>\n" % (i, i)
                      for i in range(10)) + CPPUTEST_ERRORS
        err = "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1\n"
        lines, _ = testlog.summarize([rec("b", "FAIL", out, stderr=err)], self.SUITES, 1)
        i = lines.index("failing executables:")
        self.assertEqual(lines[i + 1], "  unit/b: FAIL, 2 failed")
        self.assertEqual(lines[i + 2], "    /src/t.cc:0: error: Failure in TEST(Grp, Case0)")
        self.assertEqual(lines[i + 9], "    /src/t.cc:7: error: Failure in TEST(Grp, Case7)")
        self.assertEqual(lines[i + 10], "    ... and 3 more")
        self.assertEqual(lines[-1], "9 passed, 2 failed, 1 skipped")

    def test_one_suite_has_no_total_row_and_no_skip_count(self):
        lines, status = testlog.summarize([rec("a", "OK", CPPUTEST_OK)], self.SUITES, 0)
        self.assertEqual(status, 0)
        self.assertFalse(any(line.startswith("total") for line in lines))
        self.assertEqual(lines[-1], "12 passed, 0 failed")

    def test_meson_failure_without_failed_case_fails(self):
        lines, status = testlog.summarize([rec("a", "OK", CPPUTEST_OK)], self.SUITES, 3)
        self.assertEqual(status, 1)
        self.assertEqual(lines[-2:], ["test: meson test exited with status 3", "12 passed, 0 failed"])

    def test_nothing_ran_is_a_failure_with_the_reason(self):
        cases = [
            (None, {}, "test: no tests are defined in this build; treating as a failure"),
            (None, self.SUITES, "test: no test results (LOG not written; meson test exited 2)"),
            ([rec("c", "SKIP", "")], self.SUITES, "test: no test ran (all 1 skipped); treating as a failure"),
            ([], self.SUITES, "test: no test ran; treating as a failure"),
        ]
        for records, suites, reason in cases:
            lines, status = testlog.summarize(records, suites, 2, "LOG")
            self.assertEqual(status, 1, reason)
            self.assertEqual(lines[-2], reason)
            self.assertTrue(lines[-1].startswith("0 passed, 0 failed"), lines[-1])

    def test_log_file_lines_that_are_not_json_are_passed_over(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "testlog.json")
            with open(path, "w") as f:
                f.write(json.dumps(rec("a", "OK", CPPUTEST_OK)) + "\n\nnot json\n" +
                        json.dumps(rec("c", "FAIL", "", suite="sim")) + "\n")
            lines, status = testlog.summarize_file(path, self.SUITES, 1)
            self.assertEqual(lines[-1], "12 passed, 1 failed")
            self.assertEqual(status, 1)
            lines, status = testlog.summarize_file(os.path.join(d, "absent.json"), self.SUITES, 1)
            self.assertIn("absent.json not written", lines[-2])


if __name__ == "__main__":
    unittest.main()
