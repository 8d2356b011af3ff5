#!/usr/bin/env python3
"""Builds toroid_VERSION_ARCH.deb from a meson build dir (`./toroid package`).

    make_deb.py --build-dir BUILD [--out DIR]

With Debian's own tools, from a staged install rather than a second build:
`meson install --destdir` stages the release build; the staged prefix (by
default /usr/local) moves to /usr, which is safe because nothing installed
names its prefix (docs/install.md; the install suite checks it) but
toroid.pc, whose prefix line is rewritten; dpkg-shlibdeps turns the ELF
binaries' libraries into Debian package names, `dpkg -S` names the packages
of the DPDK drivers that EAL loads as plugins (memif, af_packet, virtio, the
mempool and buses), and dpkg-deb builds the archive. docs/install.md.

Exit status: 0 built, 1 failed, 2 usage.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# DPDK drivers that EAL loads from its plugin directory at run time: no
# binary links them, so dpkg-shlibdeps cannot see them.
DPDK_PLUGINS = ("net_memif", "net_af_packet", "net_virtio", "mempool_ring", "bus_vdev", "bus_pci")
# The toroid CLI is a Python program (standard library only).
DEPENDS = ["python3"]
RECOMMENDS = "qemu-system-x86, pkg-config, libpcap-dev"
SUGGESTS = "tshark"
MAINTAINER = "Toroid maintainers <maintainers@toroid.invalid>"


class Fail(Exception):
    pass


def out(cmd, cwd=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    if r.returncode != 0:
        raise Fail(f"{' '.join(cmd[:3])} ... failed (exit {r.returncode}):\n{r.stderr.strip()}")
    return r.stdout


def introspect(build, what):
    return json.loads(out(["meson", "introspect", build, what]))


def plugin_packages():
    pkgs = []
    for name in DPDK_PLUGINS:
        files = glob.glob(f"/usr/lib/*/dpdk/pmds-*/librte_{name}.so.*")
        if not files:
            raise Fail(f"DPDK plugin librte_{name} not found (is dpdk installed? ./toroid setup)")
        owner = out(["dpkg", "-S", files[0]]).split(":")[0]
        if owner not in pkgs:
            pkgs.append(owner)
    return pkgs


def shlib_depends(root, elves):
    """dpkg-shlibdeps needs a debian/control beside it: a minimal one."""
    with tempfile.TemporaryDirectory(prefix="toroid-shlibdeps-") as src:
        os.makedirs(os.path.join(src, "debian"))
        with open(os.path.join(src, "debian", "control"), "w") as f:
            f.write(f"Source: toroid\nMaintainer: {MAINTAINER}\n\nPackage: toroid\nArchitecture: any\n")
        text = out(["dpkg-shlibdeps", "-O"] + [os.path.join(root, e) for e in elves], cwd=src)
    m = re.search(r"^shlibs:Depends=(.*)$", text, re.M)
    if not m:
        raise Fail("dpkg-shlibdeps printed no shlibs:Depends")
    return m.group(1).strip()


def main(argv):
    ap = argparse.ArgumentParser(description="Build the Toroid .deb from a meson build dir.")
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--out", help="directory for the .deb (default: the build dir)")
    a = ap.parse_args(argv)
    build = os.path.abspath(a.build_dir)
    outdir = os.path.abspath(a.out or build)
    try:
        for tool in ("dpkg-deb", "dpkg-shlibdeps", "dpkg-architecture"):
            if not shutil.which(tool):
                raise Fail(f"{tool} not found (Debian's dpkg-dev; ./toroid setup installs it)")
        opts = {o["name"]: o["value"] for o in introspect(build, "--buildoptions")}
        version = introspect(build, "--projectinfo")["version"]
        arch = out(["dpkg-architecture", "-qDEB_HOST_ARCH"]).strip()
        prefix = opts["prefix"]
        with tempfile.TemporaryDirectory(prefix="toroid-deb-") as tmp:
            stage, root = os.path.join(tmp, "stage"), os.path.join(tmp, "root")
            print(f"package: staging the install of {build} (prefix {prefix})", flush=True)
            out(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", stage])
            os.makedirs(os.path.join(root, "usr"))
            staged = stage + prefix
            for entry in os.listdir(staged):
                shutil.move(os.path.join(staged, entry), os.path.join(root, "usr", entry))
            pcs = glob.glob(os.path.join(root, "usr", "lib", "*", "pkgconfig", "toroid.pc"))
            if len(pcs) != 1:
                raise Fail("toroid.pc not found in the staged install")
            text = open(pcs[0]).read()
            text = re.sub(r"^prefix=.*$", "prefix=/usr", text, count=1, flags=re.M)
            open(pcs[0], "w").write(text)
            doc = os.path.join(root, "usr", "share", "doc", "toroid")
            with open(os.path.join(doc, "copyright"), "w") as f:
                f.write("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
                        "Upstream-Name: toroid\n\nFiles: *\nLicense: Apache-2.0\n"
                        " On Debian systems the license is in /usr/share/common-licenses/Apache-2.0.\n")
            elves = [f"usr/bin/{b}" for b in ("toroid-sim", "toroid-node", "toroid-rig")]
            depends = ", ".join([shlib_depends(root, elves)] + plugin_packages() + DEPENDS)
            size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs) // 1024
            os.makedirs(os.path.join(root, "DEBIAN"))
            with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
                f.write(f"Package: toroid\nVersion: {version}\nArchitecture: {arch}\nMaintainer: {MAINTAINER}\n"
                        f"Installed-Size: {size}\nDepends: {depends}\nRecommends: {RECOMMENDS}\n"
                        f"Suggests: {SUGGESTS}\nSection: net\nPriority: optional\n"
                        "Description: node runtime for Blue Gene/L-style torus machines\n"
                        " Toroid runs one compute node of a 3-D torus: link training, reliable\n"
                        " links, a deadlock-free torus router, collectives, on a sim rig, as\n"
                        " processes linked by DPDK memif or io_uring, or in QEMU VMs. Includes\n"
                        " the toroid CLI, toroid-sim, toroid-node, toroid-rig, libtoroid.a with\n"
                        " its headers and toroid.pc, and a Wireshark dissector.\n")
            os.makedirs(outdir, exist_ok=True)
            deb = os.path.join(outdir, f"toroid_{version}_{arch}.deb")
            out(["dpkg-deb", "--root-owner-group", "--build", root, deb])
        print(f"package: {deb} ({os.path.getsize(deb) // 1024} KiB)")
        print(f"package: Depends: {depends}")
        return 0
    except (Fail, OSError, KeyError) as e:
        print(f"package: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
