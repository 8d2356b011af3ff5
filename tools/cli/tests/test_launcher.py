"""The ./toroid launcher from the outside: any directory, a symlink, an install
prefix laid out as meson install does, an environment that would mislead it."""
import os
import shutil
import subprocess
import tempfile
import unittest

CLI_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(CLI_DIR))
LAUNCHER = os.path.join(ROOT, "toroid")


def run(argv, cwd=None, env=None):
    r = subprocess.run(argv, cwd=cwd or tempfile.gettempdir(), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


class LauncherTest(unittest.TestCase):
    def test_from_another_directory(self):
        status, out, err = run([LAUNCHER, "--help"])
        self.assertEqual((status, err), (0, ""))
        self.assertTrue(out.startswith("usage: ./toroid COMMAND [ARGS...]"))
        self.assertTrue(out.rstrip().endswith("exit status: 0 success, 1 failure, 2 usage error"))

    def test_no_arguments_is_a_usage_error(self):
        status, out, err = run([LAUNCHER])
        self.assertEqual((status, out), (2, ""))
        self.assertIn("commands:", err)

    def test_through_a_symlink(self):
        with tempfile.TemporaryDirectory() as d:
            link = os.path.join(d, "t")
            os.symlink(LAUNCHER, link)
            status, out, err = run([link, "bench", "--rounds", "0"], cwd=d)
            self.assertEqual((status, out), (2, ""))
            self.assertEqual(err, "toroid: bench: --rounds '0' is not a positive count (see ./toroid bench --help)\n")

    def test_environment_cannot_swap_the_package(self):
        # A toroid_cli on PYTHONPATH or in the working directory is not the one run.
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "toroid_cli"))
            with open(os.path.join(d, "toroid_cli", "__init__.py"), "w") as f:
                f.write("raise SystemExit('impostor')\n")
            env = dict(os.environ, PYTHONPATH=d)
            status, out, err = run([LAUNCHER, "help", "build"], cwd=d, env=env)
            self.assertEqual((status, err), (0, ""))
            self.assertTrue(out.startswith("usage: ./toroid build"))


class InstalledTest(unittest.TestCase):
    """PREFIX/bin/toroid with PREFIX/share/toroid/cli, as meson install lays them out."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.prefix = os.path.join(self.tmp.name, "usr")
        os.makedirs(os.path.join(self.prefix, "bin"))
        shutil.copy2(LAUNCHER, os.path.join(self.prefix, "bin", "toroid"))
        cli = os.path.join(self.prefix, "share", "toroid", "cli")
        shutil.copytree(os.path.join(CLI_DIR, "toroid_cli"), os.path.join(cli, "toroid_cli"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(os.path.join(CLI_DIR, "__main__.py"), cli)
        self.toroid = os.path.join(self.prefix, "bin", "toroid")
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(self.tmp.name, "home")}

    def tearDown(self):
        self.tmp.cleanup()

    def test_commands_that_build_need_the_source_tree(self):
        for cmd in ("setup", "build", "test", "bench", "package", "slurm-selftest"):
            status, out, err = run([self.toroid, cmd], env=self.env)
            self.assertEqual((status, out), (1, ""), cmd)
            self.assertEqual(err, "toroid: %s needs the source tree; this toroid is installed in %s (it runs "
                                  "selftest, sim, rig, mpirun and qemu)\n" % (cmd, self.prefix))
            status, out, _ = run([self.toroid, cmd, "--help"], env=self.env)
            self.assertEqual(status, 0, cmd)
            self.assertTrue(out.startswith("usage: toroid %s" % cmd), out[:60])

    def test_runs_the_binaries_beside_it(self):
        status, out, err = run([self.toroid, "selftest", "--rig", "sim"], env=self.env)
        self.assertEqual((status, out), (1, ""))
        self.assertEqual(err, "toroid: selftest: %s/bin/toroid-sim was not built\n" % self.prefix)
        status, _, err = run([self.toroid, "rig", "--help"], env=self.env)
        self.assertEqual((status, err), (1, "toroid: rig: %s/bin/toroid-rig was not built\n" % self.prefix))
        status, _, err = run([self.toroid, "mpirun", "-n", "2", "./a.out"], env=self.env)
        self.assertEqual((status, err), (1, "toroid: mpirun: %s/bin/toroid-mpirun was not built\n" % self.prefix))

    def test_hints_name_the_installed_command_and_nothing_is_written(self):
        status, _, err = run([self.toroid, "selftest", "--dims", "2"], env=self.env)
        self.assertEqual(status, 2)
        self.assertEqual(err, "toroid: selftest: bad --dims '2' (expected XxYxZ, e.g. 2x2x2) "
                              "(see toroid selftest --help)\n")
        written = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(self.prefix, "share")) for f in fs
                   if f.endswith(".pyc")]
        self.assertEqual(written, [])

    def test_man_pages_go_where_asked(self):
        status, _, err = run([self.toroid, "man"], env=self.env)
        self.assertEqual(status, 1)
        self.assertIn("share/man/man1", err)
        out_dir = os.path.join(self.tmp.name, "man")
        status, out, _ = run([self.toroid, "man", "--out", out_dir], env=self.env)
        self.assertEqual(status, 0)
        self.assertIn("toroid-selftest.1", os.listdir(out_dir))


if __name__ == "__main__":
    unittest.main()
