"""toroid: build, test and run Toroid (docs/cli.md).

One argparse parser per command, in a module of its own; the same parsers
print --help and make the man pages (`toroid man`).
"""
import argparse
import os
import sys
import textwrap

from . import (cmd_bench, cmd_build, cmd_fuzz, cmd_man, cmd_mpirun, cmd_package, cmd_qemu, cmd_rig, cmd_selftest,
               cmd_setup, cmd_sim, cmd_slurm_selftest, cmd_test)
from .common import PROG, Failure, Parser, Paths, UsageError

COMMANDS = [cmd_setup, cmd_build, cmd_test, cmd_selftest, cmd_rig, cmd_mpirun, cmd_slurm_selftest, cmd_sim,
            cmd_qemu, cmd_bench, cmd_fuzz, cmd_package, cmd_man]
MODULES = {m.NAME: m for m in COMMANDS}
SUMMARY_COLUMN = 33

INTRO = """\
Front end for building, testing and running Toroid (wraps meson and the built
binaries). Works from any directory."""

EPILOG = """\
Every command takes --help (`{p} sim --help` and `{p} rig --help`
show the binaries' own help; `{p} help sim` this front end's).

rig contract:
  {p} rig --dims XxYxZ --job JOB [--driver memif|uring] [--hold D]
               [--kill X,Y,Z@D] [--remove-socket X,Y,Z:DIR] [--run-dir DIR]
  logs and personalities go to run/rig-<timestamp>/ (node-X-Y-Z.log)

bench contract:
  {p} bench [--json FILE]   collective sweep on the host rig (2x1x1 memif by default)
  {p} bench --link [--json FILE]    the raw link; {p} bench --micro: micro-benchmarks
  JSON: an array of {{"coll", "algo", "nodes", "bytes", "lat_us": {{"min", "median", "max"}},
  "busbw_gbps", "dtype", "op", "repro", ...}}

sim contract:
  {p} sim --dims XxYxZ --job JOB [--seed N] [--faults SPEC]
  SPEC is a comma-separated list of faults, e.g.
    drop=0.05,corrupt=0.01,dup=0.01,reorder=0.05,delay=2us,linkdown=1.0.1:x+@300us

build dirs: build/ (release), build-debug/ (--debug), build-asan/ (--asan), build-fuzz/ (fuzz)
relative paths in arguments are taken from the current directory
exit status: 0 success, 1 failure, 2 usage error"""


def synopsis_forms(parser, name):
    """The command's usage forms as "NAME ARGS" lines, continuation lines indented."""
    lines = []
    for line in (parser.usage or "%(prog)s").split("\n"):
        s = line.strip()
        if s.startswith("%(prog)s"):
            lines.append(name + s[len("%(prog)s"):])
        elif s:
            lines.append(" " * (len(name) + 1) + s)
    return lines


def command_table(parser):
    """(name, synopsis lines, summary) for every command, from the parsers."""
    sub = parser.subcommands
    return [(a.dest, synopsis_forms(sub.choices[a.dest], a.dest), a.help) for a in sub._choices_actions]


def _listing(table):
    out = []
    for name, forms, summary in table:
        text = textwrap.wrap(summary, 80 - SUMMARY_COLUMN, break_on_hyphens=False)
        for i, f in enumerate(forms):
            last = i == len(forms) - 1
            if last and len(f) + 2 < SUMMARY_COLUMN - 1:
                out.append(("  " + f).ljust(SUMMARY_COLUMN) + text.pop(0))
            else:
                out.append("  " + f)
        out += [" " * SUMMARY_COLUMN + t for t in text]
    return "\n".join(out)


def build_parser(invocation):
    """The whole command line: the top-level parser and one subparser per
    command. invocation is how users call it ("./toroid" in the tree)."""
    p = Parser(prog=invocation, usage="%(prog)s COMMAND [ARGS...]", epilog=EPILOG.format(p=invocation))
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser, help=argparse.SUPPRESS,
                           prog=invocation)
    for m in COMMANDS:
        m.add_parser(sub, invocation)
    sub.add_parser("help", command="help", help="this text, or one command's help", usage="%(prog)s [COMMAND]",
                   description="Prints the commands, or one command's help (also for sim and rig, whose "
                               "--help goes to the binary).")
    p.subcommands = sub
    p.description = INTRO + "\n\ncommands:\n" + _listing(command_table(p))
    return p


class Context:
    def __init__(self, paths, parser):
        self.paths = paths
        self.out = sys.stdout
        self.err = sys.stderr
        self._parser = parser

    def parser(self, name):
        return self._parser.subcommands.choices[name]


def _help(ctx, parser, argv):
    if not argv or argv[0] in ("help", "-h", "--help"):
        parser.print_help()
        return 0
    if argv[0] not in parser.subcommands.choices:
        raise UsageError("", "help: unknown command '%s'" % argv[0])
    ctx.parser(argv[0]).print_help()
    return 0


def dispatch(ctx, parser, argv):
    if not argv:
        parser.print_help(sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd in ("-h", "--help", "help"):
        return _help(ctx, parser, rest)
    module = MODULES.get(cmd)
    if module is None:
        raise UsageError("", "unknown %s '%s'" % ("option" if cmd.startswith("-") else "command", cmd))
    if ctx.paths.installed and module.NEEDS_TREE:
        if rest and rest[0] in ("-h", "--help"):
            ctx.parser(cmd).print_help()
            return 0
        raise Failure("%s needs the source tree; this toroid is installed in %s (it runs selftest, sim, rig, "
                      "mpirun and qemu)" % (cmd, ctx.paths.prefix))
    return module.run(ctx, rest)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    paths = Paths()
    parser = build_parser(paths.invocation)
    ctx = Context(paths, parser)
    try:
        try:
            status = dispatch(ctx, parser, argv)
        except SystemExit as e:   # argparse, after printing --help
            status = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        sys.stdout.flush()
        return status
    except UsageError as e:
        hint = paths.invocation + (" %s --help" % e.command if e.command else " --help")
        print("%s: %s (see %s)" % (PROG, e.message, hint), file=sys.stderr)
        return 2
    except Failure as e:
        sys.stdout.flush()
        print("%s: %s" % (PROG, e.message), file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print("%s: interrupted" % PROG, file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`toroid --help | head -1`): no traceback, and
        # none again when Python flushes stdout on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
