"""Build dirs and building them with meson and ninja.

  release  build/        --buildtype=release
  debug    build-debug/  --buildtype=debug
  asan     build-asan/   --buildtype=debug -Db_sanitize=address,undefined

`meson setup` runs only when the dir is not configured yet; a configured but
broken dir is re-created with `meson setup --wipe`; otherwise `meson compile`
is enough (ninja re-runs meson when a meson.build changes).
"""
import argparse
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
}


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


def up_to_date(path):
    if shutil.which("ninja") is None:
        return False
    r = _quiet_run(["ninja", "-C", path, "-n"], None)
    return r is not None and any(line.startswith("ninja: no work to do") for line in r.stdout.splitlines())


def build(paths, variant, out, quiet=False):
    """Configures if needed and compiles; with quiet, says nothing when the
    build is up to date. Raises Failure when configuring or compiling fails.
    Output (meson's and ninja's included) goes to `out`."""
    if paths.installed:
        return
    name, setup_args = VARIANTS[variant]
    path = os.path.join(paths.root, name)
    if quiet and healthy(path) and up_to_date(path):
        return
    failed = Failure("build failed in %s/" % name)

    def run(cmd):
        out.flush()
        return run_child(cmd, cwd=paths.root, stdout=out) == 0

    say(out, "building (%s) in %s/ ..." % (variant, name))
    if os.path.isfile(os.path.join(path, "meson-private", "coredata.dat")):
        if not healthy(path):
            say(out, "%s/ is configured but broken; re-creating it (meson setup --wipe)" % name)
            if not run(["meson", "setup", "--wipe", name] + setup_args):
                say(sys.stderr, "meson setup --wipe failed; if %s/ stays broken, delete it and run this again" % name)
                raise failed
    elif not run(["meson", "setup", name] + setup_args):
        raise failed
    if not run(["meson", "compile", "-C", name]):
        raise failed


def prepare(paths, out, quiet=True):
    """setup, then the release build: what a command that runs a built binary
    does first. Output to `out` (stderr where stdout belongs to the binary)."""
    setup(paths, out)
    build(paths, "release", out, quiet=quiet)
