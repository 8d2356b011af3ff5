#!/usr/bin/env python3
"""Guest image for the qemu rig: Debian's kernel and an initramfs built here.

The kernel comes from Debian's own package (linux-image-6.1.0-N-amd64), fetched
once with `apt-get download`, unpacked with `dpkg-deb -x` and cached under
BUILD/qemu/kernel/. The initramfs (cpio newc, gzip) is written by this script,
without root: entries, modes, symlinks and device nodes are emitted directly.

    /init                         the node program (toroid-node) or a test init
    /usr/lib/...                  the shared libraries it needs (ldd), with Debian's
                                  symlink layout kept (DPDK: the real files live in
                                  dpdk/pmds-23.0/, /usr/lib/x86_64-linux-gnu/ holds
                                  symlinks; a flat copy would make EAL load a bus
                                  driver twice and panic)
    /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/
                                  only the plugins the guest uses: net_virtio,
                                  net_af_packet, mempool_ring (and what they link)
    /lib/modules/KVER/            virtio_pci, virtio_net, uio, uio_pci_generic and
                                  their dependencies, a modules.dep for exactly
                                  those, modules.builtin
    /dev/console /dev/null /dev/ttyS0, /proc /sys /run /tmp, /var/run -> ../run
    /etc/toroid-image             what went in (kernel version, node binary, modules)

Rebuilt only when stale: BUILD/qemu/image.json records every input (path, size,
mtime) and this script's own hash; `ensure_image()` compares.

Run as a script: python3 qemu/image.py --build-dir build [--init FILE] [--force]
"""
from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import time

# Modules the guest may load (pid1 picks per toroid.net): uio mode loads
# uio + uio_pci_generic and leaves the NICs to DPDK; kernel mode loads
# virtio_pci + virtio_net and uses af_packet (built into Debian's kernel).
GUEST_MODULES = ["virtio_pci", "virtio_net", "uio", "uio_pci_generic"]
# DPDK plugins shipped in the guest's plugin dir (EAL loads every *.so.23 there).
DPDK_PLUGINS = ["net_virtio", "net_af_packet", "mempool_ring"]
DPDK_PMD_DIR = "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0"
KERNEL_FLAVOUR = "amd64"
KERNEL_PKG_RE = re.compile(r"^linux-image-(6\.1\.0-(\d+)-amd64)$")
IMAGE_FORMAT = 3  # bump when the layout changes


class ImageError(Exception):
    pass


def log(msg: str) -> None:
    print("qemu-image: " + msg, file=sys.stderr, flush=True)


def run(cmd: list[str], **kw) -> str:
    try:
        r = subprocess.run(cmd, check=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=kw.pop("timeout", 600), **kw)
    except FileNotFoundError:
        raise ImageError(f"{cmd[0]} not found (./toroid setup installs what the qemu rig needs)")
    except subprocess.TimeoutExpired:
        raise ImageError(f"{' '.join(cmd)} timed out")
    if r.returncode != 0:
        raise ImageError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return r.stdout


# ---------------------------------------------------------------------------
# kernel


def _kernel_candidates() -> list[str]:
    """Kernel package names, best first: installed ones, the metapackage's
    choice, then every 6.1.0-N-amd64 apt knows, newest first."""
    names: list[str] = []
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\n", "linux-image-6.1.0-*-amd64"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
        for line in out.splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1].endswith("installed") and KERNEL_PKG_RE.match(parts[0]):
                names.append(parts[0])
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        out = run(["apt-cache", "depends", f"linux-image-{KERNEL_FLAVOUR}"], timeout=60)
        for line in out.splitlines():
            m = re.match(r"\s*Depends:\s*(linux-image-\S+)", line)
            if m and KERNEL_PKG_RE.match(m.group(1)):
                names.append(m.group(1))
    except ImageError:
        pass
    try:
        out = run(["apt-cache", "search", "--names-only", r"^linux-image-6\.1\.0-[0-9]+-amd64$"], timeout=60)
        found = []
        for line in out.splitlines():
            name = line.split(" ", 1)[0]
            m = KERNEL_PKG_RE.match(name)
            if m:
                found.append((int(m.group(2)), name))
        names += [n for _, n in sorted(found, reverse=True)]
    except ImageError:
        pass
    seen, ordered = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            ordered.append(n)
    return ordered


