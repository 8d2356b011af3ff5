#!/usr/bin/env python3
"""Prints the public headers meson installs (packaging/meson.build), one per
line, relative to the source root given as the only argument: every .h under
the layers in libtoroid except the host backends, the host rig's launcher and
internal headers."""
import os
import sys

LAYERS = ("base", "drivers", "netstack", "collectives", "firmware")
EXCLUDE_DIRS = ("drivers/dpdk", "drivers/uring", "firmware/rig")
EXCLUDE_FILES = ("firmware/pid1.h", "firmware/pid1_app.h", "firmware/host_port_factory.h")

root = sys.argv[1]
out = []
for layer in LAYERS:
    for d, _, files in os.walk(os.path.join(root, layer)):
        rel = os.path.relpath(d, root)
        if any(rel == x or rel.startswith(x + "/") for x in EXCLUDE_DIRS):
            continue
        for f in files:
            path = os.path.join(rel, f)
            if f.endswith(".h") and not f.endswith("_internal.h") and path not in EXCLUDE_FILES:
                out.append(path)
print("\n".join(sorted(out)))
