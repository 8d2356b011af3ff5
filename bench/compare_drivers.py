#!/usr/bin/env python3
"""The link drivers side by side (`./toroid bench --driver memif,af_xdp,af_packet`).

Reads the sweep JSON of every (round, driver) run that `./toroid bench` made,
in the order they ran (drivers alternate inside each round, so the machine's
fast and slow spells fall on all of them), and prints one table: per
collective, algorithm and size, each driver's median latency (the median over
the rounds of each run's median) and bus bandwidth, and the ratio to the
first driver. With --json it writes every record with "driver" and "round"
added.

usage: compare_drivers.py DIR DRIVERS ROUNDS [--json FILE]
  DIR holds sweep-<driver>-<round>.json; DRIVERS is comma-separated.
"""
import json
import os
import statistics
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    d, drivers, rounds = argv[0], argv[1].split(","), int(argv[2])
    out_json = argv[4] if len(argv) >= 5 and argv[3] == "--json" else None
    lat = {}   # (coll, algo, bytes) -> driver -> [median per round]
    bw = {}
    records = []
    missing = []
    for r in range(1, rounds + 1):
        for drv in drivers:
            f = os.path.join(d, "sweep-%s-%d.json" % (drv, r))
            if not os.path.exists(f) or os.path.getsize(f) == 0:
                missing.append("%s round %d" % (drv, r))
                continue
            for rec in json.load(open(f)):
                rec = dict(rec, driver=drv, round=r)
                records.append(rec)
                if not rec.get("lat_us"):
                    continue
                key = (rec["coll"], rec["algo"], rec["bytes"])
                lat.setdefault(key, {}).setdefault(drv, []).append(rec["lat_us"]["median"])
                if rec.get("busbw_gbps") is not None:
                    bw.setdefault(key, {}).setdefault(drv, []).append(rec["busbw_gbps"])
    print("")
    print("drivers compared: %s; %d round%s, drivers alternating within each; medians over the rounds"
          % (", ".join(drivers), rounds, "" if rounds == 1 else "s"))
    head = "%-10s %-12s %10s" % ("coll", "algo", "bytes")
    for drv in drivers:
        head += "  %14s %11s" % (drv + " us", "GB/s")
    if len(drivers) > 1:
        head += "  " + "  ".join("%s/%s" % (drv, drivers[0]) for drv in drivers[1:])
    print(head)
    for key in sorted(lat, key=lambda k: (k[0], k[1], k[2])):
        row = "%-10s %-12s %10d" % key
        base = None
        ratios = []
        for drv in drivers:
            v = lat[key].get(drv)
            if not v:
                row += "  %14s %11s" % ("-", "-")
                ratios.append("-")
                continue
            m = statistics.median(v)
            b = bw.get(key, {}).get(drv)
            row += "  %14.2f %11s" % (m, "%.3f" % statistics.median(b) if b else "-")
            if base is None:
                base = m
            ratios.append("%.2fx" % (m / base) if base else "-")
        if len(drivers) > 1:
            row += "  " + "  ".join("%*s" % (len(drv) + len(drivers[0]) + 1, r) for drv, r in zip(drivers[1:], ratios[1:]))
        print(row)
    if missing:
        print("no results from: %s" % ", ".join(missing))
    if out_json:
        with open(out_json, "w") as f:
            f.write("[\n" + ",\n".join(" " + json.dumps(r) for r in records) + "\n]\n")
        print("bench: %d records written to %s" % (len(records), out_json))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