def ensure_kernel(cache: str, want: str | None = None) -> tuple[str, str, str]:
    """Returns (vmlinuz, modules_root, kver). Uses a cached unpacked kernel
    when there is one (no apt access needed then)."""
    kdir = os.path.join(cache, "kernel")
    os.makedirs(kdir, exist_ok=True)

    def unpacked(kver: str):
        root = os.path.join(kdir, kver, "root")
        vml = os.path.join(root, "boot", f"vmlinuz-{kver}")
        mods = os.path.join(root, "lib", "modules", kver)
        if os.path.isfile(vml) and os.path.isdir(mods) and os.path.isfile(os.path.join(kdir, kver, ".complete")):
            return vml, mods
        return None

    if want:
        want = want.removeprefix("linux-image-")
    # A cached kernel wins unless a version was asked for.
    cached = sorted((d for d in os.listdir(kdir) if unpacked(d)), key=lambda d: int(d.split("-")[1]), reverse=True)
    if want and unpacked(want):
        return (*unpacked(want), want)
    if cached and not want:
        return (*unpacked(cached[0]), cached[0])

    # Another build dir of this checkout (build-debug/, build-asan/, ...) may
    # hold the package already: no network needed then.
    if not want:
        siblings = []
        for d in glob.glob(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(cache))), "*", "qemu", "kernel",
                                        "*", "linux-image-*.deb")):
            m = re.search(r"linux-image-(6\.1\.0-(\d+)-amd64)_", os.path.basename(d))
            if m and os.path.dirname(os.path.dirname(d)) != kdir:
                siblings.append((int(m.group(2)), m.group(1), d))
        if siblings:
            _, kver, deb = max(siblings)
            vdir = os.path.join(kdir, kver)
            os.makedirs(vdir, exist_ok=True)
            if not any(f.endswith(".deb") for f in os.listdir(vdir)):
                log(f"reusing {deb}")
                shutil.copy2(deb, vdir)
            want = kver
    candidates = [f"linux-image-{want}"] if want else _kernel_candidates()
    if not candidates:
        raise ImageError("no linux-image-6.1.0-*-amd64 package known to apt (apt-get update?)")
    pkg = candidates[0]
    kver = KERNEL_PKG_RE.match(pkg).group(1) if KERNEL_PKG_RE.match(pkg) else pkg.removeprefix("linux-image-")
    vdir = os.path.join(kdir, kver)
    os.makedirs(vdir, exist_ok=True)
    debs = [f for f in os.listdir(vdir) if f.endswith(".deb")]
    if not debs:
        log(f"downloading {pkg} (apt-get download) into {vdir}")
        run(["apt-get", "download", pkg], cwd=vdir, timeout=900)
        debs = [f for f in os.listdir(vdir) if f.endswith(".deb")]
        if not debs:
            raise ImageError(f"apt-get download {pkg} left no .deb in {vdir}")
    root = os.path.join(vdir, "root")
    if os.path.exists(root):
        shutil.rmtree(root)
    log(f"unpacking {debs[0]} (dpkg-deb -x)")
    run(["dpkg-deb", "-x", os.path.join(vdir, debs[0]), root], timeout=900)
    open(os.path.join(vdir, ".complete"), "w").write(pkg + "\n")
    got = unpacked(kver)
    if not got:
        raise ImageError(f"{debs[0]} holds no boot/vmlinuz-{kver} or lib/modules/{kver}")
    return (*got, kver)


# ---------------------------------------------------------------------------
# kernel modules: dependencies from each .ko's .modinfo section (no depmod)


def modinfo(path: str) -> dict[str, list[str]]:
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ImageError(f"{path}: not a little-endian ELF64 module")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)

    strtab = sh(shstrndx)
    names = data[strtab[4]:strtab[4] + strtab[5]]
    info: dict[str, list[str]] = {}
    for i in range(shnum):
        h = sh(i)
        name = names[h[0]:names.index(b"\0", h[0])].decode()
        if name == ".modinfo":
            for field in data[h[4]:h[4] + h[5]].split(b"\0"):
                if b"=" in field:
                    k, v = field.decode(errors="replace").split("=", 1)
                    info.setdefault(k, []).append(v)
    return info


