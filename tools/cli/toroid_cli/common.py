"""What every command shares: where things are, errors, the parser class, exec.

The CLI runs from two places (docs/install.md): the source tree, where it sits
in tools/cli/ beside the top-level meson.build and builds what it runs, and an
install prefix, where it sits in share/toroid/cli/ and runs the binaries in
bin/ beside the `toroid` launcher.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import textwrap

PROG = "toroid"
DIMS_RE = re.compile(r"^[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*$")

# Binaries, relative to a build dir.
SIM_BIN_REL = "firmware/toroid-sim"
RIG_BIN_REL = "firmware/toroid-rig"
MICROBENCH_BIN_REL = "bench/toroid-microbench"
LINKBENCH_BIN_REL = "firmware/toroid-linkbench"
MPIRUN_BIN_REL = "mpi/launcher/toroid-mpirun"


class UsageError(Exception):
    """A malformed command line: exit status 2, with a pointer to --help."""

    def __init__(self, command, message):
        super().__init__(message)
        self.command = command
        self.message = message


class Failure(Exception):
    """Anything else that stops a command: exit status 1 unless given."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.message = message
        self.status = status


class Paths:
    """Where the tree (or the install) is, found from this file's location so
    that the CLI works from any working directory."""

    def __init__(self, cli_dir=None, env=None):
        env = os.environ if env is None else env
        cli_dir = cli_dir or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        tree = os.path.dirname(os.path.dirname(cli_dir))          # tools/cli -> the tree
        self.installed = not os.path.isfile(os.path.join(tree, "meson.build"))
        if self.installed:
            prefix = os.path.dirname(os.path.dirname(os.path.dirname(cli_dir)))   # share/toroid/cli -> prefix
            self.prefix = prefix
            self.root = os.path.join(prefix, "bin")                # the launcher and the binaries
            self.share_dir = os.path.join(prefix, "share", "toroid")
            state = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME") or "/tmp", ".local", "state")
            self.state_dir = os.path.join(state, "toroid")         # rig runs, QEMU images
            self.run_root = os.path.join(self.state_dir, "run")
        else:
            self.prefix = None
            self.root = tree
            self.share_dir = None
            self.state_dir = None
            self.run_root = os.path.join(tree, "run")
        # How to call this program in hints: the tree's launcher, or the command on PATH.
        self.invocation = PROG if self.installed else "./" + PROG

    def binary(self, build_dir, rel):
        """A built binary: in the build dir, or beside the launcher when installed."""
        if self.installed:
            return os.path.join(self.root, os.path.basename(rel))
        return os.path.join(self.root, build_dir, rel)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; option help filled without breaking at
    hyphens (option names and algorithm names stay whole)."""

    def _split_lines(self, text, width):
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


def usage(prog, name, *forms):
    """An argparse usage string: one or more forms, each a list of lines,
    continuation lines lined up under the first line's arguments."""
    lead = " " * len("usage: ")
    out = []
    for i, form in enumerate(forms):
        first = "%(prog)s " + form[0]
        out.append(first if i == 0 else lead + first)
        out += [lead + " " * (len(prog) + len(name) + 2) + line for line in form[1:]]
    return "\n".join(out)


class Parser(argparse.ArgumentParser):
    """argparse with the project's usage errors: `toroid: CMD: MESSAGE (see
    ./toroid CMD --help)`, exit status 2, instead of argparse's usage dump."""

    def __init__(self, *args, command="", **kwargs):
        kwargs.setdefault("allow_abbrev", False)   # --mic is not --micro
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.command = command

    def error(self, message):
        m = re.match(r"argument ([^:]+): expected one argument$", message)
        if m:
            message = "%s needs a value" % m.group(1).split("/")[-1]
        if self.command:
            message = self.command + ": " + message
        raise UsageError(self.command, message)


def value_options(parser):
    """Option strings of `parser` that take a value (their next word is theirs)."""
    out = set()
    for action in parser._actions:
        if action.option_strings and action.nargs != 0:
            out.update(action.option_strings)
    return out


def split_passthrough(parser, argv):
    """(ARGS, REST): argv split at the first `--` that is not an option's value."""
    takes_value = value_options(parser)
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return argv[:i], argv[i + 1:]
        i += 2 if a in takes_value else 1
    return argv, []


def parse_strict(parser, argv, intermixed=False):
    """parse_args, with the bash CLI's messages for what is left over."""
    parse = parser.parse_known_intermixed_args if intermixed else parser.parse_known_args
    args, extras = parse(argv)
    for a in extras:
        if a.startswith("-") and a != "-":
            parser.error("unknown option '%s'" % a)
        parser.error("unexpected argument '%s'" % a)
    return args


def wants_help(argv, stop_at_dashdash=False):
    for a in argv:
        if stop_at_dashdash and a == "--":
            return False
        if a in ("-h", "--help"):
            return True
    return False


def check_dims(command, dims, example):
    if not DIMS_RE.match(dims):
        raise UsageError(command, "%s: bad --dims '%s' (expected XxYxZ, e.g. %s)" % (command, dims, example))


def caller_path(path):
    """A path the user typed, made absolute against their working directory."""
    return path if not path or os.path.isabs(path) else os.path.join(os.getcwd(), path)


def exec_program(argv):
    """Replace this process with argv (the rig's status becomes ours, and
    Ctrl-C reaches it directly). Never returns."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(argv[0], argv)
    except OSError as e:
        raise Failure("cannot run %s: %s" % (argv[0], e.strerror))


def run_child(cmd, **kwargs):
    """Runs cmd to its end and returns its status. Ctrl-C reaches it (the
    terminal signals the whole group) while this process waits on: a child
    that handles it (the rig, meson test) decides what comes next, as under a
    shell; one that dies of it ends this command too (status 130)."""
    sys.stdout.flush()
    sys.stderr.flush()
    child = subprocess.Popen(cmd, **kwargs)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        status = child.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    if status == -signal.SIGINT:
        raise KeyboardInterrupt
    return status


def require_binary(command, path, paths):
    if not os.access(path, os.X_OK):
        where = path if paths.installed else os.path.relpath(path, paths.root)
        raise Failure("%s: %s was not built" % (command, where))
    return path


def with_run_dir(paths, args):
    """The host rig's arguments with --run-dir <repo>/run first, unless they name one."""
    if any(a == "--run-dir" or a.startswith("--run-dir=") for a in args):
        return list(args)
    return ["--run-dir", paths.run_root] + list(args)


def say(out, text=""):
    print(text, file=out, flush=True)
