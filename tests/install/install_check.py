#!/usr/bin/env python3
"""Suite `install`: Toroid installed under a temporary prefix works on its own.

    install_check.py BUILD_DIR

`meson install` into a temporary DESTDIR, then, with nothing from the source
tree on any path:
  - every file docs/install.md lists is there;
  - pkg-config --cflags --libs toroid (prefix pointed at the staging tree)
    builds tests/install/app.cc, copied outside the tree, and the program
    passes (CRC32C check value, an allreduce on a 2x2x1 sim partition);
  - every installed header compiles, all of them in one translation unit;
  - no installed file names the source tree;
  - PREFIX/bin/toroid selftest --rig sim passes, from a directory outside the
    tree, and PREFIX/bin/toroid build says it needs the source tree.

Exit status: 0 pass, 1 fail, 2 usage.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


class Fail(Exception):
    pass


def run(cmd, timeout=600, env=None, cwd=None, show=True):
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env,
                       cwd=cwd)
    if show:
        out = r.stdout.strip().splitlines()
        print("\n".join(out[-15:]))
    print(f"(exit {r.returncode} after {time.monotonic() - t0:.1f} s)", flush=True)
    return r


def options(build):
    r = subprocess.run(["meson", "introspect", build, "--buildoptions"], stdout=subprocess.PIPE, text=True,
                       check=True)
    return {o["name"]: o["value"] for o in json.loads(r.stdout)}


def clean_env(home):
    """An environment with no path into the source tree or the build dir."""
    return {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": home, "LANG": "C.UTF-8"}


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    build = os.path.abspath(argv[0])
    tmp = tempfile.mkdtemp(prefix="toroid-install-")
    try:
        opts = options(build)
        stage = os.path.join(tmp, "stage")
        r = run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", stage], timeout=300)
        if r.returncode != 0:
            raise Fail("meson install failed")
        prefix = stage + opts["prefix"]
        libdir = os.path.join(prefix, opts["libdir"])
        print(f"installed under {prefix}")
        want = ["bin/toroid", "bin/toroid-sim", "bin/toroid-node", "bin/toroid-rig",
                os.path.join(opts["libdir"], "libtoroid.a"), os.path.join(opts["libdir"], "pkgconfig", "toroid.pc"),
                "include/toroid/base/status.h", "include/toroid/drivers/port.h", "include/toroid/firmware/sim_rig.h",
                "share/toroid/qemu/toroid_qemu.py", "share/toroid/qemu/image.py", "share/toroid/qemu/options.py",
                "share/toroid/qemu/report.py",
                "share/toroid/wireshark/toroid.lua", "share/doc/toroid/README.md", "share/doc/toroid/docs/install.md",
                "share/toroid/cli/__main__.py", "share/toroid/cli/toroid_cli/main.py",
                os.path.join(opts["mandir"], "man1", "toroid.1"), os.path.join(opts["mandir"], "man1", "toroid-selftest.1")]
        missing = [w for w in want if not os.path.exists(os.path.join(prefix, w))]
        if missing:
            raise Fail("not installed: " + ", ".join(missing))
        for exe in ("toroid", "toroid-sim", "toroid-node", "toroid-rig"):
            if not os.access(os.path.join(prefix, "bin", exe), os.X_OK):
                raise Fail(f"bin/{exe} is not executable")

        # Nothing installed may point back into the source tree or the build dir.
        for d, _, files in os.walk(stage):
            for f in files:
                data = open(os.path.join(d, f), "rb").read()
                for tree in (ROOT, build):
                    if tree.encode() in data:
                        raise Fail(f"{os.path.relpath(os.path.join(d, f), stage)} names {tree}")

        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = clean_env(home)
        env["PKG_CONFIG_PATH"] = os.path.join(libdir, "pkgconfig")
        pc = ["pkg-config", "--define-variable=prefix=" + prefix]
        r = run(pc + ["--cflags", "--libs", "toroid"], env=env)
        if r.returncode != 0:
            raise Fail("pkg-config --cflags --libs toroid failed")
        flags = r.stdout.split()
        if any(ROOT in f for f in flags) or not any(f.startswith("-I" + prefix) for f in flags):
            raise Fail(f"pkg-config flags do not point at the prefix: {flags}")

        app = os.path.join(tmp, "app")
        os.makedirs(app)
        shutil.copy(os.path.join(HERE, "app.cc"), app)
        r = run(["c++", "-O1", "-o", "app", "app.cc"] + flags, env=env, cwd=app, timeout=600)
        if r.returncode != 0:
            raise Fail("the outside application does not build against the installed package")
        r = run(["./app"], env=env, cwd=app, timeout=300)
        if r.returncode != 0 or "verdict: PASS (4/4 nodes passed)" not in r.stdout:
            raise Fail("the outside application did not pass")

        headers = []
        inc = os.path.join(prefix, "include", "toroid")
        for d, _, files in os.walk(inc):
            headers += [os.path.relpath(os.path.join(d, f), inc) for f in files if f.endswith(".h")]
        with open(os.path.join(app, "all_headers.cc"), "w") as f:
            f.writelines(f'#include "{h}"\n' for h in sorted(headers))
        r = run(["c++", "-fsyntax-only", "all_headers.cc"] + flags, env=env, cwd=app, timeout=600)
        if r.returncode != 0:
            raise Fail(f"the {len(headers)} installed headers do not compile together")
        print(f"{len(headers)} installed headers compile together")

        toroid = os.path.join(prefix, "bin", "toroid")
        r = run([toroid, "selftest", "--rig", "sim"], env=env, cwd=home, timeout=900)
        if r.returncode != 0 or "verdict: PASS (8/8 nodes passed)" not in r.stdout:
            raise Fail("toroid selftest --rig sim from the prefix did not pass")
        r = run([toroid, "build"], env=env, cwd=home)
        if r.returncode != 1 or "needs the source tree" not in r.stdout:
            raise Fail("an installed toroid build should say it needs the source tree")
        print("PASS")
        return 0
    except (Fail, subprocess.SubprocessError, OSError) as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
