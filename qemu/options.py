"""The qemu launcher's command line (qemu/toroid_qemu.py; docs/qemu.md lists
every option with its default)."""
from __future__ import annotations

import argparse

QEMU = "qemu-system-x86_64"


def build_parser():
    ap = argparse.ArgumentParser(prog="toroid qemu",
                                 description="Boot one QEMU VM per torus node (Debian kernel, toroid-node as PID 1), "
                                             "run a job, collect the verdicts from the serial consoles.")
    ap.add_argument("--dims", default="2x2x2", help="torus dimensions XxYxZ (default 2x2x2)")
    ap.add_argument("--job", default="selftest", help="job to run (default selftest)")
    ap.add_argument("--seed", default="1", help="the job's seed (default 1)")
    ap.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE", help="a job argument (repeatable)")
    ap.add_argument("--mem", type=int, default=512, help="MB of RAM per VM (default 512)")
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg", help="tcg (default; -cpu max) or kvm (-cpu host)")
    ap.add_argument("--net", choices=["uio", "kernel"], default="uio",
                    help="uio: NICs bound to uio_pci_generic, DPDK's virtio PMD (kernel bypass, default); "
                         "kernel: virtio_net interfaces through af_packet (fallback)")
    ap.add_argument("--kdrv", choices=["uring", "af_packet"], default="uring",
                    help="port driver in --net kernel: the io_uring AF_PACKET port (default) or DPDK net_af_packet")
    ap.add_argument("--swap-nics", action="append", default=[], metavar="X.Y.Z:D1,D2",
                    help="miswire on purpose: exchange the cables of two NICs of one VM (repeatable, one per VM)")
    ap.add_argument("--timeout", type=float, default=0, help="seconds for the whole run (default 120 + 20 per VM, plus the --job-timeout "
                         "for a full self-test under TCG)")
    ap.add_argument("--boot-timeout", type=float, default=0,
                    help="seconds for a VM to reach /init (default 60 + 10 per VM; 0 in --accel kvm means the same)")
    ap.add_argument("--train-timeout", type=float, default=0,
                    help="link-training deadline in the guest, seconds (default 60 + 5 per VM: nodes boot at "
                         "different times)")
    ap.add_argument("--link-timeout", type=float, default=0,
                    help="seconds a link may make no progress or hear nothing before it goes down in the guest "
                         "(default: 5 under TCG, where a host that deschedules a vCPU for a second or two must "
                         "slow a link, not kill it; the node's 0.5 under KVM)")
    ap.add_argument("--coll-timeout", type=float, default=0,
                    help="one collective's deadline in the guest, seconds (default: 120 under TCG, the node's 30 "
                         "under KVM)")
    ap.add_argument("--job-timeout", type=float, default=0,
                    help="the job's deadline in the guest, seconds (default: 60 + 120 per VM for a full "
                         "self-test under TCG, else the node's 120)")
    ap.add_argument("--linger", type=float, default=3, help="seconds a node keeps serving its links after its verdict")
    ap.add_argument("--fail-grace", type=float, default=15,
                    help="after the first failed node, seconds to wait for the other verdicts (default 15)")
    ap.add_argument("--hugepages", type=int, default=64, help="2 MB hugepages per guest in --net uio (default 64)")
    ap.add_argument("--mtu", type=int, default=1500, help="the NICs' MTU (virtio host_mtu, default 1500)")
    ap.add_argument("--loglevel", type=int, default=3, help="guest kernel console loglevel (default 3: errors)")
    ap.add_argument("--node-log", choices=["error", "warn", "info", "debug"], help="toroid-node's log level")
    ap.add_argument("--build-dir", default=None, help="meson build dir (default: build/ next to qemu/)")
    ap.add_argument("--node-bin", help="the guest's /init (default BUILD/firmware/toroid-node)")
    ap.add_argument("--kernel", help="Debian kernel version, e.g. 6.1.0-56-amd64 (default: cached, else apt's)")
    ap.add_argument("--rebuild-image", action="store_true", help="rebuild the initramfs even if up to date")
    ap.add_argument("--log-dir", help="where the consoles go (default BUILD/qemu/run/)")
    ap.add_argument("--progress", choices=["boot", "all"], default="boot",
                    help="boot: boot, training and verdict lines (default); all: port binding too")
    ap.add_argument("--pcap", metavar="DIR",
                    help="capture every NIC's frames, both directions, to DIR/node-X-Y-Z-portN-DIR.pcap "
                         "(QEMU's filter-dump on each netdev; docs/capture.md)")
    ap.add_argument("-v", "--verbose", action="store_true", help="show every console line")
    ap.add_argument("--qemu", default=QEMU, help=argparse.SUPPRESS)
    ap.add_argument("--skip-if-no-qemu", action="store_true",
                    help="exit 77 (skip) when QEMU cannot start here at all (the test suite uses it)")
    return ap
