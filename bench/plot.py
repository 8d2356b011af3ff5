#!/usr/bin/python3
"""Draws the collective sweep of `./toroid bench` (docs/bench.md).

usage: plot.py --out FILE.png [--title TEXT] JSON...

Reads the JSON arrays that `./toroid bench --json` writes (the link bench's
records and the sweep's) and draws, per collective, the latency against size
(log-log; the line is the median over the repetitions, the band min..max)
and the bus bandwidth against size, one series per algorithm and datatype
variant. Points where the selector picked that algorithm are ringed. The raw
link's limits come from the link bench's records in the same files: on the
latency panels the time a link needs to carry the bytes one way (its one-way
latency at 64 B plus bytes at its streaming rate), on the bandwidth panels
its streaming rate at the rig's frame size. The barrier, which has no size,
gets a bar per algorithm against the link's one-way latency.

Uses Debian's python3-matplotlib (`./toroid bench --plot` installs it), so it
runs under Debian's interpreter (the #! line): a python3 found earlier on PATH
(pyenv, a virtualenv) does not see Debian's packages.
"""
import argparse
import json
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter
except ImportError:
    sys.exit("plot.py: matplotlib is missing (apt-get install python3-matplotlib; ./toroid bench --plot does it)")

LINK = ("link-pingpong", "link-stream")
ORDER = ["allreduce", "bcast", "reduce", "allgather", "alltoall", "reduce_scatter", "barrier"]


def fmt_bytes(b, _pos=None):
    b = int(round(b))
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d %s" % (b >> shift, unit)
    return "%d B" % b


def variant(r):
    """'double sum exact', 'int64 sum', 'int64' (data-moving), '' (barrier)."""
    parts = [r.get("dtype"), r.get("op")]
    if r.get("repro") not in (None, "none"):
        parts.append(r["repro"])
    return " ".join(p for p in parts if p)


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        if not isinstance(data, list):
            sys.exit("plot.py: %s is not a JSON array of bench records" % p)
        recs += data
    return recs


def link_limits(recs, frame):
    """(one-way latency in us, streaming rate in GB/s, stream frame) or Nones."""
    pp = {r["bytes"]: r for r in recs if r.get("coll") == "link-pingpong" and r.get("lat_us")}
    st = {r["bytes"]: r for r in recs if r.get("coll") == "link-stream" and r.get("busbw_gbps")}
    ow = pp[min(pp)]["lat_us"]["median"] if pp else None
    if not st:
        return ow, None, None
    ref = min(st, key=lambda b: abs(b - frame)) if frame else max(st)
    return ow, st[ref]["busbw_gbps"], ref


def series_of(rows):
    """{(algo, variant): [rows sorted by size]}, in the order they first appear."""
    out = {}
    for r in rows:
        out.setdefault((r["algo"], variant(r)), []).append(r)
    for v in out.values():
        v.sort(key=lambda r: r["bytes"])
    return out


def draw_sized(ax_lat, ax_bw, coll, rows, ow, st, ref):
    groups = series_of(rows)
    several = len({v for _, v in groups}) > 1
    ringed = False
    for (algo, var), rs in groups.items():
        label = algo + (" (%s)" % var if several else "")
        x = [r["bytes"] for r in rs]
        med = [r["lat_us"]["median"] for r in rs]
        (line,) = ax_lat.plot(x, med, marker="o", markersize=3, label=label)
        ax_lat.fill_between(x, [r["lat_us"]["min"] for r in rs], [r["lat_us"]["max"] for r in rs],
                            color=line.get_color(), alpha=0.12, linewidth=0)
        bw = [(r["bytes"], r["busbw_gbps"]) for r in rs if r.get("busbw_gbps") is not None]
        if bw:
            ax_bw.plot([b for b, _ in bw], [v for _, v in bw], marker="o", markersize=3, color=line.get_color(),
                       label=label)
        sel = [r for r in rs if r.get("selected")]
        if sel:
            kw = dict(s=60, facecolors="none", edgecolors="black", linewidths=0.8, zorder=3)
            if not ringed:
                kw["label"] = "selector's choice"
                ringed = True
            ax_lat.scatter([r["bytes"] for r in sel], [r["lat_us"]["median"] for r in sel], **kw)
            kw.pop("label", None)
            sel_bw = [r for r in sel if r.get("busbw_gbps") is not None]
            ax_bw.scatter([r["bytes"] for r in sel_bw], [r["busbw_gbps"] for r in sel_bw], **kw)
    sizes = sorted({r["bytes"] for r in rows})
    if ow is not None and st:
        lo, hi = sizes[0], sizes[-1]
        xs = [lo * (hi / lo) ** (k / 40) for k in range(41)] if hi > lo else [lo]
        ax_lat.plot(xs, [ow + b / (st * 1e3) for b in xs], color="black", linestyle="--", linewidth=1,
                    label="raw link: one way (%.2f us + bytes at %.2f GB/s)" % (ow, st))
    elif ow is not None:
        ax_lat.axhline(ow, color="black", linestyle="--", linewidth=1, label="raw link one-way %.2f us" % ow)
    if st:
        ax_bw.axhline(st, color="black", linestyle="--", linewidth=1,
                      label="raw link streaming %.2f GB/s (%d-byte frames)" % (st, ref))
    for ax in (ax_lat, ax_bw):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes if len(sizes) <= 12 else sizes[:: (len(sizes) + 11) // 12])
        ax.xaxis.set_major_formatter(FuncFormatter(fmt_bytes))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda *_: ""))
        ax.tick_params(axis="x", labelsize=7, rotation=30)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlabel("bytes" + (" (whole buffer of n blocks)" if coll in ("allgather", "alltoall", "reduce_scatter")
                                 else " per node"))
    ax_lat.set_yscale("log")
    ax_lat.set_ylabel("latency, us (median; band min..max)")
    ax_lat.set_title("%s: latency" % coll)
    ax_bw.set_ylabel("bus bandwidth, GB/s (NCCL)")
    ax_bw.set_title("%s: bus bandwidth" % coll)
    ax_bw.set_ylim(bottom=0)
    ax_lat.legend(fontsize=7, framealpha=0.7)
    ax_bw.legend(fontsize=7, framealpha=0.7)


