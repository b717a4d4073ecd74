#!/usr/bin/env bash
# Times libCacheSim (the `libcachesim` 0.3.5 PyPI package) beside kvlab's simulator on the
# same oracleGeneral trace, same machine, one policy at a time, and prints the speed ratio
# and both miss ratios (they must be equal).
#
#   bench/sim-vs-libcachesim.sh [TRACE.oracleGeneral.bin] [SIZE] [obj|byte]
#
# Defaults: a synthetic 5M-request Zipf(0.9) trace over 1M objects written to /tmp (made
# once, seeded), 100000 objects, object mode. Environment:
#   LCS_PY   python with libcachesim 0.3.5 (default /tmp/lcs-sim/bin/python; create it with
#            python3 -m venv /tmp/lcs-sim && /tmp/lcs-sim/bin/pip install libcachesim==0.3.5 numpy)
#   KVLAB    the kvlab binary (default $HOME/.cache/kvlab-target/release/kvlab), run as
#            `kvlab sim FILE --policy P --size S --mode M --json`; when it is missing (or has
#            no `sim` command yet), the library's
#            example is used: `cargo build --release -p kvlab-cachesim --example sim`
#            (its JSON carries the simulation's own seconds; the wall time includes loading).
#   POLICIES space-separated list (default: the exact ones).
#   ROUNDS   runs of each tool per policy (default 1), alternating which goes first; the
#            columns are then medians, `ratio` the median of the same-round ratios, and
#            `ratio_95%` its 95 % interval (bench/lib.sh's ratio_interval; n/a below 3
#            rounds). Each policy's comparison is written as a record to bench/results/
#            (FIGURES=0: none).
#
# `ratio` divides libCacheSim's time (its `process_trace` call, which streams the trace while
# simulating) by kvlab's whole-process wall time (loading the trace included): conservative
# for kvlab. `sim_ratio` divides it by the simulation alone (the trace already in memory).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_start "$*" KVLAB LCS_PY POLICIES ROUNDS

ROUNDS=${ROUNDS:-1}
LCS_PY=${LCS_PY:-/tmp/lcs-sim/bin/python}
KVLAB=${KVLAB:-$HOME/.cache/kvlab-target/release/kvlab}
EXAMPLE=${EXAMPLE:-${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target-sim}/release/examples/sim}
TRACE=${1:-/tmp/kvlab-zipf5m.oracleGeneral.bin}
SIZE=${2:-100000}
MODE=${3:-obj}
POLICIES=${POLICIES:-"LRU FIFO Clock Clock2bit Sieve LFU S3FIFO ARC LIRS GDSF LFUDA Belady TwoQ SLRU WTinyLFU"}

if [[ ! -f $TRACE ]]; then
  echo "writing a synthetic trace to $TRACE" >&2
  "$LCS_PY" - "$TRACE" <<'PY'
