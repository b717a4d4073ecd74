#!/usr/bin/env bash
# `kvlab trace analyze` on a generated oracleGeneral trace of N requests over M objects
# (the trace bench/sim-stream.sh generates: Zipf ALPHA, default 0.9), once per key bound:
# its maximum RSS (/usr/bin/time -v), wall time, and the headline figures — exact with
# `--exact`, estimated from a key sample past `--max-keys` — side by side.
#
#   bench/analyze-stream.sh [N] [M] [BOUNDS]
#
# Defaults: N = 10,000,000, M = 1,000,000, BOUNDS = "exact default 1000000" (each one a
# run: `exact` is --exact, `default` no flag (--max-keys 8388608), a number is
# --max-keys NUMBER). Environment: TRACE_DIR, LCS_PY, ALPHA as bench/sim-stream.sh;
# KVLAB the kvlab binary (default: this checkout's release build, built now); OUT the
# directory for the analyses (default /tmp/kvlab-analyze-stream).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

N=${1:-10000000}
M=${2:-1000000}
BOUNDS=${3:-exact default 1000000}
OUT=${OUT:-/tmp/kvlab-analyze-stream}
TRACE=$(GEN_ONLY=1 bench/sim-stream.sh "$N" "$M")
use_kvlab
mkdir -p "$OUT"
printf "%-9s %8s %10s %10s %12s %10s %10s %12s %9s %s\n" bound wall_s rss_kib objects \
  one_hit_objs zipf_alpha reuses mean_stack top1 sampling
for b in $BOUNDS; do
  case $b in
    exact) flags=(--exact) ;;
    default) flags=() ;;
    *) flags=(--max-keys "$b") ;;
  esac
  dir=$OUT/$b
  rm -rf "$dir"
  /usr/bin/time -v -o "$OUT/$b.time" "$KVLAB" trace analyze "$TRACE" --out "$dir" "${flags[@]}" \
    2>"$OUT/$b.err"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s }' "$OUT/$b.time")
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$OUT/$b.time")
  python3 - "$dir/summary.json" "$b" "$wall" "$rss" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
smp = s.get("sampling")
tag = "exact" if smp is None else "rate 1/%d, %d keys, top counts <= %d low" % (
    smp["weight"], smp["sampled_keys"], smp["top_error_requests"])
print("%-9s %8s %10s %10d %12d %10.4f %10d %12.1f %9d %s" % (
    sys.argv[2], sys.argv[3], sys.argv[4], s["objects"], s["one_hit_objects"],
    s["zipf_alpha"] or float("nan"), s["reuses"], s["mean_stack_distance"],
    s["top_frequencies"][0], tag))
PY
done
echo "trace: $TRACE ($N requests over $M objects); analyses in $OUT" >&2