def module_closure(modroot: str, wanted: list[str]) -> list[tuple[str, str, list[str]]]:
    """[(name, relpath, [dep names])] for `wanted` and everything they need,
    dependencies before their users. Built-in modules are left out."""
    builtin = set()
    bpath = os.path.join(modroot, "modules.builtin")
    if os.path.exists(bpath):
        for line in open(bpath):
            builtin.add(os.path.basename(line.strip()).removesuffix(".ko").replace("-", "_"))
    index: dict[str, str] = {}
    for dirpath, _, files in os.walk(os.path.join(modroot, "kernel")):
        for f in files:
            if f.endswith(".ko"):
                index.setdefault(f[:-3].replace("-", "_"), os.path.relpath(os.path.join(dirpath, f), modroot))
    out: list[tuple[str, str, list[str]]] = []
    done: set[str] = set()

    def visit(name: str, chain: list[str]):
        name = name.replace("-", "_")
        if name in done or name in builtin:
            return
        if name in chain:
            raise ImageError(f"module dependency cycle: {' -> '.join(chain + [name])}")
        rel = index.get(name)
        if not rel:
            raise ImageError(f"kernel module {name} not found under {modroot} (needed by {chain[-1] if chain else 'the guest'})")
        deps = [d for dep in modinfo(os.path.join(modroot, rel)).get("depends", []) for d in dep.split(",") if d]
        for d in deps:
            visit(d, chain + [name])
        done.add(name)
        out.append((name, rel, [d.replace("-", "_") for d in deps if d.replace("-", "_") not in builtin]))

    for w in wanted:
        visit(w, [])
    return out


# ---------------------------------------------------------------------------
# cpio newc


