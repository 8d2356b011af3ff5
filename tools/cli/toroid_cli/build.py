"""Build dirs and building them with meson and ninja.

  release  build/        --buildtype=release
  debug    build-debug/  --buildtype=debug
  asan     build-asan/   --buildtype=debug -Db_sanitize=address,undefined
  fuzz     build-fuzz/   clang, -Dfuzz=true, every object with the fuzzer's
                         coverage and ASan + UBSan (`./toroid fuzz` only)

  pgo      build-pgo-gen/, build-pgo/: the profile-guided node program
                         (pgo.py; `./toroid build`, `./toroid bench`)

`meson setup` runs only when the dir is not configured yet; a configured but
broken dir is re-created with `meson setup --wipe`; one configured with other
arguments than today's (toroid-setup-args.json in the dir says which) gets
`meson setup --reconfigure`; otherwise `meson compile` is enough (ninja re-runs
meson when a meson.build changes).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from . import packages
from .common import Failure, run_child, say

VARIANTS = {
    "release": ("build", ["--buildtype=release"]),
    "debug": ("build-debug", ["--buildtype=debug"]),
    "asan": ("build-asan", ["--buildtype=debug", "-Db_sanitize=address,undefined"]),
    # Optimised (fuzzing wants executions per second) with assertions kept
    # (the project default b_ndebug=false); UBSan stops at the first error
    # so that libFuzzer keeps the input; line tables for the stack traces.
    "fuzz": ("build-fuzz", ["--buildtype=release", "-Db_sanitize=address,undefined", "-Db_lundef=false",
                            "-Dfuzz=true",
                            "-Dcpp_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -gline-tables-only"]),
}
# Variants configured with another compiler than the default one.
VARIANT_COMPILERS = {"fuzz": ("clang", "clang++")}


def build_dir(variant):
    return VARIANTS[variant][0]


class VariantAction(argparse.Action):
    """--debug / --asan: either, repeated if need be, but not both."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        want = option_string.lstrip("-")
        have = getattr(namespace, self.dest, None)
        if have and have != want:
            parser.error("--debug and --asan are mutually exclusive")
        setattr(namespace, self.dest, want)


def add_variant_options(parser):
    g = parser.add_argument_group("build variant")
    g.add_argument("--debug", action=VariantAction, dest="variant", default=None,
                   help="build-debug/: --buildtype=debug")
    g.add_argument("--asan", action=VariantAction, dest="variant", default=None,
                   help="build-asan/: --buildtype=debug -Db_sanitize=address,undefined")


def setup(paths, out):
    """The project's packages (an installed toroid's were installed with it)."""
    if not paths.installed:
        packages.install_packages("setup", packages.PACKAGES, out)


def _quiet_run(cmd, cwd):
    try:
        return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None


def healthy(path):
    """`meson configure` loads the saved configuration (coredata): it fails when
    that is corrupt or from an incompatible meson version."""
    if not (os.path.isfile(os.path.join(path, "build.ninja"))
            and os.path.isfile(os.path.join(path, "meson-private", "coredata.dat"))):
        return False
    r = _quiet_run(["meson", "configure", path], None)
    return r is not None and r.returncode == 0


def up_to_date(path, targets=None):
    if shutil.which("ninja") is None:
        return False
    r = _quiet_run(["ninja", "-C", path, "-n"] + list(targets or []), None)
    return r is not None and any(line.startswith("ninja: no work to do") for line in r.stdout.splitlines())


def _compiler_env(variant):
    """The environment `meson setup` runs in: CC/CXX for a variant that needs
    its own compiler (meson reads them when it configures, never again)."""
    if variant not in VARIANT_COMPILERS:
        return None
    cc, cxx = VARIANT_COMPILERS[variant]
    if shutil.which(cxx) is None:
        raise Failure("the %s build needs %s (./toroid setup installs it)" % (variant, cxx))
    return dict(os.environ, CC=cc, CXX=cxx)


def build(paths, variant, out, quiet=False, targets=None):
    """Configures if needed and compiles (only `targets`, meson target names,
    when given); with quiet, says nothing when the build is up to date.
    Raises Failure when configuring or compiling fails. Output (meson's and
    ninja's included) goes to `out`."""
    if paths.installed:
        return
    name, setup_args = VARIANTS[variant]
    path = os.path.join(paths.root, name)
    if quiet and not targets and healthy(path) and up_to_date(path):
        return
    build_in(paths, name, setup_args, out, targets=targets, env=_compiler_env(variant), what=variant)


def build_in(paths, name, setup_args, out, targets=None, env=None, what=""):
    """Configures <root>/name with setup_args if needed, then compiles."""
    path = os.path.join(paths.root, name)
    failed = Failure("build failed in %s/" % name)

    def run(cmd):
        out.flush()
        return run_child(cmd, cwd=paths.root, stdout=out, env=env) == 0

    say(out, "building (%s) in %s/ ..." % (what, name))
    if os.path.isfile(os.path.join(path, "meson-private", "coredata.dat")):
        if not healthy(path):
            say(out, "%s/ is configured but broken; re-creating it (meson setup --wipe)" % name)
            if not run(["meson", "setup", "--wipe", name] + setup_args):
                say(sys.stderr, "meson setup --wipe failed; if %s/ stays broken, delete it and run this again" % name)
                raise failed
        elif (have := configured_with(path)) != setup_args:
            why = "has no record of its arguments" if have is None else "was configured otherwise"
            say(out, "%s/ %s; meson setup --reconfigure" % (name, why))
            if not run(["meson", "setup", "--reconfigure", name] + setup_args):
                raise failed
    elif not run(["meson", "setup", name] + setup_args):
        raise failed
    with open(os.path.join(path, SETUP_ARGS_FILE), "w") as f:
        json.dump(setup_args, f)
    if not run(["meson", "compile", "-C", name] + list(targets or [])):
        raise failed


SETUP_ARGS_FILE = "toroid-setup-args.json"


def configured_with(path):
    """The arguments build_in last configured `path` with (None: not known)."""
    try:
        with open(os.path.join(path, SETUP_ARGS_FILE)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def prepare(paths, out, quiet=True):
    """setup, then the release build: what a command that runs a built binary
    does first. Output to `out` (stderr where stdout belongs to the binary)."""
    setup(paths, out)
    build(paths, "release", out, quiet=quiet)
