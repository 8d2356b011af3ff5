"""./toroid mpirun: an MPI program built with toroid-mpicc, one rank per node
(mpi/launcher/toroid-mpirun; docs/mpi.md)."""
from . import build
from .common import MPIRUN_BIN_REL, Failure, UsageError, check_dims, exec_program, require_binary, usage, \
    wants_help, with_run_dir

NAME = "mpirun"
SYNOPSIS = ["(-n N | --dims XxYxZ) [--driver memif|uring] [--rig host|qemu]", "[OPTIONS] PROGRAM [ARGS...]"]
SUMMARY = ("build (quietly if up to date), then run an MPI program built with build/mpi/toroid-mpicc, one process "
           "per node, its output with rank prefixes")
NEEDS_TREE = False
RIGS = ("host", "qemu")
DRIVERS = ("memif", "uring")
# The launcher's options that take a value: the word after one is never PROGRAM.
VALUE_OPTIONS = ("-n", "-np", "--np", "--dims", "--driver", "--rig", "--timeout", "--wait-timeout",
                 "--train-timeout", "--cpus", "--env", "--run-dir")


def add_parser(sub, prog):
    # Every argument goes to the launcher, which parses them; they are listed
    # here for `toroid help mpirun` and the man page. Only --rig is this
    # front end's, and what makes an early usage error is checked here too,
    # before anything is built.
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, add_help=False,
                       usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Runs an MPI program built with build/mpi/toroid-mpicc (or toroid-mpicxx):
one process per torus node, rank = the node's linear rank (x fastest), each
booting its node and training its links in MPI_Init (docs/mpi.md).

Builds build/ (release; silent when up to date, build output goes to stderr),
then execs build/%s with the arguments, adding
--run-dir <repo>/run unless they name one. Every line a rank prints comes
with its rank in front ("[3] ..."); when a rank aborts or dies every rank is
stopped and the reason named. Options after PROGRAM are the program's.

--rig qemu (the program in every VM of the QEMU cluster) is not provided yet:
it stops with a message saying so.""" % MPIRUN_BIN_REL,
                       epilog="""\
exit status: MPI_Abort's code, else the first failing rank's status (128+N
for signal N), 0 when every rank exited 0; 1 if the build failed; 2 usage""")
    p.add_argument("-h", "--help", action="store_true", help="this text")
    p.add_argument("-n", "-np", metavar="N", help="N ranks on the most balanced torus (8: 2x2x2)")
    p.add_argument("--dims", metavar="XxYxZ", help="the torus (its node count is the rank count)")
    p.add_argument("--driver", metavar="D", help="memif (default, 9000-byte frames) | uring")
    p.add_argument("--rig", metavar="R", help="host (default): processes on this machine | qemu: not provided yet")
    p.add_argument("--timeout", metavar="D", help="the whole job (default 600s)")
    p.add_argument("--wait-timeout", metavar="D", help="each blocking MPI call (default 300s)")
    p.add_argument("--train-timeout", metavar="D", help="link training in MPI_Init (default 20s)")
    p.add_argument("--cpus", metavar="LIST", help="CPUs the ranks' EAL threads may use")
    p.add_argument("--env", metavar="KEY=VALUE", help="a variable for every rank (repeatable), e.g. TOROID_REPRO=exact")
    p.add_argument("--run-dir", metavar="DIR", help="where mpirun-<time>/ goes (default <repo>/run)")
    p.add_argument("--no-tag-output", action="store_true", help="forward lines without the rank prefix")
    p.add_argument("-q", "--quiet", action="store_true", help="no launcher line unless something fails")
    p.add_argument("--no-stop", action="store_true",
                   help="when a rank dies or aborts, leave the others to find out through their links")
    return p


class Plan:
    def __init__(self, rig, options, command):
        self.rig = rig
        self.options = options   # the launcher's options, in order, without --rig
        self.command = command   # PROGRAM [ARGS...] (after a `--` if one was given)

    def launcher_args(self, paths):
        """The launcher's argv after its name: --run-dir <repo>/run first unless the options name one."""
        return with_run_dir(paths, self.options) + self.command


def parse(argv):
    """The Plan of a command line; UsageError for what the launcher would
    refuse anyway, so that nothing is built first."""
    rig, out, command, have_dims = "host", [], [], False
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if a == "--":
            command = argv[i:] if i + 1 < len(argv) else []
            break
        if not a.startswith("-") or a == "-":
            command = argv[i:]
            break
        if name in VALUE_OPTIONS:
            if eq:
                value = inline
            elif i + 1 < len(argv):
                value = argv[i + 1]
                i += 1
            else:
                raise UsageError(NAME, "mpirun: %s needs a value" % name)
            if name == "--rig":
                if value not in RIGS:
                    raise UsageError(NAME, "mpirun: unknown rig '%s' (available: %s)" % (value, " ".join(RIGS)))
                rig = value
            else:
                if name == "--dims":
                    check_dims(NAME, value, "2x2x2")
                elif name == "--driver" and value not in DRIVERS:
                    raise UsageError(NAME, "mpirun: unknown driver '%s' (available: %s)" % (value, " ".join(DRIVERS)))
                elif name in ("-n", "-np", "--np") and not (value.isdigit() and int(value) >= 1):
                    raise UsageError(NAME, "mpirun: -n '%s' is not a rank count" % value)
                have_dims = have_dims or name in ("-n", "-np", "--np", "--dims")
                out += [name, value]
        else:
            # Flags (and options the launcher may add later) pass as they are.
            out.append(a)
        i += 1
    if not have_dims:
        raise UsageError(NAME, "mpirun: give -n N or --dims XxYxZ")
    if not command:
        raise UsageError(NAME, "mpirun: no PROGRAM to run")
    return Plan(rig, out, command)


def run(ctx, argv):
    # --help before PROGRAM is ours; after it, the program's.
    head = []
    for a in argv:
        if a == "--" or not a.startswith("-"):
            break
        head.append(a)
    if wants_help(head):
        ctx.parser(NAME).print_help()
        return 0
    plan = parse(argv)
    if plan.rig == "qemu":
        raise Failure("mpirun: --rig qemu is not provided yet: MPI programs run on the host rig only "
                      "(docs/mpi.md)")
    build.prepare(ctx.paths, ctx.err)
    launcher = require_binary(NAME, ctx.paths.binary("build", MPIRUN_BIN_REL), ctx.paths)
    exec_program([launcher] + plan.launcher_args(ctx.paths))
