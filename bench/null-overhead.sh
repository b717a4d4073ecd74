#!/usr/bin/env bash
# kvlab's own cost per operation: workload A (and C, uniform) against the `null` store,
# one thread, histograms on. Prints each round and the median throughput.
# Usage: bench/null-overhead.sh [ROUNDS] (default 5)
# With BASELINE=/path/to/an/older/kvlab, every round runs that binary too, alternating
# with the one built here, and the medians of both and their ratio are printed.
# RECORDS=N sets recordcount (default: the workload files' 1000). KVLAB=/path/to/kvlab
# runs that binary instead of building this checkout's.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS="${1:-5}"
use_kvlab
BASELINE="${BASELINE:-}"
RECORDS="${RECORDS:-1000}"
throughput() {
  "$1" run -P "workloads/ycsb/$2" -p requestdistribution="$3" -p recordcount="$RECORDS" \
    -p operationcount=20000000 --db null --threads 1 --seed "$4" --progress never 2>/dev/null \
    | sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p'
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for spec in "workloada zipfian" "workloadc uniform"; do
  set -- $spec
  runs=()
  base=()
  for r in $(seq 1 "$ROUNDS"); do
    runs+=("$(throughput "$KVLAB" "$1" "$2" "$r")")
    if [ -n "$BASELINE" ]; then
      base+=("$(throughput "$BASELINE" "$1" "$2" "$r")")
    fi
  done
  printf '%s (%s), 1 thread: median %.0f ops/s over %d rounds (%s)\n' "$1" "$2" \
    "$(median "${runs[@]}")" "$ROUNDS" "$(printf '%.0f ' "${runs[@]}")"
  if [ -n "$BASELINE" ]; then
    printf '  baseline %s: median %.0f ops/s (%s); ratio %.2f\n' "$BASELINE" \
      "$(median "${base[@]}")" "$(printf '%.0f ' "${base[@]}")" \
      "$(echo "$(median "${runs[@]}") $(median "${base[@]}")" | awk '{ print $1 / $2 }')"
  fi
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
