"""./toroid package [--out DIR]: the Debian package (packaging/make_deb.py)."""
import os
import sys

from . import build
from .common import caller_path, exec_program, parse_strict, usage

NAME = "package"
SYNOPSIS = ["[--out DIR]"]
SUMMARY = "build (release), then build the Debian package toroid_VERSION_ARCH.deb (default in build/)"
NEEDS_TREE = True


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Runs setup + build (release, build/), then builds toroid_VERSION_ARCH.deb in
DIR (default build/) with Debian's tools (packaging/make_deb.py): the release
build is installed into a staging directory (meson install --destdir), moved
from its prefix to /usr, and packed by dpkg-deb; dpkg-shlibdeps names the
libraries' Debian packages (DPDK, liburing, libpcap, ...) and dpkg -S the DPDK
drivers EAL loads as plugins. Install it with apt-get install ./toroid_*.deb.
docs/install.md is the reference.""",
                       epilog="exit status: 0 built, 1 build or packaging failed, 2 usage error")
    p.add_argument("--out", metavar="DIR", help="where the .deb goes (default build/); relative to the "
                                               "current directory")
    return p


def run(ctx, argv):
    args = parse_strict(ctx.parser(NAME), argv)
    out = caller_path(args.out)
    build.prepare(ctx.paths, ctx.out)
    root = ctx.paths.root
    exec_program([sys.executable, os.path.join(root, "packaging", "make_deb.py"),
                  "--build-dir", os.path.join(root, "build")] + (["--out", out] if out else []))
