#!/usr/bin/env bash
# HPC Challenge 1.5.0 (the source of Debian's hpcc package), unmodified,
# built with toroid-mpicc against Debian's reference BLAS and run with
# toroid-mpirun: HPL, DGEMM, STREAM, PTRANS, RandomAccess, FFT and the
# latency/bandwidth tests, each checking its own result (docs/mpi.md, "HPC
# Challenge").
#
#   tests/mpi/hpcc.sh [--dims XxYxZ] [--grid PxQ] [--n N] [--work DIR]
#
# Defaults: 2x2x2 with HPL's process grid 2x4 and N = 1000 (HPCC's sample
# input otherwise). Downloads hpcc_1.5.0.orig.tar.gz from Debian's archive
# (checked against its md5). Needs ./toroid build first, curl and
# libblas-dev. Passes when HPCC reports Success=1, HPL's residual check
# passes and the MPI RandomAccess variants find no errors. About a minute.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dims=2x2x2 grid=2x4 n=1000
work="$root/run/hpcc"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dims) dims="$2"; shift 2 ;;
    --grid) grid="$2"; shift 2 ;;
    --n) n="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hpcc.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
[[ "$grid" =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "hpcc.sh: --grid '$grid' is not PxQ" >&2; exit 2; }
P=${BASH_REMATCH[1]} Q=${BASH_REMATCH[2]}
command -v curl > /dev/null || { echo "hpcc.sh: needs curl (apt-get install curl)" >&2; exit 1; }
[[ -e /usr/lib/x86_64-linux-gnu/libblas.so || -e /usr/lib/libblas.so ]] || ldconfig -p | grep -q 'libblas.so ' ||
  { echo "hpcc.sh: needs a BLAS (apt-get install libblas-dev)" >&2; exit 1; }
mpicc="$root/build/mpi/toroid-mpicc"
mpirun="$root/build/mpi/launcher/toroid-mpirun"
for f in "$mpicc" "$mpirun"; do
  [[ -x "$f" ]] || { echo "hpcc.sh: $f is missing: run ./toroid build first" >&2; exit 1; }
done
tarball=hpcc_1.5.0.orig.tar.gz
md5=bf6df65a2d690034db79151d53cf0791
mkdir -p "$work"
cd "$work"
if [[ ! -f $tarball ]] || [[ "$(md5sum $tarball | cut -d' ' -f1)" != "$md5" ]]; then
  echo "hpcc.sh: downloading $tarball from deb.debian.org"
  curl -fsS --max-time 300 -o $tarball "http://deb.debian.org/debian/pool/main/h/hpcc/$tarball"
  [[ "$(md5sum $tarball | cut -d' ' -f1)" == "$md5" ]] || { echo "hpcc.sh: $tarball: md5 mismatch" >&2; exit 1; }
fi
[[ -d hpcc-1.5.0 ]] || tar xzf $tarball
cd hpcc-1.5.0
# HPL's build file: toroid-mpicc for compiling and linking, the Fortran BLAS
# interface (Add_: dgemm_) of libblas; everything else as HPL's Linux sample.
sed -e "s|^MPdir .*|MPdir        =|" -e "s|^MPinc .*|MPinc        =|" -e "s|^MPlib .*|MPlib        =|" \
    -e "s|^LAdir .*|LAdir        =|" -e "s|^LAlib .*|LAlib        = -lblas|" \
    -e "s|^CC  .*|CC           = $mpicc|" -e "s|^LINKER .*|LINKER       = $mpicc|" \
    -e "s|^CCFLAGS .*|CCFLAGS      = \$(HPL_DEFS) -O2 -w|" -e "s|^RANLIB .*|RANLIB       = ranlib|" \
    hpl/setup/Make.Linux_PII_FBLAS > hpl/Make.toroid
echo "hpcc.sh: building (log: $work/make.log)"
make arch=toroid -j2 > "$work/make.log" 2>&1 || { tail -20 "$work/make.log"; exit 1; }
rm -rf "$work/run-$dims" && mkdir -p "$work/run-$dims" && cd "$work/run-$dims"
sed -e "6s/^[0-9]* /$n /" -e "11s/^[0-9]* /$P /" -e "12s/^[0-9]* /$Q /" ../hpcc-1.5.0/_hpccinf.txt > hpccinf.txt
echo "hpcc.sh: running on $dims (HPL N=$n, grid ${P}x${Q}; output: $work/run-$dims/hpccoutf.txt)"
"$mpirun" --dims "$dims" -q --run-dir "$work/run-$dims/rig" ../hpcc-1.5.0/hpcc > run.log 2>&1 ||
  { tail -20 run.log; echo "hpcc.sh: hpcc failed (exit $?)" >&2; exit 1; }
out=hpccoutf.txt
grep -E '^(CommWorldProcs|HPL_Tflops|StarDGEMM_Gflops|PTRANS_GBs|MPIRandomAccess_GUPs|MPIFFT_Gflops|MinPingPongLatency_usec|NaturallyOrderedRingBandwidth_GBytes|Success|Failure)=' $out
fail=0
grep -q '^Success=1' $out || { echo "hpcc.sh: HPCC reports failure" >&2; fail=1; }
grep -q 'PASSED' $out || { echo "hpcc.sh: HPL's residual check did not pass" >&2; fail=1; }
for k in MPIRandomAccess_Errors MPIRandomAccess_LCG_Errors; do
  v=$(sed -n "s/^$k=//p" $out)
  [[ "$v" == 0 ]] || { echo "hpcc.sh: $k=$v" >&2; fail=1; }
done
[[ $fail == 0 ]] && echo "hpcc.sh: passed" || { echo "hpcc.sh: FAILED" >&2; exit 1; }
