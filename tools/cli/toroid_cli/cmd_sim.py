"""./toroid sim: the sim rig, build/firmware/toroid-sim, every node in one process."""
from . import build
from .common import SIM_BIN_REL, exec_program, require_binary, usage

NAME = "sim"
SYNOPSIS = ["[ARGS...]", "--dims XxYxZ --job JOB [--seed N] [--faults SPEC]"]
SUMMARY = "build (quietly if up to date), then run build/%s with ARGS" % SIM_BIN_REL
NEEDS_TREE = False


def add_parser(sub, prog):
    # Every argument goes to the simulator, --help included: these options are
    # listed for `toroid help sim` and the man page, the simulator parses them.
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, add_help=False,
                       usage=usage(prog, NAME, *([s] for s in SYNOPSIS)),
                       description="""\
Builds build/ (release; silent when up to date, build output goes to stderr),
then execs build/%s ARGS. `%s sim --help` prints the simulator's
own help, which lists every option and job (docs/sim.md).

SPEC is a comma-separated list of faults, e.g.
  drop=0.05,corrupt=0.01,dup=0.01,reorder=0.05,delay=2us,linkdown=1.0.1:x+@300us
    drop, corrupt, dup, reorder   probabilities 0..1
    delay=D                       fixed extra latency (e.g. 2us)
    jitter=D                      random extra latency up to D
    linkdown=X.Y.Z:DIR[@T]        DIR one of x+ x- y+ y- z+ z-; no @T = dead from boot
only linkdown may repeat (several cut links); any other key twice is an error.""" % (SIM_BIN_REL, prog),
                       epilog="exit status: the simulator's status; 1 if the build failed")
    p.add_argument("-h", "--help", action="store_true", help="the simulator's own help (toroid-sim --help)")
    p.add_argument("--dims", metavar="XxYxZ", help="partition shape")
    p.add_argument("--job", metavar="JOB", help="selftest | coll | traffic | train | bench | scaling")
    p.add_argument("--seed", metavar="N", help="seed of the fault plan and the job's data")
    p.add_argument("--faults", metavar="SPEC", help="seeded faults (above)")
    p.add_argument("--threads", metavar="N", help="scheduler threads (the same events and trace hash as one)")
    p.add_argument("--link-model", metavar="MODEL", help="default | bgl (Blue Gene/L's torus, tree and barrier networks)")
    p.add_argument("--pcap", metavar="DIR", help="capture every port's frames in virtual time (docs/capture.md)")
    return p


def run(ctx, argv):
    # Keep stdout for the simulator: setup and build chatter goes to stderr.
    build.prepare(ctx.paths, ctx.err)
    sim = require_binary(NAME, ctx.paths.binary("build", SIM_BIN_REL), ctx.paths)
    exec_program([sim] + argv)
