#!/bin/bash
# mpi_coll_compare.sh [MPI_COLL_BENCH.c]: an MPI benchmark built with toroid-mpicc and run with
# ./toroid mpirun -n 2 (-b: an untimed barrier before each timed iteration) against ./toroid bench
# on 2x1x1 memif (the selector's algorithm), alternating, R rounds (default 3). Prints per
# collective and size the medians over the rounds: MPI avg and min, the bench's mean, median and
# min, and MPI/bench. Environment: R, COLLS (mpi_coll_bench names), SIZES (MPI sizes; the bench
# runs alltoall/allgather at BS2, twice the block: its sizes are the whole buffer). docs/mpi.md.
set -u
cd "$(dirname "$0")/.."
SRC=${1:-../shared/peers/mpi_coll_bench.c}
[ -f "$SRC" ] || { echo "mpi_coll_compare: no $SRC (give the benchmark's source)" >&2; exit 2; }
W=$(mktemp -d /tmp/toroid-mpicmp-XXXXXX); trap 'rm -rf "$W"' EXIT
./toroid build >/dev/null || exit 1
R=${R:-3}; COLLS=${COLLS:-allreduce_i64,barrier,bcast}; SIZES=${SIZES:-8,64K,1M}
build/mpi/toroid-mpicc -O2 -o $W/mpi_coll_bench "$SRC" || exit 1
BS2=${BS2:-16,128k,2M}
bc=$(echo $COLLS | sed 's/allreduce_i64/allreduce/'); bs=$(echo $SIZES | tr 'K' 'k')
out=$W/out; mkdir -p $out
for r in $(seq 1 $R); do
  echo "round $r/$R" >&2
  timeout 600 ./toroid mpirun -n 2 $W/mpi_coll_bench -b -c $COLLS -s $SIZES > $out/mpi.$r 2>&1
  timeout 600 ./toroid bench --dims 2x1x1 --colls $bc --sizes $bs --json $out/bench.$r.json > $out/bench.$r 2>&1
  # alltoall/allgather: the bench sizes the whole buffer (2 blocks), MPI the block
  timeout 600 ./toroid bench --dims 2x1x1 --colls alltoall,allgather --sizes $BS2 --json $out/bench2.$r.json > $out/bench2.$r 2>&1
done
python3 - "$out" "$R" <<'PY'
import json, sys, statistics as st
out, R = sys.argv[1], int(sys.argv[2])
mpi, ben = {}, {}
for r in range(1, R + 1):
    for line in open(f"{out}/mpi.{r}"):
        p = line.split()
        if len(p) >= 8 and p[0] == "[0]" and not p[1].startswith("#"):
            c = p[1].replace("allreduce_i64", "allreduce"); b = int(p[2])
            mpi.setdefault((c, b), []).append((float(p[4]), float(p[5])))
    for f, whole in ((f"{out}/bench.{r}.json", False), (f"{out}/bench2.{r}.json", True)):
        for rec in json.load(open(f)):
            if rec.get("selected") and rec.get("lat_us"):
                c = rec["coll"]
                if (c in ("alltoall", "allgather")) != whole: continue
                b = rec["bytes"] // 2 if whole else rec["bytes"]
                l = rec["lat_us"]; ben.setdefault((c, b), []).append((l["mean"], l["median"], l["min"], rec["algo"]))
print(f"{'coll':<10}{'bytes':>9} {'MPI avg':>9} {'bench mean':>10} {'avg/mean':>8} {'bench med':>9} {'MPI min':>8} {'bench min':>9} {'min/min':>8}  algo")
for k in sorted(mpi):
    if k not in ben: print(k, "no bench row"); continue
    ma = st.median(a for a, _ in mpi[k]); mm = st.median(m for _, m in mpi[k])
    bm = st.median(x[0] for x in ben[k]); bd = st.median(x[1] for x in ben[k]); bn = st.median(x[2] for x in ben[k])
    print(f"{k[0]:<10}{k[1]:>9} {ma:>9.2f} {bm:>10.2f} {ma/bm:>8.2f} {bd:>9.2f} {mm:>8.2f} {bn:>9.2f} {mm/bn:>8.2f}  {ben[k][0][3]}")
PY
