"""Debian packages: which the project needs, and installing the missing ones.

`./toroid setup` installs PACKAGES; what starts a Slurm adds SLURM_PACKAGES,
the bench plot PLOT_PACKAGES, each on first use. Needs root or sudo.
"""
import os
import shutil
import subprocess

from .common import Failure, run_child, say

PACKAGES = ["meson", "ninja-build", "pkg-config", "g++", "python3", "dpdk-dev", "libdpdk-dev",
            "liburing-dev", "libpcap-dev", "cpputest", "libbenchmark-dev", "libmpfr-dev", "libgmp-dev",
            "qemu-system-x86", "tshark", "dpkg-dev", "debootstrap", "libpmix-dev", "iproute2",
            # ./toroid fuzz: clang, and libFuzzer's runtime (libclang_rt.fuzzer, a
            # Recommends of clang that --no-install-recommends leaves out).
            "clang", "libclang-rt-14-dev"]
# Installed only when something runs Slurm (the deploy suite, slurm-selftest,
# `./toroid setup --slurm`): a private cluster is started from them, never the
# system's services.
SLURM_PACKAGES = ["slurm-wlm", "munge"]
# The bench plot (./toroid bench --plot, and the host suite's test of it).
PLOT_PACKAGES = ["python3-matplotlib"]


def missing_packages(packages):
    """The packages dpkg does not report as installed, in the given order."""
    missing = []
    for p in packages:
        try:
            r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            status = r.stdout
        except OSError:
            status = ""
        if status != "install ok installed":
            missing.append(p)
    return missing


def _sudo(no_sudo_message):
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") is None:
        raise Failure(no_sudo_message)
    return ["sudo"]


def _apt_install(what, sudo, missing, out):
    def run(cmd, failure):
        if run_child(cmd, stdout=out) != 0:
            raise Failure(failure)

    # tshark's wireshark-common asks whether non-root users may capture: no.
    if "tshark" in missing:
        out.flush()
        r = subprocess.run(sudo + ["debconf-set-selections"], stdout=out,
                           input="wireshark-common wireshark-common/install-setuid boolean false\n", text=True)
        if r.returncode != 0:
            raise Failure("%s: debconf-set-selections failed" % what)
    run(sudo + ["apt-get", "update"], "%s: apt-get update failed" % what)
    run(sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"]
        + missing, "%s: apt-get install failed for: %s" % (what, " ".join(missing)))


def _install(what, packages, out, no_sudo, announce):
    """Installs whichever of `packages` are missing; no_sudo and announce are
    the messages, with {names} for the missing ones."""
    missing = missing_packages(packages)
    if not missing:
        return
    names = " ".join(missing)
    sudo = _sudo(no_sudo.format(names=names))
    say(out, announce.format(names=names))
    _apt_install(what, sudo, missing, out)
    still = missing_packages(packages)
    if still:
        raise Failure("%s: still missing after install: %s" % (what, " ".join(still)))


def install_packages(what, packages, out):
    """Installs whichever of `packages` are missing, saying what first; WHAT
    names the caller in messages ("setup", "bench --plot"). Silent when none
    is missing. Messages and apt's output go to `out`."""
    if shutil.which("dpkg-query") is None:
        raise Failure("%s: dpkg-query not found; this script installs packages on Debian/Ubuntu only (needs: %s)"
                      % (what, " ".join(packages)))
    _install(what, packages, out,
             what + ": missing packages: {names} — not root and sudo is not available; install them as root: "
                    "apt-get install {names}",
             what + ": installing missing packages: {names}")


def install_slurm(why, out):
    """slurm-wlm and munge, only for what starts a Slurm."""
    _install("setup", SLURM_PACKAGES, out,
             "setup: " + why + " runs Slurm and needs {names}; not root and no sudo: install them as root "
                               "(apt-get install {names})",
             "setup: " + why + " runs Slurm: installing {names} (non-interactive; the tests start their own daemons)")