class Cpio:
    def __init__(self):
        self.buf = io.BytesIO()
        self.ino = 1000
        self.paths: set[str] = set()

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0), nlink: int = 1):
        name = name.lstrip("/")
        if name in self.paths:
            return
        self.paths.add(name)
        self.ino += 1
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1], len(nb), 0))
        self.buf.write(hdr.encode() + nb)
        self.buf.write(b"\0" * ((4 - (110 + len(nb)) % 4) % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * ((4 - len(data) % 4) % 4))

    def dir(self, name: str, mode: int = 0o755):
        if name == ".":
            self._entry(".", stat.S_IFDIR | mode, nlink=2)
            return
        parts = name.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            self._entry("/".join(parts[:i]), stat.S_IFDIR | mode, nlink=2)

    def parent(self, name: str):
        d = os.path.dirname(name.strip("/"))
        if d:
            self.dir(d)

    def file(self, name: str, data: bytes, mode: int = 0o644):
        self.parent(name)
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name: str, target: str):
        self.parent(name)
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name: str, major: int, minor: int, mode: int = 0o600):
        self.parent(name)
        self._entry(name, stat.S_IFCHR | mode, rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        self.paths.discard("TRAILER!!!")
        return self.buf.getvalue()


# ---------------------------------------------------------------------------
# shared libraries, symlinks kept


def _host_dir_links() -> dict[str, str]:
    """Top-level merged-/usr symlinks of the host (/lib -> usr/lib ...)."""
    links = {}
    for d in ("lib", "lib64", "bin", "sbin", "lib32", "libx32"):
        p = "/" + d
        if os.path.islink(p):
            links[d] = os.readlink(p)
    return links


def add_host_path(img: Cpio, path: str, inputs: dict, depth: int = 0) -> None:
    """Adds a host file at the same path; a symlink is added as a symlink and
    its target followed (so DPDK's lib -> dpdk/pmds-23.0/ layout survives).
    The directories on the way are canonicalised (merged /usr)."""
    if depth > 16:
        raise ImageError(f"too many symlinks at {path}")
    parent = os.path.realpath(os.path.dirname(path))
    p = os.path.join(parent, os.path.basename(path))
    if p.lstrip("/") in img.paths:
        return
    if os.path.islink(p):
        target = os.readlink(p)
        img.symlink(p, target)
        add_host_path(img, os.path.join(parent, target) if not target.startswith("/") else target, inputs, depth + 1)
        return
    if not os.path.isfile(p):
        raise ImageError(f"{p}: not found on this machine")
    st = os.stat(p)
    img.file(p, open(p, "rb").read(), mode=stat.S_IMODE(st.st_mode) | 0o444)
    inputs[p] = [st.st_size, int(st.st_mtime)]


def ldd(path: str) -> list[str]:
    out = run(["ldd", path], timeout=60)
    libs = []
    for line in out.splitlines():
        line = line.strip()
        if "not found" in line:
            raise ImageError(f"{path}: a library it needs is missing on this machine: {line}")
        m = re.match(r"\S+ => (/\S+)", line) or re.match(r"(/\S+) \(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


def is_dynamic(path: str) -> bool:
    with open(path, "rb") as f:
        data = f.read(4096)
    if data[:4] != b"\x7fELF":
        return False
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        off = phoff + i * phentsize
        if off + 4 > len(data):
            break
        if struct.unpack_from("<I", data, off)[0] == 3:  # PT_INTERP
            return True
    return False


# ---------------------------------------------------------------------------
# the image


def image_dir(build_dir: str) -> str:
    return os.path.join(os.path.abspath(build_dir), "qemu")


def _self_hash() -> str:
    return hashlib.sha256(open(os.path.abspath(__file__), "rb").read()).hexdigest()[:16]


def _stamp(path: str) -> list[int]:
    st = os.stat(path)
    return [st.st_size, int(st.st_mtime)]


def build_image(build_dir: str, init: str, kernel: str | None = None, out_name: str = "initramfs.gz",
                dpdk: bool | None = None) -> dict:
    cache = image_dir(build_dir)
    os.makedirs(cache, exist_ok=True)
    vmlinuz, modroot, kver = ensure_kernel(cache, kernel)
    t0 = time.monotonic()
    img = Cpio()
    inputs: dict[str, list[int]] = {}

    img.dir(".")  # the root's mode: EAL refuses a world-writable / on its plugin path
    for d in ("dev", "proc", "sys", "run/dpdk", "tmp", "etc", "usr/bin", "usr/sbin", "usr/lib/x86_64-linux-gnu",
              "usr/lib64", "mnt"):
        img.dir(d)
    img.dir("tmp", 0o1777)
    for name, target in _host_dir_links().items():
        img.symlink(name, target)
    img.symlink("var/run", "../run")
    img.chardev("dev/console", 5, 1)
    img.chardev("dev/null", 1, 3, 0o666)
    img.chardev("dev/ttyS0", 4, 64)

    init_abs = os.path.abspath(init)
    img.file("init", open(init_abs, "rb").read(), 0o755)
    inputs[init_abs] = _stamp(init_abs)

    libs: list[str] = []
    dynamic = is_dynamic(init_abs)
    if dynamic:
        libs += ldd(init_abs)
    uses_dpdk = any("librte_" in os.path.basename(l) for l in libs) if dpdk is None else dpdk
    plugins = []
    if uses_dpdk:
        for plug in DPDK_PLUGINS:
            found = False
            for entry in sorted(os.listdir(DPDK_PMD_DIR)):
                if entry.startswith(f"librte_{plug}.so"):
                    plugins.append(os.path.join(DPDK_PMD_DIR, entry))
                    found = True
            if not found:
                raise ImageError(f"DPDK plugin librte_{plug} not in {DPDK_PMD_DIR} (dpdk installed?)")
        for p in plugins:
            if re.search(r"\.so\.\d+\.\d+$", p):
                libs += ldd(p)
    for lib in libs + plugins:
        add_host_path(img, lib, inputs)

    mods = module_closure(modroot, GUEST_MODULES)
    dep_lines = []
    rel_of = {n: r for n, r, _ in mods}
    direct = {n: d for n, _, d in mods}
    order = [n for n, _, _ in mods]  # dependencies first

    def closure(n: str, acc: set[str]) -> set[str]:
        for d in direct[n]:
            if d not in acc:
                acc.add(d)
                closure(d, acc)
        return acc

    for name, rel, _ in mods:
        src = os.path.join(modroot, rel)
        img.file(f"usr/lib/modules/{kver}/{rel}", open(src, "rb").read())
        # modules.dep lists the whole closure, the one to load first last.
        needs = closure(name, set())
        dep_lines.append(f"{rel}:" + "".join(" " + rel_of[d] for d in reversed(order) if d in needs))
    img.file(f"usr/lib/modules/{kver}/modules.dep", ("\n".join(dep_lines) + "\n").encode())
    bpath = os.path.join(modroot, "modules.builtin")
    if os.path.exists(bpath):
        img.file(f"usr/lib/modules/{kver}/modules.builtin", open(bpath, "rb").read())

    pmds = sorted(os.path.basename(p) for p in plugins if re.search(r"\.so\.\d+$", p))
    manifest = (f"kernel {kver}\ninit {init_abs}\nmodules {' '.join(n for n, _, _ in mods)}\n"
                f"dpdk_plugins {' '.join(pmds) if pmds else '(none)'}\n")
    img.file("etc/toroid-image", manifest.encode())

    raw = img.finish()
    out = os.path.join(cache, out_name)
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(gzip.compress(raw, compresslevel=6, mtime=0))
    os.replace(tmp, out)
    desc = {
        "format": IMAGE_FORMAT,
        "builder": _self_hash(),
        "kernel": vmlinuz,
        "kver": kver,
        "initramfs": out,
        "init": init_abs,
        "inputs": inputs,
        "modules": [n for n, _, _ in mods],
        "dpdk_plugins": pmds,
        "size": os.path.getsize(out),
        "raw_size": len(raw),
    }
    json.dump(desc, open(out + ".json", "w"), indent=1)
    log(f"built {os.path.relpath(out)}: {len(raw) / 1e6:.1f} MB raw, {desc['size'] / 1e6:.1f} MB gzip, "
        f"kernel {kver}, modules {','.join(desc['modules'])}"
        + (f", DPDK plugins {','.join(pmds)}" if pmds else "") + f" ({time.monotonic() - t0:.1f} s)")
    return desc


def stale_reason(build_dir: str, init: str, out_name: str = "initramfs.gz") -> str | None:
    out = os.path.join(image_dir(build_dir), out_name)
    try:
        desc = json.load(open(out + ".json"))
    except (OSError, ValueError):
        return "no image yet"
    if desc.get("format") != IMAGE_FORMAT or desc.get("builder") != _self_hash():
        return "the image builder changed"
    if not os.path.isfile(out) or not os.path.isfile(desc.get("kernel", "")):
        return "image or kernel missing"
    if desc.get("init") != os.path.abspath(init):
        return "another init binary"
    for path, stamp in desc.get("inputs", {}).items():
        try:
            if _stamp(path) != stamp:
                return f"{path} changed"
        except OSError:
            return f"{path} is gone"
    return None


def ensure_image(build_dir: str, init: str, force: bool = False, kernel: str | None = None,
                 out_name: str = "initramfs.gz", quiet: bool = False) -> dict:
    if not os.path.isfile(init):
        raise ImageError(f"{init} does not exist (build it first)")
    why = "forced" if force else stale_reason(build_dir, init, out_name)
    if why is None and kernel:
        desc = json.load(open(os.path.join(image_dir(build_dir), out_name) + ".json"))
        if desc.get("kver") != kernel.removeprefix("linux-image-"):
            why = "another kernel asked for"
    if why is None:
        return json.load(open(os.path.join(image_dir(build_dir), out_name) + ".json"))
    if not quiet:
        log(f"building {out_name} ({why})")
    return build_image(build_dir, init, kernel, out_name)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Build the qemu rig's guest image (kernel + initramfs).")
    ap.add_argument("--build-dir", default="build", help="meson build dir; the image goes to BUILD/qemu/")
    ap.add_argument("--init", help="the guest's /init (default BUILD/firmware/toroid-node)")
    ap.add_argument("--out", default="initramfs.gz", help="file name under BUILD/qemu/")
    ap.add_argument("--kernel", help="kernel version to use, e.g. 6.1.0-56-amd64 (default: cached, else apt's)")
    ap.add_argument("--force", action="store_true", help="rebuild even if up to date")
    ap.add_argument("--kernel-only", action="store_true", help="only fetch and unpack the kernel")
    a = ap.parse_args(argv)
    try:
        if a.kernel_only:
            vml, mods, kver = ensure_kernel(image_dir(a.build_dir), a.kernel)
            print(vml)
            return 0
        init = a.init or os.path.join(a.build_dir, "firmware", "toroid-node")
        desc = ensure_image(a.build_dir, init, a.force, a.kernel, a.out)
        print(desc["initramfs"])
        return 0
    except ImageError as e:
        print(f"qemu-image: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
