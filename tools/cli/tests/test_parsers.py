"""The parsers: every command form, what goes to the binaries, and the usage errors
(exit status 2 and a message naming the problem), all before anything is built."""
import contextlib
import io
import os
import tempfile
import unittest

from toroid_cli import cmd_bench, cmd_mpirun, cmd_selftest, common, main

CLI_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(CLI_DIR))


def run_main(argv):
    """(status, stdout, stderr) of the CLI run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main.main(argv)
        except SystemExit as e:   # argparse's --help
            status = e.code
    return status, out.getvalue(), err.getvalue()


def parser(name):
    return main.build_parser("./toroid").subcommands.choices[name]


class PathsTest(unittest.TestCase):
    def test_source_tree(self):
        p = common.Paths()
        self.assertFalse(p.installed)
        self.assertEqual(p.root, ROOT)
        self.assertEqual(p.run_root, os.path.join(ROOT, "run"))
        self.assertEqual(p.binary("build", common.SIM_BIN_REL), os.path.join(ROOT, "build", "firmware", "toroid-sim"))
        self.assertEqual(p.invocation, "./toroid")

    def test_install_prefix(self):
        with tempfile.TemporaryDirectory() as prefix:
            cli = os.path.join(prefix, "share", "toroid", "cli")
            os.makedirs(cli)
            p = common.Paths(cli, env={"HOME": "/home/u"})
            self.assertTrue(p.installed)
            self.assertEqual(p.prefix, prefix)
            self.assertEqual(p.binary("build", common.RIG_BIN_REL), os.path.join(prefix, "bin", "toroid-rig"))
            self.assertEqual(p.share_dir, os.path.join(prefix, "share", "toroid"))
            self.assertEqual(p.run_root, "/home/u/.local/state/toroid/run")
            self.assertEqual(common.Paths(cli, env={"XDG_STATE_HOME": "/s"}).state_dir, "/s/toroid")
            self.assertEqual(p.invocation, "toroid")


class SplitTest(unittest.TestCase):
    def test_dashdash_that_is_a_value_does_not_split(self):
        p = parser("bench")
        self.assertEqual(common.split_passthrough(p, ["--json", "--", "--micro"]), (["--json", "--", "--micro"], []))
        self.assertEqual(common.split_passthrough(p, ["--micro", "--", "--json", "x"]), (["--micro"], ["--json", "x"]))
        self.assertEqual(common.split_passthrough(p, ["--json=--", "--", "a"]), (["--json=--"], ["a"]))

    def test_run_dir_added_unless_named(self):
        paths = common.Paths()
        self.assertEqual(common.with_run_dir(paths, ["--dims", "2x1x1"]),
                         ["--run-dir", paths.run_root, "--dims", "2x1x1"])
        self.assertEqual(common.with_run_dir(paths, ["--run-dir=/x"]), ["--run-dir=/x"])
        self.assertEqual(common.with_run_dir(paths, ["--run-dir", "/x"]), ["--run-dir", "/x"])


class BenchParseTest(unittest.TestCase):
    def plan(self, *argv):
        return cmd_bench.parse(parser("bench"), list(argv))

    def test_compare_sh_form(self):
        # ../shared/peers/compare.sh: --dims --frame --colls --sizes --with-link --json, then its extras.
        plan = self.plan("--dims", "2x2x2", "--frame", "9000", "--colls", "allreduce", "--sizes", "8,4194304",
                         "--with-link", "--json", "out/t.json", "--driver", "uring")
        self.assertEqual(plan.mode, "sweep")
        self.assertTrue(plan.with_link)
        self.assertEqual(plan.json, os.path.join(os.getcwd(), "out/t.json"))
        self.assertEqual(plan.rig_args(common.Paths(), plan.driver, "/t/s.json")[2:], [
            "--dims", "2x2x2", "--job", "bench", "--driver", "uring", "--quiet", "--timeout", "600s",
            "--frame", "9000", "--colls", "allreduce", "--sizes", "8,4194304", "--json", "/t/s.json"])

    def test_rig_options_keep_order_and_repeats_passthrough_last(self):
        plan = self.plan("--algos", "allreduce=torus-ring", "--reps=5", "--algos", "bcast=auto", "--wait", "idle",
                         "--dtype", "double", "--op", "max", "--repro", "exact", "--", "--timeout", "1200s")
        args = plan.rig_args(common.Paths(), "memif", "/j")
        self.assertEqual(args[11:], ["--algos", "allreduce=torus-ring", "--reps", "5", "--algos", "bcast=auto",
                                     "--wait", "idle", "--dtype", "double", "--op", "max", "--repro", "exact",
                                     "--json", "/j", "--timeout", "1200s"])

    def test_defaults(self):
        plan = self.plan()
        self.assertEqual((plan.mode, plan.dims, plan.driver, plan.drivers, plan.rounds, plan.with_link),
                         ("sweep", "2x1x1", "memif", ["memif"], 1, False))
        self.assertFalse(plan.several())

    def test_drivers_side_by_side_and_rounds(self):
        plan = self.plan("--driver", "memif,af_xdp,af_packet", "--rounds", "3")
        self.assertEqual(plan.drivers, ["memif", "af_xdp", "af_packet"])
        self.assertTrue(plan.several())
        self.assertEqual(self.plan("--driver=memif,uring,").drivers, ["memif", "uring"])

    def test_plot_implies_link(self):
        plan = self.plan("--plot", "p.png")
        self.assertTrue(plan.with_link)
        self.assertTrue(os.path.isabs(plan.plot))

    def test_micro_and_link_forms(self):
        plan = self.plan("--micro", "--filter", "Crc32c", "--json=m.json", "--", "--benchmark_min_time=1")
        self.assertEqual((plan.mode, plan.filter, plan.passthrough), ("micro", "Crc32c", ["--benchmark_min_time=1"]))
        self.assertEqual(self.plan("--link", "--driver", "uring").mode, "link")

    def test_usage_errors(self):
        cases = [
            (["--micro", "--link"], "bench: --micro and --link are separate runs"),
            (["--link", "--with-link"], "bench: --with-link is an option of the collective sweep"),
            (["--micro", "--plot", "a.png"], "bench: --plot is an option of the collective sweep"),
            (["--link", "--sizes", "8"], "bench: --sizes is an option of the collective sweep"),
            (["--micro", "--dims", "2x1x1"], "bench: --dims is an option of the collective sweep"),
            (["--filter", "x"], "bench: --filter is an option of --micro"),
            (["--driver", "eth0"], "bench: unknown driver 'eth0' (memif, uring, af_xdp, af_packet)"),
            (["--driver", ""], "bench: --driver needs a value"),
            (["--rounds", "0"], "bench: --rounds '0' is not a positive count"),
            (["--rounds", "x"], "bench: --rounds 'x' is not a positive count"),
            (["--micro", "--driver", "uring"], "bench: --driver is not an option of --micro"),
            (["--link", "--driver", "af_xdp"], "bench: the raw link bench measures one driver, memif or uring"),
            (["--with-link", "--driver", "memif,uring"], "bench: the raw link bench measures one driver, memif or uring"),
            (["--plot", "p.png", "--rounds", "2"], "bench: --with-link and --plot go with one run (not --rounds N)"),
            (["--dims", "2x1"], "bench: bad --dims '2x1' (expected XxYxZ, e.g. 2x1x1)"),
            (["--plot", "p.jpg"], "bench: --plot 'p.jpg': the file name must end in .png"),
            (["--bogus"], "bench: unknown option '--bogus'"),
            (["--mic"], "bench: unknown option '--mic'"),
            (["extra"], "bench: unexpected argument 'extra'"),
            (["--json"], "bench: --json needs a value"),
        ]
        for argv, message in cases:
            with self.assertRaises(common.UsageError, msg=argv) as e:
                self.plan(*argv)
            self.assertEqual(e.exception.message, message)
            self.assertEqual(e.exception.command, "bench")


class SelftestParseTest(unittest.TestCase):
    def parse(self, *argv):
        return cmd_selftest.parse(parser("selftest"), list(argv))

    def test_known_options_taken_the_rest_passed_in_order(self):
        args, rest = self.parse("--quiet", "--dims", "2x1x1", "--hold", "5s", "--driver=uring", "--seed", "-1", "--")
        self.assertEqual((args.dims, args.rig, args.driver), ("2x1x1", "host", "uring"))
        self.assertEqual(rest, ["--quiet", "--hold", "5s", "--seed", "-1", "--"])

    def test_sim_rig(self):
        args, rest = self.parse("--rig", "sim", "--faults", "drop=0.05")
        self.assertEqual((args.dims, args.rig, args.driver, rest), ("2x2x2", "sim", None, ["--faults", "drop=0.05"]))

    def test_usage_errors(self):
        cases = [
            (["--job", "coll"], "selftest: --job is fixed to 'selftest'"),
            (["--job=coll"], "selftest: --job is fixed to 'selftest'"),
            (["--job"], "selftest: --job is fixed to 'selftest'"),
            (["--dims", "4"], "selftest: bad --dims '4' (expected XxYxZ, e.g. 2x2x2)"),
            (["--dims", "0x1x1"], "selftest: bad --dims '0x1x1'"),
            (["--rig", "qemu"], "selftest: unknown rig 'qemu' (available: host sim)"),
            (["--rig", "sim", "--driver", "uring"], "selftest: --driver is an option of the host rig (--rig host)"),
            (["--driver", "af_xdp"], "selftest: unknown driver 'af_xdp' (available: memif uring)"),
            (["--dims"], "selftest: --dims needs a value"),
        ]
        for argv, message in cases:
            with self.assertRaises(common.UsageError, msg=argv) as e:
                self.parse(*argv)
            self.assertTrue(e.exception.message.startswith(message), e.exception.message)


class SimHelpTest(unittest.TestCase):
    def test_help_lists_the_scale_options(self):
        text = parser("sim").format_help()
        for word in ("--threads N", "--link-model MODEL", "bgl", "scaling", "--pcap DIR"):
            self.assertIn(word, text)


class MpirunParseTest(unittest.TestCase):
    def test_launcher_gets_every_option_but_rig_and_the_program_keeps_its_own(self):
        plan = cmd_mpirun.parse(["-n", "8", "--driver", "uring", "--rig=host", "--env", "TOROID_REPRO=exact", "-q",
                                 "./a.out", "--rig", "qemu", "-n", "3"])
        self.assertEqual(plan.rig, "host")
        self.assertEqual(plan.options, ["-n", "8", "--driver", "uring", "--env", "TOROID_REPRO=exact", "-q"])
        self.assertEqual(plan.command, ["./a.out", "--rig", "qemu", "-n", "3"])
        paths = common.Paths()
        self.assertEqual(plan.launcher_args(paths)[:2], ["--run-dir", paths.run_root])
        self.assertEqual(plan.launcher_args(paths)[-5:], plan.command)

    def test_run_dir_kept_dashdash_and_value_that_looks_like_a_program(self):
        plan = cmd_mpirun.parse(["--dims=3x1x1", "--run-dir", "/r", "--timeout", "30s", "--", "prog", "-x"])
        self.assertEqual(plan.options, ["--dims", "3x1x1", "--run-dir", "/r", "--timeout", "30s"])
        self.assertEqual(plan.command, ["--", "prog", "-x"])
        self.assertEqual(plan.launcher_args(common.Paths()), plan.options + plan.command)
        # The value of --cpus is not PROGRAM.
        self.assertEqual(cmd_mpirun.parse(["--cpus", "0-1", "-np", "2", "p"]).command, ["p"])

    def test_usage_errors(self):
        cases = [
            (["prog"], "mpirun: give -n N or --dims XxYxZ"),
            (["-n", "4"], "mpirun: no PROGRAM to run"),
            (["-n", "4", "--"], "mpirun: no PROGRAM to run"),
            (["-n", "0", "p"], "mpirun: -n '0' is not a rank count"),
            (["-n", "two", "p"], "mpirun: -n 'two' is not a rank count"),
            (["--dims", "2x2", "p"], "mpirun: bad --dims '2x2' (expected XxYxZ, e.g. 2x2x2)"),
            (["-n", "2", "--driver", "af_xdp", "p"], "mpirun: unknown driver 'af_xdp' (available: memif uring)"),
            (["-n", "2", "--rig", "sim", "p"], "mpirun: unknown rig 'sim' (available: host qemu)"),
            (["-n", "2", "--rig"], "mpirun: --rig needs a value"),
        ]
        for argv, message in cases:
            with self.assertRaises(common.UsageError, msg=argv) as e:
                cmd_mpirun.parse(argv)
            self.assertEqual(e.exception.message, message)
            self.assertEqual(e.exception.command, "mpirun")

    def test_qemu_rig_keeps_its_options_and_each_rig_refuses_the_others_before_building(self):
        plan = cmd_mpirun.parse(["--rig", "qemu", "--dims", "2x1x1", "--net", "kernel", "--mem=384", "-v",
                                 "--boot-timeout", "90", "./p", "--net", "x"])
        self.assertEqual(plan.rig, "qemu")
        self.assertEqual(plan.options, ["--dims", "2x1x1", "--net", "kernel", "--mem", "384", "-v",
                                        "--boot-timeout", "90"])
        self.assertEqual(plan.command, ["./p", "--net", "x"])
        for argv, message in [
            (["--rig", "qemu", "-n", "2", "--driver", "uring", "p"], "mpirun: --driver is an option of --rig host"),
            (["-n", "2", "--rig=qemu", "--no-stop", "p"], "mpirun: --no-stop is an option of --rig host"),
            (["-n", "2", "--net", "uio", "p"], "mpirun: --net is an option of --rig qemu"),
        ]:
            with self.assertRaises(common.UsageError, msg=argv) as e:
                cmd_mpirun.parse(argv)
            self.assertEqual(e.exception.message, message)
        status, out, err = run_main(["mpirun", "-n", "2", "--rig", "qemu", "--cpus", "0", "./p"])
        self.assertEqual((status, out), (2, ""))
        self.assertIn("mpirun: --cpus is an option of --rig host", err)

    def test_help_before_the_program_is_ours_after_it_the_programs(self):
        status, out, _ = run_main(["mpirun", "--help"])
        self.assertEqual(status, 0)
        self.assertTrue(out.startswith("usage: ./toroid mpirun (-n N | --dims XxYxZ)"), out[:80])
        self.assertIn("--no-stop", out)
        self.assertIn("options of --rig qemu", out)
        status, out, err = run_main(["mpirun", "p", "--help"])   # no -n: the usage error, not our help
        self.assertEqual((status, out), (2, ""))
        self.assertIn("mpirun: give -n N or --dims XxYxZ", err)


class MainTest(unittest.TestCase):
    def test_no_arguments_prints_usage_to_stderr_status_2(self):
        status, out, err = run_main([])
        self.assertEqual((status, out), (2, ""))
        self.assertTrue(err.startswith("usage: ./toroid COMMAND [ARGS...]"))

    def test_help_lists_every_command(self):
        for argv in (["--help"], ["-h"], ["help"], ["help", "help"]):
            status, out, _ = run_main(argv)
            self.assertEqual(status, 0)
            for name in list(main.MODULES) + ["help"]:
                self.assertIn("\n  %s " % name, out, name)

    def test_help_for_each_command(self):
        for name in main.MODULES:
            status, out, _ = run_main(["help", name])
            self.assertEqual(status, 0)
            self.assertTrue(out.startswith("usage: ./toroid %s" % name), out[:80])
            self.assertIn("exit status:", out)

    def test_command_help_without_building(self):
        # Commands that parse their own arguments answer --help before setup.
        for name in ("setup", "build", "test", "selftest", "mpirun", "slurm-selftest", "qemu", "bench", "package",
                     "man"):
            status, out, _ = run_main([name, "--help"])
            self.assertEqual(status, 0, name)
            self.assertTrue(out.startswith("usage: ./toroid %s" % name), name)

    def test_usage_errors_name_the_problem_and_the_help(self):
        cases = [
            (["frobnicate"], "toroid: unknown command 'frobnicate' (see ./toroid --help)"),
            (["--frob"], "toroid: unknown option '--frob' (see ./toroid --help)"),
            (["help", "frob"], "toroid: help: unknown command 'frob' (see ./toroid --help)"),
            (["setup", "--bogus"], "toroid: setup: unknown option '--bogus' (see ./toroid setup --help)"),
            (["setup", "x"], "toroid: setup: unexpected argument 'x' (see ./toroid setup --help)"),
            (["build", "--debug", "--asan"],
             "toroid: build: --debug and --asan are mutually exclusive (see ./toroid build --help)"),
            (["build", "--asan", "--no-pgo"],
             "toroid: build: --no-pgo goes with the release build only (see ./toroid build --help)"),
            (["bench", "--micro", "--no-pgo"],
             "toroid: bench: --no-pgo is an option of the collective sweep (see ./toroid bench --help)"),
            (["test", "unit", "--asan", "sim", "--debug"],
             "toroid: test: --debug and --asan are mutually exclusive (see ./toroid test --help)"),
            (["test", "--quick"], "toroid: test: unknown option '--quick' (see ./toroid test --help)"),
            (["package", "--out"], "toroid: package: --out needs a value (see ./toroid package --help)"),
            (["bench", "--micro", "--link"],
             "toroid: bench: --micro and --link are separate runs (see ./toroid bench --help)"),
            (["selftest", "--rig", "x"],
             "toroid: selftest: unknown rig 'x' (available: host sim) (see ./toroid selftest --help)"),
            (["man", "--bogus"], "toroid: man: unknown option '--bogus' (see ./toroid man --help)"),
            (["mpirun", "-n", "2"], "toroid: mpirun: no PROGRAM to run (see ./toroid mpirun --help)"),
        ]
        for argv, message in cases:
            status, out, err = run_main(argv)
            self.assertEqual((status, out, err), (2, "", message + "\n"), argv)

    def test_repeated_variant_is_not_an_error(self):
        args = common.parse_strict(parser("test"), ["--debug", "unit", "--debug", "sim"], intermixed=True)
        self.assertEqual((args.variant, args.suites), ("debug", ["unit", "sim"]))


if __name__ == "__main__":
    unittest.main()
