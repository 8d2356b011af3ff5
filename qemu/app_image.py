"""The application overlay of the qemu rig (`toroid mpirun --rig qemu`).

A second cpio archive appended to the node image (qemu/image.py): the kernel
unpacks concatenated archives in order, so the guest's root holds the node
image plus

    /app/bin/PROGRAM              the user's program
    /<host path of each library>  every library `ldd PROGRAM` names that the node
                                  image does not already carry (libtoroid-mpi.so.0
                                  at its build path, where the program's RUNPATH
                                  looks), symlinks kept
    /etc/toroid-app               what PID 1 runs: exec, arg, env and timeout
                                  lines (firmware/pid1_app.h)

and PID 1, told `toroid.app=/etc/toroid-app` on the kernel command line,
runs the program as the node's application. The combined file is written into
the run's directory; the node image itself stays as it is (and cached).
"""
from __future__ import annotations

import gzip
import os
import time

import image

APP_SPEC = "/etc/toroid-app"
APP_DIR = "app/bin"


class AppError(Exception):
    pass


def app_spec(program_in_image: str, args: list[str], env: list[str], timeout_s: float) -> str:
    """The text of /etc/toroid-app. Values run to the end of their line, so
    a newline in an argument or variable cannot be carried: refused."""
    for what, vals in (("argument", args), ("--env value", env)):
        for v in vals:
            if "\n" in v or "\r" in v:
                raise AppError(f"an {what} with a line break cannot be passed to the guest: {v!r}")
    lines = ["# the node's application (toroid mpirun --rig qemu; firmware/pid1_app.h)",
             f"exec {program_in_image}"]
    lines += [f"arg {a}" for a in args]
    lines += [f"env {e}" for e in env]
    lines.append(f"timeout {max(1, int(timeout_s))}s")
    return "\n".join(lines) + "\n"


def build_app_initrd(desc: dict, program: str, args: list[str], env: list[str], timeout_s: float,
                     out_dir: str) -> dict:
    """Writes OUT_DIR/initramfs-app.gz (the node image, then the overlay) and
    returns a copy of `desc` naming it, with what the overlay carries."""
    t0 = time.monotonic()
    program = os.path.abspath(program)
    if not os.path.isfile(program) or not os.access(program, os.X_OK):
        raise AppError(f"{program}: not an executable file")
    with open(program, "rb") as f:
        if f.read(4) != b"\x7fELF":
            raise AppError(f"{program}: not an ELF program (a script cannot run in the guest: it has no shell)")
    libs = image.ldd(program) if image.is_dynamic(program) else []
    have = set(desc.get("inputs", {}))
    img = image.Cpio()
    inputs: dict[str, list[int]] = {}
    name = os.path.basename(program)
    in_image = f"/{APP_DIR}/{name}"
    img.file(in_image, open(program, "rb").read(), 0o755)
    added = []
    for lib in libs:
        if os.path.realpath(lib) in have:
            continue  # the node image has it (libc, libstdc++, DPDK, ...)
        image.add_host_path(img, lib, inputs)
        added.append(lib)
    img.file(APP_SPEC, app_spec(in_image, args, env, timeout_s).encode())
    raw = img.finish()
    out = os.path.join(out_dir, "initramfs-app.gz")
    base = open(desc["initramfs"], "rb").read()
    with open(out, "wb") as f:
        f.write(base)
        f.write(b"\0" * (-len(base) % 512))  # zero padding between archives is allowed
        f.write(gzip.compress(raw, compresslevel=6, mtime=0))
    new = dict(desc)
    new["initramfs"] = out
    new["size"] = os.path.getsize(out)
    new["app"] = {"program": program, "in_image": in_image, "libs": added, "overlay_bytes": len(raw),
                  "seconds": time.monotonic() - t0}
    return new
