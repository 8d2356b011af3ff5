#!/bin/bash
# mpi_p2p_compare.sh [-r ROUNDS] [-s SIZES] [-w WINDOW] [-- DRIVER ARGS]: bench/mpi_p2p.c, built
# with toroid-mpicc and with Open MPI's mpicc.openmpi, two ranks each: ./toroid mpirun -n 2
# (memif; `-- --driver uring` for io_uring) against mpirun.openmpi -np 2 --bind-to core over
# shared memory (btl self,vader), alternating, ROUNDS rounds (default 3). Prints per test and
# size the medians over the rounds and ours / Open MPI (time: latency, ns per message; rate:
# GB/s). Installs Open MPI from Debian when it is missing (as root). Every message is checked;
# a wrong byte fails the run. docs/mpi.md, "Point-to-point against Open MPI".
set -u
cd "$(dirname "$0")/.."
rounds=3 sizes=8,4K,64K,1M,4M window=64 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -r) rounds=$2; shift 2 ;;
    -s) sizes=$2; shift 2 ;;
    -w) window=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mpi_p2p_compare: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
W=$(mktemp -d -t toroid-p2pcmp-XXXXXX) || { echo "mpi_p2p_compare: cannot make a work directory" >&2; exit 1; }
trap 'rm -rf "$W"' EXIT
if ! command -v mpicc.openmpi >/dev/null || ! command -v mpirun.openmpi >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "mpi_p2p_compare: needs Open MPI (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
  echo "mpi_p2p_compare: installing Open MPI from Debian (log: $W/apt.log)" >&2
  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev) \
    > "$W/apt.log" 2>&1 || { tail -5 "$W/apt.log"; exit 1; }
fi
./toroid build > "$W/build.log" 2>&1 || { echo "mpi_p2p_compare: ./toroid build failed (see $W/build.log)" >&2; exit 1; }
build/mpi/toroid-mpicc -O2 -o "$W/p2p_toroid" bench/mpi_p2p.c || exit 1
mpicc.openmpi -O2 -o "$W/p2p_ompi" bench/mpi_p2p.c || exit 1
args=(-s "$sizes" -w "$window")
status=0
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds" >&2
  timeout 600 ./toroid mpirun -n 2 -q --no-tag-output "${extra[@]}" "$W/p2p_toroid" "${args[@]}" \
    > "$W/ours.$r" 2> "$W/ours.$r.err" || { echo "mpi_p2p_compare: ours failed in round $r:" >&2; cat "$W/ours.$r.err" >&2; status=1; }
  timeout 600 mpirun.openmpi --allow-run-as-root -np 2 --bind-to core --mca btl self,vader "$W/p2p_ompi" "${args[@]}" \
    > "$W/peer.$r" 2> "$W/peer.$r.err" || { echo "mpi_p2p_compare: Open MPI failed in round $r:" >&2; cat "$W/peer.$r.err" >&2; status=1; }
done
python3 - "$W" "$rounds" <<'PY' || status=1
import statistics as st, sys
w, rounds = sys.argv[1], int(sys.argv[2])
def read(side):
    got = {}
    for r in range(1, rounds + 1):
        try: lines = open(f"{w}/{side}.{r}").read().split("\n")
        except OSError: continue
        for line in lines:
            p = line.split()
            if len(p) >= 3 and p[0] in ("latency", "stream"):
                got.setdefault((p[0], int(p[1])), []).append([float(x) for x in p[2:]])
    return got
ours, peer = read("ours"), read("peer")
if not ours or not peer: sys.exit("mpi_p2p_compare: no results to compare")
print(f"{'test':<8}{'bytes':>9} {'ours':>10} {'Open MPI':>10} {'ours/peer':>10}  unit")
for k in sorted(ours, key=lambda k: (k[0], k[1])):
    if k not in peer: continue
    if k[0] == "latency":
        o, p = st.median(v[0] for v in ours[k]), st.median(v[0] for v in peer[k])
        print(f"{k[0]:<8}{k[1]:>9} {o:>10.3f} {p:>10.3f} {o / p:>10.2f}  us one way (time: lower is better)")
    else:
        o, p = st.median(v[0] for v in ours[k]), st.median(v[0] for v in peer[k])
        on, pn = st.median(v[1] for v in ours[k]), st.median(v[1] for v in peer[k])
        print(f"{k[0]:<8}{k[1]:>9} {o:>10.3f} {p:>10.3f} {o / p:>10.2f}  GB/s (rate: higher is better; {on:.0f} / {pn:.0f} ns a message)")
PY
exit $status
