"""./toroid build [--debug|--asan]: configure if needed, compile."""
from . import build
from .common import parse_strict, usage

NAME = "build"
SYNOPSIS = ["[--debug|--asan]"]
SUMMARY = "setup, configure if needed, compile"
NEEDS_TREE = True


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Runs setup, configures the build dir with meson if it is not configured yet
(re-creating it with `meson setup --wipe` if it is broken), then meson compile.

  (default)   build/        release
  --debug     build-debug/  --buildtype=debug
  --asan      build-asan/   --buildtype=debug -Db_sanitize=address,undefined""",
                       epilog="exit status: 0 built, 1 configure or compile failed, 2 usage error")
    build.add_variant_options(p)
    return p


def run(ctx, argv):
    args = parse_strict(ctx.parser(NAME), argv)
    build.setup(ctx.paths, ctx.out)
    build.build(ctx.paths, args.variant or "release", ctx.out)
    return 0
