"""./toroid rig: the host rig, build/firmware/toroid-rig, one process per node."""
from . import build
from .common import RIG_BIN_REL, exec_program, require_binary, usage, wants_help, with_run_dir

NAME = "rig"
SYNOPSIS = ["--dims XxYxZ --job JOB [--driver memif|uring|af_xdp|af_packet] [ARGS...]"]
SUMMARY = ("build (quietly if up to date), then run the host rig, build/%s, with ARGS (af_xdp, af_packet: "
           "a node per network namespace, veth cables, booting from a topology file)" % RIG_BIN_REL)
NEEDS_TREE = False


def add_parser(sub, prog):
    # Every argument goes to the rig, --help included: these options are
    # listed for `toroid help rig` and the man page, the rig parses them.
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, add_help=False,
                       usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Builds build/ (release; silent when up to date, build output goes to stderr),
then execs build/%s ARGS, adding --run-dir <repo>/run unless ARGS
name one. `%s rig --help` prints the rig's own help, which lists every option.

The host rig runs one toroid-node process per node, cabled by DPDK memif
pairs (default) or io_uring unix sockets, streams their logs with node
prefixes (and to run/rig-<timestamp>/node-X-Y-Z.log), prints the case table
and a verdict line, and stops every node. Ctrl-C stops it cleanly.
--driver af_xdp and af_packet (root) put each node in its own network
namespace, cabled by veth pairs, booting from a topology file (docs/deploy.md).
docs/host-rig.md is the reference.""" % (RIG_BIN_REL, prog),
                       epilog="""\
exit status: the rig's status (0 every node passed, 1 a failure, 2 usage,
130 interrupted); 1 if the build failed""")
    p.add_argument("-h", "--help", action="store_true", help="the rig's own help (toroid-rig --help)")
    p.add_argument("--dims", metavar="XxYxZ", help="partition shape (required)")
    p.add_argument("--job", metavar="JOB", help="selftest | coll | traffic | train | bench (required)")
    p.add_argument("--driver", metavar="D", help="memif (default) | uring | af_xdp | af_packet")
    p.add_argument("--run-dir", metavar="DIR", help="where rig-<timestamp>/ goes (default <repo>/run)")
    p.add_argument("--pcap", metavar="DIR", help="every node captures its ports' frames (docs/capture.md)")
    p.add_argument("--hold", metavar="D", help="keep the nodes idle D after the job; report their CPU")
    g = p.add_argument_group("fault tests")
    g.add_argument("--kill", metavar="X,Y,Z[@D]", help="SIGKILL a node D after training")
    g.add_argument("--freeze", metavar="X,Y,Z[@D]", help="SIGSTOP it instead (a hung node)")
    g.add_argument("--remove-socket", metavar="X,Y,Z:DIR", help="remove a link's socket before it connects")
    g.add_argument("--swap-veths", metavar="X,Y,Z:D1,D2", help="af_xdp/af_packet: miscable a node")
    return p


def run(ctx, argv):
    # Keep stdout for the rig: setup and build chatter goes to stderr.
    build.prepare(ctx.paths, ctx.err)
    rig = require_binary(NAME, ctx.paths.binary("build", RIG_BIN_REL), ctx.paths)
    if wants_help(argv):
        exec_program([rig, "--help"])
    exec_program([rig] + with_run_dir(ctx.paths, argv))