import sys
import numpy as np
n, nobj = 5_000_000, 1_000_000
rng = np.random.default_rng(42)
w = 1.0 / np.arange(1, nobj + 1) ** 0.9
cdf = np.cumsum(w); cdf /= cdf[-1]
ranks = np.searchsorted(cdf, rng.random(n))
perm = rng.permutation(nobj)
obj = perm[ranks]
sizes = (rng.lognormal(8, 1.5, nobj).astype(np.uint64) % 1_000_000 + 1).astype(np.uint32)
rec = np.zeros(n, dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")])
rec["t"] = np.arange(n) // 1000
rec["id"] = obj.astype(np.uint64) * 7919 + 13
rec["sz"] = sizes[obj]
nx = np.full(n, -1, dtype=np.int64)
order = np.argsort(obj, kind="stable")
same = obj[order][1:] == obj[order][:-1]
nx[order[:-1][same]] = order[1:][same]
rec["nx"] = nx
rec.tofile(sys.argv[1])
PY
fi

if [[ -x $KVLAB ]] && "$KVLAB" sim --help >/dev/null 2>&1; then
  kv() { "$KVLAB" sim "$TRACE" --policy "$1" --size "$SIZE" ${MODE:+--mode "$MODE"} --json; }
elif [[ -x $EXAMPLE ]]; then
  kv() { "$EXAMPLE" "$TRACE" "$1" "$SIZE" "$MODE"; }
else
  echo "no kvlab binary ($KVLAB) and no example ($EXAMPLE): build one first" >&2
  exit 1
fi

lcs() {
  "$LCS_PY" - "$TRACE" "$1" "$SIZE" "$MODE" <<'PY' 2>/dev/null
import sys, time
import libcachesim as lc
path, pol, size, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
kw = {}
if pol == "Clock2bit":
    pol, kw = "Clock", {"n_bit_counter": 2}
p = lc.ReaderInitParam()
p.ignore_obj_size = mode == "obj"
r = lc.TraceReader(path, lc.TraceType.ORACLE_GENERAL_TRACE, p)
c = getattr(lc, pol)(size, **kw)
t = time.perf_counter()
omr, _ = c.process_trace(r)
print(f"{time.perf_counter() - t:.4f} {omr:.6f}")
PY
}

printf "%-10s %10s %13s %12s %7s %9s %10s %10s %s\n" policy lcs_s kvlab_wall_s kvlab_sim_s ratio sim_ratio lcs_mr kvlab_mr ratio_95%
for p in $POLICIES; do
  lcs_ss=(); walls=(); sims=(); ratios=(); sim_ratios=()
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 0 ]; then
      start=$(date +%s.%N); out=$(kv "$p"); end=$(date +%s.%N)
      read -r lcs_s lcs_mr < <(lcs "$p")
    else
      read -r lcs_s lcs_mr < <(lcs "$p")
      start=$(date +%s.%N); out=$(kv "$p"); end=$(date +%s.%N)
    fi
    read -r sim_s kv_mr < <(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
d = d[0] if isinstance(d, list) else d  # `kvlab sim --json` prints a list, the example one object
print(d["seconds"], "%.6f" % d["miss_ratio"])' "$out")
    lcs_ss+=("$lcs_s"); sims+=("$sim_s")
    walls+=("$(python3 -c "print(f'{$end - $start:.4f}')")")
    ratios+=("$(python3 -c "print(f'{$lcs_s / ($end - $start):.4f}')")")
    sim_ratios+=("$(python3 -c "print(f'{$lcs_s / max($sim_s, 1e-9):.4f}')")")
  done
  lcs_s=$(median "${lcs_ss[@]}"); wall=$(median "${walls[@]}"); sim_s=$(median "${sims[@]}")
  ratio=$(printf '%.2f' "$(median "${ratios[@]}")")
  sim_ratio=$(printf '%.1f' "$(median "${sim_ratios[@]}")")
  iv=$(ratio_interval "${ratios[@]}")
  printf "%-10s %10s %13s %12.4f %7s %9s %10s %10s %s\n" "$p" "$lcs_s" "$wall" "$sim_s" "${ratio}x" \
    "${sim_ratio}x" "$lcs_mr" "$kv_mr" "$iv"
  figure_record id="sim.libcachesim.$p${MODE:+.$MODE}" \
    what="cache simulation ($p, $MODE mode, size $SIZE, $(basename "$TRACE")) beside libCacheSim 0.3.5 process_trace: speed" \
    unit=s kvlab="$wall" reference="$lcs_s" reference_name="libcachesim 0.3.5 (PyPI) process_trace" \
    ratios="${ratios[*]}" \
    detail="$(printf 'libCacheSim %s s / kvlab %s s wall (%sx the simulation alone); miss ratios %s / %s' "$lcs_s" "$wall" "$sim_ratio" "$lcs_mr" "$kv_mr")" \
    section="performance-log.md#cache-simulation-beside-libcachesim"
done
