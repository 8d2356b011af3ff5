#!/usr/bin/env bash
# MPICH's own MPI test suite (test/mpi of Debian's mpich 4.0.2 source),
# unmodified, built with toroid-mpicc and run with toroid-mpirun:
# an independent conformance check (docs/mpi.md, "MPICH's test suite").
#
#   tests/mpi/mpich_testsuite.sh [--dirs "attr coll ..."] [--maxnp N] [--work DIR]
#
# Downloads mpich_4.0.2.orig.tar.xz from Debian's archive (checked against
# the md5 Debian's Sources index lists), configures test/mpi for an MPI 3.1
# library without Fortran, one-sided, dynamic processes or MPI-IO, builds
# the directories named (default: every MPI 3.1 chapter the library
# covers, the tool interface, and the error-detection tests of those
# chapters), runs MPICH's runtests and prints its summary. Tests of MPI 4.0
# functions do not build (they are counted as failures by runtests: the
# library is MPI 3.1). Needs ./toroid build first. Takes 15-25 minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dirs="attr coll comm datatype errhan group info init pt2pt topo mpi_t errors/attr errors/coll errors/comm errors/datatype errors/group errors/pt2pt errors/topo"
maxnp=8
work="$root/run/mpich-testsuite"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dirs) dirs="$2"; shift 2 ;;
    --maxnp) maxnp="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mpich_testsuite.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
command -v curl > /dev/null || { echo "mpich_testsuite.sh: needs curl (apt-get install curl)" >&2; exit 1; }
mpicc="$root/build/mpi/toroid-mpicc"
mpirun="$root/build/mpi/launcher/toroid-mpirun"
for f in "$mpicc" "$mpirun"; do
  [[ -x "$f" ]] || { echo "mpich_testsuite.sh: $f is missing: run ./toroid build first" >&2; exit 1; }
done
tarball=mpich_4.0.2.orig.tar.xz
md5=8854168c129fbe94a742d74d042a663e
mkdir -p "$work"
cd "$work"
if [[ ! -f $tarball ]] || [[ "$(md5sum $tarball | cut -d' ' -f1)" != "$md5" ]]; then
  echo "mpich_testsuite.sh: downloading $tarball from deb.debian.org"
  curl -fsS --max-time 300 -o $tarball "http://deb.debian.org/debian/pool/main/m/mpich/$tarball"
  [[ "$(md5sum $tarball | cut -d' ' -f1)" == "$md5" ]] || { echo "mpich_testsuite.sh: $tarball: md5 mismatch" >&2; exit 1; }
fi
[[ -d mpich-4.0.2 ]] || tar xf $tarball
cd mpich-4.0.2/test/mpi
# The launcher, as runtests calls mpiexec: untagged output (runtests reads
# " No Errors" verbatim), a bound on every job and every blocking call.
cat > "$work/mpiexec" <<EOS
#!/bin/sh
exec "$mpirun" -q --no-tag-output --run-dir "$work/run" --timeout 120s --wait-timeout 60s "\$@"
EOS
chmod +x "$work/mpiexec"
if [[ ! -f Makefile ]]; then
  echo "mpich_testsuite.sh: configuring test/mpi"
  ./configure CC="$mpicc" CXX="${mpicc%cc}cxx" MPICC="$mpicc" MPICXX="${mpicc%cc}cxx" MPIEXEC="$work/mpiexec" \
    --disable-fortran --disable-spawn --disable-rma --disable-romio --disable-ft-tests --enable-strictmpi \
    --enable-threads=funneled > "$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; exit 1; }
fi
make -C util > "$work/make-util.log" 2>&1
: > testlist.toroid
for d in $dirs; do
  log="$work/make-${d//\//-}.log"
  echo "mpich_testsuite.sh: building $d (log: $log)"
  make -k -j"$(nproc)" -C "$d" > "$log" 2>&1 || true
  ln -sf testlist "$d/testlist.toroid"
  echo "$d" >> testlist.toroid
done
rm -rf "$work/run"
mkdir -p "$work/run"
echo "mpich_testsuite.sh: running (runtests, at most $maxnp ranks; log: $work/runtests.log)"
./runtests -srcdir=. -tests=testlist.toroid -mpiexec="$work/mpiexec" -maxnp="$maxnp" \
  -tapfile="$work/summary.tap" -junitfile="$work/junit.xml" > "$work/runtests.log" 2>&1 || true
ok=$(grep -c '^ok' "$work/summary.tap" || true)
bad=$(grep -c '^not ok' "$work/summary.tap" || true)
echo "mpich_testsuite.sh: failing: $(grep '^not ok' "$work/summary.tap" | awk '{print $4}' | sort -u | tr '\n' ' ')"
echo "$ok passed, $bad failed"
