"""./toroid fuzz: the parser and its usage errors, the target list against
tests/fuzz (meson targets, seed corpora), the libFuzzer arguments, and the
summary read from a libFuzzer log; all before anything is built."""
import os
import re
import unittest

from toroid_cli import cmd_fuzz
from tests.test_parsers import ROOT, parser, run_main


def parse(argv):
    p = parser("fuzz")
    args = p.parse_args(argv)
    return args, cmd_fuzz.check_args(p, args)


class FuzzParseTest(unittest.TestCase):
    def test_default_is_every_target_for_the_default_time(self):
        args, targets = parse([])
        self.assertEqual(targets, list(cmd_fuzz.TARGETS))
        self.assertEqual(cmd_fuzz.libfuzzer_args(args), ["-max_total_time=%d" % cmd_fuzz.DEFAULT_SECONDS])

    def test_targets_in_order_once_each(self):
        args, targets = parse(["p2p-message", "link-frame", "p2p-message", "--runs", "10000000"])
        self.assertEqual(targets, ["p2p-message", "link-frame"])
        self.assertEqual(cmd_fuzz.libfuzzer_args(args), ["-runs=10000000"])

    def test_seconds(self):
        args, _ = parse(["--seconds", "20", "topology"])
        self.assertEqual(cmd_fuzz.libfuzzer_args(args), ["-max_total_time=20"])

    def test_runs_and_seconds_stop_at_the_first(self):
        args, _ = parse(["--runs", "10000000", "--seconds", "840"])
        self.assertEqual(cmd_fuzz.libfuzzer_args(args), ["-max_total_time=840", "-runs=10000000"])

    def test_usage_errors(self):
        for argv, message in [
            (["fuzz", "nope"], "toroid: fuzz: unknown target 'nope' (targets: " + " ".join(cmd_fuzz.TARGETS) + ")"),
            (["fuzz", "--reproduce", "f", "topology", "--runs", "9"], "--reproduce runs the input once: no --seconds or --runs"),
            (["fuzz", "--seconds", "0"], "expected a positive whole number, got '0'"),
            (["fuzz", "--runs", "1e6"], "expected a positive whole number, got '1e6'"),
            (["fuzz", "--list", "topology"], "toroid: fuzz: --list takes no TARGET and no other option"),
            (["fuzz", "--list", "--seconds", "3"], "toroid: fuzz: --list takes no TARGET and no other option"),
            (["fuzz", "--reproduce", "f"], "toroid: fuzz: --reproduce needs exactly one TARGET"),
            (["fuzz", "link-frame", "topology", "--reproduce", "f"], "--reproduce needs exactly one TARGET"),
            (["fuzz", "--seconds"], "toroid: fuzz: --seconds needs a value"),
        ]:
            with self.subTest(argv=argv):
                status, out, err = run_main(argv)
                self.assertEqual(status, 2)
                self.assertIn(message, err)
                self.assertIn("(see ./toroid fuzz --help)", err)
                self.assertEqual(out, "")

    def test_list_builds_nothing(self):
        status, out, err = run_main(["fuzz", "--list"])
        self.assertEqual(status, 0, err)
        self.assertEqual([line.split()[0] for line in out.splitlines()], list(cmd_fuzz.TARGETS))

    def test_help_names_every_target(self):
        status, out, _ = run_main(["fuzz", "--help"])
        self.assertEqual(status, 0)
        for t in cmd_fuzz.TARGETS:
            self.assertIn("\n  %s " % t, out)


class FuzzTreeTest(unittest.TestCase):
    def test_meson_builds_exactly_these_targets(self):
        with open(os.path.join(ROOT, "tests", "fuzz", "meson.build")) as f:
            text = f.read()
        self.assertEqual(re.findall(r"^  '([a-z0-9-]+)' : \{'src'", text, re.M), list(cmd_fuzz.TARGETS))

    def test_every_target_has_seeds_in_the_tree(self):
        for t in cmd_fuzz.TARGETS:
            with self.subTest(target=t):
                d = os.path.join(ROOT, cmd_fuzz.CORPUS_REL, t)
                self.assertTrue(os.path.isdir(d), d)
                self.assertGreater(len(os.listdir(d)), 0)


LOG = """\
INFO: Seed: 1234
INFO: Loaded 1 modules   (20563 inline 8-bit counters)
#2\tINITED cov: 120 ft: 130 corp: 1/1b exec/s: 0 rss: 40Mb
#4096\tpulse  cov: 640 ft: 2500 corp: 300/20Kb lim: 589 exec/s: 2048 rss: 120Mb
#217837\tDONE   cov: 675 ft: 2699 corp: 488/37Kb lim: 616 exec/s: 3571 rss: 301Mb
Done 217837 runs in 61 second(s)
stat::number_of_executed_units: 217837
stat::average_exec_per_sec:     3571
stat::new_units_added:          864
"""

CRASH_LOG = """\
#1000\tNEW    cov: 300 ft: 900 corp: 50/2Kb lim: 100 exec/s: 500 rss: 60Mb L: 9/90 MS: 1 ChangeBit-
==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011
SUMMARY: AddressSanitizer: heap-buffer-overflow netstack/p2p_recv.cc:229
artifact_prefix='run/fuzz/p2p-message/'; Test unit written to run/fuzz/p2p-message/crash-da39a3ee
stat::number_of_executed_units: 1042
stat::average_exec_per_sec:     521
"""


class SummaryTest(unittest.TestCase):
    def test_clean_run(self):
        s = cmd_fuzz.summarize(LOG)
        self.assertEqual((s["runs"], s["exec_per_sec"], s["cov"], s["ft"], s["artifacts"]), (217837, 3571, 675, 2699, []))
        line, crashed = cmd_fuzz.result_line("link-frame", s, 0)
        self.assertEqual(crashed, 0)
        self.assertEqual(line.split(), ["link-frame", "217837", "runs", "3571", "exec/s", "cov", "675", "ft", "2699",
                                        "crashes", "0"])

    def test_crash_names_its_input(self):
        s = cmd_fuzz.summarize(CRASH_LOG)
        self.assertEqual(s["artifacts"], ["run/fuzz/p2p-message/crash-da39a3ee"])
        self.assertEqual((s["runs"], s["cov"]), (1042, 300))
        self.assertEqual(cmd_fuzz.result_line("p2p-message", s, 1)[1], 1)

    def test_failed_run_without_artifact_counts_as_crash(self):
        self.assertEqual(cmd_fuzz.result_line("topology", cmd_fuzz.summarize(""), 77)[1], 1)


if __name__ == "__main__":
    unittest.main()
