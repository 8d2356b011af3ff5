"""./toroid mpirun: an MPI program built with toroid-mpicc, one rank per node
(mpi/launcher/toroid-mpirun on the host rig, qemu/mpirun_qemu.py on the QEMU
cluster; docs/mpi.md)."""
import os
import sys

from . import build
from .common import MPIRUN_BIN_REL, UsageError, check_dims, exec_program, require_binary, usage, \
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
                 "--train-timeout", "--cpus", "--env", "--run-dir") + ("--net", "--mem", "--accel", "--boot-timeout",
                                                                      "--link-timeout")
# Each rig's own options: the other rig refuses them before anything is built.
QEMU_ONLY = ("--net", "--mem", "--accel", "--boot-timeout", "--link-timeout", "-v", "--verbose")
HOST_ONLY = ("--driver", "--cpus", "--no-stop")
QEMU_LAUNCHER_REL = os.path.join("qemu", "mpirun_qemu.py")


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

--rig qemu runs the program on the QEMU cluster (qemu/mpirun_qemu.py,
docs/qemu.md): one VM per node (2 to 64), the program and the libraries it
needs packed into the guest image, run by each guest's PID 1 as the node's
application with the node's personality; its lines are forwarded with the
rank in front, the launcher's own lines and each rank's exit status go to
stderr, consoles and rank-R.out files to <run-dir>/mpirun-qemu-<time>/.
Under TCG a 2x2x2 cluster boots in about 30 s before MPI_Init returns.""" % MPIRUN_BIN_REL,
                       epilog="""\
exit status: MPI_Abort's code, else the first failing rank's status (128+N
for signal N), 0 when every rank exited 0; 1 if the build failed (qemu: or a
VM failed before its program ran, or the run timed out); 2 usage""")
    p.add_argument("-h", "--help", action="store_true", help="this text")
    p.add_argument("-n", "-np", metavar="N", help="N ranks on the most balanced torus (8: 2x2x2)")
    p.add_argument("--dims", metavar="XxYxZ", help="the torus (its node count is the rank count)")
    p.add_argument("--driver", metavar="D", help="memif (default, 9000-byte frames) | uring")
    p.add_argument("--rig", metavar="R", help="host (default): processes on this machine | qemu: one VM per node")
    p.add_argument("--timeout", metavar="D", help="the whole job (default 600s; qemu: from the program's start)")
    p.add_argument("--wait-timeout", metavar="D", help="each blocking MPI call (default 300s)")
    p.add_argument("--train-timeout", metavar="D",
                   help="link training in MPI_Init (default 20s; qemu: 60s + 5s per VM)")
    p.add_argument("--cpus", metavar="LIST", help="CPUs the ranks' EAL threads may use")
    p.add_argument("--env", metavar="KEY=VALUE", help="a variable for every rank (repeatable), e.g. TOROID_REPRO=exact")
    p.add_argument("--run-dir", metavar="DIR", help="where mpirun-<time>/ goes (default <repo>/run)")
    p.add_argument("--no-tag-output", action="store_true", help="forward lines without the rank prefix")
    p.add_argument("-q", "--quiet", action="store_true", help="no launcher line unless something fails")
    p.add_argument("--no-stop", action="store_true",
                   help="when a rank dies or aborts, leave the others to find out through their links")
    q = p.add_argument_group("options of --rig qemu (docs/qemu.md; --driver, --cpus and --no-stop are the host's)")
    q.add_argument("--net", metavar="N", help="uio (default): DPDK virtio PMD, kernel bypass | kernel: virtio_net")
    q.add_argument("--mem", metavar="MB", help="RAM per VM (default 512)")
    q.add_argument("--accel", metavar="A", help="tcg (default) | kvm")
    q.add_argument("--boot-timeout", metavar="S", help="seconds for a VM to reach /init (default 60 + 10 per VM)")
    q.add_argument("--link-timeout", metavar="S", help="seconds a silent link may take before it goes down (TCG: 5)")
    q.add_argument("-v", "--verbose", action="store_true", help="every console line")
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
    own, other = (QEMU_ONLY, "qemu") if rig == "host" else (HOST_ONLY, "host")
    for a in out:
        if a.partition("=")[0] in own:
            raise UsageError(NAME, "mpirun: %s is an option of --rig %s" % (a.partition("=")[0], other))
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
    build.prepare(ctx.paths, ctx.err)
    if plan.rig == "qemu":
        paths = ctx.paths
        if paths.installed:
            exec_program([sys.executable, os.path.join(paths.share_dir, QEMU_LAUNCHER_REL), "--build-dir",
                          paths.state_dir, "--node-bin", os.path.join(paths.root, "toroid-node")]
                         + plan.launcher_args(paths))
        exec_program([sys.executable, os.path.join(paths.root, QEMU_LAUNCHER_REL), "--build-dir",
                      os.path.join(paths.root, "build")] + plan.launcher_args(paths))
    launcher = require_binary(NAME, ctx.paths.binary("build", MPIRUN_BIN_REL), ctx.paths)
    exec_program([launcher] + plan.launcher_args(ctx.paths))
