"""./toroid qemu: one QEMU VM per node, toroid-node as PID 1 (qemu/toroid_qemu.py)."""
import os
import sys

from . import build
from .common import exec_program, usage, wants_help

NAME = "qemu"
SYNOPSIS = ["[--dims XxYxZ] [--job JOB] [--mem MB] [--accel kvm|tcg] [--net uio|kernel]",
            "[--swap-nics X.Y.Z:D1,D2] [--timeout S] [ARGS...]"]
SUMMARY = ("build, make the guest image if stale, boot one QEMU VM per node (toroid-node as PID 1) and "
           "collect the verdicts from their consoles")
NEEDS_TREE = False


def add_parser(sub, prog):
    # The launcher parses the arguments; these are listed for --help and the
    # man page (python3 qemu/toroid_qemu.py --help lists every option).
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY,
                       usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Runs setup + build (release, build/), builds the guest image in build/qemu/ if
it is stale (Debian's kernel package, fetched once with apt-get download, and an
initramfs whose /init is build/firmware/toroid-node), then boots one VM per node
(qemu/toroid_qemu.py). Every torus link is a pair of virtio-net NICs joined by
a QEMU -netdev dgram unix-socket pair; port i of a node is the NIC at PCI
00:(4+i).0. The launcher shows each node's boot, link training and verdict,
prints the job's case table and the boot-to-verdict time, kills only its own
VMs, removes its sockets and exits with the cluster's verdict. Consoles are
kept in build/qemu/run/node-X-Y-Z.log. docs/qemu.md is the reference.

Under TCG the self-test runs at level quick unless --arg level=... is given;
--arg level=full runs the whole matrix (1724 cases, about 5 minutes on 8 VMs
sharing 2 cores) with the deadlines scaled to match.""",
                       epilog="""\
exit status: 0 every node passed, 1 a node failed or the run timed out (or the
build failed), 2 usage error, 130 interrupted""")
    p.add_argument("--dims", metavar="XxYxZ", help="torus dimensions (default 2x2x2)")
    p.add_argument("--job", metavar="JOB", help="job to run (default selftest)")
    p.add_argument("--mem", metavar="MB", help="RAM per VM (default 512)")
    p.add_argument("--accel", metavar="tcg|kvm", help="tcg (default, -cpu max) or kvm (-cpu host)")
    p.add_argument("--net", metavar="uio|kernel",
                   help="uio (default): NICs on uio_pci_generic, DPDK's virtio PMD (kernel bypass); kernel: "
                        "virtio_net interfaces through an AF_PACKET socket (fallback; --kdrv uring|af_packet)")
    p.add_argument("--swap-nics", metavar="X.Y.Z:D1,D2", help="miswire on purpose: exchange two NICs' cables on one VM")
    p.add_argument("--timeout", metavar="S",
                   help="limit for the whole run (default 120 + 20 per VM, plus the job's deadline for a full "
                        "self-test under TCG)")
    p.add_argument("--pcap", metavar="DIR", help="capture every NIC with QEMU's filter-dump (docs/capture.md)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every console line")
    return p


def run(ctx, argv):
    if wants_help(argv):
        ctx.parser(NAME).print_help()
        return 0
    build.prepare(ctx.paths, ctx.out)
    paths = ctx.paths
    if paths.installed:
        exec_program([sys.executable, os.path.join(paths.share_dir, "qemu", "toroid_qemu.py"),
                      "--build-dir", paths.state_dir, "--node-bin", os.path.join(paths.root, "toroid-node")] + argv)
    exec_program([sys.executable, os.path.join(paths.root, "qemu", "toroid_qemu.py"),
                  "--build-dir", os.path.join(paths.root, "build")] + argv)
