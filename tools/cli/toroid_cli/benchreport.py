"""The collective sweep's report against the raw link, and its JSON array.

`./toroid bench --with-link` measures the link first (toroid-linkbench), then
states the sweep's headline figures as fractions of it: the small-message
latency of each collective against the link's one-way time, its bus
bandwidth at the largest size against the link's streaming rate. Both runs'
records go into one JSON array, the link's first.
"""
import json
import os


def load_records(path):
    """A JSON array written by the rig or the link bench; [] when the file is absent or empty."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    with open(path) as f:
        return json.load(f)


def _name(r, size):
    s = r["coll"] + " " + r["algo"]
    for k in ("dtype", "repro"):
        if r.get(k) and r[k] not in ("int64", "none"):
            s += " " + r[k]
    return s + ("" if r["coll"] == "barrier" else " %d B" % size)


def fractions(link, sweep):
    """The lines that compare the sweep with the link (medians of this run);
    [] when either run has no timed figure."""
    pp = {r["bytes"]: r for r in link if r["coll"] == "link-pingpong" and r.get("lat_us")}
    st = {r["bytes"]: r for r in link if r["coll"] == "link-stream" and r.get("busbw_gbps")}
    timed = [r for r in sweep if r.get("lat_us")]
    if not timed or not pp:
        return []
    frame = max((r.get("max_frame", 0) for r in sweep), default=0)
    lines = ["", "against the link (medians of this run):"]
    ow = pp[min(pp)]["lat_us"]["median"]
    colls = []
    for r in timed:
        if r["coll"] not in colls:
            colls.append(r["coll"])
    for coll in colls:
        rows = [r for r in timed if r["coll"] == coll]
        small = min(r["bytes"] for r in rows)
        for r in rows:
            if r["bytes"] == small:
                lat = r["lat_us"]["median"]
                lines.append("  %-44s %10.2f us      = %6.1f x the link's one-way time (%.2f us, %d-byte frames)"
                             % (_name(r, small), lat, lat / ow, ow, min(pp)))
    if st:
        # The streaming rate at the rig's frame size (the nearest measured one).
        ref = min(st, key=lambda b: abs(b - frame)) if frame else max(st)
        limit = st[ref]["busbw_gbps"]
        for coll in colls:
            rows = [r for r in timed if r["coll"] == coll and r.get("busbw_gbps") is not None]
            if not rows:
                continue
            big = max(r["bytes"] for r in rows)
            for r in rows:
                if r["bytes"] == big:
                    lines.append("  %-44s %10.3f GB/s busbw = %5.1f%% of the link's streaming rate "
                                 "(%.3f GB/s, %d-byte frames)"
                                 % (_name(r, big), r["busbw_gbps"], 100 * r["busbw_gbps"] / limit, limit, ref))
    return lines


def array_text(records):
    """One record a line, as the rig writes them (compare.sh and plot.py read it as JSON)."""
    return "[\n" + ",\n".join(" " + json.dumps(r) for r in records) + "\n]\n"


def merge(paths, out_path):
    """Writes the records of every file in `paths`, in order, as one array;
    returns how many."""
    records = []
    for p in paths:
        records += load_records(p)
    with open(out_path, "w") as f:
        f.write(array_text(records))
    return len(records)
