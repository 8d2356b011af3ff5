"""./toroid man: the man pages, written from the parsers that print --help."""
import os
import re

from . import manpage
from .common import PROG, Failure, parse_strict, say, usage

NAME = "man"
SYNOPSIS = ["[--out DIR] [--list] [--version V]"]
SUMMARY = ("write the man pages toroid(1) and toroid-COMMAND(1), made from the same parsers that print "
           "--help (default into build/man/)")
NEEDS_TREE = False


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Writes toroid.1 and toroid-COMMAND.1 for every command, in roff, from the
argparse parsers that print --help: the synopsis, description, options and
exit status of each. Read one with `man -l build/man/toroid-bench.1`. The
build makes them too (build/tools/cli/man/) and meson install puts them in
PREFIX/share/man/man1, where `man toroid-bench` finds them.""",
                       epilog="exit status: 0 written, 1 a page could not be written, 2 usage error")
    p.add_argument("--out", metavar="DIR", help="where the pages go (default <repo>/build/man)")
    p.add_argument("--list", action="store_true", help="print the pages' file names, one a line; write nothing")
    p.add_argument("--version", metavar="V", help="the version in the pages' footer (default: meson.build's)")
    return p


def source_version(paths):
    """The project's version from meson.build, or "" outside the tree."""
    if paths.installed:
        return ""
    with open(os.path.join(paths.root, "meson.build")) as f:
        m = re.search(r"version\s*:\s*'([^']+)'", f.read())
    return m.group(1) if m else ""


def pages(version):
    """{file name: roff text} for toroid(1) and every command's page."""
    from .main import INTRO, build_parser, command_table
    parser = build_parser(PROG)          # as installed: `toroid`, not ./toroid
    table = command_table(parser)
    out = {"toroid.%s" % manpage.SECTION: manpage.main_page(parser, INTRO, table, version)}
    for name, forms, summary in table:
        if name != "help":
            sub = parser.subcommands.choices[name]
            out["toroid-%s.%s" % (name, manpage.SECTION)] = manpage.command_page(sub, name, summary, forms, version)
    return out


def run(ctx, argv):
    args = parse_strict(ctx.parser(NAME), argv)
    version = args.version if args.version is not None else source_version(ctx.paths)
    written = pages(version)
    if args.list:
        for name in written:
            say(ctx.out, name)
        return 0
    out = args.out
    if out is None:
        if ctx.paths.installed:
            raise Failure("man: an installed toroid's pages are in %s; --out DIR writes them elsewhere"
                          % os.path.join(ctx.paths.prefix, "share", "man", "man1"))
        out = os.path.join(ctx.paths.root, "build", "man")
    try:
        os.makedirs(out, exist_ok=True)
        for name, text in written.items():
            with open(os.path.join(out, name), "w") as f:
                f.write(text)
    except OSError as e:
        raise Failure("man: cannot write %s: %s" % (e.filename or out, e.strerror))
    say(ctx.out, "man: %d pages written to %s (e.g. man -l %s)"
        % (len(written), os.path.abspath(out), os.path.join(os.path.abspath(out), "toroid-bench.1")))
    return 0
