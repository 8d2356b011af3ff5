#!/usr/bin/env python3
"""Suite `install`: the .deb installs and runs on a bare Debian 12.

    deb_check.py BUILD_DIR

Builds the package (packaging/make_deb.py, what `./toroid package` runs),
makes a minimal bookworm root with debootstrap from the mirror apt already
uses, installs the package there with `apt-get install ./toroid_*.deb` (its
Depends only: --no-install-recommends), and inside it with chroot: checks
dpkg's status, starts toroid-node --help (every library it links resolves
from Debian's packages) and runs `toroid selftest --rig sim`. The root is
unmounted and removed afterwards; if an unmount fails it is left in place
and the message names it.

Exit status: 0 pass, 1 fail, 2 usage, 77 skip (not root, or no debootstrap).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SUITE = "bookworm"


class Fail(Exception):
    pass


def step(what, cmd, timeout, hint=""):
    print(f"deb: {what}\n$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Fail(f"{what}: no result within {timeout} s{hint}")
    lines = r.stdout.strip().splitlines()
    print("\n".join(lines[-12:]))
    print(f"(exit {r.returncode} after {time.monotonic() - t0:.1f} s)", flush=True)
    if r.returncode != 0:
        raise Fail(f"{what} failed (exit {r.returncode}){hint}")
    return r.stdout


def debian_mirror():
    """The URI apt uses for SUITE main (deb822 .sources first, then .list)."""
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for stanza in open(path).read().split("\n\n"):
            f = {}
            for line in stanza.splitlines():
                m = re.match(r"(\w[\w-]*):\s*(.*)", line)
                if m:
                    f[m.group(1).lower()] = m.group(2).split()
            if "deb" in f.get("types", []) and SUITE in f.get("suites", []) and "main" in f.get("components", []):
                return f["uris"][0]
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        if not os.path.exists(path):
            continue
        for line in open(path):
            m = re.match(r"\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+" + SUITE + r"\s.*\bmain\b", line)
            if m:
                return m.group(1)
    return "http://deb.debian.org/debian"


def mounts_under(path):
    out = []
    for line in open("/proc/mounts"):
        target = line.split()[1].replace("\\040", " ")
        if target == path or target.startswith(path + "/"):
            out.append(target)
    return sorted(out, key=len, reverse=True)


def remove_root(rootfs):
    for m in mounts_under(rootfs):
        subprocess.run(["umount", m], timeout=60)
    left = mounts_under(rootfs)
    if left:
        print(f"deb: could not unmount {', '.join(left)}; leaving {rootfs} in place (unmount, then remove it)")
        return False
    shutil.rmtree(rootfs, ignore_errors=True)
    return True


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    if os.geteuid() != 0:
        print("SKIP: debootstrap and chroot need root")
        return 77
    for tool in ("debootstrap", "dpkg-deb", "dpkg-shlibdeps"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (./toroid setup installs debootstrap and dpkg-dev)")
            return 77
    build = os.path.abspath(argv[0])
    tmp = tempfile.mkdtemp(prefix="toroid-deb-check-")
    rootfs = os.path.join(tmp, "root")
    removed = True
    try:
        step("building the package", [sys.executable, os.path.join(ROOT, "packaging", "make_deb.py"),
                                      "--build-dir", build, "--out", tmp], 600)
        debs = glob.glob(os.path.join(tmp, "toroid_*.deb"))
        if len(debs) != 1:
            raise Fail(f"expected one toroid_*.deb in {tmp}, found {len(debs)}")
        mirror = debian_mirror()
        step(f"a minimal Debian 12 root from {mirror}",
             ["debootstrap", "--variant=minbase", SUITE, rootfs, mirror], 900,
             f" (is {mirror} reachable from here?)")
        removed = False
        shutil.copy("/etc/resolv.conf", os.path.join(rootfs, "etc", "resolv.conf"))
        step("mounting /proc in the root", ["mount", "-t", "proc", "proc", os.path.join(rootfs, "proc")], 60)
        deb = os.path.basename(debs[0])
        shutil.copy(debs[0], os.path.join(rootfs, "root", deb))
        chroot = ["chroot", rootfs, "env", "HOME=/root", "DEBIAN_FRONTEND=noninteractive", "LANG=C.UTF-8",
                  "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
        step("apt-get update in the root", chroot + ["apt-get", "update"], 300, f" (is {mirror} reachable?)")
        step(f"apt-get install ./{deb} in the root",
             chroot + ["sh", "-c", f"cd /root && apt-get install -y --no-install-recommends ./{deb}"], 600,
             " (a Depends that Debian 12 cannot satisfy shows above)")
        status = step("dpkg's status of toroid", chroot + ["dpkg-query", "-W", "-f=${Status} ${Version}\\n",
                                                           "toroid"], 60)
        if "install ok installed" not in status:
            raise Fail(f"toroid is not installed in the root: {status.strip()}")
        node = step("toroid-node --help (its shared libraries resolve)", chroot + ["toroid-node", "--help"], 60)
        if "usage: toroid-node" not in node:
            raise Fail("toroid-node --help printed no usage")
        out = step("toroid selftest --rig sim in the root", chroot + ["toroid", "selftest", "--rig", "sim"], 900)
        if "verdict: PASS (8/8 nodes passed)" not in out:
            raise Fail("the self-test in the root did not report 8/8 nodes passed")
        print("PASS")
        return 0
    except (Fail, OSError) as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        if os.path.isdir(rootfs):
            removed = remove_root(rootfs)
        if removed:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
