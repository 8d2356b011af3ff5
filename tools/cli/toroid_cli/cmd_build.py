"""./toroid build [--debug|--asan|--no-pgo]: configure if needed, compile."""
from . import build, pgo
from .common import parse_strict, usage

NAME = "build"
SYNOPSIS = ["[--debug|--asan|--no-pgo]"]
SUMMARY = "setup, configure if needed, compile"
NEEDS_TREE = True


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Runs setup, configures the build dir with meson if it is not configured yet
(re-creating it with `meson setup --wipe` if it is broken), then meson compile.

  (default)   build/        release (what the tests run), then the
              build-pgo/    profile-guided node program that `./toroid bench`
                            runs: toroid-node and toroid-rig built
                            instrumented in build-pgo-gen/, trained on a short
                            bench sweep on the host rig (2x2x2 and 2x1x1,
                            10-15 s), then built again with that profile
                            and link-time optimisation. Trains again whenever a
                            source of the node program changed.
  --no-pgo    build/        release only
  --debug     build-debug/  --buildtype=debug
  --asan      build-asan/   --buildtype=debug -Db_sanitize=address,undefined""",
                       epilog="exit status: 0 built, 1 configure or compile failed, 2 usage error")
    build.add_variant_options(p)
    p.add_argument("--no-pgo", action="store_true", help="the release build only, not build-pgo/")
    return p


def run(ctx, argv):
    args = parse_strict(ctx.parser(NAME), argv)
    if args.variant and args.no_pgo:
        ctx.parser(NAME).error("--no-pgo goes with the release build only")
    build.setup(ctx.paths, ctx.out)
    build.build(ctx.paths, args.variant or "release", ctx.out)
    if not args.variant and not args.no_pgo:
        pgo.ensure(ctx.paths, ctx.out, quiet=False)
    return 0
