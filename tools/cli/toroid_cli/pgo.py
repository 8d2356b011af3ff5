"""The profile-guided node program (build-pgo/): what `./toroid bench` runs.

GCC builds the node program (toroid-node, and toroid-rig that starts it) twice:

  build-pgo-gen/  instrumented (-fprofile-generate), link-time optimised; a
                  short training sweep on the host rig writes the profile to
                  build-pgo-gen/profile/
  build-pgo/      optimised with that profile (-fprofile-use, with
                  -fprofile-partial-training: code the training did not run
                  keeps its ordinary -O3 optimisation) and link-time optimised

The profile lets GCC lay the hot paths out together and move cold code
(errors, faults, set-up) away from them, which is what a node that shares its
core with others pays for after every context switch: on 2x2x2 memif (eight
nodes on two cores) 8-byte allreduce and barrier ran 15-26 % faster in
alternating runs (docs/bench.md, "A profile-guided node program").

-fprofile-prefix-path makes the profile's file names relative to each build
dir, so the optimised build finds the instrumented build's files. Whenever the
instrumented targets had to be rebuilt (a source changed), the training runs
again and build-pgo/ is compiled from clean, so the profile always matches
the sources. The release build (build/) that the tests run is not touched.
"""
import os
import shlex
import shutil
import time

from . import build
from .common import RIG_BIN_REL, Failure, run_child, say

GEN_DIR = "build-pgo-gen"
USE_DIR = "build-pgo"
TARGETS = ["firmware/toroid-node", RIG_BIN_REL]

# The training sweep: every collective the bench times, small and large, on
# the bench's two shapes, with the selector's algorithms.
TRAINING = [
    ["--dims", "2x2x2", "--colls", "barrier,allreduce,bcast,reduce,allgather,alltoall,reduce_scatter",
     "--sizes", "8,64K,1M", "--reps", "100"],
    ["--dims", "2x1x1", "--colls", "barrier,allreduce", "--sizes", "8,4M", "--reps", "300"],
    ["--dims", "2x1x1", "--colls", "allreduce", "--dtype", "double", "--repro", "exact", "--sizes", "8,4M",
     "--reps", "100"],
]
TRAINING_TIMEOUT_S = 600


def _lto_args():
    return ["-Db_lto=true", "-Db_lto_threads=%d" % (os.cpu_count() or 1)]


# GCC 12 misreads std::string's bounds once link-time optimisation has
# inlined across files (-Wstringop-overflow, -Wrestrict on cold set-up code
# that the release build compiles without a warning): not a finding here.
LTO_QUIET = ["-Wno-stringop-overflow", "-Wno-restrict"]


def _quote(flags):
    return " ".join(shlex.quote(f) for f in flags)


def _setup_args(root, name, flags, link_flags):
    cpp = flags + LTO_QUIET + ["-fprofile-prefix-path=" + os.path.join(root, name)]
    return ["--buildtype=release"] + _lto_args() + ["-Dcpp_args=" + _quote(cpp),
                                                    "-Dcpp_link_args=" + _quote(link_flags + LTO_QUIET)]


def gen_args(root):
    prof = os.path.join(root, GEN_DIR, "profile")
    return _setup_args(root, GEN_DIR, ["-fprofile-generate=" + prof, "-fprofile-update=single"],
                       ["-fprofile-generate=" + prof])


def use_args(root):
    prof = os.path.join(root, GEN_DIR, "profile")
    # Files the training never reaches (the sim, tools) have no profile: that
    # is expected, not worth a warning per file.
    flags = ["-fprofile-use=" + prof, "-fprofile-partial-training", "-Wno-missing-profile"]
    return _setup_args(root, USE_DIR, flags, [])


def _train(paths, out):
    gen = os.path.join(paths.root, GEN_DIR)
    prof = os.path.join(gen, "profile")
    shutil.rmtree(prof, ignore_errors=True)
    rig = os.path.join(gen, RIG_BIN_REL)
    run_dir = os.path.join(paths.root, "run")
    os.makedirs(run_dir, exist_ok=True)
    start = time.monotonic()
    for i, args in enumerate(TRAINING, 1):
        say(out, "pgo: training run %d/%d: toroid-rig %s" % (i, len(TRAINING), " ".join(args)))
        cmd = ["timeout", str(TRAINING_TIMEOUT_S), rig, "--job", "bench", "--quiet", "--run-dir", run_dir] + args
        log = os.path.join(gen, "training-%d.log" % i)
        with open(log, "w") as f:
            status = run_child(cmd, cwd=paths.root, stdout=f, stderr=f)
        if status != 0:
            raise Failure("pgo: training run %d failed (status %d); its output: %s (`./toroid build --no-pgo` "
                          "builds without the profile-guided node program)" % (i, status, log))
    if not os.path.isdir(prof) or not os.listdir(prof):
        raise Failure("pgo: the training wrote no profile to %s" % prof)
    say(out, "pgo: trained in %.0f s (%d profile files)" % (time.monotonic() - start, len(os.listdir(prof))))
    with open(os.path.join(prof, "trained"), "w") as f:
        f.write("%d\n" % int(time.time()))


def ensure(paths, out, quiet=True):
    """Builds build-pgo/ (training first when the instrumented build changed);
    with quiet, says nothing when all is up to date. Raises Failure."""
    if paths.installed:
        return
    if shutil.which("g++") is None:
        raise Failure("the profile-guided build needs g++ (./toroid setup installs it)")
    root = paths.root
    gen = os.path.join(root, GEN_DIR)
    use = os.path.join(root, USE_DIR)
    trained = os.path.isfile(os.path.join(gen, "profile", "trained"))
    if not (trained and _current(gen, gen_args(root))):
        build.build_in(paths, GEN_DIR, gen_args(root), out, targets=TARGETS, env=_gcc_env(),
                       what="the instrumented node program")
        _train(paths, out)
        if build.healthy(use):   # a new profile: every object again
            if run_child(["ninja", "-C", use, "-t", "clean"], stdout=out, stderr=out) != 0:
                raise Failure("pgo: could not clean %s/" % USE_DIR)
    elif quiet and _current(use, use_args(root)):
        return
    build.build_in(paths, USE_DIR, use_args(root), out, targets=TARGETS, env=_gcc_env(),
                   what="the profile-guided node program")


def _current(path, setup_args):
    """Configured with setup_args and nothing of TARGETS to rebuild."""
    return build.healthy(path) and build.configured_with(path) == setup_args and build.up_to_date(path, TARGETS)


def rig(paths):
    return paths.binary(USE_DIR, RIG_BIN_REL)


def _gcc_env():
    # The profile's format is GCC's: configure with it whatever CXX says.
    return dict(os.environ, CC="gcc", CXX="g++")
