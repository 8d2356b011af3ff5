"""The profile-guided build's configuration: the optimised build must find the
profile files the instrumented one wrote, under the same names."""
import shlex
import unittest

from toroid_cli import pgo


def cpp_flags(setup_args):
    for a in setup_args:
        if a.startswith("-Dcpp_args="):
            return shlex.split(a[len("-Dcpp_args="):])
    raise AssertionError("no -Dcpp_args in %r" % setup_args)


def flag(flags, name):
    values = [f[len(name) + 1:] for f in flags if f.startswith(name + "=")]
    if len(values) != 1:
        raise AssertionError("%s given %d times in %r" % (name, len(values), flags))
    return values[0]


class PgoArgsTest(unittest.TestCase):
    ROOT = "/srv/a checkout/toroid"

    def test_profile_written_where_it_is_read(self):
        gen, use = cpp_flags(pgo.gen_args(self.ROOT)), cpp_flags(pgo.use_args(self.ROOT))
        self.assertEqual(flag(gen, "-fprofile-generate"), flag(use, "-fprofile-use"))
        self.assertTrue(flag(gen, "-fprofile-generate").startswith(self.ROOT + "/" + pgo.GEN_DIR + "/"))

    def test_names_relative_to_each_build_dir(self):
        # GCC names a profile file after the object's path with the prefix
        # taken off: each build must strip its own dir for the names to match.
        gen, use = cpp_flags(pgo.gen_args(self.ROOT)), cpp_flags(pgo.use_args(self.ROOT))
        self.assertEqual(flag(gen, "-fprofile-prefix-path"), self.ROOT + "/" + pgo.GEN_DIR)
        self.assertEqual(flag(use, "-fprofile-prefix-path"), self.ROOT + "/" + pgo.USE_DIR)

    def test_untrained_code_keeps_its_optimisation(self):
        self.assertIn("-fprofile-partial-training", cpp_flags(pgo.use_args(self.ROOT)))
        self.assertNotIn("-fprofile-partial-training", cpp_flags(pgo.gen_args(self.ROOT)))

    def test_both_builds_release_and_link_time_optimised(self):
        for args in (pgo.gen_args(self.ROOT), pgo.use_args(self.ROOT)):
            self.assertIn("--buildtype=release", args)
            self.assertIn("-Db_lto=true", args)

    def test_training_covers_the_bench_shapes(self):
        dims = {a[a.index("--dims") + 1] for a in pgo.TRAINING}
        self.assertEqual(dims, {"2x2x2", "2x1x1"})
        colls = set()
        for a in pgo.TRAINING:
            colls |= set(a[a.index("--colls") + 1].split(","))
        self.assertEqual(colls, {"barrier", "allreduce", "bcast", "reduce", "allgather", "alltoall",
                                 "reduce_scatter"})


if __name__ == "__main__":
    unittest.main()