def draw_barrier(ax, rows, ow):
    names = [r["algo"] + ("*" if r.get("selected") else "") for r in rows]
    med = [r["lat_us"]["median"] for r in rows]
    err = [[m - r["lat_us"]["min"] for m, r in zip(med, rows)], [r["lat_us"]["max"] - m for m, r in zip(med, rows)]]
    ax.bar(names, med, width=0.5, yerr=err, capsize=4, color="tab:gray", alpha=0.8,
           label="median (whiskers: min..max)")
    for x, m in enumerate(med):
        ax.annotate("%.2f us" % m, (x, m), textcoords="offset points", xytext=(18, 4), fontsize=8)
    if ow is not None:
        ax.axhline(ow, color="black", linestyle="--", linewidth=1, label="raw link one-way %.2f us" % ow)
    ax.set_xlim(-1, len(rows))
    ax.set_ylim(bottom=0)
    ax.set_ylabel("latency, us")
    ax.set_title("barrier (* the selector's choice)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    ap = argparse.ArgumentParser(description="Draw ./toroid bench records (latency and bus bandwidth per size).")
    ap.add_argument("json", nargs="+", help="JSON arrays written by ./toroid bench --json")
    ap.add_argument("--out", required=True, help="the PNG file to write")
    ap.add_argument("--title", help="figure title (default: from the records)")
    a = ap.parse_args()
    if not a.out.endswith(".png"):
        sys.exit("plot.py: --out '%s': the file name must end in .png" % a.out)
    recs = load(a.json)
    timed = [r for r in recs if r.get("coll") not in LINK and r.get("lat_us")]
    if not timed:
        sys.exit("plot.py: no timed collective records in %s" % ", ".join(a.json))
    colls = sorted({r["coll"] for r in timed}, key=lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c))
    sized = [c for c in colls if c != "barrier"]
    frame = max((r.get("max_frame", 0) for r in timed), default=0)
    ow, st, ref = link_limits(recs, frame)

    nrows = len(sized) + (1 if "barrier" in colls else 0)
    fig = plt.figure(figsize=(13, 3.6 * nrows + 0.6))
    grid = fig.add_gridspec(nrows, 2)
    for i, c in enumerate(sized):
        draw_sized(fig.add_subplot(grid[i, 0]), fig.add_subplot(grid[i, 1]), c,
                   [r for r in timed if r["coll"] == c], ow, st, ref)
    if "barrier" in colls:
        draw_barrier(fig.add_subplot(grid[nrows - 1, :]), [r for r in timed if r["coll"] == "barrier"], ow)

    first = timed[0]
    title = a.title or "toroid bench: %s %s, %d nodes, %s%s" % (
        first.get("rig", "host"), first.get("dims", "?"), first.get("nodes", 0), first.get("driver", "?"),
        ", %d-byte frames" % frame if frame else "")
    if ow is None:
        title += " (no link records: the link's limits are not drawn)"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (3.6 * nrows + 0.6)))
    fig.savefig(a.out, dpi=110)
    series = sum(len(series_of([r for r in timed if r["coll"] == c])) for c in colls)
    print("bench: plot of %d collectives, %d series written to %s" % (len(colls), series, a.out))


if __name__ == "__main__":
    main()
